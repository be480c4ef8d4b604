'use strict';
// Times ONNX Runtime (onnxruntime-node, a test tool only) on real models,
// single-threaded, for the evaluator's speed target (bench/eval_vs_ort.sh):
// per model and graph optimization level ('all', ORT's default, and
// 'disabled'), the median CPU time (user + system of the whole process) and
// wall time of one run on test_data_set_0, after warm-up runs.
//
// Usage:
//   node bench_models.js [--runs N] [--warmup N] [--tsv FILE] CACHE_DIR ID...
// CACHE_DIR holds ID/model.onnx and ID/test_data_set_0/ (tools/real-models.js
// makes it). Prints a table; --tsv also writes one line per model:
//   id, cpu ms (all), wall ms (all), cpu ms (disabled), wall ms (disabled).

process.env.ALLOW_RELEASED_ONNX_OPSET_ONLY = '0';

const fs = require('fs');
const path = require('path');
const {SESSION_OPTIONS, buildFeeds, listDataSets} = require('./run_models.js');

// The optimization levels reported, in column order.
const LEVELS = ['all', 'disabled'];

function parseArgs(argv) {
  const args = {runs: 20, warmup: 3, tsv: '', cache: '', ids: []};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--runs') args.runs = Number(argv[++i]);
    else if (a === '--warmup') args.warmup = Number(argv[++i]);
    else if (a === '--tsv') args.tsv = argv[++i];
    else if (!args.cache) args.cache = a;
    else args.ids.push(a);
  }
  if (!args.cache || args.ids.length === 0) {
    throw new Error('usage: node bench_models.js [--runs N] [--warmup N] [--tsv FILE] CACHE_DIR ID...');
  }
  return args;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// CPU and wall milliseconds of one session.run.
async function timeRun(session, feeds) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await session.run(feeds);
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  return {cpu: (used.user + used.system) / 1000, wall};
}

// Median CPU and wall ms of model `id` at optimization level `level`.
async function benchModel(ort, args, id, level) {
  const dir = path.join(args.cache, id);
  const session = await ort.InferenceSession.create(
      path.join(dir, 'model.onnx'), {...SESSION_OPTIONS, graphOptimizationLevel: level});
  try {
    const feeds = buildFeeds(ort, session, listDataSets(dir)[0].inputs);
    for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
    const times = [];
    for (let i = 0; i < args.runs; ++i) times.push(await timeRun(session, feeds));
    return {cpu: median(times.map((t) => t.cpu)), wall: median(times.map((t) => t.wall))};
  } finally {
    await session.release();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');
  const lines = [];
  console.log(`model             ${LEVELS.map((l) => `cpu ms (${l})  wall ms (${l})`).join('  ')}`);
  for (const id of args.ids) {
    const cells = [];
    for (const level of LEVELS) {
      const t = await benchModel(ort, args, id, level);
      cells.push(t.cpu.toFixed(3), t.wall.toFixed(3));
    }
    console.log(`${id.padEnd(17)} ${cells.map((c) => c.padStart(14)).join(' ')}`);
    lines.push([id, ...cells].join('\t'));
  }
  if (args.tsv) fs.writeFileSync(args.tsv, lines.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`bench_models: ${e.stack || e}\n`);
  process.exit(2);
});
