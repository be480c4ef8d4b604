"""onnx.checker beside our checker: whatever onnx.checker refuses, ours refuses.

Runs under Debian's python3-onnx (/usr/bin/python3). For every model of the
ONNX backend test corpus and for hostile models written here (one or more for
each malformed-model class our checker refuses), it checks the model with
onnx.checker.check_model (full_check=False) and with ours (CHECK_MODELS, the
`onnx-convert check` way: load, then CheckModel) and fails if

  - onnx.checker refuses a model that ours accepts (ours may refuse more,
    never less), compared only for models this onnx knows: IR version and
    every opset import no newer than its own (1.12: IR 8, ai.onnx 17,
    ai.onnx.ml 3, training 1); the others are skipped and counted;
  - ours accepts a hostile model, whatever this onnx says of it;
  - ours refuses a valid control model, or onnx.checker refuses one it knows.

Usage: checker_parity.py CHECK_MODELS WORK_DIR [CORPUS_DIR]
A corpus directory that does not exist is skipped, saying so.
"""

import collections
import os
import subprocess
import sys

import onnx
from onnx import TensorProto, helper

# The corpus's models (tests/test_paths.py: the runfiles tree holds it in
# tests/, as the source tree does).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_paths import corpus_models  # noqa: E402

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
INT4 = 22  # ONNX 1.16 (IR 10); onnx 1.12 has no name for it
UINT2 = 25  # ONNX 1.22 (IR 13)


# ---------------------------------------------------------------------------
# What this onnx knows.

def known_versions():
    """(IR version, {domain: newest opset}) of this onnx release."""
    release = max(helper.VERSION_TABLE,
                  key=lambda row: tuple(int(p) for p in row[0].split(".")[:3]))
    _, ir, ai_onnx, ml, training = release[:5]
    return ir, {"": ai_onnx, "ai.onnx": ai_onnx, "ai.onnx.ml": ml,
                "ai.onnx.training": training, "ai.onnx.preview.training": training}


def beyond_onnx(model, newest_ir, newest_opsets):
    """Why this onnx cannot judge `model`, or None when it can."""
    if model.ir_version > newest_ir:
        return "IR version above %d" % newest_ir
    for opset in model.opset_import:
        newest = newest_opsets.get(opset.domain)
        if newest is not None and opset.version > newest:
            return "opset of %s above %d" % (opset.domain or "ai.onnx", newest)
    return None


def onnx_verdict(path):
    """None if onnx.checker accepts the model at `path`, else its error."""
    try:
        onnx.checker.check_model(path, full_check=False)
        return None
    except Exception as error:  # ValidationError, or a model that does not parse
        return "%s: %s" % (type(error).__name__, str(error).strip().splitlines()[0])


# ---------------------------------------------------------------------------
# Hostile models, each valid but for one thing, and valid controls.

def tensor(name, data_type, dims, **fields):
    """A TensorProto with exactly the data fields given (no conversion)."""
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(dims)
    for field, value in fields.items():
        if field == "raw_data":
            t.raw_data = value
        elif field == "external":
            t.data_location = TensorProto.EXTERNAL
            for key, val in value.items():
                entry = t.external_data.add()
                entry.key, entry.value = key, val
        else:
            getattr(t, field).extend(value)
    return t


def model(nodes=None, initializers=(), sparse=(), functions=(), ir=8, opsets=None):
    """X (float[2]) -> Y through `nodes` (an Identity by default)."""
    nodes = nodes if nodes is not None else [helper.make_node("Identity", ["X"], ["Y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", FLOAT, [2])],
        [helper.make_tensor_value_info("Y", FLOAT, [2])], initializer=list(initializers),
        sparse_initializer=list(sparse))
    imports = [helper.make_opsetid(d, v) for d, v in (opsets or {"": 17}).items()]
    m = helper.make_model(graph, opset_imports=imports, functions=list(functions))
    m.ir_version = ir
    return m


def with_w(t, ir=8):
    return model(initializers=[t], ir=ir)


def sparse(dims, nnz, index_dims, indices, values_dims=None, index_type=INT64):
    values = tensor("S", FLOAT, values_dims or [nnz], float_data=[1.0] * nnz)
    index = tensor("S_indices", index_type, index_dims,
                   **({"int64_data": indices} if index_type == INT64 else
                      {"int32_data": indices}))
    return helper.make_sparse_tensor(values, index, dims)


def with_s(s):
    return model(sparse=[s])


def attribute(name, **fields):
    """An AttributeProto with exactly the fields given."""
    a = onnx.AttributeProto()
    a.name = name
    for field, value in fields.items():
        if field in ("ints", "floats", "strings"):
            getattr(a, field).extend(value)
        elif field in ("t", "sparse_tensor"):
            getattr(a, field).CopyFrom(value)
        elif field == "sparse_tensors":
            for s in value:
                a.sparse_tensors.add().CopyFrom(s)
        else:
            setattr(a, field, value)
    return a


def softmax_with(attr):
    node = helper.make_node("Softmax", ["X"], ["Y"])
    node.attribute.append(attr)
    return model([node])


def local(name, nodes, inputs=("A",), outputs=("B",), attributes=()):
    return helper.make_function("local", name, list(inputs), list(outputs), nodes,
                                [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                                list(attributes))


def calls(callee, inputs=("A",), outputs=("B",), **attrs):
    return helper.make_node(callee, list(inputs), list(outputs), domain="local", **attrs)


def with_functions(*functions, main=None):
    return model(main or [calls("F", ["X"], ["Y"])], functions=functions,
                 opsets={"": 17, "local": 1})


def if_node(cond, then_nodes, out):
    then_graph = helper.make_graph(then_nodes, "then", [],
                                   [helper.make_tensor_value_info("T", FLOAT, None)])
    else_graph = helper.make_graph([helper.make_node("Identity", ["A"], ["E"])], "else", [],
                                   [helper.make_tensor_value_info("E", FLOAT, None)])
    return helper.make_node("If", [cond], [out], then_branch=then_graph, else_branch=else_graph)


def constant_true(out):
    return helper.make_node("Constant", [], [out],
                            value=helper.make_tensor("c", TensorProto.BOOL, [], [True]))


def constant_with(attr):
    node = helper.make_node("Constant", [], ["C"])
    node.attribute.append(attr)
    return model([node, helper.make_node("Identity", ["X"], ["Y"])])


def ref_with_value():
    node = helper.make_node("Softmax", ["A"], ["B"])
    node.attribute.append(attribute("axis", type=onnx.AttributeProto.INT, ref_attr_name="axis",
                                    i=1))
    return with_functions(local("F", [node], attributes=["axis"]),
                          main=[calls("F", ["X"], ["Y"], axis=0)])


def ref_in_function_subgraph():
    softmax = helper.make_node("Softmax", ["A"], ["T"])
    softmax.attribute.append(attribute("axis", type=onnx.AttributeProto.INT,
                                       ref_attr_name="axis"))
    body = [constant_true("C"), if_node("C", [softmax], "B")]
    return with_functions(local("F", body, attributes=["axis"]),
                          main=[calls("F", ["X"], ["Y"], axis=0)])


def negative_ir():
    m = model()
    m.ir_version = -5
    return m


FLOAT_2 = dict(float_data=[1.0, 2.0])

# (class, name, model): every hostile model must be refused by ours.
HOSTILE = [
    ("data_type", "unknown_data_type", with_w(tensor("W", 99, [2], **FLOAT_2))),
    ("data_type", "undefined_data_type_with_data", with_w(tensor("W", 0, [2], **FLOAT_2))),
    ("dims", "negative_dim", with_w(tensor("W", FLOAT, [2, -1], **FLOAT_2))),
    ("dims", "dims_overflow_int64", with_w(tensor("W", FLOAT, [2**32, 2**32], **FLOAT_2))),
    ("data_size", "float_data_short", with_w(tensor("W", FLOAT, [3], **FLOAT_2))),
    ("data_size", "float_data_long", with_w(tensor("W", FLOAT, [1], **FLOAT_2))),
    ("data_size", "no_data", with_w(tensor("W", FLOAT, [2]))),
    ("data_size", "data_for_no_elements", with_w(tensor("W", FLOAT, [0], **FLOAT_2))),
    ("data_size", "int32_data_short", with_w(tensor("W", TensorProto.INT32, [3],
                                                    int32_data=[1, 2]))),
    ("data_size", "int64_data_long", with_w(tensor("W", INT64, [1], int64_data=[1, 2]))),
    ("data_size", "double_data_short", with_w(tensor("W", TensorProto.DOUBLE, [2],
                                                     double_data=[1.0]))),
    ("data_size", "uint64_data_short", with_w(tensor("W", TensorProto.UINT64, [2],
                                                     uint64_data=[1]))),
    ("data_size", "string_data_long", with_w(tensor("W", TensorProto.STRING, [1],
                                                    string_data=[b"a", b"b"]))),
    ("data_size", "complex64_one_float_each", with_w(tensor("W", TensorProto.COMPLEX64, [2],
                                                            **FLOAT_2))),
    ("data_size", "float16_int32_data_short", with_w(tensor("W", TensorProto.FLOAT16, [2],
                                                            int32_data=[15360]))),
    ("data_size", "bfloat16_int32_data_long", with_w(tensor("W", TensorProto.BFLOAT16, [1],
                                                            int32_data=[16256, 16256]))),
    ("data_size", "int4_one_per_int32_value", with_w(tensor("W", INT4, [3],
                                                            int32_data=[1, 2, 3]), ir=10)),
    ("data_size", "int4_raw_data_short", with_w(tensor("W", INT4, [3], raw_data=b"\x21"),
                                                ir=10)),
    ("data_size", "uint2_raw_data_long", with_w(tensor("W", UINT2, [4], raw_data=b"\x39\x01"),
                                                ir=13)),
    ("data_size", "raw_data_short", with_w(tensor("W", FLOAT, [2], raw_data=b"\0" * 4))),
    ("data_size", "raw_data_long", with_w(tensor("W", TensorProto.INT16, [1],
                                                 raw_data=b"\0" * 4))),
    ("data_field", "float_data_and_raw_data", with_w(tensor("W", FLOAT, [1], float_data=[1.0],
                                                            raw_data=b"\0" * 4))),
    ("data_field", "float_in_int64_data", with_w(tensor("W", FLOAT, [1], int64_data=[1]))),
    ("data_field", "string_in_raw_data", with_w(tensor("W", TensorProto.STRING, [1],
                                                       raw_data=b"a"))),
    # w.bin exists beside it (write_models): the load finds it, the check refuses the data.
    ("data_field", "external_with_data", with_w(tensor("W", FLOAT, [1], float_data=[1.0],
                                                       external={"location": "w.bin"}))),
    ("data_size", "tensor_attribute_short",
     constant_with(attribute("value", type=onnx.AttributeProto.TENSOR,
                             t=tensor("", FLOAT, [2], float_data=[1.0])))),
    ("sparse", "index_out_of_range", with_s(sparse([2, 3], 2, [2], [0, 6]))),
    ("sparse", "negative_index", with_s(sparse([2, 3], 2, [2], [-1, 2]))),
    ("sparse", "unsorted_indices", with_s(sparse([6], 2, [2], [3, 1]))),
    ("sparse", "repeated_index", with_s(sparse([6], 2, [2], [2, 2]))),
    ("sparse", "more_indices_than_values", with_s(sparse([6], 2, [3], [0, 1, 2]))),
    ("sparse", "indices_of_rank_3", with_s(sparse([2, 3], 2, [2, 2, 1], [0, 0, 1, 1]))),
    ("sparse", "coordinate_out_of_range", with_s(sparse([2, 3], 2, [2, 2], [0, 0, 1, 3]))),
    ("sparse", "coordinates_unsorted", with_s(sparse([2, 3], 2, [2, 2], [1, 0, 0, 2]))),
    ("sparse", "values_not_1d", with_s(sparse([6], 2, [2], [0, 1], values_dims=[2, 1]))),
    ("sparse", "no_dense_dims", with_s(sparse([], 0, [0], []))),
    ("sparse", "zero_dense_dim", with_s(sparse([2, 0], 0, [0], []))),
    ("sparse", "int32_indices", with_s(sparse([6], 1, [1], [0], index_type=TensorProto.INT32))),
    ("sparse", "sparse_value_attribute_unsorted",
     constant_with(attribute("sparse_value", type=onnx.AttributeProto.SPARSE_TENSOR,
                             sparse_tensor=sparse([4], 2, [2], [3, 3])))),
    ("attribute", "type_float_value_in_ints",
     softmax_with(attribute("axis", type=onnx.AttributeProto.FLOAT, ints=[1]))),
    ("attribute", "two_values", softmax_with(attribute("axis", type=onnx.AttributeProto.INT,
                                                       i=1, f=1.0))),
    ("attribute", "no_type", softmax_with(attribute("axis", i=1))),
    ("attribute", "reference_outside_a_function",
     softmax_with(attribute("axis", type=onnx.AttributeProto.INT, ref_attr_name="axis"))),
    ("attribute", "reference_with_a_value", ref_with_value()),
    ("function_cycle", "calls_itself", with_functions(local("F", [calls("F")]))),
    ("function_cycle", "call_each_other",
     with_functions(local("F", [calls("G")]), local("G", [calls("F")]))),
    ("function_cycle", "three_deep",
     with_functions(local("F", [calls("G")]), local("G", [calls("H")]),
                    local("H", [calls("F")]))),
    ("function_cycle", "through_a_subgraph",
     with_functions(local("F", [calls("G")]),
                    local("G", [constant_true("C"), if_node("C", [calls("F", ["A"], ["T"])],
                                                            "B")]))),
    ("ir_version", "negative_ir_version", negative_ir()),
]

# (name, model): every control must be accepted by ours and by this onnx.
VALID = [
    ("identity", model()),
    ("float_data", with_w(tensor("W", FLOAT, [2, 2], float_data=[1.0, 2.0, 3.0, 4.0]))),
    ("no_elements_no_data", with_w(tensor("W", FLOAT, [2, 0]))),
    ("raw_data", with_w(tensor("W", FLOAT, [2], raw_data=b"\0" * 8))),
    ("external_data", with_w(tensor("W", FLOAT, [1], external={"location": "w.bin"}))),
    ("complex64", with_w(tensor("W", TensorProto.COMPLEX64, [1], **FLOAT_2))),
    ("float16_bits", with_w(tensor("W", TensorProto.FLOAT16, [2], int32_data=[15360, 15360]))),
    ("int4_two_per_value", with_w(tensor("W", INT4, [3], int32_data=[33, 3]), ir=10)),
    ("int4_two_per_byte", with_w(tensor("W", INT4, [3], raw_data=b"\x21\x03"), ir=10)),
    ("sparse_linearized", with_s(sparse([2, 3], 3, [3], [0, 4, 5]))),
    ("sparse_coordinates", with_s(sparse([2, 3], 3, [3, 2], [0, 0, 1, 1, 1, 2]))),
    ("function_diamond",
     with_functions(local("F", [calls("G", ["A"], ["T"]), calls("H", ["T"], ["B"])]),
                    local("G", [calls("H")]),
                    local("H", [helper.make_node("Identity", ["A"], ["B"])]))),
    ("reference_in_a_function_subgraph", ref_in_function_subgraph()),
]


# ---------------------------------------------------------------------------

def our_verdicts(check_models, paths):
    """{path: None if ours accepts, else its first error}."""
    run = subprocess.run([check_models], input="\n".join(paths) + "\n", capture_output=True,
                         text=True, check=False)
    if run.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (check_models, run.returncode, run.stderr))
    verdicts = {}
    for line in run.stdout.splitlines():
        fields = line.split("\t")
        verdicts[fields[1]] = None if fields[0] == "accept" else fields[2]
    missing = [p for p in paths if p not in verdicts]
    if missing:
        sys.exit("FAIL: no verdict from %s for %s" % (check_models, missing[:3]))
    return verdicts


def corpus_model_paths(corpus):
    """The corpus's model files (as tests/corpus.cc lists them), or None if absent."""
    if not os.path.isdir(corpus):
        return None
    return [path for _, _, path in corpus_models(corpus)]


def write_models(work):
    """Writes the hostile and valid models; {path: (kind, class, name)}."""
    written = {}
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "w.bin"), "wb") as f:
        f.write(b"\0" * 4)  # one float, for the tensors stored externally
    for kind, entries in (("hostile", HOSTILE), ("valid", [("valid",) + v for v in VALID])):
        for cls, name, m in entries:
            path = os.path.join(work, "%s_%s.onnx" % (kind, name))
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            written[path] = (kind, cls, name)
    return written


def short(verdict):
    return "accepts" if verdict is None else "refuses (%s)" % verdict[:150]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    check_models, work = argv[1], argv[2]
    corpus = argv[3] if len(argv) > 3 else None
    newest_ir, newest_opsets = known_versions()
    print("onnx %s beside ours: IR <= %d, ai.onnx <= %d, ai.onnx.ml <= %d compared"
          % (onnx.__version__, newest_ir, newest_opsets[""], newest_opsets["ai.onnx.ml"]))

    generated = write_models(os.path.join(work, "generated"))
    paths = list(generated)
    corpus_paths = corpus_model_paths(corpus) if corpus else None
    if corpus_paths is None:
        print("SKIPPED the corpus: no folder at %s (../shared/onnx-backend-tests beside the "
              "checkout, or set ONNX_BACKEND_TESTS)" % corpus)
    else:
        print("corpus: %d models under %s" % (len(corpus_paths), corpus))
        paths += corpus_paths
    ours = our_verdicts(check_models, paths)

    counts = {"corpus": collections.Counter(), "generated": collections.Counter()}
    skipped = collections.Counter()
    failures = []
    for path in paths:
        kind, cls, name = generated.get(path, ("corpus", "", path))
        mine = ours[path]
        why_not = beyond_onnx(onnx.load(path, load_external_data=False), newest_ir,
                              newest_opsets)
        theirs = None if why_not else onnx_verdict(path)
        label = "%s %s" % (kind, name if kind != "corpus" else os.path.relpath(path, corpus))
        if kind == "hostile":
            print("  %-16s %-34s onnx: %-70s ours: %s" % (
                cls, name, "skipped (%s)" % why_not if why_not else short(theirs)[:70],
                short(mine)))
            if mine is None:
                failures.append("%s: ours accepts it (a %s defect)" % (label, cls))
        if kind == "valid" and mine is not None:
            failures.append("%s: ours refuses a valid model: %s" % (label, mine))
        tally = counts["corpus" if kind == "corpus" else "generated"]
        if why_not:
            tally["skipped"] += 1
            skipped[why_not] += 1
            continue
        tally["compared"] += 1
        if theirs is None and mine is None:
            tally["both accept"] += 1
        elif theirs is not None and mine is not None:
            tally["both refuse"] += 1
        elif mine is not None:
            tally["only ours refuses"] += 1
        else:
            tally["only onnx refuses"] += 1
            failures.append("%s: onnx.checker refuses it (%s), ours accepts it" % (label, theirs))
        if kind == "valid" and theirs is not None:
            failures.append("%s: onnx.checker refuses a valid control: %s" % (label, theirs))

    kinds = collections.Counter(generated.get(p, ("corpus",))[0] for p in paths)
    print("models: %d corpus, %d hostile, %d valid controls" % (
        kinds["corpus"], kinds["hostile"], kinds["valid"]))
    counts["all"] = counts["corpus"] + counts["generated"]
    for which in ("corpus", "generated", "all"):
        tally = counts[which]
        print("%-9s compared: %d, both accept: %d, both refuse: %d, only ours refuses: %d, "
              "only onnx refuses: %d, skipped: %d" % (
                  which, tally["compared"], tally["both accept"], tally["both refuse"],
                  tally["only ours refuses"], tally["only onnx refuses"], tally["skipped"]))
    for why, n in sorted(skipped.items()):
        print("  skipped, %s: %d" % (why, n))
    if failures:
        for failure in failures:
            print("FAIL: " + failure)
        return 1
    print("PASS: every model onnx.checker refuses, ours refuses too")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
