#include "schema/context_bodies.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "schema/registry.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

// One call of an op whose function body depends on the call: a one-node
// graph at opset `from`, converted down to `to`, below the op's
// introduction.
struct BodyCase {
  std::string name;
  std::string op;
  int64_t from;
  int64_t to;
  std::string graph;  // ONNX text
};

const BodyCase kCases[] = {
    {"attention_4d", "Attention", 23, 7,
     "g (float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,8] V) => (float[2,3,4,8] Y) {\n"
     "  Y = Attention(Q, K, V)\n}"},
    {"attention_3d_gqa_causal_softcap", "Attention", 23, 7,
     "g (float[2,4,72] Q, float[2,6,24] K, float[2,6,24] V) => (float[2,4,72] Y) {\n"
     "  Y = Attention <is_causal = 1, kv_num_heads = 3, q_num_heads = 9, softcap = 2.0> "
     "(Q, K, V)\n}"},
    {"attention_past_bool_mask_qk_output", "Attention", 23, 9,
     "g (float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,8] V, bool[4,18] M, "
     "float[2,3,12,8] PK, float[2,3,12,8] PV) => (float[2,3,4,8] Y, float[2,3,18,8] PKo, "
     "float[2,3,18,8] PVo, float[2,3,4,18] QK) {\n"
     "  Y, PKo, PVo, QK = Attention <qk_matmul_output_mode = 2, scale = 0.1> "
     "(Q, K, V, M, PK, PV)\n}"},
    {"attention_dynamic_causal", "Attention", 23, 11,
     "g (float[B,3,L,8] Q, float[B,3,S,8] K, float[B,3,S,8] V) => (float[B,3,L,8] Y) {\n"
     "  Y = Attention <is_causal = 1, softmax_precision = 1> (Q, K, V)\n}"},
    {"attention_24", "Attention", 24, 7,
     "g (float16[2,3,4,8] Q, float16[2,3,6,8] K, float16[2,3,6,8] V) => "
     "(float16[2,3,4,8] Y) {\n"
     "  Y = Attention <is_causal = 1> (Q, K, V)\n}"},
    {"rms_normalization", "RMSNormalization", 23, 7,
     "g (float[2,3,4,5] X, float[4,5] W) => (float[2,3,4,5] Y) {\n"
     "  Y = RMSNormalization <axis = -2, epsilon = 0.1> (X, W)\n}"},
    {"nllloss_12", "NegativeLogLikelihoodLoss", 12, 9,
     "g (float[3,5,2] X, int64[3,2] T) => (float[3,2] L) {\n"
     "  L = NegativeLogLikelihoodLoss <reduction = \"none\"> (X, T)\n}"},
    {"nllloss_13_weight_ignore", "NegativeLogLikelihoodLoss", 13, 9,
     "g (float[3,5,6] X, int64[3,6] T, float[5] W) => (float[] L) {\n"
     "  L = NegativeLogLikelihoodLoss <ignore_index = -1, reduction = \"mean\"> (X, T, W)\n}"},
    {"nllloss_22_sum_int32", "NegativeLogLikelihoodLoss", 22, 9,
     "g (double[3,5] X, int32[3] T) => (double[] L) {\n"
     "  L = NegativeLogLikelihoodLoss <reduction = \"sum\"> (X, T)\n}"},
    {"nllloss_dynamic_classes", "NegativeLogLikelihoodLoss", 12, 11,
     "g (float[N,C] X, int64[N] T) => (float[] L) {\n"
     "  L = NegativeLogLikelihoodLoss(X, T)\n}"},
    {"sce_12", "SoftmaxCrossEntropyLoss", 12, 9,
     "g (float[3,5] X, int64[3] T) => (float[] L, float[3,5] P) {\n"
     "  L, P = SoftmaxCrossEntropyLoss(X, T)\n}"},
    {"sce_13_4d_ignore", "SoftmaxCrossEntropyLoss", 13, 9,
     "g (float[3,5,2,7] X, int64[3,2,7] T, float[5] W) => (float[] L, float[3,5,2,7] P) {\n"
     "  L, P = SoftmaxCrossEntropyLoss <ignore_index = 2> (X, T, W)\n}"},
    {"layer_normalization", "LayerNormalization", 17, 7,
     "g (float[2,3,4,5] X, float[3,4,5] W, float[3,4,5] B) => (float[2,3,4,5] Y, "
     "float[2,1,1,1] M, float[2,1,1,1] I) {\n"
     "  Y, M, I = LayerNormalization <axis = 1> (X, W, B)\n}"},
    {"layer_normalization_no_bias", "LayerNormalization", 17, 7,
     "g (float16[2,3,5] X, float16[5] W) => (float16[2,3,5] Y) {\n"
     "  Y = LayerNormalization(X, W)\n}"},
    {"rotary_embedding", "RotaryEmbedding", 23, 7,
     "g (float[2,4,3,8] X, float[50,4] C, float[50,4] S, int64[2,3] P) => "
     "(float[2,4,3,8] Y) {\n"
     "  Y = RotaryEmbedding(X, C, S, P)\n}"},
    {"rotary_embedding_3d_interleaved_partial", "RotaryEmbedding", 23, 7,
     "g (float[2,3,32] X, float[2,3,2] C, float[2,3,2] S) => (float[2,3,32] Y) {\n"
     "  Y = RotaryEmbedding <interleaved = 1, num_heads = 4, rotary_embedding_dim = 4> "
     "(X, C, S)\n}"},
    {"center_crop_pad", "CenterCropPad", 18, 11,
     "g (float[20,8,3] X, int64[3] S) => (float[10,10,3] Y) {\n"
     "  Y = CenterCropPad(X, S)\n}"},
    {"center_crop_pad_axes", "CenterCropPad", 18, 11,
     "g (float[20,8,3] X, int32[2] S) => (float[10,9,3] Y) {\n"
     "  Y = CenterCropPad <axes = [-3, -2]> (X, S)\n}"},
    {"gelu", "Gelu", 20, 9, "g (float[3,4] X) => (float[3,4] Y) { Y = Gelu(X) }"},
    {"gelu_tanh", "Gelu", 20, 7,
     "g (double[3] X) => (double[3] Y) { Y = Gelu <approximate = \"tanh\"> (X) }"},
    {"group_normalization_18", "GroupNormalization", 18, 7,
     "g (float[3,4,2,2] X, float[2] S, float[2] B) => (float[3,4,2,2] Y) {\n"
     "  Y = GroupNormalization <epsilon = 0.01, num_groups = 2> (X, S, B)\n}"},
    {"linear_attention_gated_delta", "LinearAttention", 27, 7,
     "g (float[2,4,64] Q, float[2,4,32] K, float[2,4,32] V, float[2,4,32] D, float[2,4,4] B)"
     " => (float[2,4,64] O, float[2,4,8,8] S) {\n"
     "  O, S = LinearAttention <kv_num_heads = 4, q_num_heads = 8> (Q, K, V, \"\", D, B)\n}"},
    {"linear_attention_linear_past", "LinearAttention", 27, 7,
     "g (float16[2,1,32] Q, float16[2,1,32] K, float16[2,1,32] V, float[2,4,8,8] P) => "
     "(float16[2,1,32] O, float[2,4,8,8] S) {\n"
     "  O, S = LinearAttention <kv_num_heads = 4, q_num_heads = 4, scale = 0.5, "
     "update_rule = \"linear\"> (Q, K, V, P)\n}"},
    {"linear_attention_dynamic_steps", "LinearAttention", 27, 9,
     "g (float[2,T,32] Q, float[2,T,32] K, float[2,T,32] V, float[2,T,4] D) => "
     "(float[2,T,32] O, float[2,4,8,8] S) {\n"
     "  O, S = LinearAttention <kv_num_heads = 4, q_num_heads = 4, update_rule = \"gated\"> "
     "(Q, K, V, \"\", D)\n}"},
    {"causal_conv_with_state", "CausalConvWithState", 27, 7,
     "g (float[2,4,8] X, float[4,1,4] W, float[4] B, float[2,4,3] P) => (float[2,4,8] Y, "
     "float[2,4,3] S) {\n"
     "  Y, S = CausalConvWithState <activation = \"silu\"> (X, W, B, P)\n}"},
    {"causal_conv_with_state_dynamic", "CausalConvWithState", 27, 9,
     "g (float16[N,4,L] X, float16[4,1,4] W) => (float16[N,4,L] Y, float16[N,4,3] S) {\n"
     "  Y, S = CausalConvWithState(X, W)\n}"},
};

// The model of `c`'s graph at its opset.
onnx::ModelProto CaseModel(const BodyCase& c) {
  return testing::ModelFromText(absl::StrCat("<ir_version: ", MinIrVersionForOpset(c.from),
                                             ", opset_import: [\"\" : ", c.from, "]>\n", c.graph));
}

TEST(ContextBodiesTest, ExpandsBelowTheOpsIntroductionAndValidates) {
  for (const BodyCase& c : kCases) {
    ConvertOptions options;
    options.target_opset = c.to;
    options.cross_check = true;  // node-by-node validation agrees with the whole model's
    absl::StatusOr<ConversionResult> result = ConvertModel(CaseModel(c), options);
    ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
    for (const onnx::NodeProto& node : result->model.graph().node()) {
      EXPECT_NE(node.op_type(), c.op) << c.name;
    }
    for (const StepReport& step : result->report.steps) {
      EXPECT_TRUE(step.validation == StepValidation::kOk ||
                  step.validation == StepValidation::kIncremental ||
                  step.validation == StepValidation::kUnchanged)
          << c.name << ": step " << step.from_opset << " -> " << step.to_opset << " is "
          << StepValidationName(step.validation);
    }
  }
}

// The body for `c`'s node, built directly for its input types.
absl::StatusOr<std::string> BodyFor(const BodyCase& c) {
  onnx::ModelProto model = CaseModel(c);
  const onnx::NodeProto& node = model.graph().node(0);
  const schema::OpSchema* schema = schema::Registry::Get().Lookup("", node.op_type(), c.from);
  if (schema == nullptr) return absl::NotFoundError(c.op);
  std::vector<const onnx::TypeProto*> types;
  for (const std::string& input : node.input()) {
    const onnx::TypeProto* type = nullptr;
    for (const onnx::ValueInfoProto& value : model.graph().input()) {
      if (value.name() == input) type = &value.type();
    }
    types.push_back(type);
  }
  return schema::ContextDependentBody(*schema, node, types);
}

// Bodies the converter reaches only through an adapter to an older version
// (or not at all): built directly, each must parse and import its op's
// opset.
TEST(ContextBodiesTest, EveryVersionHasABodyThatParses) {
  const BodyCase kDirect[] = {
      {"attention_24_nonpad_short_mask", "Attention", 24, 0,
       "g (float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,10] V, float[2,3,4,4] M, "
       "int64[2] N) => (float[2,3,4,10] Y) {\n"
       "  Y = Attention(Q, K, V, M, \"\", \"\", N)\n}"},
      {"group_normalization_21", "GroupNormalization", 21, 0,
       "g (float[3,4,2,2] X, float[4] S, float[4] B) => (float[3,4,2,2] Y) {\n"
       "  Y = GroupNormalization <num_groups = 2> (X, S, B)\n}"},
  };
  std::vector<BodyCase> cases(std::begin(kCases), std::end(kCases));
  cases.insert(cases.end(), std::begin(kDirect), std::end(kDirect));
  for (const BodyCase& c : cases) {
    absl::StatusOr<std::string> text = BodyFor(c);
    ASSERT_TRUE(text.ok()) << c.name << ": " << text.status();
    absl::StatusOr<onnx::FunctionProto> function = ParseFunctionText(*text);
    ASSERT_TRUE(function.ok()) << c.name << ": " << function.status() << "\n" << *text;
    EXPECT_EQ(function->name(), c.op) << c.name;
    ASSERT_EQ(function->opset_import_size(), 1) << c.name;
    EXPECT_EQ(function->opset_import(0).version(), c.from) << c.name;
    EXPECT_GT(function->node_size(), 0) << c.name;
  }
}

TEST(ContextBodiesTest, RefusesWhatTheBodyNeedsAndIsUnknown) {
  struct Refusal {
    BodyCase c;
    std::string message;
  };
  const Refusal kRefusals[] = {
      {{"layer_normalization_no_rank", "LayerNormalization", 17, 16,
        "g (float X, float[5] W) => (float Y) { Y = LayerNormalization(X, W) }"},
       "the rank of input 'X' is unknown"},
      {{"rotary_head_size", "RotaryEmbedding", 23, 22,
        "g (float[2,4,3,D] X, float[50,4] C, float[50,4] S, int64[2,3] P) => "
        "(float[2,4,3,D] Y) { Y = RotaryEmbedding(X, C, S, P) }"},
       "the size of axis 3 of input 'X' is unknown"},
      {{"linear_attention_type", "LinearAttention", 27, 26,
        "g (Q, float[2,4,32] K, float[2,4,32] V) => (float[2,4,32] O, float[2,4,8,8] S) {\n"
        "  O, S = LinearAttention <kv_num_heads = 4, q_num_heads = 4, "
        "update_rule = \"linear\"> (Q, K, V)\n}"},
       "the element type of input 'query' is unknown"},
      {{"attention_3d_heads", "Attention", 23, 22,
        "g (float[2,4,24] Q, float[2,6,24] K, float[2,6,24] V) => (float[2,4,24] Y) {\n"
        "  Y = Attention(Q, K, V)\n}"},
       "attribute 'q_num_heads' is not set"},
  };
  for (const Refusal& r : kRefusals) {
    ConvertOptions options;
    options.target_opset = r.c.to;
    absl::StatusOr<ConversionResult> result = ConvertModel(CaseModel(r.c), options);
    ASSERT_FALSE(result.ok()) << r.c.name;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << r.c.name;
    EXPECT_TRUE(absl::StrContains(result.status().message(), r.message))
        << r.c.name << ": " << result.status();
  }
}

TEST(ContextBodiesTest, OpsWithoutABodyAreUnimplemented) {
  const schema::OpSchema* bernoulli = schema::Registry::Get().Exact("", "Bernoulli", 22);
  ASSERT_NE(bernoulli, nullptr);
  onnx::NodeProto node;
  node.set_op_type("Bernoulli");
  absl::StatusOr<std::string> body = schema::ContextDependentBody(*bernoulli, node, {});
  EXPECT_EQ(body.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace onnxconvert::converter
