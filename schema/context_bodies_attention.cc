// Call-dependent function bodies of the attention family: Attention,
// RotaryEmbedding, CausalConvWithState and LinearAttention (unrolled or as a
// Scan). The conventions of context_bodies.cc apply.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "schema/context_bodies_internal.h"

namespace onnxconvert::schema::bodies_internal {
namespace {

// ---------------------------------------------------------------------------
// Attention.

// 1 / sqrt(head size) of `x4` [B, H, L, D] as a scalar of `elem`, raised to
// `power` (0.5: the factor both Q and K are scaled by): a constant when D
// is known, else computed from x4's shape.
std::string HeadSizeScale(Body& b, const std::string& x4, int64_t head_size, double power,
                          int32_t elem) {
  if (head_size > 0) {
    return b.Scalar(std::pow(1.0 / std::sqrt(static_cast<double>(head_size)), power), elem);
  }
  std::string size = b.Cast(b.DimOf(x4, 3), kInt64, kFloat);
  std::string scale = b.Op("Reciprocal", {b.Op("Sqrt", {size})});
  if (power == 0.5) scale = b.Op("Sqrt", {scale});
  return b.Cast(scale, kFloat, elem);
}

// The query-key bias of the causal mask: -inf where key j > query i +
// `past` (the keys before the query block), [L, S]: a constant when the
// sizes are known and small, else built with Range.
std::string CausalBias(Body& b, const std::string& q4, const std::string& k4, int64_t q_len,
                       int64_t kv_len, int64_t past, const std::string& past_key, int32_t t) {
  if (q_len > 0 && kv_len > 0 && past >= 0 && q_len * kv_len <= kMaxConstantElements) {
    std::vector<double> bias;
    for (int64_t i = 0; i < q_len; ++i) {
      for (int64_t j = 0; j < kv_len; ++j) bias.push_back(j > i + past ? -INFINITY : 0.0);
    }
    return b.Constant(bias, {q_len, kv_len}, t);
  }
  std::string zero = b.Int64Scalar(0), one = b.Int64Scalar(1), two = b.Int64Scalar(2);
  auto length = [&](const std::string& x) { return b.Op("Gather", {b.Op("Shape", {x}), two}); };
  std::string rows = b.Op("Range", {zero, length(q4), one});
  if (!past_key.empty()) rows = b.Op("Add", {rows, length(past_key)});
  std::string cols = b.Op("Range", {zero, length(k4), one});
  std::string masked = b.Op("Less", {b.Reshape(rows, {-1, 1}), cols});
  return b.Op("Where", {masked, b.Scalar(-INFINITY, t), b.Scalar(0, t)});
}

// A boolean mask (true: attend) as an additive bias of `t`: log(1) = 0 and
// log(0) = -inf (Where would need opset 9).
std::string BoolToBias(Body& b, const std::string& mask, int32_t t) {
  return b.Op("Log", {b.Cast(mask, kBool, t)});
}

// Attention's inputs by position.
enum AttentionInput { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad };

// Q, K and V as [B, heads, length, head size], K and V after the past keys
// and values, with what is known of their sizes (-1: unknown).
struct AttentionHeads {
  std::string q = "Q", k = "K", v = "V";
  int64_t q_heads = 0, kv_heads = 0;
  int64_t head_size = -1;  // of Q and K
  int64_t q_len = -1;
  int64_t past_len = 0;    // 0 without past
  int64_t total_len = -1;  // past and new keys
  bool has_past = false;
};

// OK when `q_heads` query heads share `kv_heads` key/value heads in equal
// groups (both counts positive).
absl::Status CheckHeads(int64_t q_heads, int64_t kv_heads) {
  if (q_heads > 0 && kv_heads > 0 && q_heads % kv_heads == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(q_heads, " query heads cannot share ", kv_heads, " key/value heads evenly"));
}

// Splits 3-D Q, K, V [B, L, heads * size] into heads (the heads counts come
// from q_num_heads and kv_num_heads; 4-D inputs give them as axis 1), and
// puts the past keys and values before K and V.
absl::StatusOr<AttentionHeads> SplitAttentionHeads(Body& b, const Call& call, int rank) {
  AttentionHeads h;
  int64_t kv_len;
  if (rank == 3) {
    OC_ASSIGN_OR_RETURN(h.q_heads, call.NeedInt("q_num_heads"));
    OC_ASSIGN_OR_RETURN(h.kv_heads, call.NeedInt("kv_num_heads"));
    auto split = [&](absl::string_view x, int64_t heads) {
      return b.Op("Transpose", {b.Reshape(std::string(x), {0, 0, heads, -1})},
                  "perm = [0, 2, 1, 3]");
    };
    h.q = split("Q", h.q_heads);
    h.k = split("K", h.kv_heads);
    h.v = split("V", h.kv_heads);
    int64_t hidden = call.Dim(kQ, 2);
    h.head_size = hidden > 0 && h.q_heads > 0 ? hidden / h.q_heads : -1;
    h.q_len = call.Dim(kQ, 1);
    kv_len = call.Dim(kK, 1);
  } else {
    OC_ASSIGN_OR_RETURN(h.q_heads, call.NeedDim(kQ, 1));
    OC_ASSIGN_OR_RETURN(h.kv_heads, call.NeedDim(kK, 1));
    h.head_size = call.Dim(kQ, 3);
    h.q_len = call.Dim(kQ, 2);
    kv_len = call.Dim(kK, 2);
  }
  OC_RETURN_IF_ERROR(CheckHeads(h.q_heads, h.kv_heads));
  if (call.Has(kPastKey) != call.Has(kPastValue)) {
    return absl::FailedPreconditionError(
        "past_key and past_value must be given together; the node gives one");
  }
  h.has_past = call.Has(kPastKey);
  if (h.has_past) {
    h.k = b.Op("Concat", {"past_key", h.k}, "axis = 2");
    h.v = b.Op("Concat", {"past_value", h.v}, "axis = 2");
    h.past_len = call.Dim(kPastKey, 2);
  }
  h.total_len = kv_len >= 0 && h.past_len >= 0 ? kv_len + h.past_len : -1;
  return h;
}

// attn_mask as an additive bias of `t`; from opset 24 on, a last axis
// shorter than the keys is padded with -inf.
absl::StatusOr<std::string> MaskBias(Body& b, const Call& call, const AttentionHeads& h,
                                     int32_t t) {
  OC_ASSIGN_OR_RETURN(int32_t u, call.ElemType(kMask));
  std::string bias = u == kBool ? BoolToBias(b, "attn_mask", t) : b.Cast("attn_mask", u, t);
  int64_t mask_len = call.Dim(kMask, -1);
  if (call.schema.since_version < 24 || (mask_len >= 0 && mask_len == h.total_len)) return bias;
  OC_ASSIGN_OR_RETURN(int mask_rank, call.Rank(kMask, 1));
  std::string missing = b.Op("Sub", {b.DimOf(h.k, 2), b.DimOf(bias, mask_rank - 1)});
  std::string pads =
      b.Op("Concat", {b.Int64s(std::vector<int64_t>(2 * mask_rank - 1, 0)), missing}, "axis = 0");
  return b.Op("Pad", {bias, pads, b.Scalar(-INFINITY, t)});
}

// The bias of the keys at or after nonpad_kv_seqlen[b] (padding), [B, 1, 1,
// S].
std::string PaddingBias(Body& b, const AttentionHeads& h, int32_t t) {
  std::string keys = h.total_len > 0
                         ? b.Int64s(Iota(0, h.total_len))
                         : b.Op("Range", {b.Int64Scalar(0),
                                          b.Op("Gather", {b.Op("Shape", {h.k}), b.Int64Scalar(2)}),
                                          b.Int64Scalar(1)});
  std::string valid = b.Reshape("nonpad_kv_seqlen", {-1, 1, 1, 1});
  return BoolToBias(b, b.Op("Less", {keys, valid}), t);
}

// The biases added to the scores: attn_mask, the causal mask, padding.
absl::StatusOr<std::vector<std::string>> AttentionBiases(Body& b, const Call& call,
                                                         const AttentionHeads& h, int32_t t) {
  std::vector<std::string> biases;
  if (call.Has(kMask)) {
    OC_ASSIGN_OR_RETURN(std::string mask, MaskBias(b, call, h, t));
    biases.push_back(mask);
  }
  if (call.Int("is_causal") != 0) {
    biases.push_back(
        CausalBias(b, h.q, h.k, h.q_len, h.total_len, h.past_len, h.has_past ? "past_key" : "", t));
  }
  if (call.Has(kNonpad)) biases.push_back(PaddingBias(b, h, t));
  return biases;
}

}  // namespace

// Attention-23 and -24: softmax(Q K^T * scale (softcapped) + bias) V per
// head. Query heads sharing a key/value head (grouped-query attention) are
// folded into its query rows: Q [B, Hq, L, D] viewed as [B, Hkv, g L, D].
// qk_matmul_output is the scores after the stage its mode names.
absl::StatusOr<std::string> AttentionBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(kQ));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(kQ));
  if (rank != 3 && rank != 4) {
    return absl::InvalidArgumentError(absl::StrCat("Q has rank ", rank, ", not 3 or 4"));
  }
  Body b(call);
  OC_ASSIGN_OR_RETURN(AttentionHeads h, SplitAttentionHeads(b, call, rank));
  if (call.Wants(1)) b.Output("present_key", h.k);
  if (call.Wants(2)) b.Output("present_value", h.v);

  // Q and K are each scaled by sqrt(scale).
  std::string scale = call.Attr("scale") != nullptr
                          ? b.Scalar(std::sqrt(static_cast<double>(call.Float("scale"))), t)
                          : HeadSizeScale(b, h.q, h.head_size, 0.5, t);
  bool grouped = h.q_heads != h.kv_heads;
  std::string q = b.Op("Mul", {h.q, scale});
  if (grouped) q = b.Reshape(q, {0, h.kv_heads, -1, 0});
  std::string k = b.Op("Mul", {b.Op("Transpose", {h.k}, "perm = [0, 1, 3, 2]"), scale});
  std::string scores = b.Op("MatMul", {q, k});
  if (grouped) scores = b.Reshape(scores, {0, h.q_heads, -1, 0});
  std::vector<std::string> stages = {scores};  // by qk_matmul_output_mode

  if (float softcap = call.Float("softcap"); softcap != 0.0f) {
    std::string cap = b.Scalar(softcap, t);
    scores = b.Op("Mul", {b.Op("Tanh", {b.Op("Div", {scores, cap})}), cap});
  }
  stages.push_back(scores);
  OC_ASSIGN_OR_RETURN(std::vector<std::string> biases, AttentionBiases(b, call, h, t));
  for (const std::string& bias : biases) scores = b.Op("Add", {scores, bias});
  stages.push_back(scores);

  int32_t precision = call.Attr("softmax_precision") != nullptr
                          ? static_cast<int32_t>(call.Int("softmax_precision"))
                          : t;
  std::string probs =
      b.Cast(b.Op("Softmax", {b.Cast(scores, t, precision)}, "axis = -1"), precision, t);
  stages.push_back(probs);

  std::string y = b.Op("MatMul", {grouped ? b.Reshape(probs, {0, h.kv_heads, -1, 0}) : probs, h.v});
  if (grouped) y = b.Reshape(y, {0, h.q_heads, -1, 0});
  if (rank == 3) y = b.Reshape(b.Op("Transpose", {y}, "perm = [0, 2, 1, 3]"), {0, 0, -1});
  b.Output("Y", y);
  if (call.Wants(3)) {
    int64_t mode = call.Int("qk_matmul_output_mode");
    if (mode < 0 || mode >= static_cast<int64_t>(stages.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("qk_matmul_output_mode ", mode, " is unknown"));
    }
    b.Output("qk_matmul_output", stages[mode]);
  }
  return b.Text();
}

// RotaryEmbedding: the first rotary_embedding_dim (R) elements of each head
// rotate in pairs (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2), the pairs
// being the two halves of those R elements, or neighbours when interleaved;
// cos and sin are [B, S, R/2] (gathered by position_ids from [P, >= R/2]).
// Heads stay where they are: 4-D input [B, H, S, D], 3-D [B, S, H * D]
// viewed as [B, S, H, D]; the caches are reshaped to broadcast over H.
absl::StatusOr<std::string> RotaryEmbeddingBody(const Call& call) {
  enum { kX, kCos, kSin, kPositions };
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(kX));
  if (rank != 3 && rank != 4) {
    return absl::InvalidArgumentError(absl::StrCat("X has rank ", rank, ", not 3 or 4"));
  }
  int64_t head_size;
  Body b(call);
  std::string x = "X";
  if (rank == 4) {
    OC_ASSIGN_OR_RETURN(head_size, call.NeedDim(kX, 3));
  } else {
    OC_ASSIGN_OR_RETURN(int64_t heads, call.NeedInt("num_heads"));
    OC_ASSIGN_OR_RETURN(int64_t hidden, call.NeedDim(kX, 2));
    if (heads <= 0 || hidden % heads != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("hidden size ", hidden, " does not split into ", heads, " heads"));
    }
    head_size = hidden / heads;
    x = b.Reshape(x, {0, 0, heads, head_size});
  }
  int64_t rotated =
      call.Int("rotary_embedding_dim") > 0 ? call.Int("rotary_embedding_dim") : head_size;
  if (rotated % 2 != 0 || rotated > head_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rotary_embedding_dim ", rotated, " is odd or larger than the head size ", head_size));
  }
  int64_t half = rotated / 2;
  auto cache = [&](int input) {
    std::string c(call.InputName(input));
    if (call.Has(kPositions)) c = b.Op("Gather", {c, "position_ids"});
    if (call.Dim(input, -1) != half) c = b.Take(c, Iota(0, half), 2);
    // [B, S, R/2] to [B, 1, S, R/2] (4-D input) or [B, S, 1, R/2] (3-D).
    return rank == 4 ? b.Reshape(c, {0, 1, -1, half}) : b.Reshape(c, {0, 0, 1, half});
  };
  std::string cos = cache(kCos), sin = cache(kSin);
  bool interleaved = call.Int("interleaved") != 0;
  std::string x1 = b.Take(x, interleaved ? Iota(0, half, 2) : Iota(0, half), 3);
  std::string x2 = b.Take(x, interleaved ? Iota(1, half, 2) : Iota(half, half), 3);
  std::string real = b.Op("Sub", {b.Op("Mul", {cos, x1}), b.Op("Mul", {sin, x2})});
  std::string imaginary = b.Op("Add", {b.Op("Mul", {sin, x1}), b.Op("Mul", {cos, x2})});
  std::string y = b.Op("Concat", {real, imaginary}, "axis = 3");
  if (interleaved) {
    std::vector<int64_t> order;  // real[0], imaginary[0], real[1], ...
    for (int64_t i = 0; i < half; ++i) order.insert(order.end(), {i, half + i});
    y = b.Take(y, order, 3);
  }
  if (rotated < head_size) {
    y = b.Op("Concat", {y, b.Take(x, Iota(rotated, head_size - rotated), 3)}, "axis = 3");
  }
  if (rank == 3) y = b.Reshape(y, {0, 0, -1});
  b.Output("Y", y);
  return b.Text();
}

namespace {

// Zeros [B, C, count] of `t` for an input [B, C, L]: a constant when B and
// C are known (ConstantOfShape needs opset 9), else ConstantOfShape.
std::string CausalZeros(Body& b, const Call& call, int64_t count, int32_t t) {
  int64_t batch = call.Dim(0, 0), channels = call.Dim(0, 1);
  if (batch >= 0 && channels >= 0 && batch * channels * count <= kMaxConstantElements) {
    return b.Constant(std::vector<double>(batch * channels * count, 0.0), {batch, channels, count},
                      t);
  }
  std::string shape =
      b.Op("Concat", {b.Take(b.Op("Shape", {"input"}), {0, 1}, 0), b.Int64s({count})}, "axis = 0");
  return b.Cast(b.Op("ConstantOfShape", {shape}), kFloat, t);
}

}  // namespace

// CausalConvWithState: a depthwise 1-D convolution over the past state (or
// k - 1 zeros) followed by the input, keeping the input's length; the state
// becomes the last k - 1 positions of that sequence. SiLU ("silu" or
// "swish") optionally follows. 16-bit types are convolved in float.
absl::StatusOr<std::string> CausalConvWithStateBody(const Call& call) {
  enum { kInput, kWeight, kBias, kPast };
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(kInput));
  OC_ASSIGN_OR_RETURN(int64_t channels, call.NeedDim(kWeight, 0));
  OC_ASSIGN_OR_RETURN(int64_t kernel, call.NeedDim(kWeight, 2));
  std::string activation = call.String("activation");
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return absl::InvalidArgumentError(absl::StrCat("activation \"", activation, "\" is unknown"));
  }
  Body b(call);
  std::string sequence = "input";
  if (call.Has(kPast)) {
    sequence = b.Op("Concat", {"past_state", "input"}, "axis = 2");
  } else if (kernel > 1) {
    sequence = b.Op("Concat", {CausalZeros(b, call, kernel - 1, t), "input"}, "axis = 2");
  }
  int32_t compute = t == kDouble ? kDouble : kFloat;
  std::vector<std::string> conv_inputs = {b.Cast(sequence, t, compute),
                                          b.Cast("weight", t, compute)};
  if (call.Has(kBias)) conv_inputs.push_back(b.Cast("bias", t, compute));
  std::string y = b.Op("Conv", conv_inputs, absl::StrCat("group = ", channels));
  if (activation != "none") y = b.Op("Mul", {y, b.Op("Sigmoid", {y})});
  b.Output("output", b.Cast(y, compute, t));
  // The last k - 1 positions of the sequence: input length + [0, k - 1).
  int64_t length = call.Dim(kInput, 2);
  std::string positions = b.Int64s(Iota(std::max<int64_t>(length, 0), kernel - 1));
  if (length < 0) {
    positions =
        b.Op("Add", {positions, b.Op("Gather", {b.Op("Shape", {"input"}), b.Int64Scalar(2)})});
  }
  b.Output("present_state", b.Op("Gather", {sequence, positions}, "axis = 2"));
  return b.Text();
}

namespace {

// How each LinearAttention update rule changes the state S [dk, dv] per
// key/value head with key k, value v, decay g and rate beta:
//   linear:      S = S + k v^T
//   gated:       S = exp(g) S + k v^T
//   delta:       S = S + beta k (v - S^T k)^T
//   gated_delta: S = exp(g) S + beta k (v - (exp(g) S)^T k)^T
struct UpdateRule {
  const char* name;
  bool gated;
  bool delta;
};
constexpr UpdateRule kUpdateRules[] = {
    {"linear", false, false},
    {"gated", true, false},
    {"delta", false, true},
    {"gated_delta", true, true},
};

// One token's values for a LinearAttention step, per head: q [B, Hq, dk],
// k [B, Hkv, dk], v [B, Hkv, dv], decay [B, Hkv, dk or 1], beta
// [B, Hkv or 1, 1]; the state [B, Hkv, dk, dv] ("" for zero).
struct LinearStep {
  std::string state, q, k, v, decay = "", beta = "";
};

// The step's new state and its output [B, Hq * dv] (unscaled): query heads
// read their key/value head's state in groups of `group`.
std::pair<std::string, std::string> LinearAttentionStep(Body& b, const UpdateRule& rule,
                                                        const LinearStep& in, int64_t kv_heads,
                                                        int64_t group) {
  std::string state = in.state;
  if (rule.gated && !state.empty()) {
    state = b.Op("Mul", {state, b.Reshape(b.Op("Exp", {in.decay}), {0, 0, -1, 1})});
  }
  std::string write = b.Reshape(in.v, {0, 0, 1, -1});  // [B, Hkv, 1, dv]
  if (rule.delta) {
    if (!state.empty()) {
      std::string read = b.Op("MatMul", {b.Reshape(in.k, {0, 0, 1, -1}), state});
      write = b.Op("Sub", {write, read});
    }
    write = b.Op("Mul", {write, b.Reshape(in.beta, {0, 0, 1, 1})});
  }
  std::string outer = b.Op("MatMul", {b.Reshape(in.k, {0, 0, -1, 1}), write});
  state = state.empty() ? outer : b.Op("Add", {state, outer});
  std::string q = b.Reshape(in.q, {0, kv_heads, group, -1});  // [B, Hkv, g, dk]
  return {state, b.Reshape(b.Op("MatMul", {q, state}), {0, -1})};
}

// LinearAttention's inputs, unpacked to heads in float: [B, T, H, d]
// (decay d = dk or 1; beta [B, T, 1 or Hkv, 1]).
struct LinearInputs {
  std::string q, k, v, decay = "", beta = "", state = "";  // "" where absent
};

// The steps unrolled, tokens taken with Gather; a zero state is left out of
// the first step. The outputs [B, T, Hq * dv] and the last state.
std::pair<std::string, std::string> UnrolledLinearAttention(Body& b, const UpdateRule& rule,
                                                            const LinearInputs& in, int64_t steps,
                                                            int64_t kv_heads, int64_t group) {
  std::string state = in.state;
  std::vector<std::string> outputs;
  for (int64_t step = 0; step < steps; ++step) {
    std::string index = b.Int64Scalar(step);
    auto token = [&](const std::string& x) {
      return x.empty() ? x : b.Op("Gather", {x, index}, "axis = 1");
    };
    std::string output;
    std::tie(state, output) = LinearAttentionStep(
        b, rule, {state, token(in.q), token(in.k), token(in.v), token(in.decay), token(in.beta)},
        kv_heads, group);
    outputs.push_back(output);
  }
  std::string output = outputs.size() == 1 ? outputs[0] : b.Op("Concat", outputs, "axis = 1");
  return {b.Reshape(output, {0, steps, -1}), state};
}

// The steps as a Scan over the tokens (axis 1 moved first), from the past
// state or zeros. The outputs [B, T, Hq * dv] and the last state.
std::pair<std::string, std::string> ScannedLinearAttention(Body& b, const Call& call,
                                                           const UpdateRule& rule,
                                                           const LinearInputs& in, int64_t kv_heads,
                                                           int64_t group) {
  std::string state = in.state;
  if (state.empty()) {  // zeros [B, Hkv, dk, dv]
    std::string shape =
        b.Op("Concat",
             {b.Take(b.Op("Shape", {in.k}), {0, 2, 3}, 0), b.Take(b.Op("Shape", {in.v}), {3}, 0)},
             "axis = 0");
    state = b.Op("ConstantOfShape", {shape});
  }
  Body step(call, "step_");
  LinearStep formal{"step_state", "step_q", "step_k", "step_v"};
  std::vector<std::string> scanned = {in.q, in.k, in.v};
  std::vector<std::string> step_inputs = {formal.state, formal.q, formal.k, formal.v};
  if (!in.decay.empty()) {
    formal.decay = "step_decay";
    scanned.push_back(in.decay);
    step_inputs.push_back(formal.decay);
  }
  if (!in.beta.empty()) {
    formal.beta = "step_beta";
    scanned.push_back(in.beta);
    step_inputs.push_back(formal.beta);
  }
  auto [next, output] = LinearAttentionStep(step, rule, formal, kv_heads, group);
  std::vector<std::string> scan_inputs = {state};
  for (const std::string& x : scanned) {
    scan_inputs.push_back(b.Op("Transpose", {x}, "perm = [1, 0, 2, 3]"));
  }
  std::vector<std::string> results =
      b.Ops("Scan", scan_inputs, 2,
            absl::StrCat("num_scan_inputs = ", scanned.size(),
                         ", body = ", step.GraphText("step", step_inputs, {next, output})));
  return {b.Op("Transpose", {results[1]}, "perm = [1, 0, 2]"), results[0]};
}

}  // namespace

// LinearAttention: the recurrence over the T tokens in float, unrolled when
// T is known and at most kMaxUnrolledSteps, else a Scan. Each step reads
// o = scale q^T S per query head, query heads sharing their key/value
// head's state in groups; heads are unpacked with Reshape.
absl::StatusOr<std::string> LinearAttentionBody(const Call& call) {
  enum { kQuery, kKey, kValue, kPast, kDecay, kBeta };
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(kQuery));
  OC_ASSIGN_OR_RETURN(int64_t q_heads, call.NeedInt("q_num_heads"));
  OC_ASSIGN_OR_RETURN(int64_t kv_heads, call.NeedInt("kv_num_heads"));
  OC_RETURN_IF_ERROR(CheckHeads(q_heads, kv_heads));
  const UpdateRule* rule = nullptr;
  std::string rule_name = call.String("update_rule");
  for (const UpdateRule& r : kUpdateRules) {
    if (rule_name == r.name) rule = &r;
  }
  if (rule == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("update_rule \"", rule_name, "\" is unknown"));
  }
  if ((rule->gated && !call.Has(kDecay)) || (rule->delta && !call.Has(kBeta))) {
    return absl::InvalidArgumentError(
        absl::StrCat("update_rule \"", rule_name, "\" needs its decay and beta inputs"));
  }
  int32_t state_type = t;
  if (call.Has(kPast)) {
    OC_ASSIGN_OR_RETURN(state_type, call.ElemType(kPast));
  }
  Body b(call);
  auto heads = [&](int input, int64_t count) {
    return b.Reshape(b.Cast(std::string(call.InputName(input)), t, kFloat), {0, 0, count, -1});
  };
  LinearInputs in{heads(kQuery, q_heads), heads(kKey, kv_heads), heads(kValue, kv_heads)};
  if (rule->gated) in.decay = heads(kDecay, kv_heads);
  if (rule->delta) in.beta = b.Reshape(b.Cast("beta", t, kFloat), {0, 0, -1, 1});
  if (call.Has(kPast)) in.state = b.Cast("past_state", state_type, kFloat);
  int64_t steps = call.Dim(kQuery, 1);
  auto [output, state] =
      steps >= 1 && steps <= kMaxUnrolledSteps
          ? UnrolledLinearAttention(b, *rule, in, steps, kv_heads, q_heads / kv_heads)
          : ScannedLinearAttention(b, call, *rule, in, kv_heads, q_heads / kv_heads);
  float scale = call.Float("scale");
  int64_t packed = call.Dim(kQuery, 2);
  std::string factor =
      scale != 0.0f ? b.Scalar(scale, kFloat)
                    : HeadSizeScale(b, in.q, packed > 0 ? packed / q_heads : -1, 1.0, kFloat);
  b.Output("output", b.Cast(b.Op("Mul", {output, factor}), kFloat, t));
  b.Output("present_state", b.Cast(state, kFloat, state_type));
  return b.Text();
}

}  // namespace onnxconvert::schema::bodies_internal
