// Attention recognized back from its decomposed forms (recognitions.rules,
// deploy profile): each case a model in ONNX text and its nodes after, where
// the rules match and where they must not.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "rewrites/pass.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::rewrites {
namespace {

// `after` of a case where no rule matches: the nodes stay as they were.
constexpr const char* kUnchanged = nullptr;

// A decomposed attention, its graph's nodes after the deploy profile (ONNX
// text, node names left out).
struct AttentionCase {
  const char* name;
  int opset;
  const char* inputs;  // the graph's inputs, Q, K, V and others
  const char* body;    // computes Y
  const char* after;   // or kUnchanged
  const char* profile = "deploy";
  const char* outputs = "Z";
};

// Scales of head size 8: 1/sqrt(8) (c), sqrt(8) (d), 8^-1/4 (r), another
// (o, its root ro), one per head (h); masks [4, 6] (m), [4, 1] (m1), [6]
// (mv), zeros (z).
std::string AttentionModel(const AttentionCase& c) {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : )", c.opset, R"(]>
g ()", c.inputs, ") => (", c.outputs, R"()
  <float c = {0.35355339}, float d = {2.8284271}, float r = {0.59460354}, float o = {0.25},
   float ro = {0.5}, float[3,1,1] h = {0.35355339, 0.35355339, 0.35355339},
   float[4,6] m = {0, -1, -2, 0, 0, 0, 0, 0, -1, -1, 0, 0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0},
   float[4,1] m1 = {0, -1, 0, -2}, float[6] mv = {0, 0, -1, 0, 0, -2},
   float[4,6] z = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}> {
)", c.body, R"(
  Z = Relu(Y)
})");
}

constexpr char kQkv[] = "float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,8] V";

// The scores' forms: times c, over d, Q and K^T each times r.
constexpr char kScoresTimesC[] = R"(
  KT = Transpose<perm = [0, 1, 3, 2]>(K)
  S = MatMul(Q, KT)
  SS = Mul(S, c))";
constexpr char kScoresOverD[] = R"(
  KT = Transpose<perm = [0, 1, 3, 2]>(K)
  S = MatMul(Q, KT)
  SS = Div(S, d))";
constexpr char kRootScaled[] = R"(
  KT = Transpose<perm = [0, 1, 3, 2]>(K)
  QS = Mul(Q, r)
  KS = Mul(KT, r)
  SS = MatMul(QS, KS))";

std::string Attend(const char* scores, const char* after_scores = "") {
  return absl::StrCat(scores, after_scores, "\n  P = Softmax(", *after_scores ? "SM" : "SS",
                      ")\n  Y = MatMul(P, V)");
}

const std::string kTimesC = Attend(kScoresTimesC);
const std::string kOverD = Attend(kScoresOverD);
const std::string kRoot = Attend(kRootScaled);
const std::string kTimesCMask = Attend(kScoresTimesC, "\n  SM = Add(SS, m)");
const std::string kRootMask = Attend(kRootScaled, "\n  SM = Add(SS, m)");
const std::string kRootZeroMask = Attend(kRootScaled, "\n  SM = Add(SS, z)");
const std::string kMaskLastDim1 = Attend(kScoresTimesC, "\n  SM = Add(SS, m1)");
const std::string kMaskRank1 = Attend(kScoresTimesC, "\n  SM = Add(SS, mv)");
const std::string kTimesOther = Attend(R"(
  KT = Transpose<perm = [0, 1, 3, 2]>(K)
  S = MatMul(Q, KT)
  SS = Mul(c2, S))");
const std::string kRootOther = Attend(R"(
  KT = Transpose<perm = [0, 1, 3, 2]>(K)
  QS = Mul(Q, ro)
  KS = Mul(KT, ro)
  SS = MatMul(QS, KS))");
const std::string kPerHeadScale = Attend(R"(
  KT = Transpose<perm = [0, 1, 3, 2]>(K)
  S = MatMul(Q, KT)
  SS = Mul(S, h))");
const std::string kSoftmaxAxis3 = absl::StrCat(kScoresTimesC, R"(
  P = Softmax<axis = 3>(SS)
  Y = MatMul(P, V))");
const std::string kSoftmaxAxis2 = absl::StrCat(kScoresTimesC, R"(
  P = Softmax<axis = 2>(SS)
  Y = MatMul(P, V))");
// K as [B, L, H, D], its Transpose to [B, H, D, L] not a swap of the last
// two axes.
const std::string kKeyHeadsLast = Attend(R"(
  KT = Transpose<perm = [0, 2, 3, 1]>(K)
  S = MatMul(Q, KT)
  SS = Mul(S, c))");
// Q, K and V of rank 3 (one head).
const std::string kRank3 = Attend(R"(
  KT = Transpose<perm = [0, 2, 1]>(K)
  S = MatMul(Q, KT)
  SS = Mul(S, c))");

// The nodes after: Attention recognized (with the mask m).
constexpr char kAttention[] = "Y = Attention(Q, K, V)\nZ = Relu(Y)\n";
constexpr char kAttentionMasked[] = "Y = Attention(Q, K, V, m)\nZ = Relu(Y)\n";

const AttentionCase kAttentionCases[] = {
    {"scores_times_default_scale", 23, kQkv, kTimesC.c_str(), kAttention},
    {"scores_over_default_root", 23, kQkv, kOverD.c_str(), kAttention},
    {"root_scaled_function_body", 23, kQkv, kRoot.c_str(), kAttention},
    {"scores_times_default_scale_mask", 23, kQkv, kTimesCMask.c_str(), kAttentionMasked},
    {"root_scaled_mask", 23, kQkv, kRootMask.c_str(), kAttentionMasked},
    // The function body's zero bias (no mask given) is left out.
    {"root_scaled_zero_mask", 23, kQkv, kRootZeroMask.c_str(), kAttention},
    {"softmax_axis_3", 23, kQkv, kSoftmaxAxis3.c_str(), kAttention},
    // Another scale (a graph input c2 here: no match; a constant: bound).
    {"scale_not_constant", 23, "float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,8] V, float c2",
     kTimesOther.c_str(), kUnchanged},
    {"root_scaled_other_scale", 23, kQkv, kRootOther.c_str(),
     "Y = Attention <scale = 0.25> (Q, K, V)\nZ = Relu(Y)\n"},
    {"scale_per_head", 23, kQkv, kPerHeadScale.c_str(), kUnchanged},
    {"softmax_axis_2", 23, kQkv, kSoftmaxAxis2.c_str(), kUnchanged},
    {"key_heads_last", 23, "float[2,3,4,8] Q, float[2,6,3,8] K, float[2,3,6,8] V",
     kKeyHeadsLast.c_str(), kUnchanged},
    {"rank_3", 23, "float[3,4,8] Q, float[3,6,8] K, float[3,6,8] V", kRank3.c_str(),
     kUnchanged},
    // K and V of one head, broadcast by the MatMuls to Q's three.
    {"heads_broadcast", 23, "float[2,3,4,8] Q, float[2,1,6,8] K, float[2,1,6,8] V",
     kTimesC.c_str(), kUnchanged},
    // A mask's key dim of 1 broadcasts in Add; Attention pads it with -inf.
    {"mask_key_dim_1", 23, kQkv, kMaskLastDim1.c_str(), kUnchanged},
    {"mask_rank_1", 23, kQkv, kMaskRank1.c_str(), kUnchanged},
    // The probabilities are a graph output too.
    {"probabilities_used", 23, kQkv, kTimesC.c_str(), kUnchanged, "deploy", "Z, P"},
    {"opset_22", 22, kQkv, kTimesC.c_str(), kUnchanged},
    {"exact_profile", 23, kQkv, kTimesC.c_str(), kUnchanged, "exact"},
};

class AttentionTest : public ::testing::TestWithParam<AttentionCase> {};

// The nodes of `model`'s graph in ONNX text, their names left out.
std::string UnnamedNodesText(onnx::ModelProto& model) {
  std::vector<const onnx::NodeProto*> nodes;
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    node.clear_name();
    nodes.push_back(&node);
  }
  return NodesText(nodes);
}

TEST_P(AttentionTest, RecognizedWhereEquivalent) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(AttentionModel(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string before = UnnamedNodesText(*model);
  RewriteOptions options;
  options.profile = GetParam().profile;
  absl::StatusOr<RewriteReport> report = Optimize(*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  const char* after = GetParam().after;
  EXPECT_EQ(UnnamedNodesText(*model), after == kUnchanged ? before : after) << report->ToText();
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionTest, ::testing::ValuesIn(kAttentionCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace onnxconvert::rewrites
