#include "schema/inference.h"

#include <deque>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"
#include "schema/inference_rules.h"
#include "schema/registry.h"

namespace onnxconvert::schema {
namespace {

onnx::ModelProto Model(absl::string_view text) { return testing::ModelFromText(text); }

struct InferCase {
  std::string name;
  std::string graph;   // the graph of an opset-18 model
  std::string value;   // the value to look at
  std::string expected_type;  // in ONNX text syntax
};

class InferenceTest : public ::testing::TestWithParam<InferCase> {};

TEST_P(InferenceTest, InfersTheType) {
  const InferCase& c = GetParam();
  onnx::ModelProto model =
      Model(absl::StrCat("<ir_version: 8, opset_import: [\"\" : 18]>\n", c.graph));
  absl::StatusOr<InferenceResult> result = InferModel(model);
  ASSERT_TRUE(result.ok()) << result.status();
  const GraphTypes& types = result->graphs.at(&model.graph());
  auto it = types.types.find(c.value);
  ASSERT_NE(it, types.types.end()) << c.value;
  EXPECT_EQ(PrintTypeText(*it->second), c.expected_type);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InferenceTest,
    ::testing::Values(
        InferCase{"broadcast", "g (float[N,1,4] A, float[3,1] B) => (Y) { Y = Add(A, B) }", "Y",
                  "float[N,3,4]"},
        InferCase{"comparison_is_bool", "g (float[2] A, float[2] B) => (Y) { Y = Less(A, B) }",
                  "Y", "bool[2]"},
        // The second MatMul has the first one's op and input types: its type
        // is the one remembered.
        InferCase{"repeated_node_remembered",
                  "g (float[N,4] X, float[4,4] W) => (Y) {\n"
                  "  h = MatMul(X, W)\n  r = Relu(h)\n  Y = MatMul(r, W)\n}",
                  "Y", "float[N,4]"},
        // Two Unsqueezes of X: the rule reads the axes' value, so the second,
        // with other axes, is not given the first one's type.
        InferCase{"remembered_rule_reruns_on_other_constants",
                  "g (float[2,3,4] X) => (Y, Z) <int64[1] a0 = {0}, int64[1] a1 = {1}> {\n"
                  "  Z = Unsqueeze(X, a0)\n  Y = Unsqueeze(X, a1)\n}",
                  "Y", "float[2,1,3,4]"},
        InferCase{"remembered_rule_reuses_the_same_constant",
                  "g (float[2,3,4] X) => (Y, Z) <int64[1] a1 = {1}> {\n"
                  "  Z = Unsqueeze(X, a1)\n  Y = Unsqueeze(X, a1)\n}",
                  "Y", "float[2,1,3,4]"},
        // Two Transposes of X: the rule reads perm, so the second, with
        // another perm, is not given the first one's type; with the same perm
        // it takes the remembered one.
        InferCase{"remembered_rule_reruns_on_other_attributes",
                  "g (float[2,3,4] X) => (Y, Z) {\n"
                  "  Z = Transpose <perm = [0, 2, 1]> (X)\n  Y = Transpose <perm = [2, 1, 0]> (X)\n}",
                  "Y", "float[4,3,2]"},
        InferCase{"remembered_rule_reuses_the_same_attributes",
                  "g (float[2,3,4] X) => (Y, Z) {\n"
                  "  Z = Transpose <perm = [0, 2, 1]> (X)\n  Y = Transpose <perm = [0, 2, 1]> (X)\n}",
                  "Y", "float[2,4,3]"},
        InferCase{"remembered_cast_reruns_on_another_type",
                  "g (float[2] X) => (Y, Z) { Z = Cast <to = 7> (X)\n Y = Cast <to = 10> (X) }",
                  "Y", "float16[2]"},
        // Add(a, b) is remembered for int64[2] inputs of unknown value; Add(s,
        // zeros) has the same input types, but s is known (Shape of X): its
        // rule runs again and folds, and Reshape then knows its shape.
        InferCase{"remembered_rule_reruns_on_known_values",
                  "g (float[2,3] X, int64[2] a, int64[2] b) => (Y, u) <int64[2] zeros = {0, 0}> {\n"
                  "  u = Add(a, b)\n  s = Shape(X)\n  t = Add(s, zeros)\n"
                  "  Y = Reshape(X, t)\n}",
                  "Y", "float[2,3]"},
        InferCase{"shape_chain_keeps_symbols",
                  "g (float[N,3,4] X) => (Y) <int64[1] zero = {0}, int64[1] minus_one = {-1}> {\n"
                  "  s = Shape(X)\n  n = Gather(s, zero)\n  target = Concat <axis = 0> (n, minus_one)\n"
                  "  Y = Reshape(X, target)\n}",
                  "Y", "float[N,12]"},
        InferCase{"conv_with_pads",
                  "g (float[1,3,32,32] X, float[8,3,3,3] W) => (Y) {\n"
                  "  Y = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (X, W)\n}",
                  "Y", "float[1,8,16,16]"},
        InferCase{"cast_sets_type", "g (float[N] X) => (Y) { Y = Cast <to = 7> (X) }", "Y",
                  "int64[N]"},
        InferCase{"reduce_with_axes_input",
                  "g (float[2,3,4] X) => (Y) <int64[1] axes = {1}> {\n"
                  "  Y = ReduceMean <keepdims = 0> (X, axes)\n}",
                  "Y", "float[2,4]"},
        InferCase{"matmul_batched", "g (float[5,2,3] A, float[3,7] B) => (Y) { Y = MatMul(A, B) }",
                  "Y", "float[5,2,7]"},
        InferCase{"transpose_default", "g (float[2,3,4] X) => (Y) { Y = Transpose(X) }", "Y",
                  "float[4,3,2]"},
        InferCase{"split_even",
                  "g (float[6,2] X) => (A, B) { A, B = Split <num_outputs = 2> (X) }", "B",
                  "float[3,2]"},
        InferCase{"if_branches_agree",
                  "g (bool C, float[2] X) => (Y) {\n"
                  "  Y = If <then_branch = t () => (float[2] A) { A = Relu(X) },\n"
                  "          else_branch = e () => (float[2] B) { B = Neg(X) }> (C)\n}",
                  "Y", "float[2]"},
        InferCase{"constant_of_shape",
                  "g (float[N,5] X) => (Y) { s = Shape(X) \n Y = ConstantOfShape <value = int64[1] {0}> (s) }",
                  "Y", "int64[N,5]"},
        InferCase{"slice_of_constant_bounds",
                  "g (float[10,4] X) => (Y) <int64[1] b = {2}, int64[1] e = {-1}> {\n"
                  "  Y = Slice(X, b, e)\n}",
                  "Y", "float[7,4]"},
        // Repeats known only at run time: the rank is known still (SSD's
        // anchor generator tiles by a computed shape, then concatenates at
        // axis -1, which a downgrade below 11 must count from the front).
        InferCase{"tile_by_repeats_of_unknown_value",
                  "g (float[6,2] X, int64[2] r) => (Y) { Y = Tile(X, r) }", "Y", "float[?,?]"},
        InferCase{"expand_to_a_shape_of_unknown_value",
                  "g (float[1,1,768] X, int64[3] s) => (Y) { Y = Expand(X, s) }", "Y",
                  "float[?,?,768]"},
        InferCase{"expand_to_a_longer_shape_of_unknown_value",
                  "g (float[5] X, int64[2] s) => (Y) { Y = Expand(X, s) }", "Y", "float[?,5]"},
        InferCase{"shape_of_unknown_rank", "g (float X) => (Y) { Y = Shape(X) }", "Y",
                  "int64[?]"},
        InferCase{"tile_by_known_repeats",
                  "g (float[6,N] X) => (Y) <int64[2] r = {2, 1}> { Y = Tile(X, r) }", "Y",
                  "float[12,N]"}),
    [](const ::testing::TestParamInfo<InferCase>& info) { return info.param.name; });

struct StrictCase {
  std::string name;
  std::string graph;
  std::string expected;
};

TEST(InferenceStrictTest, InconsistenciesNameTheNode) {
  const StrictCase cases[] = {
      {"rank_mismatch", "g (float[2,3] X) => (float[2,3,1] Y) { [relu] Y = Relu(X) }",
       "main \xE2\x80\xBA node 'relu' (Relu-14): output 'Y': rank 2 inferred, but rank 3 declared"},
      {"dim_mismatch", "g (float[2,3] X) => (float[2,4] Y) { [relu] Y = Relu(X) }",
       "output 'Y': dimension 1 is 3 inferred, but 4 declared"},
      {"broadcast", "g (float[2,3] X, float[4] Z) => (Y) { [add] Y = Add(X, Z) }",
       "node 'add' (Add-14): cannot broadcast dimension 3 with 4"},
      {"element_type", "g (float[2] X) => (int64[2] Y) { [r] Y = Relu(X) }",
       "output 'Y': type tensor(float) inferred, but tensor(int64) declared"},
      {"loss_rank", "g (float[] X, int64[] T) => (L) { [nll] L = NegativeLogLikelihoodLoss(X, T) }",
       "node 'nll' (NegativeLogLikelihoodLoss-13): input 0 has rank 0, below 2"},
      {"no_outputs", "g (float[2,3] X) => (float[2,3] Y) { [argmin] = ArgMin(X) Y = Relu(X) }",
       "node 'argmin' (ArgMin-13): has 1 inputs and 0 outputs, which ArgMin-13 does not take"},
  };
  for (const StrictCase& c : cases) {
    onnx::ModelProto model =
        Model(absl::StrCat("<ir_version: 8, opset_import: [\"\" : 18]>\n", c.graph));
    InferenceOptions strict;
    strict.strict = true;
    absl::StatusOr<InferenceResult> result = InferModel(model, strict);
    ASSERT_FALSE(result.ok()) << c.name;
    EXPECT_TRUE(absl::StrContains(result.status().message(), c.expected))
        << c.name << ": " << result.status();
    absl::StatusOr<InferenceResult> lenient = InferModel(model);
    ASSERT_TRUE(lenient.ok()) << c.name;
    ASSERT_EQ(lenient->notes.size(), 1u) << c.name;
  }
}

// Scan-8's V is heterogeneous: its float16 scan output is not typed like
// its float state (Scan-9 -> 8 conversions failed validation on this).
TEST(InferenceTest, HeterogeneousVariadicOutputsAreNotTypedByAnInput) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 8]>
g (float[1,2,3] S0, float16[1,4,2,3] X) => (S, Y) {
  S, Y = Scan <num_scan_inputs = 1, body = body (float[2,3] s, float16[2,3] x) => (float[2,3] s2, float16[2,3] y) {
    xf = Cast <to = 1> (x)
    s2 = Add (s, xf)
    y = Cast <to = 10> (s2)
  }> (, S0, X)
})");
  InferenceOptions strict;
  strict.strict = true;
  absl::StatusOr<InferenceResult> result = InferModel(model, strict);
  ASSERT_TRUE(result.ok()) << result.status();
  ApplyInferredTypes(*result, model);
  const onnx::TypeProto& y = model.graph().output(1).type();
  EXPECT_NE(y.tensor_type().elem_type(), onnx::TensorProto::FLOAT) << PrintTypeText(y);
}

TEST(InferenceTest, ApplyWritesValueInfoAndOutputTypes) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[N,4] X) => (Y) {
  T = Relu(X)
  Y = Neg(T)
})");
  absl::StatusOr<InferenceResult> result = InferModel(model);
  ASSERT_TRUE(result.ok());
  ApplyInferredTypes(*result, model);
  EXPECT_EQ(PrintTypeText(model.graph().output(0).type()), "float[N,4]");
  ASSERT_EQ(model.graph().value_info_size(), 1);
  EXPECT_EQ(model.graph().value_info(0).name(), "T");
}

// Which re-inferred nodes repeat the one checked first: the same op
// version, arity, attributes and input types, and the same output types.
TEST(NodeReinferencerTest, RepeatsCheckedNodeOnlyForNodesLikeTheCheckedOne) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[2,M] X, int64[2,M] I) => (float[2,1,3] Y) {
  [first] A = Unsqueeze <axes = [1]> (X)
  [same] B = Unsqueeze <axes = [1]> (X)
  [other_axes] C = Unsqueeze <axes = [0]> (X)
  [other_input_type] D = Unsqueeze <axes = [1]> (I)
  [declared_output] Y = Unsqueeze <axes = [1]> (X)
  [other_op] E = Relu(X)
  [again] F = Unsqueeze <axes = [1]> (X)
})");
  // Y is declared float[2,1,3], more than the float[2,1,M] inferred: it
  // takes the declared type, not the one remembered.
  InferenceOptions strict;
  strict.strict = true;
  absl::StatusOr<InferenceResult> result = InferModel(model, strict);
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<std::unique_ptr<NodeReinferencer>> reinfer =
      NodeReinferencer::Create(model, model.graph(), {}, *result);
  ASSERT_TRUE(reinfer.ok()) << reinfer.status();
  const std::map<std::string, bool> repeats = {
      {"first", false},           {"same", true},           {"other_axes", false},
      {"other_input_type", false}, {"declared_output", false}, {"other_op", false},
      {"again", true},
  };
  for (const onnx::NodeProto& node : model.graph().node()) {
    ASSERT_TRUE((*reinfer)->Infer(node).ok()) << node.name();
    EXPECT_EQ((*reinfer)->RepeatsCheckedNode(), repeats.at(node.name())) << node.name();
    if (node.name() == "first") (*reinfer)->NoteChecked();
  }
}

// Which input of the node last re-inferred had no type: the first named
// one defined nowhere before it, for known and unknown ops alike.
TEST(NodeReinferencerTest, UntypedInputNamesTheFirstInputWithNoType) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  Y = Relu(X)
})");
  // The nodes re-inferred outlive the reinferencer, whose types are keyed
  // by views of their output names.
  std::deque<onnx::ModelProto> models;
  absl::StatusOr<InferenceResult> result = InferModel(model);
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<std::unique_ptr<NodeReinferencer>> reinfer =
      NodeReinferencer::Create(model, model.graph(), {}, *result);
  ASSERT_TRUE(reinfer.ok()) << reinfer.status();
  struct Case {
    const char* node;
    int untyped;
  };
  const Case cases[] = {
      {"A = Add(X, X)", -1},
      {"B = Add(X, Missing)", 1},
      {"C = Add(Missing, Other)", 0},
      {"D = Unknown(X, Missing)", 1},
      {"E = Relu(X)", -1},
  };
  for (const Case& c : cases) {
    const onnx::ModelProto& one = models.emplace_back(Model(absl::StrCat(
        R"(<ir_version: 8, opset_import: ["" : 13]> g (float[2] X) => (float[2] Z) { )", c.node,
        " Z = Relu(X) }")));
    (*reinfer)->Infer(one.graph().node(0)).IgnoreError();
    EXPECT_EQ((*reinfer)->UntypedInput(), c.untyped) << c.node;
  }
}

TEST(InferenceRulesTest, RulesCoverRealOpsWithoutOverlap) {
  int rules = 0;
  for (auto family : {ElementwiseRules(), ShapeRules(), TensorRules(), NnRules(), MiscRules()}) {
    for (const InferenceRule& rule : family) {
      ++rules;
      EXPECT_FALSE(Registry::Get().VersionsOf(rule.domain, rule.op).empty())
          << "'" << rule.domain << "'"
          << rule.domain << "." << rule.op << " is not an operator";
    }
  }
  // A rule registered twice would shadow the other silently.
  std::map<std::string, int> seen;
  for (auto family : {ElementwiseRules(), ShapeRules(), TensorRules(), NnRules(), MiscRules()}) {
    for (const InferenceRule& rule : family) {
      EXPECT_EQ(++seen[absl::StrCat(rule.domain, ".", rule.op)], 1)
          << rule.domain << "." << rule.op << " has two rules";
    }
  }
  EXPECT_GT(rules, 150);
}

}  // namespace
}  // namespace onnxconvert::schema
