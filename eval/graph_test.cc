// The graph runner, one table-driven case per behaviour: a model in ONNX
// text, its inputs (an initializer list in ONNX text), and the outputs as
// text ("int64[2] {4, 2}", "; "-joined) or the error ("CODE: message").

#include "eval/graph.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/tensor.h"
#include "eval/value.h"
#include "gtest/gtest.h"
#include "ir/memory_budget.h"
#include "ir/text_parser.h"

namespace onnxconvert::eval {
namespace {

struct Case {
  std::string name;
  std::string model;     // ONNX text
  std::string inputs;    // "int64[2] a = {1, 2}, bool c = {1}"
  std::string expected;  // the outputs, "; "-joined, or "CODE: message"
  EvalOptions options = {};
};

// The model's header at ai.onnx `opset`.
std::string Header(int opset) {
  return absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", opset, "]>\n");
}

// The model's header at ai.onnx 26 and ai.onnx.preview 1.
std::string FlexHeader() {
  return "<ir_version: 10, opset_import: [\"\" : 26, \"ai.onnx.preview\" : 1]>\n";
}

absl::StatusOr<std::vector<NamedValue>> ParseInputs(const std::string& text) {
  absl::StatusOr<onnx::GraphProto> graph =
      ParseGraphText(absl::StrCat("inputs () => () <", text, "> {}"));
  if (!graph.ok()) return graph.status();
  std::vector<NamedValue> inputs;
  for (const onnx::TensorProto& proto : graph->initializer()) {
    absl::StatusOr<Tensor> tensor = FromProto(proto);
    if (!tensor.ok()) return tensor.status();
    inputs.push_back({proto.name(), Value(*std::move(tensor))});
  }
  return inputs;
}

// What a run gave: the outputs, "; "-joined, or "CODE: message".
std::string Shown(const absl::StatusOr<EvalResult>& result) {
  if (!result.ok()) {
    return absl::StrCat(absl::StatusCodeToString(result.status().code()), ": ",
                        result.status().message());
  }
  std::vector<std::string> shown;
  for (const NamedValue& output : result->outputs) shown.push_back(DebugString(output.value));
  return absl::StrJoin(shown, "; ");
}

std::string Evaluate(const Case& c) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(c.model);
  if (!model.ok()) return absl::StrCat("model does not parse: ", model.status().message());
  absl::StatusOr<std::vector<NamedValue>> inputs =
      c.inputs.empty() ? std::vector<NamedValue>() : ParseInputs(c.inputs);
  if (!inputs.ok()) return absl::StrCat("inputs do not parse: ", inputs.status().message());
  return Shown(EvaluateModel(*model, *std::move(inputs), c.options));
}

class GraphTest : public testing::TestWithParam<Case> {};

TEST_P(GraphTest, RunsTheModel) { EXPECT_EQ(Evaluate(GetParam()), GetParam().expected); }

// A PreparedModel gives what EvaluateModel gives, run after run (its plans
// and bindings kept from the first), node runs and peak live bytes too.
TEST_P(GraphTest, PreparedModelRunsAlike) {
  const Case& c = GetParam();
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(c.model);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::vector<NamedValue>> inputs =
      c.inputs.empty() ? std::vector<NamedValue>() : ParseInputs(c.inputs);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<EvalResult> once = EvaluateModel(*model, *inputs, c.options);
  PreparedModel prepared(*model, c.options);
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<EvalResult> result = prepared.Evaluate(*inputs);
    EXPECT_EQ(Shown(result), c.expected) << "run " << run;
    if (result.ok() && once.ok()) {
      EXPECT_EQ(result->node_runs, once->node_runs) << "run " << run;
      EXPECT_EQ(result->peak_live_bytes, once->peak_live_bytes) << "run " << run;
    }
  }
}

const std::string kAddWithDefault =
    Header(13) +
    "g (int64[2] a, int64[2] b) => (int64[2] y) <int64[2] b = {10, 20}> { y = Add(a, b) }";

const std::string kLoopCounting =
    Header(11) +
    "g (int64 m, bool c, float[1] y) => (float[1] res, float[3,1] scan) {\n"
    "  res, scan = Loop(m, c, y) <body = body (int64 i, bool cin, float[1] yin) => "
    "(bool cout, float[1] yout, float[1] s) {\n"
    "    cout = Identity(cin)\n"
    "    one = Constant <value = float[1] {1}> ()\n"
    "    yout = Add(yin, one)\n"
    "    s = Identity(yout)\n"
    "  }>\n"
    "}";

// A Range-like Loop whose body declares no output types: its scan outputs
// of no iterations take the types inference gives the body's outputs.
const std::string kLoopUntypedScans =
    Header(13) +
    "g (int64 m, int32 start, int32 delta) => (int32 last, int32[N] r, int64[N] idx, "
    "double[N] d) {\n"
    "  last, r, idx, d = Loop(m, \"\", start) <body = b (int64 i, bool cin, prev) => "
    "(cout, next, cur, twice, wide) {\n"
    "    cout = Identity(cin)\n"
    "    next = Add(prev, delta)\n"
    "    cur = Identity(prev)\n"
    "    two = Constant <value = int64 {2}> ()\n"
    "    twice = Mul(i, two)\n"
    "    wide = Cast <to = 11> (prev)\n"
    "  }>\n"
    "}";

const std::string kIfOuterScope =
    Header(13) +
    "g (bool c, int64[2] a) => (int64[2] y) <int64[2] k = {10, 20}> {\n"
    "  y = If(c) <then_branch = t () => (int64[2] r) { r = Add(a, k) },\n"
    "             else_branch = e () => (int64[2] a) { n = Neg(a) }>\n"
    "}";

const std::string kSequenceInLoop =
    Header(13) +
    "g (int64 m) => (seq(int64) out) {\n"
    "  empty = SequenceEmpty <dtype = 7> ()\n"
    "  out = Loop(m, \"\", empty) <body = b (int64 i, bool cin, seq(int64) sin) => "
    "(bool cout, seq(int64) sout) {\n"
    "    cout = Identity(cin)\n"
    "    sout = SequenceInsert(sin, i)\n"
    "  }>\n"
    "}";

const std::string kForever =
    Header(13) +
    "g (bool c) => (int64 r) <int64 x = {0}> {\n"
    "  r = Loop(\"\", c, x) <body = b (int64 i, bool cin, int64 xin) => (bool cout, int64 xout) {\n"
    "    cout = Identity(cin)\n"
    "    xout = Add(xin, i)\n"
    "  }>\n"
    "}";

const std::string kOptionals =
    Header(18) +
    "g (int64[2] a) => (bool h1, bool h2, int64[2] v, bool h3, bool h4) {\n"
    "  o = Optional(a)\n"
    "  e = Optional <type: type_proto = int64[2]> ()\n"
    "  h1 = OptionalHasElement(o)\n"
    "  h2 = OptionalHasElement(e)\n"
    "  v = OptionalGetElement(o)\n"
    "  h3 = OptionalHasElement(a)\n"
    "  h4 = OptionalHasElement(\"\")\n"
    "}";

const std::string kLocalFunctions =
    "<ir_version: 8, opset_import: [\"\" : 17, \"local\" : 1]>\n"
    "g (float[2] x) => (float[2] y, float[2] z, float[2] w) {\n"
    "  y = local.Scale <factor = 3.0> (x)\n"
    "  z = local.Scale (x)\n"
    "  w = local.Twice (x)\n"
    "}\n"
    "<domain: \"local\", opset_import: [\"\" : 17]>\n"
    "Scale <factor = 2.0> (X) => (Y) {\n"
    "  F = Constant <value_float: float = @factor> ()\n"
    "  Y = Mul(X, F)\n"
    "}\n"
    "<domain: \"local\", opset_import: [\"\" : 17, \"local\" : 1]>\n"
    "Twice (X) => (Y) { A = local.Inc(X) Y = local.Inc(A) }\n"
    "<domain: \"local\", opset_import: [\"\" : 17]>\n"
    "Inc (X) => (Y) {\n"
    "  one = Constant <value = float[1] {1}> ()\n"
    "  t = Constant <value = bool {1}> ()\n"
    "  Y = If(t) <then_branch = th () => (float[2] r) { r = Add(X, one) },\n"
    "             else_branch = el () => (float[2] r2) { r2 = Identity(X) }>\n"
    "}\n";

const std::string kRecursive =
    "<ir_version: 8, opset_import: [\"\" : 17, \"local\" : 1]>\n"
    "g (float[2] x) => (float[2] y) { y = local.F(x) }\n"
    "<domain: \"local\", opset_import: [\"\" : 17, \"local\" : 1]>\n"
    "F (X) => (Y) { Y = local.F(X) }\n";

const Case kCases[] = {
    // Inputs: by name, initializers as defaults, declared types checked.
    {"initializer_is_the_default", kAddWithDefault, "int64[2] a = {1, 2}", "int64[2] {11, 22}"},
    {"input_overrides_initializer", kAddWithDefault, "int64[2] a = {1, 2}, int64[2] b = {5, 5}",
     "int64[2] {6, 7}"},
    {"input_missing", kAddWithDefault, "", "INVALID_ARGUMENT: input 'a' is not given"},
    {"input_of_wrong_type", kAddWithDefault, "float[2] a = {1, 2}",
     "INVALID_ARGUMENT: input 'a': expected int64[2], got float[2]"},
    {"input_of_wrong_shape", kAddWithDefault, "int64[3] a = {1, 2, 3}",
     "INVALID_ARGUMENT: input 'a': expected int64[2], got int64[3]"},
    {"input_unknown", kAddWithDefault, "int64[2] a = {1, 2}, int64[1] c = {1}",
     "INVALID_ARGUMENT: the graph has no input 'c'"},
    // The graph: topological order, single definitions, defined values.
    {"not_topological",
     Header(13) + "g (int64[1] a) => (int64[1] y) { y = Add(t, a) t = Identity(a) }",
     "int64[1] a = {1}",
     "INVALID_ARGUMENT: graph 'g': node (Add) of 'y' reads 't' before node (Identity) of 't' "
     "defines it (the nodes are not in topological order)"},
    {"defined_twice",
     Header(13) + "g (int64[1] a) => (int64[1] y) { t = Identity(a) t = Neg(a) y = Identity(t) }",
     "int64[1] a = {1}",
     "INVALID_ARGUMENT: graph 'g': value 't' is defined twice (again by node (Neg) of 't')"},
    {"undefined_value", Header(13) + "g (int64[1] a) => (int64[1] y) { y = Add(a, nope) }",
     "int64[1] a = {1}", "INVALID_ARGUMENT: graph 'g' reads values nothing defines: 'nope'"},
    // If: the taken branch, reading the values around it; an output may
    // name one of them.
    {"if_then_reads_outer_scope", kIfOuterScope, "bool c = {1}, int64[2] a = {1, 2}",
     "int64[2] {11, 22}"},
    {"if_else_outputs_outer_value", kIfOuterScope, "bool c = {0}, int64[2] a = {1, 2}",
     "int64[2] {1, 2}"},
    {"if_inside_loop_reads_grandparent",
     Header(13) +
         "g (bool c, int64 m) => (int64 r) <int64 k = {5}> {\n"
         "  r = If(c) <then_branch = t () => (int64 tr) {\n"
         "      tr = Loop(m, \"\", k) <body = b (int64 i, bool cin, int64 x) => (bool cout, int64 xo)"
         " { cout = Identity(cin) xo = Add(x, k) }>\n"
         "    }, else_branch = e () => (int64 er) { er = Identity(k) }>\n"
         "}",
     "bool c = {1}, int64 m = {2}", "int64[] {15}"},
    // Loop: trip count and condition, loop-carried values, scan outputs.
    {"loop_trip_count", kLoopCounting, "int64 m = {3}, bool c = {1}, float[1] y = {0}",
     "float[1] {3}; float[3,1] {1, 2, 3}"},
    {"loop_no_iterations", kLoopCounting, "int64 m = {0}, bool c = {1}, float[1] y = {0}",
     "float[1] {0}; float[0,1] {}"},
    {"loop_false_condition", kLoopCounting, "int64 m = {5}, bool c = {0}, float[1] y = {7}",
     "float[1] {7}; float[0,1] {}"},
    {"loop_untyped_scans", kLoopUntypedScans, "int64 m = {3}, int32 start = {5}, int32 delta = {-2}",
     "int32[] {-1}; int32[3] {5, 3, 1}; int64[3] {0, 2, 4}; double[3] {5, 3, 1}"},
    {"loop_untyped_scans_no_iterations", kLoopUntypedScans,
     "int64 m = {0}, int32 start = {5}, int32 delta = {-2}",
     "int32[] {5}; int32[0] {}; int64[0] {}; double[0] {}"},
    {"loop_untyped_scans_negative_trip_count", kLoopUntypedScans,
     "int64 m = {-1}, int32 start = {5}, int32 delta = {-2}",
     "int32[] {5}; int32[0] {}; int64[0] {}; double[0] {}"},
    {"loop_untyped_scan_of_unknown_type",
     "<ir_version: 8, opset_import: [\"\" : 13, \"local\" : 1]>\n"
     "g (int64 m, int32 start) => (int32 last, int32[N] r) {\n"
     "  last, r = Loop(m, \"\", start) <body = b (int64 i, bool cin, prev) => "
     "(cout, next, cur) { cout = Identity(cin) next = Identity(prev) cur = local.Id(prev) }>\n"
     "}\n"
     "<domain: \"local\", opset_import: [\"\" : 13]>\n"
     "Id (X) => (Y) { Y = Identity(X) }\n",
     "int64 m = {0}, int32 start = {5}",
     "INVALID_ARGUMENT: node (Loop-13) of 'last': no iteration runs, and the element type of "
     "scan output 'cur' is neither declared by the body nor inferred from its inputs"},
    {"loop_until_condition",
     Header(13) +
         "g (bool c, int64 x) => (int64 r) {\n"
         "  r = Loop(\"\", c, x) <body = b (int64 i, bool cin, int64 xin) => (bool cout, int64 xout)"
         " {\n    two = Constant <value = int64 {2}> ()\n    xout = Add(xin, i)\n"
         "    cout = Less(i, two)\n  }>\n}",
     "bool c = {1}, int64 x = {10}", "int64[] {13}"},
    {"loop_carries_a_sequence", kSequenceInLoop, "int64 m = {3}",
     "seq(int64[] {0}, int64[] {1}, int64[] {2})"},
    {"loop_iteration_limit", kForever, "bool c = {1}",
     "RESOURCE_EXHAUSTED: node (Loop-13) of 'r': the loop runs more than 5 iterations",
     {.max_iterations = 5}},
    {"loop_body_error_names_the_path",
     Header(14) +
         "g (int64 m) => (int64[2] r) <int64[2] x = {1, 2}, int64[3] k = {1, 2, 3}> {\n"
         "  r = Loop(m, \"\", x) <body = b (int64 i, bool cin, int64[2] xin) => "
         "(bool cout, int64[2] xout) { cout = Identity(cin) xout = Add(xin, k) }>\n}",
     "int64 m = {2}",
     "INVALID_ARGUMENT: node (Loop-13) of 'r', body, iteration 0: node (Add-14) of 'xout': "
     "shapes [2], [3] do not broadcast"},
    // Scan: states, scan axes and directions; Scan-8's batch axis and
    // sequence lengths.
    {"scan_axis_1_reversed_input",
     Header(11) +
         "g (float[2] s0, float[2,3] x) => (float[2] s, float[2,3] ys) {\n"
         "  s, ys = Scan(s0, x) <num_scan_inputs = 1, scan_input_axes = [1], "
         "scan_input_directions = [1], scan_output_axes = [-1], body = b (float[2] sin, "
         "float[2] xin) => (float[2] sout, float[2] y) { sout = Add(sin, xin) y = Identity(sout) "
         "}>\n}",
     "float[2] s0 = {0, 0}, float[2,3] x = {1, 2, 3, 4, 5, 6}",
     "float[2] {6, 15}; float[2,3] {3, 5, 6, 6, 11, 15}"},
    {"scan_reversed_output",
     Header(9) +
         "g (float s0, float[3] x) => (float s, float[3] ys) {\n"
         "  s, ys = Scan(s0, x) <num_scan_inputs = 1, scan_output_directions = [1], body = b "
         "(float sin, float xin) => (float sout, float y) { sout = Add(sin, xin) "
         "y = Identity(sout) }>\n}",
     "float s0 = {0}, float[3] x = {1, 2, 3}", "float[] {6}; float[3] {6, 3, 1}"},
    {"scan_8_batch_with_lengths",
     Header(8) +
         "g (int64[2] lens, float[2,1] s0, float[2,3,1] x) => (float[2,1] s, float[2,3,1] ys) {\n"
         "  s, ys = Scan(lens, s0, x) <num_scan_inputs = 1, body = b (float[1] sin, float[1] xin)"
         " => (float[1] sout, float[1] y) { sout = Add(sin, xin) y = Identity(sout) }>\n}",
     "int64[2] lens = {3, 2}, float[2,1] s0 = {0, 0}, float[2,3,1] x = {1, 2, 3, 10, 20, 30}",
     "float[2,1] {6, 30}; float[2,3,1] {1, 3, 6, 10, 30, 0}"},
    {"scan_untyped_output_no_iterations",
     Header(11) +
         "g (float[2] s0, float[0,2] x) => (float[2] s, int32[0,2] ys) {\n"
         "  s, ys = Scan(s0, x) <num_scan_inputs = 1, body = b (sin, xin) => (sout, y) "
         "{ sout = Add(sin, xin) y = Cast <to = 6> (xin) }>\n}",
     "float[2] s0 = {1, 2}, float[0,2] x = {}", "float[2] {1, 2}; int32[0,2] {}"},
    {"scan_8_untyped_output_of_length_0",
     Header(8) +
         "g (int64[2] lens, float[2,1] s0, float[2,2,1] x) => (float[2,1] s, int64[2,2,1] ys) {\n"
         "  s, ys = Scan(lens, s0, x) <num_scan_inputs = 1, body = b (sin, xin) => (sout, y) "
         "{ sout = Add(sin, xin) y = Cast <to = 7> (xin) }>\n}",
     "int64[2] lens = {0, 2}, float[2,1] s0 = {0, 0}, float[2,2,1] x = {1, 2, 10, 20}",
     "float[2,1] {0, 30}; int64[2,2,1] {0, 0, 10, 20}"},
    // Sequences.
    {"sequence_ops",
     Header(17) +
         "g (int64[2] a, int64[3] b) => (int64 n, int64[3] at, int64 n2, seq(int64) s3) {\n"
         "  s = SequenceConstruct(a, a)\n"
         "  p = Constant <value = int64 {1}> ()\n"
         "  s2 = SequenceInsert(s, b, p)\n"
         "  at = SequenceAt(s2, p)\n"
         "  s3 = SequenceErase(s2)\n"
         "  n = SequenceLength(s2)\n"
         "  n2 = SequenceLength(s3)\n"
         "}",
     "int64[2] a = {1, 2}, int64[3] b = {3, 4, 5}",
     "int64[] {3}; int64[3] {3, 4, 5}; int64[] {2}; seq(int64[2] {1, 2}, int64[3] {3, 4, 5})"},
    {"sequence_insert_checks_the_type",
     Header(17) +
         "g (int64[2] a, float[1] f) => (seq(int64) s2) { s = SequenceConstruct(a) "
         "s2 = SequenceInsert(s, f) }",
     "int64[2] a = {1, 2}, float[1] f = {1}",
     "INVALID_ARGUMENT: node (SequenceInsert-11) of 's2': inserts float into a sequence of "
     "int64"},
    {"sequence_at_out_of_range",
     Header(17) +
         "g (int64[2] a) => (int64[2] y) { s = SequenceConstruct(a, a) "
         "p = Constant <value = int64 {-3}> () y = SequenceAt(s, p) }",
     "int64[2] a = {1, 2}",
     "INVALID_ARGUMENT: node (SequenceAt-11) of 'y': position -3 is out of range for a sequence "
     "of 2"},
    {"split_to_sequence_and_back",
     Header(17) +
         "g (int64[5] x) => (int64[5] y, int64[5] st, int64 n) {\n"
         "  two = Constant <value = int64 {2}> ()\n"
         "  s = SplitToSequence(x, two)\n"
         "  y = ConcatFromSequence <axis = 0> (s)\n"
         "  parts = SplitToSequence <keepdims = 0> (x)\n"
         "  st = ConcatFromSequence <axis = -1, new_axis = 1> (parts)\n"
         "  n = SequenceLength(s)\n"
         "}",
     "int64[5] x = {1, 2, 3, 4, 5}",
     "int64[5] {1, 2, 3, 4, 5}; int64[5] {1, 2, 3, 4, 5}; int64[] {3}"},
    {"sequence_map_with_a_tensor",
     Header(17) +
         "g (int64[2] a, int64[3] b, int64[1] k) => (seq(int64) out) {\n"
         "  s = SequenceConstruct(a, b)\n"
         "  out = SequenceMap(s, k) <body = m (int64[N] x, int64[1] kk) => (int64[N] y) "
         "{ y = Add(x, kk) }>\n}",
     "int64[2] a = {1, 2}, int64[3] b = {3, 4, 5}, int64[1] k = {10}",
     "seq(int64[2] {11, 12}, int64[3] {13, 14, 15})"},
    {"identity_of_a_sequence",
     Header(17) + "g (int64[2] a) => (seq(int64) t) { s = SequenceConstruct(a) t = Identity(s) }",
     "int64[2] a = {1, 2}", "seq(int64[2] {1, 2})"},
    // Optionals.
    {"optional_ops", kOptionals, "int64[2] a = {1, 2}",
     "bool[] {true}; bool[] {false}; int64[2] {1, 2}; bool[] {true}; bool[] {false}"},
    {"optional_get_of_empty",
     Header(18) +
         "g () => (int64[2] v) { e = Optional <type: type_proto = int64[2]> () "
         "v = OptionalGetElement(e) }",
     "", "INVALID_ARGUMENT: node (OptionalGetElement-18) of 'v': the optional is empty"},
    // Constant's value attributes.
    {"constant_value_forms",
     Header(13) +
         "g () => (int64[3] i, string[2] s, float f) {\n"
         "  i = Constant <value_ints = [1, 2, 3]> ()\n"
         "  s = Constant <value_strings = [\"a\", \"b\"]> ()\n"
         "  f = Constant <value_float = 0.5> ()\n}",
     "", "int64[3] {1, 2, 3}; string[2] {\"a\", \"b\"}; float[] {0.5}"},
    // Functions: model-local ones (attributes, defaults, calls of calls,
    // subgraphs reading the function's values), the spec's static and
    // call-dependent bodies.
    {"local_functions", kLocalFunctions, "float[2] x = {1, 2}",
     "float[2] {3, 6}; float[2] {2, 4}; float[2] {3, 4}"},
    {"recursive_function_stops_at_the_depth_limit", kRecursive, "float[2] x = {1, 2}",
     "RESOURCE_EXHAUSTED: node (local.F) of 'y': function 'local.F': node (local.F) of 'Y': "
     "function 'local.F': node (local.F) of 'Y': subgraphs and functions nest deeper than 2",
     {.max_depth = 2}},
    {"spec_static_body",
     Header(16) +
         "g (float[2] x) => (float[2] y, float[2] z) { y = LeakyRelu <alpha = 0.5> (x) "
         "z = LeakyRelu(x) }",
     "float[2] x = {-2, 3}", "float[2] {-1, 3}; float[2] {-0.02, 3}"},
    {"spec_body_built_for_the_call", Header(12) + "g (float[2] x) => (float[2] y) { y = Celu(x) }",
     "float[2] x = {-1, 2}", "float[2] {-0.632121, 2}"},
    // Ops the evaluator lacks.
    {"no_kernel_nor_body",
     "<ir_version: 8, opset_import: [\"\" : 17, \"ai.onnx.preview.training\" : 1]>\n"
     "g (float[2] x) => (float[2] y) { y = ai.onnx.preview.training.Gradient <xs = [\"x\"], "
     "y = \"x\"> (x) }",
     "float[2] x = {1, 2}",
     "UNIMPLEMENTED: node (ai.onnx.preview.training.Gradient-1) of 'y': the evaluator has no "
     "kernel for this op version"},
    {"unknown_domain",
     "<ir_version: 8, opset_import: [\"\" : 17, \"com.example\" : 1]>\n"
     "g (float[2] x) => (float[2] y) { y = com.example.Foo(x) }",
     "float[2] x = {1, 2}",
     "UNIMPLEMENTED: node (com.example.Foo) of 'y': no operator Foo in domain 'com.example' at "
     "opset 1, and no model-local function of that name"},
    {"unknown_op", Header(17) + "g (float[2] x) => (float[2] y) { y = Frobnicate(x) }",
     "float[2] x = {1, 2}",
     "INVALID_ARGUMENT: node (Frobnicate) of 'y': no operator Frobnicate in domain '' at opset "
     "17"},
    // FlexAttention (ai.onnx.preview): score_mod and prob_mod run below the
    // node on the whole [batch, heads, q, kv] tensor, in the softmax
    // precision.
    {"flexattention_score_mod_reads_outer_values",
     FlexHeader() +
         "g (float[1,1,2,1] q, float[1,1,2,1] k, float[1,1,2,1] v, float[2,2] bias) => "
         "(float[1,1,2,1] y) { y = ai.onnx.preview.FlexAttention <score_mod = m "
         "(float[1,1,2,2] s) => (float[1,1,2,2] t) { t = Add(s, bias) }> (q, k, v) }",
     // Equal scores; the bias hides key 1 from query 0 (e^-1000 is 0).
     "float[1,1,2,1] q = {1, 1}, float[1,1,2,1] k = {1, 1}, float[1,1,2,1] v = {1, 3}, "
     "float[2,2] bias = {0, -1000, 0, 0}",
     "float[1,1,2,1] {1, 2}"},
    {"flexattention_prob_mod_after_softmax",
     FlexHeader() +
         "g (float[1,1,1,1] q, float[1,1,2,1] k, float[1,1,2,1] v) => (float[1,1,1,1] y) "
         "{ y = ai.onnx.preview.FlexAttention <prob_mod = m (float[1,1,1,2] p) => "
         "(float[1,1,1,2] r) <float two = {2}> { r = Mul(p, two) }> (q, k, v) }",
     // Probabilities 1/2 each, doubled: 1 + 3.
     "float[1,1,1,1] q = {1}, float[1,1,2,1] k = {1, 1}, float[1,1,2,1] v = {1, 3}",
     "float[1,1,1,1] {4}"},
    {"flexattention_mods_see_the_softmax_precision",
     FlexHeader() +
         "g (float[1,1,1,1] q, float[1,1,2,1] k, float[1,1,2,1] v) => (float[1,1,1,1] y) "
         "{ y = ai.onnx.preview.FlexAttention <softmax_precision = 11, score_mod = m "
         "(double[1,1,1,2] s) => (double[1,1,1,2] t) <double z = {0}> { t = Add(s, z) }> "
         "(q, k, v) }",
     "float[1,1,1,1] q = {1}, float[1,1,2,1] k = {1, 1}, float[1,1,2,1] v = {1, 3}",
     "float[1,1,1,1] {2}"},
    {"flexattention_score_mod_keeps_the_shape",
     FlexHeader() +
         "g (float[1,1,2,1] q, float[1,1,2,1] k, float[1,1,2,1] v) => (float[1,1,2,1] y) "
         "{ y = ai.onnx.preview.FlexAttention <score_mod = m (float[1,1,2,2] s) => "
         "(float[1,4] t) { t = Flatten(s) }> (q, k, v) }",
     "float[1,1,2,1] q = {1, 1}, float[1,1,2,1] k = {1, 1}, float[1,1,2,1] v = {1, 3}",
     "INVALID_ARGUMENT: node (ai.onnx.preview.FlexAttention-1) of 'y': score_mod gives float[1,4], "
     "not float[1,1,2,2]"},
    // Limits.
    {"live_bytes_limit",
     Header(13) + "g (int64[1] a, int64[1] s) => (int64[100] y) { y = Expand(a, s) }",
     "int64[1] a = {1}, int64[1] s = {100}",
     "RESOURCE_EXHAUSTED: node (Expand-13) of 'y': the values alive at once would take more "
     "than 100 bytes",
     {.max_live_bytes = 100}},
    {"tensor_elements_limit",
     Header(13) + "g (int64[1] s) => (float[100] y) { y = ConstantOfShape(s) }",
     "int64[1] s = {100}",
     "RESOURCE_EXHAUSTED: node (ConstantOfShape-9) of 'y': output 'y' holds more than 10 "
     "elements",
     {.max_tensor_elements = 10}},
};

INSTANTIATE_TEST_SUITE_P(Graphs, GraphTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

// Parses `text`, which must be a valid model.
onnx::ModelProto Model(const std::string& text) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : onnx::ModelProto();
}

// A chain of ten Negs over a float[1000]: with each value freed after its
// last use, at most the input and the output of one node are alive.
TEST(GraphFreeing, IntermediatesDieAfterTheirLastUse) {
  std::string nodes = "t0 = Neg(x)";
  for (int i = 1; i < 10; ++i) absl::StrAppend(&nodes, " t", i, " = Neg(t", i - 1, ")");
  onnx::ModelProto model =
      Model(Header(13) + "g (float[1000] x) => (float[1000] t9) { " + nodes + " }");
  std::vector<NamedValue> inputs;
  inputs.push_back({"x", Value(Tensor(onnx::TensorProto::FLOAT, {1000}))});
  absl::StatusOr<EvalResult> result = EvaluateModel(model, std::move(inputs));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->peak_live_bytes, 2 * 4000);
  EXPECT_EQ(result->node_runs, 10);
  EXPECT_TRUE(result->deterministic);
}

// A value a subgraph reads lives until the node that owns the subgraph ran,
// and no longer.
TEST(GraphFreeing, ValuesReadBySubgraphsLiveUntilThatNode) {
  onnx::ModelProto model = Model(
      Header(13) +
      "g (bool c, float[1000] x) => (float[1000] y) {\n"
      "  big = Neg(x)\n"
      "  small = Constant <value = float[1] {1}> ()\n"
      "  y = If(c) <then_branch = t () => (float[1000] r) { r = Add(big, small) },\n"
      "             else_branch = e () => (float[1000] r2) { r2 = Identity(big) }>\n"
      "}");
  std::vector<NamedValue> inputs;
  inputs.push_back({"c", Value(Tensor(onnx::TensorProto::BOOL, {}))});
  inputs.push_back({"x", Value(Tensor(onnx::TensorProto::FLOAT, {1000}))});
  absl::StatusOr<EvalResult> result = EvaluateModel(model, std::move(inputs));
  ASSERT_TRUE(result.ok()) << result.status();
  // At most two float[1000] at once (x and big, then big and r2 or y),
  // beside c and small: big lives through the If that reads it.
  EXPECT_EQ(result->peak_live_bytes, 2 * 4000 + 1 + 4);
}

// The op of the innermost failing node travels with the error.
TEST(GraphErrors, FailedOpIsTheInnermostNode) {
  Case c{"", Header(14) + "g (int64 m) => (int64[2] r) <int64[2] x = {1, 2}, int64[3] k = {1, 2, 3}>"
                          " { r = Loop(m, \"\", x) <body = b (int64 i, bool cin, int64[2] xin) => "
                          "(bool cout, int64[2] xout) { cout = Identity(cin) xout = Add(xin, k) }> }",
         "", ""};
  onnx::ModelProto model = Model(c.model);
  std::vector<NamedValue> inputs;
  inputs.push_back({"m", Value(Int64Tensor({1}, /*scalar=*/true))});
  absl::StatusOr<EvalResult> result = EvaluateModel(model, std::move(inputs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(FailedOp(result.status()), "Add-14");
}

// With a memory budget, a node that would allocate past it fails alone.
TEST(GraphLimits, MemoryBudgetFailsTheNode) {
  if (!MemoryBudget::Enforced()) GTEST_SKIP() << "budgets are not enforced in this build";
  onnx::ModelProto model =
      Model(Header(13) + "g (float[1] a, int64[1] s) => (float[67108864] y) { y = Expand(a, s) }");
  std::vector<NamedValue> inputs;
  inputs.push_back({"a", Value(Tensor(onnx::TensorProto::FLOAT, {1}))});
  inputs.push_back({"s", Value(Int64Tensor({int64_t{1} << 26}))});
  EvalOptions options;
  options.memory_budget_bytes = int64_t{64} << 20;
  absl::StatusOr<EvalResult> result = EvaluateModel(model, std::move(inputs), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(result.status().message(),
            "node (Expand-13) of 'y': the run: needs more memory than its budget of 64 MiB");
}

}  // namespace
}  // namespace onnxconvert::eval
