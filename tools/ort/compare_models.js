'use strict';
// Runs a converted model and its original in ONNX Runtime (onnxruntime-node,
// a test tool only) on the same given inputs and compares their outputs:
// the same output names in the same order, and for each the same element
// type, shape and values (integers, bools and strings exactly; floats
// within the entry's rtol and atol, NaN matching NaN and infinities
// themselves). tests/conformance/compositions_numeric.py drives it.
//
// Usage:
//   node compare_models.js MANIFEST [--jobs N] [--chunk N] [--timeout SECONDS]
//
// MANIFEST has one JSON object per line:
//   {"id", "original", "converted", "reference" (optional), "rtol", "atol",
//    "inputs": [{"name", "data_type" (TensorProto code), "dims", "values"}]}
// with the values flat in row-major order as stored: numbers, or strings
// for int64/uint64 and for "NaN", "Infinity" and "-Infinity"; float16 as
// its bit patterns; bools as 0 and 1. When ORT cannot run the original (an
// attribute value it has no kernel for), the reference, a model of the
// same function written otherwise, is the baseline instead; when it can,
// the converted model is compared with the reference too.
// Prints one JSON line per entry:
//   {"id", "status": "pass"|"mismatch"|"ort_error"|"unsupported", "detail",
//    "baselines", "original_error", "outputs", "elements"}
// Entries run in child processes as in run_models.js, whose helpers this
// shares.

const {
  ELEMENT_TYPES, ONNX_TYPE_OF_ORT, COMPARABLE, UNOPTIMIZED_OPTIONS, UnsupportedError, compareWith,
  elementCount, harnessMain, messageOf, unsupportedValues,
} = require('./run_models.js');

// No graph optimizations: the models run op by op as written, so that the
// composition's own ops are what is compared.
const OPTIONS = UNOPTIMIZED_OPTIONS;

// The ORT tensor of one manifest input.
function inputTensor(ort, input) {
  const type = ELEMENT_TYPES[input.data_type];
  if (!type || !type.ort || !type.array) {
    throw new UnsupportedError(`input '${input.name}' has element type ${input.data_type}`);
  }
  const bigint = type.array === BigInt64Array || type.array === BigUint64Array;
  const count = elementCount(input.dims);
  if (input.values.length !== count) {
    throw new Error(`input '${input.name}': ${input.values.length} values for shape [${input.dims}]`);
  }
  const data = type.array.from(input.values, (v) => (bigint ? BigInt(v) : Number(v)));
  return new ort.Tensor(type.ort, data, input.dims);
}

// The feeds of `session`: the manifest's inputs it declares.
function feedsFor(session, feeds, label) {
  const out = {};
  for (const name of session.inputNames) {
    if (!(name in feeds)) throw new Error(`${label} has input '${name}', which the entry does not give`);
    out[name] = feeds[name];
  }
  return out;
}

// Creates a session of `file`; returns [session, error message].
async function open(ort, file) {
  try {
    return [await ort.InferenceSession.create(file, OPTIONS), ''];
  } catch (e) {
    return [null, messageOf(e)];
  }
}

// Compares the outputs of the converted model with a baseline's; returns
// '' or why they differ, and adds the elements compared to `counts`.
function compareRuns(baseline, expected, converted, actual, tolerance, counts) {
  const want = baseline.outputNames.join(', ');
  const got = converted.outputNames.join(', ');
  if (want !== got) return `outputs (${want}) expected, (${got}) actual`;
  for (const name of baseline.outputNames) {
    const e = expected[name];
    const type = ONNX_TYPE_OF_ORT[e.type];
    if (type === undefined) throw new UnsupportedError(`output '${name}' is ${e.type}`);
    const dims = Array.from(e.dims, Number);
    const count = elementCount(dims);
    const why = compareWith(name, type, dims, () => COMPARABLE[ELEMENT_TYPES[type].value](e.data, count),
                            actual[name], tolerance);
    if (why) return why;
    counts.outputs += 1;
    counts.elements += count;
  }
  return '';
}

// Runs one manifest entry and returns its result object.
async function compareEntry(ort, entry) {
  const counts = {outputs: 0, elements: 0};
  const result = (status, detail = '', extra = {}) =>
      ({id: entry.id, status, detail, ...counts, ...extra});
  const sessions = [];
  try {
    const feeds = {};
    for (const input of entry.inputs) feeds[input.name] = inputTensor(ort, input);
    const tolerance = {rtol: entry.rtol, atol: entry.atol};
    const [converted, convertedError] = await open(ort, entry.converted);
    if (!converted) return result('ort_error', `converted model: session: ${convertedError}`);
    sessions.push(converted);
    // The baselines: the original, if ORT runs it, and the reference.
    const baselines = [];
    const [original, originalError] = await open(ort, entry.original);
    if (original) {
      sessions.push(original);
      baselines.push(['original', original]);
    } else if (!entry.reference) {
      return result('ort_error', `original model: session: ${originalError}`);
    }
    if (entry.reference) {
      const [reference, referenceError] = await open(ort, entry.reference);
      if (!reference) return result('ort_error', `reference model: session: ${referenceError}`);
      sessions.push(reference);
      baselines.push(['reference', reference]);
    }
    const extra = {baselines: baselines.map(([label]) => label), original_error: originalError};
    for (const [label, session] of [['converted', converted], ...baselines]) {
      const why = unsupportedValues(session);
      if (why) return result('unsupported', `${label} model: ${why}`, extra);
    }
    let actual;
    try {
      actual = await converted.run(feedsFor(converted, feeds, 'the converted model'));
    } catch (e) {
      return result('ort_error', `converted model: run: ${messageOf(e)}`, extra);
    }
    for (const [label, session] of baselines) {
      let expected;
      try {
        expected = await session.run(feedsFor(session, feeds, `the ${label} model`));
      } catch (e) {
        return result('ort_error', `${label} model: run: ${messageOf(e)}`, extra);
      }
      const why = compareRuns(session, expected, converted, actual, tolerance, counts);
      if (why) return result('mismatch', `against the ${label}: ${why}`, extra);
    }
    return result('pass', '', extra);
  } catch (e) {
    if (e instanceof UnsupportedError) return result('unsupported', e.message);
    return result('ort_error', `harness: ${messageOf(e)}`);
  } finally {
    for (const session of sessions) await session.release().catch(() => {});
  }
}

if (require.main === module) harnessMain(__filename, compareEntry);

module.exports = {compareEntry};
