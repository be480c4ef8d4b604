'use strict';
// Runs ONNX models in ONNX Runtime (onnxruntime-node, a test tool only) on
// the inputs of their ONNX backend test case and compares the outputs with
// the case's expected outputs (rtol 1e-3, atol 1e-7; NaN matches NaN;
// integers, bools and strings exactly).
//
// Usage:
//   node run_models.js MANIFEST [--jobs N] [--chunk N] [--timeout SECONDS]
//   node run_models.js --child    (internal: entries as JSON lines on stdin)
//
// MANIFEST has one JSON object per line: {"id", "model", "case_dir"} and,
// optionally, "atol" (instead of 1e-7), "atol_scale" (atol grows to it times
// the largest magnitude of each expected output) and "optimize": false
// (graph optimizations off).
// Prints one JSON line per entry:
//   {"id", "status": "pass"|"mismatch"|"ort_error"|"unsupported", "detail"}
// The parent runs the entries in child processes (N at a time, in chunks);
// a child that dies records the entry it was on as "ort_error: crashed" and
// the rest of its chunk runs in a new child; an entry that takes longer than
// the timeout is killed and recorded as "ort_error: timeout". The wire
// format, the comparison and the child runner are exported for
// compare_models.js.

// Opset 27 is not released yet; ORT loads it only with this set, and reads
// it when the native library loads.
process.env.ALLOW_RELEASED_ONNX_OPSET_ONLY = '0';

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const RTOL = 1e-3;
const ATOL = 1e-7;

// ---------------------------------------------------------------------------
// TensorProto wire format.

// ONNX element types by TensorProto.DataType: the ORT-node type name (null if
// ORT-node cannot hold it), the typed array of its storage, its byte size
// (0.5 for packed 4-bit types), the TensorProto field that holds it when not
// raw, and how a stored element reads as a comparable value.
const ELEMENT_TYPES = {
  1: {name: 'float', ort: 'float32', array: Float32Array, size: 4, field: 'float_data', value: 'float'},
  2: {name: 'uint8', ort: 'uint8', array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  3: {name: 'int8', ort: 'int8', array: Int8Array, size: 1, field: 'int32_data', value: 'exact'},
  4: {name: 'uint16', ort: 'uint16', array: Uint16Array, size: 2, field: 'int32_data', value: 'exact'},
  5: {name: 'int16', ort: 'int16', array: Int16Array, size: 2, field: 'int32_data', value: 'exact'},
  6: {name: 'int32', ort: 'int32', array: Int32Array, size: 4, field: 'int32_data', value: 'exact'},
  7: {name: 'int64', ort: 'int64', array: BigInt64Array, size: 8, field: 'int64_data', value: 'exact'},
  8: {name: 'string', ort: 'string', array: null, size: 0, field: 'string_data', value: 'exact'},
  9: {name: 'bool', ort: 'bool', array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  10: {name: 'float16', ort: 'float16', array: Uint16Array, size: 2, field: 'int32_data', value: 'float16'},
  11: {name: 'double', ort: 'float64', array: Float64Array, size: 8, field: 'double_data', value: 'float'},
  12: {name: 'uint32', ort: 'uint32', array: Uint32Array, size: 4, field: 'uint64_data', value: 'exact'},
  13: {name: 'uint64', ort: 'uint64', array: BigUint64Array, size: 8, field: 'uint64_data', value: 'exact'},
  14: {name: 'complex64', ort: null, array: Float32Array, size: 8, field: 'float_data', value: 'float'},
  15: {name: 'complex128', ort: null, array: Float64Array, size: 16, field: 'double_data', value: 'float'},
  16: {name: 'bfloat16', ort: null, array: Uint16Array, size: 2, field: 'int32_data', value: 'bfloat16'},
  17: {name: 'float8e4m3fn', ort: null, array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  18: {name: 'float8e4m3fnuz', ort: null, array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  19: {name: 'float8e5m2', ort: null, array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  20: {name: 'float8e5m2fnuz', ort: null, array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  21: {name: 'uint4', ort: 'uint4', array: Uint8Array, size: 0.5, field: 'int32_data', value: 'uint4'},
  22: {name: 'int4', ort: 'int4', array: Uint8Array, size: 0.5, field: 'int32_data', value: 'int4'},
  23: {name: 'float4e2m1', ort: null, array: Uint8Array, size: 0.5, field: 'int32_data', value: 'uint4'},
  24: {name: 'float8e8m0', ort: null, array: Uint8Array, size: 1, field: 'int32_data', value: 'exact'},
  25: {name: 'uint2', ort: null, array: Uint8Array, size: 0.25, field: 'int32_data', value: 'exact'},
  26: {name: 'int2', ort: null, array: Uint8Array, size: 0.25, field: 'int32_data', value: 'exact'},
};

// The ONNX element type of each ORT-node type name.
const ONNX_TYPE_OF_ORT = Object.fromEntries(
    Object.entries(ELEMENT_TYPES).filter(([, t]) => t.ort).map(([code, t]) => [t.ort, Number(code)]));

// TensorProto fields the harness reads: number -> [name, kind].
const TENSOR_FIELDS = {
  1: ['dims', 'int64'],
  2: ['data_type', 'int32'],
  4: ['float_data', 'float'],
  5: ['int32_data', 'int32'],
  6: ['string_data', 'bytes'],
  7: ['int64_data', 'int64'],
  8: ['name', 'string'],
  9: ['raw_data', 'bytes'],
  10: ['double_data', 'double'],
  11: ['uint64_data', 'uint64'],
  14: ['data_location', 'int32'],
};

// Reads protobuf wire-format values from a buffer.
class WireReader {
  constructor(bytes, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  done() { return this.pos >= this.end; }

  // A varint as an unsigned 64-bit BigInt.
  varint() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const byte = this.bytes[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }

  // A slice of `length` bytes.
  take(length) {
    if (this.pos + length > this.end) throw new Error('truncated field');
    const slice = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return slice;
  }

  // Skips a value of wire type `wireType`.
  skip(wireType) {
    const sizes = {0: null, 1: 8, 2: -1, 5: 4};
    if (!(wireType in sizes)) throw new Error(`unsupported wire type ${wireType}`);
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.take(Number(this.varint()));
    else this.take(sizes[wireType]);
  }
}

// Scalar decoders by kind: varint (BigInt) or fixed-size bytes -> value.
const SCALAR_KINDS = {
  int32: {wire: 0, fromVarint: (v) => Number(BigInt.asIntN(32, v))},
  int64: {wire: 0, fromVarint: (v) => BigInt.asIntN(64, v)},
  uint64: {wire: 0, fromVarint: (v) => BigInt.asUintN(64, v)},
  float: {wire: 5, size: 4, fromBytes: (b) => Buffer.from(b).readFloatLE(0)},
  double: {wire: 1, size: 8, fromBytes: (b) => Buffer.from(b).readDoubleLE(0)},
};

// Reads one scalar of `kind` at the reader's position.
function readScalar(reader, kind) {
  const k = SCALAR_KINDS[kind];
  return k.wire === 0 ? k.fromVarint(reader.varint()) : k.fromBytes(reader.take(k.size));
}

// Decodes a serialized TensorProto into {dims, data_type, name, raw_data,
// float_data, int32_data, ...}; repeated fields are arrays.
function decodeTensorProto(bytes) {
  const tensor = {dims: [], data_type: 0, name: '', raw_data: null, string_data: [],
                  float_data: [], int32_data: [], int64_data: [], double_data: [], uint64_data: [],
                  data_location: 0};
  const reader = new WireReader(bytes);
  while (!reader.done()) {
    const key = Number(reader.varint());
    const number = key >>> 3;
    const wireType = key & 7;
    const field = TENSOR_FIELDS[number];
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    const [name, kind] = field;
    if (kind === 'bytes' || kind === 'string') {
      const value = reader.take(Number(reader.varint()));
      if (name === 'raw_data') tensor.raw_data = value;
      else if (name === 'name') tensor.name = Buffer.from(value).toString('utf8');
      else tensor[name].push(value);
    } else if (wireType === 2 && SCALAR_KINDS[kind].wire !== 2) {
      // Packed repeated scalars.
      const length = Number(reader.varint());
      const packed = new WireReader(bytes, reader.pos, reader.pos + length);
      while (!packed.done()) tensor[name].push(readScalar(packed, kind));
      reader.pos += length;
    } else {
      const value = readScalar(reader, kind);
      if (Array.isArray(tensor[name])) tensor[name].push(value);
      else tensor[name] = value;
    }
  }
  tensor.dims = tensor.dims.map(Number);
  return tensor;
}

// Thrown for data the harness cannot feed to or read from ORT.
class UnsupportedError extends Error {}

// Number of elements of a shape.
function elementCount(dims) {
  return dims.reduce((n, d) => n * d, 1);
}

// The tensor's stored elements as its typed array (packed bytes for 4-bit
// types, raw bits for 16-bit floats) or, for strings, an array of strings.
function storedData(tensor) {
  const type = ELEMENT_TYPES[tensor.data_type];
  if (!type) throw new UnsupportedError(`element type ${tensor.data_type}`);
  if (tensor.data_location === 1) throw new UnsupportedError('external data');
  const count = elementCount(tensor.dims);
  if (type.array === null) {
    return tensor.string_data.map((b) => Buffer.from(b).toString('utf8'));
  }
  const byteCount = Math.ceil(count * type.size);
  if (tensor.raw_data !== null) {
    if (tensor.raw_data.length !== byteCount) {
      throw new Error(`raw_data has ${tensor.raw_data.length} bytes, ${byteCount} expected`);
    }
    const copy = new ArrayBuffer(byteCount);
    new Uint8Array(copy).set(tensor.raw_data);
    return new type.array(copy);
  }
  // The typed field holds an entry per stored element: packed bytes for
  // sub-byte types, bit patterns for 16-bit floats, (re, im) for complex.
  const bigint = type.array === BigInt64Array || type.array === BigUint64Array;
  return type.array.from(tensor[type.field], (v) => (bigint ? BigInt(v) : Number(v)));
}

// A float16 bit pattern as a number.
function halfToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

// A bfloat16 bit pattern as a number.
function bfloat16ToNumber(bits) {
  const buffer = new DataView(new ArrayBuffer(4));
  buffer.setUint32(0, bits << 16);
  return buffer.getFloat32(0);
}

// Unpacks `count` 4-bit values (low nibble first), sign-extended if `signed`.
function unpackNibbles(bytes, count, signed) {
  const out = new Array(count);
  for (let i = 0; i < count; ++i) {
    const nibble = (bytes[i >> 1] >> ((i & 1) * 4)) & 0xf;
    out[i] = signed && nibble >= 8 ? nibble - 16 : nibble;
  }
  return out;
}

// How stored data reads as comparable values, by ELEMENT_TYPES[].value.
const COMPARABLE = {
  float: (data) => Array.from(data),
  exact: (data) => Array.from(data, (v) => (typeof v === 'boolean' ? Number(v) : v)),
  float16: (data) => Array.from(data, halfToNumber),
  bfloat16: (data) => Array.from(data, bfloat16ToNumber),
  uint4: (data, count) => unpackNibbles(data, count, false),
  int4: (data, count) => unpackNibbles(data, count, true),
};

// ---------------------------------------------------------------------------
// Comparison.

// The tolerance of float comparisons: |actual - expected| <= atol + rtol * |expected|.
const DEFAULT_TOLERANCE = {rtol: RTOL, atol: ATOL};

// Whether `actual` matches `expected` for a value of kind `value`.
function valuesMatch(expected, actual, value, tolerance = DEFAULT_TOLERANCE) {
  if (value === 'exact' || value === 'uint4' || value === 'int4') {
    return expected === actual || (typeof expected === 'bigint' && BigInt(actual) === expected);
  }
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return expected === actual;
  return Math.abs(actual - expected) <= tolerance.atol + tolerance.rtol * Math.abs(expected);
}

// Shows a value in a detail message.
function show(v) {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

// Compares one output with the expected element type (an ONNX code), dims
// and comparable values (read by `readWant` once type and shape agree);
// returns '' or why it differs.
function compareWith(name, expectedType, expectedDims, readWant, actual, tolerance = DEFAULT_TOLERANCE) {
  const actualType = ONNX_TYPE_OF_ORT[actual.type];
  if (actualType !== expectedType) {
    return `output '${name}': type ${ELEMENT_TYPES[expectedType]?.name ?? expectedType}` +
        ` expected, ${actual.type} actual`;
  }
  const dims = Array.from(actual.dims, Number);
  if (dims.length !== expectedDims.length || dims.some((d, i) => d !== expectedDims[i])) {
    return `output '${name}': shape [${expectedDims}] expected, [${dims}] actual`;
  }
  const type = ELEMENT_TYPES[expectedType];
  const count = elementCount(dims);
  const want = readWant();
  const got = COMPARABLE[type.value](actual.data, count);
  let first = -1;
  let differing = 0;
  for (let i = 0; i < count; ++i) {
    if (!valuesMatch(want[i], got[i], type.value, tolerance)) {
      if (first < 0) first = i;
      ++differing;
    }
  }
  if (first < 0) return '';
  return `output '${name}' index ${first}: expected ${show(want[first])}, actual ${show(got[first])}` +
      ` (${differing} of ${count} elements differ)`;
}

// Compares one output with its expected TensorProto; returns '' or why it
// differs.
// With `atolScale`, atol grows to atolScale times the largest magnitude of
// the expected output (outputs of deep networks whose small elements carry
// the rounding of their large ones).
function compareOutput(name, expected, actual, atolScale = 0, atolFloor = ATOL) {
  const readWant = () => COMPARABLE[ELEMENT_TYPES[expected.data_type].value](
      storedData(expected), elementCount(expected.dims));
  let tolerance = {rtol: RTOL, atol: atolFloor};
  if (atolScale > 0) {
    let largest = 0;
    for (const v of readWant()) {
      if (typeof v === 'number' && Number.isFinite(v)) largest = Math.max(largest, Math.abs(v));
    }
    tolerance = {rtol: RTOL, atol: Math.max(atolFloor, atolScale * largest)};
  }
  return compareWith(name, expected.data_type, expected.dims, readWant, actual, tolerance);
}

// ---------------------------------------------------------------------------
// Running one entry.

// The test_data_set_* folders of a case and their input_/output_ files, in
// numeric order.
function listDataSets(caseDir) {
  const byIndex = (prefix) => (a, b) =>
    Number(a.slice(prefix.length).split('.')[0]) - Number(b.slice(prefix.length).split('.')[0]);
  const sets = fs.readdirSync(caseDir).filter((d) => d.startsWith('test_data_set_'))
      .sort(byIndex('test_data_set_'));
  return sets.map((set) => {
    const dir = path.join(caseDir, set);
    const files = fs.readdirSync(dir);
    const pick = (prefix) => files.filter((f) => f.startsWith(prefix) && f.endsWith('.pb'))
        .sort(byIndex(prefix)).map((f) => path.join(dir, f));
    return {name: set, inputs: pick('input_'), outputs: pick('output_')};
  });
}

// Element types ORT-node names but cannot exchange: it refuses them as
// inputs and aborts the process on them as outputs.
const NO_IO_TYPES = new Set(['int4', 'uint4']);

// Why the session's inputs or outputs cannot go through the harness, or ''.
function unsupportedValues(session) {
  for (const [kind, metadata] of [['input', session.inputMetadata], ['output', session.outputMetadata]]) {
    for (const m of metadata) {
      if (!m.isTensor) return `${kind} '${m.name}' is not a tensor`;
      if (NO_IO_TYPES.has(m.type)) return `${kind} '${m.name}' is ${m.type}, which ORT-node cannot exchange`;
    }
  }
  return '';
}

// Reads the tensors of `files` and pairs them with `names`: by the tensors'
// own names when they all name one of `names`, else in order.
function readNamed(files, names) {
  const tensors = files.map((f) => decodeTensorProto(fs.readFileSync(f)));
  const byName = tensors.every((t) => names.includes(t.name));
  return tensors.map((t, i) => [byName ? t.name : names[i], t]);
}

// The feeds of one data set for `session`. session.inputNames lists the
// graph inputs in order without those an initializer backs.
function buildFeeds(ort, session, inputFiles) {
  const feeds = {};
  for (const [name, tensor] of readNamed(inputFiles, session.inputNames)) {
    if (name === undefined) throw new Error(`more input files than model inputs`);
    const type = ELEMENT_TYPES[tensor.data_type];
    if (!type || !type.ort) {
      throw new UnsupportedError(`input '${name}' has element type ${type ? type.name : tensor.data_type}`);
    }
    feeds[name] = new ort.Tensor(type.ort, storedData(tensor), tensor.dims);
  }
  return feeds;
}

// Compares the outputs of one run with the data set's expected outputs.
function checkOutputs(session, outputs, outputFiles, atolScale, atolFloor) {
  for (const [name, expected] of readNamed(outputFiles, session.outputNames)) {
    if (name === undefined) return 'more expected outputs than model outputs';
    const type = ELEMENT_TYPES[expected.data_type];
    if (!type || !type.ort) {
      throw new UnsupportedError(`output '${name}' has element type ${type ? type.name : expected.data_type}`);
    }
    const why = compareOutput(name, expected, outputs[name], atolScale, atolFloor);
    if (why) return why;
  }
  return '';
}

// Session options: one thread each, since two children share two cores.
const SESSION_OPTIONS = {intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3};
// Graph optimizations off: the kernels the graph names, not the fusions
// and layouts (NCHWc convolutions and resizes, say) ONNX Runtime rewrites
// it into, which round otherwise and apply differently to a model and its
// conversion.
const UNOPTIMIZED_OPTIONS = {...SESSION_OPTIONS, graphOptimizationLevel: 'disabled'};

// ORT-node session errors that mean the harness cannot exchange the values.
const UNSUPPORTED_SESSION_ERRORS = [/^Unsupported data type/];

// The first line of an error's message.
function messageOf(error) {
  return String(error && error.message ? error.message : error).split('\n')[0];
}

// Runs one manifest entry and returns its result object.
async function runEntry(ort, entry) {
  const result = (status, detail = '') => ({id: entry.id, status, detail});
  let session;
  try {
    session = await ort.InferenceSession.create(
        entry.model, entry.optimize === false ? UNOPTIMIZED_OPTIONS : SESSION_OPTIONS);
  } catch (e) {
    const message = messageOf(e);
    const unsupported = UNSUPPORTED_SESSION_ERRORS.some((re) => re.test(message));
    return result(unsupported ? 'unsupported' : 'ort_error', `session: ${message}`);
  }
  try {
    const why = unsupportedValues(session);
    if (why) return result('unsupported', why);
    const dataSets = listDataSets(entry.case_dir);
    if (dataSets.length === 0) return result('unsupported', 'no test_data_set_*');
    for (const set of dataSets) {
      const feeds = buildFeeds(ort, session, set.inputs);
      let outputs;
      try {
        outputs = await session.run(feeds);
      } catch (e) {
        return result('ort_error', `run: ${messageOf(e)}`);
      }
      const mismatch = checkOutputs(session, outputs, set.outputs, entry.atol_scale || 0,
                                    entry.atol ?? ATOL);
      if (mismatch) return result('mismatch', `${set.name}: ${mismatch}`);
    }
    return result('pass');
  } catch (e) {
    if (e instanceof UnsupportedError) return result('unsupported', e.message);
    return result('ort_error', `harness: ${messageOf(e)}`);
  } finally {
    await session.release().catch(() => {});
  }
}

// Child mode: runs the entries given on stdin one by one with `run`
// (ort, entry) -> result, printing each result.
async function childMain(run) {
  const ort = require('onnxruntime-node');
  const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.trim());
  for (const line of lines) {
    const result = await run(ort, JSON.parse(line));
    process.stdout.write(JSON.stringify(result) + '\n');
  }
}

// ---------------------------------------------------------------------------
// Parent mode.

// Command-line flags with their defaults.
const FLAG_DEFAULTS = {jobs: 2, chunk: 100, timeout: 60};

// Parses `node SCRIPT MANIFEST [--flag value]...`.
function parseArgs(script, argv) {
  const options = {...FLAG_DEFAULTS, manifest: null};
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i].startsWith('--') ? argv[i].slice(2) : null;
    if (flag === null) {
      options.manifest = argv[i];
    } else if (flag in FLAG_DEFAULTS && i + 1 < argv.length && Number(argv[i + 1]) > 0) {
      options[flag] = Number(argv[++i]);
    } else {
      throw new Error(`bad argument '${argv[i]}'`);
    }
  }
  if (!options.manifest) {
    throw new Error(`usage: ${path.basename(script)} MANIFEST [--jobs N] [--chunk N] [--timeout S]`);
  }
  return options;
}

// Reads the manifest's entries.
function readManifest(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

// Lines of a dying child's stderr that say why, best first.
const CRASH_LINE_PATTERNS = [/FATAL ERROR/, /terminate called|what\(\)/, /Assertion|Segmentation/, /error/i];

// The line of `stderr` that best says why the child died, or ''.
function crashLine(stderr) {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const pattern of CRASH_LINE_PATTERNS) {
    const line = lines.find((l) => pattern.test(l));
    if (line) return line.slice(0, 300);
  }
  return (lines[0] || '').slice(0, 300);
}

// Runs one chunk of entries in a child (`script --child`); calls `report`
// for each result. Resolves with the entries left unrun when the child died
// or hung.
function runChunk(script, entries, options, report) {
  return new Promise((resolve) => {
    const child = childProcess.spawn(process.execPath, [script, '--child'],
                                     {stdio: ['pipe', 'pipe', 'pipe']});
    let next = 0;  // index of the entry the child is on
    let stderr = '';  // of the current entry
    let timedOut = false;
    let timer = null;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeout * 1000);
    };
    arm();
    readline.createInterface({input: child.stdout}).on('line', (line) => {
      if (!line.startsWith('{')) return;
      report(JSON.parse(line));
      ++next;
      stderr = '';
      arm();
    });
    child.stderr.on('data', (data) => {
      if (stderr.length < 100000) stderr += data.toString();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (next >= entries.length) return resolve([]);
      const why = crashLine(stderr);
      const how = timedOut ? `timeout after ${options.timeout} s`
                           : `crashed (${signal || `exit code ${code}`})${why ? `: ${why}` : ''}`;
      report({id: entries[next].id, status: 'ort_error', detail: how});
      resolve(entries.slice(next + 1));
    });
    child.stdin.on('error', () => {});  // a child that dies early closes its stdin
    child.stdin.end(entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
  });
}

// Parent mode: runs every manifest entry in child processes of `script`,
// `jobs` at a time.
async function parentMain(script, argv) {
  const options = parseArgs(script, argv);
  const entries = readManifest(options.manifest);
  const queue = [];
  for (let i = 0; i < entries.length; i += options.chunk) queue.push(entries.slice(i, i + options.chunk));
  const counts = {};
  const report = (result) => {
    counts[result.status] = (counts[result.status] || 0) + 1;
    process.stdout.write(JSON.stringify(result) + '\n');
  };
  const worker = async () => {
    while (queue.length) {
      const rest = await runChunk(script, queue.shift(), options, report);
      if (rest.length) queue.unshift(rest);
    }
  };
  await Promise.all(Array.from({length: options.jobs}, worker));
  process.stderr.write(`${path.basename(script, '.js')}: ${entries.length} entries: ${JSON.stringify(counts)}\n`);
}

// The command line of a harness script: `script --child` runs entries with
// `run` (ort, entry) -> {id, status, detail, ...}; `script MANIFEST [--jobs
// N] [--chunk N] [--timeout S]` runs the manifest's entries in children.
function harnessMain(script, run) {
  const main = process.argv[2] === '--child' ? () => childMain(run)
                                             : () => parentMain(script, process.argv.slice(2));
  main().catch((e) => {
    process.stderr.write(`${path.basename(script, '.js')}: ${e.stack || e}\n`);
    process.exit(2);
  });
}

if (require.main === module) harnessMain(__filename, runEntry);

module.exports = {
  ELEMENT_TYPES, ONNX_TYPE_OF_ORT, COMPARABLE, SESSION_OPTIONS, UnsupportedError,
  compareOutput, compareWith, decodeTensorProto, UNOPTIMIZED_OPTIONS, elementCount, halfToNumber, harnessMain,
  messageOf, storedData, unsupportedValues, listDataSets, buildFeeds,
};
