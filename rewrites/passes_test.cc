// The exact profile's passes, one case per behaviour: the model before (ONNX
// text), the ops of its main graph after, and the same outputs as before on
// random inputs, to the bit. The deploy profile: a Conv + BatchNormalization
// + Relu model becomes Conv + Relu, within the float tolerance.

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::rewrites {
namespace {

struct Case {
  const char* name;
  const char* model;
  // The main graph's ops after, in order, and its initializers' count.
  std::vector<std::string> ops;
  int initializers;
  // A piece of the report's text.
  const char* report = "";
};

const Case kCases[] = {
    {"constant_becomes_initializer", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  c = Constant<value = float[1] {2.0}>()
  Y = Add(X, c)
})",
     {"Add"}, 1, "constants-to-initializers: 1 matches"},
    {"shorthand_constant", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  c = Constant<value_floats = [1.0, 2.0]>()
  Y = Mul(X, c)
})",
     {"Mul"}, 1},
    // Constant arithmetic folds, and the constants it used go.
    {"fold_chain", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[2] a = {1.5, -2.0}> {
  b = Mul(a, a)
  d = Sqrt(b)
  Y = Add(X, d)
})",
     {"Add"}, 1, "fold-constants: 2 matches"},
    // Shape of a static shape folds; of a dynamic one it stays.
    {"shape_of_static_dims", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <int64[1] one = {1}> {
  s = Shape(X)
  t = Mul(s, one)
  Y = Reshape(X, t)
})",
     {"Reshape"}, 1, "fold-constants: 2 matches"},
    {"shape_of_dynamic_dims", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3] X) => (float[N,3] Y) {
  s = Shape(X)
  Y = Reshape(X, s)
})",
     {"Shape", "Reshape"}, 0},
    // 4 MiB out of 16 bytes: past the size rule, the node stays.
    {"size_rule_keeps_a_blow_up", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1] X) => (float[1024,1024] Y) <int64[2] s = {1024, 1024}> {
  z = ConstantOfShape<value = float[1] {1.0}>(s)
  Y = Add(X, z)
})",
     {"ConstantOfShape", "Add"}, 1},
    // The built-in rules: Identity and x * 1 go, and the constant 1 with it.
    {"rules_remove_no_ops", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <float[1] one = {1.0}> {
  T = Identity(X)
  U = Mul(one, T)
  Y = Relu(U)
})",
     {"Relu"}, 0, "rules: 2 matches"},
    {"dead_code", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  unused = Exp(X)
  twice = Neg(unused)
  Y = Relu(X)
})",
     {"Relu"}, 0, "dead-code: 2 matches"},
    // The same op on the same inputs: one node; duplicate constants: one
    // initializer.
    {"common_subexpressions", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[1] a = {2.0}, float[1] b = {2.0}> {
  e1 = Exp(X)
  e2 = Exp(X)
  m1 = Mul(e1, a)
  m2 = Mul(e2, b)
  Y = Add(m1, m2)
})",
     {"Exp", "Mul", "Add"}, 1, "common-subexpressions: 3 matches"},
    // A random node is never merged with another.
    {"random_not_merged", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  r1 = RandomUniformLike(X)
  r2 = RandomUniformLike(X)
  Y = Add(r1, r2)
})",
     {"RandomUniformLike", "RandomUniformLike", "Add"}, 0},
    // A graph output computed from constants stays a node's.
    {"constant_graph_output_stays", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y, float[1] K) <float[1] a = {3.0}> {
  K = Neg(a)
  Y = Relu(X)
})",
     {"Neg", "Relu"}, 1},
    // Non-deterministic nodes never fold.
    {"random_stays", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <int64[1] s = {2}> {
  n = RandomNormalLike<dtype = 1>(X)
  Y = Add(X, n)
})",
     {"RandomNormalLike", "Add"}, 0},
    // Inside an If branch: the branch's Constant and fold, the outer
    // capture kept.
    {"inside_a_branch", R"(<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] X) => (float[2] Y) <float[1] k = {2.0}> {
  R = Relu(X)
  Y = If(c) <then_branch = t () => (float[2] o) {
                 two = Constant<value = float[1] {2.0}>()
                 four = Mul(two, k)
                 o = Mul(R, four)
               },
             else_branch = e () => (float[2] p) { p = Neg(R) }>
})",
     {"Relu", "If"}, 0},
    // A chain of Concats on one axis (-1 and 1 the same): one Concat.
    {"concat_chain_flattened", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] A, float[2,3] B, float[2,3] C, float[2,3] D) => (float[2,12] Y) {
  T = Concat<axis = 1>(A, B)
  U = Concat<axis = -1>(T, C)
  V = Concat<axis = 1>(D, U)
  Y = Relu(V)
})",
     {"Concat", "Relu"}, 0, "flatten-concat: 2 matches"},
    // Another axis, and an inner Concat used twice: nothing changes.
    {"concat_chain_kept", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] A, float[2,3] B, float[4,3] C) => (float[4,6] Y, float[4,6] Z) {
  T = Concat<axis = 0>(A, B)
  U = Concat<axis = 1>(T, C)
  W = Concat<axis = 1>(C, T)
  Y = Relu(U)
  Z = Relu(W)
})",
     {"Concat", "Concat", "Concat", "Relu", "Relu"}, 0},
    // A constant condition: the branch taken replaces the If, its output
    // named as the If's (a graph output here).
    {"if_constant_true", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <bool c = {1}> {
  R = Relu(X)
  Y = If(c) <then_branch = t () => (float[2] o) { two = Constant<value = float[1] {2.0}>()
                                                   m = Mul(R, two)
                                                   o = Neg(m) },
             else_branch = e () => (float[2] p) { p = Neg(R) }>
})",
     {"Relu", "Mul", "Neg"}, 1, "inline-constant-if: 1 matches"},
    // The condition a Constant node's: the else branch, its initializer a
    // constant of the graph.
    {"if_constant_false", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  c = Constant<value = bool {0}>()
  R = Relu(X)
  Y = If(c) <then_branch = t () => (float[2] o) { o = Neg(R) },
             else_branch = e () => (float[2] p) <float[1] k = {3.0}> { p = Mul(R, k) }>
})",
     {"Relu", "Mul"}, 1, "inline-constant-if: 1 matches"},
    // The branch output is computed outside: an Identity names it (kept,
    // the If's output being a graph output).
    {"if_branch_outputs_outer_value", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y, float[2] Z) <bool c = {1}> {
  Z = Relu(X)
  Y = If(c) <then_branch = t () => (float[2] o) { o = Identity(Z) },
             else_branch = e () => (float[2] p) { p = Neg(Z) }>
})",
     {"Relu", "Identity"}, 0, "inline-constant-if: 1 matches"},
    // The branch outputs an outer value as it is: an Identity names it as
    // the If's output, and the identity rule removes it.
    {"if_branch_outputs_outer_name", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <bool c = {1}> {
  Z = Relu(X)
  W = If(c) <then_branch = t () => (float[2] Z) {},
             else_branch = e () => (float[2] p) { p = Neg(Z) }>
  Y = Abs(W)
})",
     {"Relu", "Abs"}, 0, "inline-constant-if: 1 matches"},
    // A nested If reads a name of the branch inlined: it reads the fresh
    // name; its own condition is not constant, so it stays.
    {"if_inlined_with_nested_if", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, bool d) => (float[2] Y) <bool c = {1}> {
  Y = If(c) <then_branch = t () => (float[2] o) {
                 a = Relu(X)
                 o = If(d) <then_branch = t2 () => (float[2] q) {
                                two = Constant<value = float[1] {2.0}>()
                                q = Mul(a, two) },
                            else_branch = e2 () => (float[2] r) { r = Exp(a) }>
               },
             else_branch = e () => (float[2] p) { p = Abs(X) }>
})",
     {"Relu", "If"}, 0, "inline-constant-if: 1 matches"},
};

// The outputs of `original` and of `model` on the same random inputs
// (seeded by `seed`), or an error.
absl::StatusOr<std::pair<eval::EvalResult, eval::EvalResult>> EvaluateBoth(
    const onnx::ModelProto& original, const onnx::ModelProto& model, uint64_t seed) {
  std::mt19937_64 rng(seed);
  absl::StatusOr<std::vector<eval::NamedValue>> inputs =
      eval::RandomInputs(original.graph(), eval::RandomInputOptions{}, rng);
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<eval::EvalResult> before = eval::EvaluateModel(original, *inputs);
  if (!before.ok()) return before.status();
  absl::StatusOr<eval::EvalResult> after = eval::EvaluateModel(model, *inputs);
  if (!after.ok()) return after.status();
  return std::make_pair(*std::move(before), *std::move(after));
}

// The main graph's ops, in order.
std::vector<std::string> Ops(const onnx::ModelProto& model) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& node : model.graph().node()) ops.push_back(node.op_type());
  return ops;
}

class PassesTest : public ::testing::TestWithParam<Case> {};

TEST_P(PassesTest, RewritesAndComputesTheSame) {
  const Case& c = GetParam();
  absl::StatusOr<onnx::ModelProto> original = ParseModelText(c.model);
  ASSERT_TRUE(original.ok()) << original.status();
  onnx::ModelProto model = *original;
  absl::StatusOr<RewriteReport> report = Optimize(model, RewriteOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  std::string text = report->ToText();
  EXPECT_EQ(Ops(model), c.ops) << text;
  EXPECT_EQ(model.graph().initializer_size(), c.initializers) << text;
  EXPECT_NE(text.find(c.report), std::string::npos) << text;
  EXPECT_TRUE(report->converged) << text;

  // Optimized again, nothing changes.
  onnx::ModelProto again = model;
  ASSERT_TRUE(Optimize(again, RewriteOptions{}).ok());
  EXPECT_EQ(again.SerializeAsString(), model.SerializeAsString()) << c.name;

  auto results = EvaluateBoth(*original, model, 7);
  ASSERT_TRUE(results.ok()) << results.status();
  const eval::EvalResult* before = &results->first;
  const eval::EvalResult* after = &results->second;
  if (!before->deterministic) return;
  ASSERT_EQ(before->outputs.size(), after->outputs.size());
  for (size_t i = 0; i < before->outputs.size(); ++i) {
    eval::Comparison comparison =
        eval::CompareValues(before->outputs[i].value, after->outputs[i].value);
    EXPECT_TRUE(comparison.ok && comparison.elements_off == 0 &&
                (!comparison.worst || comparison.worst->abs_error == 0))
        << before->outputs[i].name << ": " << comparison.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PassesTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// A model of `body` (opset `opset`; graph inputs float[2,3] X and
// float[6] F, output Y) and a chain of `chain` Relu nodes from X to a
// second output Z: a round's edits in `body` touch few of its nodes.
std::string WithChain(int opset, const std::string& body, int chain) {
  std::string text = absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", opset,
                                  "]>\ng (float[2,3] X, float[6] F) => (Y, Z) {\n", body);
  std::string last = "X";
  for (int i = 0; i < chain; ++i) {
    std::string next = i + 1 == chain ? "Z" : absl::StrCat("z", i);
    absl::StrAppend(&text, "  ", next, " = Relu(", last, ")\n");
    last = next;
  }
  return text + "}";
}

struct RefreshCase {
  const char* name;
  int opset;
  const char* body;
};

// Edits a round makes that a later round's inference must see: a pair that
// cancels (its reader now reads X), a fold (a node's output becomes an
// initializer, with a value), merged duplicates (a reader of both reads
// one).
const RefreshCase kRefreshCases[] = {
    {"cancelled_pair", 12,
     "  u = Unsqueeze<axes = [0]>(X)\n  s = Squeeze<axes = [0]>(u)\n  Y = Add(s, X)\n"},
    {"fold_feeds_reshape", 13, "  s = Shape(X)\n  Y = Reshape(F, s)\n"},
    {"merged_duplicates", 13, "  a = Relu(X)\n  b = Relu(X)\n  Y = Add(a, b)\n"},
    {"cancelled_pair_feeds_shape", 12,
     "  u = Unsqueeze<axes = [0]>(X)\n  v = Squeeze<axes = [0]>(u)\n  s = Shape(v)\n"
     "  Y = Reshape(F, s)\n"},
    // A round that only forwards (the inference kept): the next tries a
    // one-node rule (add_negative_zero at the Add) only next to the edits,
    // not a step below them (Focus::Within), and rewrites the same.
    {"cancelled_pair_above_add", 12,
     "  u = Unsqueeze<axes = [0]>(X)\n  s = Squeeze<axes = [0]>(u)\n  r = Relu(s)\n"
     "  Y = Add(r, r)\n"},
    {"nested_pairs_feed_shape", 12,
     "  u = Unsqueeze<axes = [0]>(X)\n  w = Unsqueeze<axes = [0]>(u)\n"
     "  v = Squeeze<axes = [0]>(w)\n  t = Squeeze<axes = [0]>(v)\n  s = Shape(t)\n"
     "  Y = Reshape(F, s)\n"},
};

class RefreshTest : public ::testing::TestWithParam<RefreshCase> {};

// Optimizes copies of `model` with the default options and with `change`
// made to them; expects the same report and the same bytes either way and
// gives the default's report.
RewriteReport SameBothWays(const onnx::ModelProto& model, void (*change)(RewriteOptions&)) {
  onnx::ModelProto first = model;
  onnx::ModelProto second = model;
  RewriteOptions options;
  absl::StatusOr<RewriteReport> with = Optimize(first, options);
  change(options);
  absl::StatusOr<RewriteReport> without = Optimize(second, options);
  EXPECT_TRUE(with.ok()) << with.status();
  EXPECT_TRUE(without.ok()) << without.status();
  if (!with.ok() || !without.ok()) return {};
  EXPECT_EQ(with->ToJson(), without->ToJson());
  EXPECT_EQ(first.SerializeAsString(), second.SerializeAsString());
  return *with;
}

// The rounds after the first rewrite the same with the inference refreshed
// where the round before edited as with it inferred again.
TEST_P(RefreshTest, RefreshedInferenceRewritesAsAWholeOne) {
  const RefreshCase& c = GetParam();
  absl::StatusOr<onnx::ModelProto> original = ParseModelText(WithChain(c.opset, c.body, 40));
  ASSERT_TRUE(original.ok()) << original.status();
  const RewriteReport report =
      SameBothWays(*original, [](RewriteOptions& options) { options.refresh_inference = false; });
  EXPECT_GE(report.rounds, 2) << report.ToText();
  EXPECT_LT(report.nodes_after, report.nodes_before) << report.ToText();
}

INSTANTIATE_TEST_SUITE_P(Cases, RefreshTest, ::testing::ValuesIn(kRefreshCases),
                         [](const auto& info) { return std::string(info.param.name); });

// A chain of `blocks` blocks of five nodes: an Unsqueeze and a Squeeze that
// cancel, and two equal Relus an Add joins (merged into one): two nodes of
// each block are left.
std::string CancellingChain(int blocks) {
  std::string text =
      "<ir_version: 8, opset_import: [\"\" : 12]>\ng (float[2,3] X) => (Y) {\n";
  std::string last = "X";
  for (int i = 0; i < blocks; ++i) {
    absl::StrAppend(&text, "  u", i, " = Unsqueeze<axes = [0]>(", last, ")\n", "  s", i,
                    " = Squeeze<axes = [0]>(u", i, ")\n", "  a", i, " = Relu(s", i, ")\n", "  b",
                    i, " = Relu(s", i, ")\n", "  c", i, " = Add(a", i, ", b", i, ")\n");
    last = absl::StrCat("c", i);
  }
  return absl::StrCat(text, "  Y = Relu(", last, ")\n}");
}

// A model large enough to be indexed and checked on a second thread is
// rewritten as on one.
TEST(PassesTest, SecondThreadRewritesTheSame) {
  constexpr int kBlocks = 3300;
  absl::StatusOr<onnx::ModelProto> original = ParseModelText(CancellingChain(kBlocks));
  ASSERT_TRUE(original.ok()) << original.status();
  ASSERT_GE(original->graph().node_size(), 16384);
  const RewriteReport report =
      SameBothWays(*original, [](RewriteOptions& options) { options.second_thread = false; });
  EXPECT_EQ(report.nodes_after, 2 * kBlocks + 1) << report.ToText();
}

// An If with a constant condition inside a branch of another If (whose
// condition is not constant) is inlined there, reading the outer graph's X.
TEST(PassesTest, InlinesConstantIfInASubgraph) {
  absl::StatusOr<onnx::ModelProto> original = ParseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
g (bool d, float[2] X) => (float[2] Y) <bool c = {0}> {
  Y = If(d) <then_branch = t () => (float[2] o) {
                 o = If(c) <then_branch = t2 () => (float[2] q) { q = Neg(X) },
                            else_branch = e2 () => (float[2] r) { r = Exp(X) }>
               },
             else_branch = e () => (float[2] p) { p = Abs(X) }>
})");
  ASSERT_TRUE(original.ok()) << original.status();
  onnx::ModelProto model = *original;
  absl::StatusOr<RewriteReport> report = Optimize(model, RewriteOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(Ops(model), (std::vector<std::string>{"If"})) << report->ToText();
  const onnx::GraphProto* then_branch = nullptr;
  for (const onnx::AttributeProto& attribute : model.graph().node(0).attribute()) {
    if (attribute.name() == "then_branch") then_branch = &attribute.g();
  }
  ASSERT_NE(then_branch, nullptr);
  ASSERT_EQ(then_branch->node_size(), 1);
  EXPECT_EQ(then_branch->node(0).op_type(), "Exp");
  EXPECT_EQ(then_branch->node(0).input(0), "X");
  EXPECT_EQ(then_branch->node(0).output(0), then_branch->output(0).name());
  for (uint64_t seed : {1, 2, 3, 4}) {
    auto results = EvaluateBoth(*original, model, seed);
    ASSERT_TRUE(results.ok()) << results.status();
    eval::Comparison comparison = eval::CompareValues(results->first.outputs[0].value,
                                                      results->second.outputs[0].value);
    EXPECT_TRUE(comparison.ok && comparison.elements_off == 0) << comparison.ToString();
  }
}

TEST(PassesTest, UnknownPassesAndProfilesAreNamed) {
  RewriteOptions options;
  options.passes = {"fold-constants", "no-such-pass"};
  EXPECT_EQ(SelectPasses(options).status().message(), "unknown pass 'no-such-pass'");
  options = RewriteOptions{};
  options.profile = "fast";
  EXPECT_EQ(SelectPasses(options).status().message(),
            "unknown profile 'fast' (exact, deploy)");
}

// The report keeps each rewrite's before and after in ONNX text, up to
// max_records per pass.
TEST(PassesTest, ReportShowsEachRewrite) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[2] a = {1.5, -2.0}> {
  b = Mul(a, a)
  d = Sqrt(b)
  Y = Add(X, d)
})");
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  options.max_records = 1;
  absl::StatusOr<RewriteReport> report = Optimize(*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  const PassStats* fold = nullptr;
  for (const PassStats& pass : report->passes) {
    if (pass.pass == "fold-constants") fold = &pass;
  }
  ASSERT_NE(fold, nullptr);
  EXPECT_EQ(fold->matches, 2);
  ASSERT_EQ(fold->records.size(), 1u);
  EXPECT_EQ(fold->records[0].graph, "main");
  EXPECT_EQ(fold->records[0].before, "b = Mul(a, a)\n");
  EXPECT_EQ(fold->records[0].after, "initializer b: float[2]\n");
  EXPECT_NE(report->ToText(true).find("      + initializer b: float[2]"), std::string::npos)
      << report->ToText(true);
  EXPECT_NE(report->ToJson().find("\"what\": \"fold\""), std::string::npos);
}

// Shared initializers are reported in the graph's order of their copies,
// whatever the shapes they are grouped by (was: the order of a hash map,
// which changes from run to run).
TEST(PassesTest, SharedInitializersReportInGraphOrder) {
  std::string initializers;
  std::string body;
  std::vector<std::string> expected;
  for (int i = 1; i <= 8; ++i) {
    const std::string values = absl::StrJoin(std::vector<int>(i, i), ", ");
    absl::StrAppend(&initializers, i == 1 ? "" : ", ", "float[", i, "] a", i, " = {", values,
                    "}, float[", i, "] c", i, " = {", values, "}");
    absl::StrAppend(&body, "  s", i, " = ReduceSum(a", i, ")\n  t", i, " = ReduceSum(c", i,
                    ")\n  u", i, " = Add(s", i, ", t", i, ")\n");
    expected.push_back(absl::StrCat("initializer c", i, ": float[", i, "]\n"));
  }
  std::string outputs;
  for (int i = 1; i <= 8; ++i) absl::StrAppend(&outputs, i == 1 ? "" : ", ", "float u", i);
  absl::StatusOr<onnx::ModelProto> model =
      ParseModelText(absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float X) => ()", outputs, ") <", initializers, "> {\n", body, "}"));
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  options.passes = {"common-subexpressions"};
  absl::StatusOr<RewriteReport> report = Optimize(*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  std::vector<std::string> shared;
  for (const PassStats& pass : report->passes) {
    for (const RewriteRecord& record : pass.records) {
      if (record.what == "share") shared.push_back(record.before);
    }
  }
  EXPECT_EQ(shared, expected);
}

// A blow-up of 2^30 floats (4 GiB, under the evaluator's own limit of 2^31
// elements) is refused by its inferred size before anything is computed:
// computed first, the test would take the memory and time of 4 GiB.
TEST(PassesTest, SizeRuleRefusesBeforeComputing) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1] X) => (float[1] Y) <int64[2] s = {65536, 16384}> {
  z = ConstantOfShape<value = float[1] {1.0}>(s)
  r = ReduceSum<keepdims = 0>(z)
  Y = Add(X, r)
})");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<RewriteReport> report = Optimize(*model, RewriteOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(Ops(*model), (std::vector<std::string>{"ConstantOfShape", "ReduceSum", "Add"}));
}

TEST(PassesTest, SkippedPassesDoNotRun) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kCases[0].model);
  ASSERT_TRUE(model.ok());
  RewriteOptions options;
  options.skip = {"constants-to-initializers", "fold-constants"};
  ASSERT_TRUE(Optimize(*model, options).ok());
  EXPECT_EQ(Ops(*model), (std::vector<std::string>{"Constant", "Add"}));
}

// `count` numbers in [-1.5, 1.5) (all positive: in [0.5, 2)), as ONNX-text
// tensor data.
std::string Numbers(int count, bool positive = false) {
  std::vector<std::string> numbers;
  for (int i = 0; i < count; ++i) {
    double v = ((i * 37) % 29) / 29.0;
    numbers.push_back(absl::StrCat(positive ? 0.5 + 1.5 * v : 3 * v - 1.5));
  }
  return absl::StrCat("{", absl::StrJoin(numbers, ", "), "}");
}

// Conv (3x3, padded, with bias) + BatchNormalization (epsilon unset: 1e-5)
// + Relu.
std::string ConvBatchNormRelu() {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,5,5] X) => (float[1,4,5,5] Y)
  <float[4,3,3,3] W = )", Numbers(108), ", float[4] B = ", Numbers(4),
                      ", float[4] s = ", Numbers(4), ", float[4] b = ", Numbers(4),
                      ", float[4] m = ", Numbers(4), ", float[4] v = ", Numbers(4, true), R"(> {
  C = Conv<pads = [1, 1, 1, 1], kernel_shape = [3, 3]>(X, W, B)
  D = BatchNormalization(C, s, b, m, v)
  Y = Relu(D)
})");
}

TEST(PassesTest, DeployFoldsBatchNormIntoConv) {
  absl::StatusOr<onnx::ModelProto> original = ParseModelText(ConvBatchNormRelu());
  ASSERT_TRUE(original.ok()) << original.status();
  onnx::ModelProto model = *original;
  RewriteOptions options;
  options.profile = "deploy";
  absl::StatusOr<RewriteReport> report = Optimize(model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  std::string text = report->ToText();
  ASSERT_EQ(Ops(model), (std::vector<std::string>{"Conv", "Relu"})) << text;
  EXPECT_NE(text.find("conv_batch_norm: 1"), std::string::npos) << text;
  EXPECT_TRUE(report->converged) << text;
  // The folded weights and bias are the only initializers; the Conv keeps
  // its attributes.
  const onnx::NodeProto& conv = model.graph().node(0);
  ASSERT_EQ(conv.input_size(), 3);
  ASSERT_EQ(model.graph().initializer_size(), 2) << text;
  for (const onnx::TensorProto& initializer : model.graph().initializer()) {
    EXPECT_TRUE(initializer.name() == conv.input(1) || initializer.name() == conv.input(2))
        << initializer.name();
  }
  EXPECT_EQ(conv.attribute_size(), 2);

  for (uint64_t seed : {1, 2, 3}) {
    auto results = EvaluateBoth(*original, model, seed);
    ASSERT_TRUE(results.ok()) << results.status();
    eval::Comparison comparison = eval::CompareValues(results->first.outputs[0].value,
                                                      results->second.outputs[0].value);
    EXPECT_TRUE(comparison.ok) << comparison.ToString();
    ASSERT_TRUE(comparison.worst.has_value());
    EXPECT_LE(comparison.worst->abs_error, 1e-4 * std::max(1.0, std::abs(std::stod(
                                                               comparison.worst->expected))))
        << comparison.ToString();
  }
}

// The exact profile leaves the BatchNormalization.
TEST(PassesTest, ExactKeepsBatchNorm) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(ConvBatchNormRelu());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(Optimize(*model, RewriteOptions{}).ok());
  EXPECT_EQ(Ops(*model), (std::vector<std::string>{"Conv", "BatchNormalization", "Relu"}));
}

}  // namespace
}  // namespace onnxconvert::rewrites
