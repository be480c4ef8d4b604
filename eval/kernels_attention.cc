// Attention (23, 24): scaled dot-product attention over 3-D (heads packed
// in the hidden dim) or 4-D [batch, heads, sequence, head size] inputs,
// with a past key/value cache, grouped-query heads, a boolean or additive
// mask (its key dim padded with -inf), a causal mask (aligned after the
// past), softcap, nonpad_kv_seqlen (24) and the qk_matmul_output modes.
// FlexAttention (ai.onnx.preview 1): 4-D inputs, grouped-query heads, its
// scores and probabilities in the softmax precision, passed through the
// score_mod and prob_mod subgraphs the graph runner applies (the kernel of
// the table runs nodes without them). Products run on Eigen per batch and
// head.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::attention_ops {

using nn::Outputs;
using nn::RealView;

// A [batch, heads, sequence, size] array in the compute type.
template <typename C>
struct Heads {
  int64_t batch = 0, heads = 0, sequence = 0, size = 0;
  std::vector<C> values;

  const C* at(int64_t b, int64_t h) const {
    return values.data() + ((b * heads + h) * sequence) * size;
  }
  std::vector<int64_t> dims() const { return {batch, heads, sequence, size}; }
};

// The heads of a 4-D input, or of a 3-D one split into `heads` heads.
template <typename C>
absl::StatusOr<Heads<C>> ToHeads(const KernelCall& call, const Tensor& t, int64_t heads,
                                 const char* name) {
  OC_ASSIGN_OR_RETURN(RealView<C> v, RealView<C>::Of(t));
  Heads<C> out;
  if (t.rank() == 4) {
    out.batch = t.dims()[0];
    out.heads = t.dims()[1];
    out.sequence = t.dims()[2];
    out.size = t.dims()[3];
    out.values.assign(v.span().begin(), v.span().end());
    return out;
  }
  if (t.rank() != 3 || heads < 1 || t.dims()[2] % heads != 0) {
    return call.Error(absl::StrCat(name, " must be 4-D, or 3-D with a hidden size that the "
                                         "head count divides"));
  }
  out.batch = t.dims()[0];
  out.heads = heads;
  out.sequence = t.dims()[1];
  out.size = t.dims()[2] / heads;
  out.values.resize(t.size());
  for (int64_t b = 0; b < out.batch; ++b) {
    for (int64_t s = 0; s < out.sequence; ++s) {
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t e = 0; e < out.size; ++e) {
          out.values[((b * heads + h) * out.sequence + s) * out.size + e] =
              v[((b * out.sequence + s) * heads + h) * out.size + e];
        }
      }
    }
  }
  return out;
}

// past (when set) then current along the sequence dim.
template <typename C>
absl::StatusOr<Heads<C>> Concatenate(const KernelCall& call, const std::optional<Heads<C>>& past,
                                     Heads<C> current) {
  if (!past) return current;
  if (past->batch != current.batch || past->heads != current.heads ||
      past->size != current.size) {
    return call.Error("the past cache's shape does not match the keys or values");
  }
  Heads<C> out = current;
  out.sequence = past->sequence + current.sequence;
  out.values.resize(out.batch * out.heads * out.sequence * out.size);
  for (int64_t b = 0; b < out.batch; ++b) {
    for (int64_t h = 0; h < out.heads; ++h) {
      C* to = out.values.data() + ((b * out.heads + h) * out.sequence) * out.size;
      std::copy(past->at(b, h), past->at(b, h) + past->sequence * past->size, to);
      std::copy(current.at(b, h), current.at(b, h) + current.sequence * current.size,
                to + past->sequence * out.size);
    }
  }
  return out;
}

// The additive bias at (b, h, i, j) of a mask broadcast (right-aligned) to
// [batch, heads, q, kv]: a bool mask adds 0 where true and -inf where
// false; key positions past the mask's last dim add -inf.
template <typename C>
struct MaskBias {
  const Tensor* mask = nullptr;
  std::optional<RealView<C>> values;
  std::vector<int64_t> strides;  // per dim of [batch, heads, q, kv]; 0 where broadcast
  int64_t keys = 0;

  absl::Status Init(const KernelCall& call, const Tensor* t, int64_t batch, int64_t heads,
                    int64_t q) {
    mask = t;
    if (t == nullptr) return absl::OkStatus();
    if (t->rank() < 2 || t->rank() > 4) return call.Error("attn_mask must have rank 2 to 4");
    std::vector<int64_t> dims(4 - t->rank(), 1);
    dims.insert(dims.end(), t->dims().begin(), t->dims().end());
    int64_t want[] = {batch, heads, q};
    for (int d = 0; d < 3; ++d) {
      if (dims[d] != 1 && dims[d] != want[d]) {
        return call.Error("attn_mask does not broadcast to [batch, heads, q, kv]");
      }
    }
    keys = dims[3];
    strides.assign(4, 0);
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) {
      strides[d] = dims[d] == 1 && d < 3 ? 0 : stride;
      stride *= dims[d];
    }
    if (t->elem_type() != onnx::TensorProto::BOOL) {
      OC_ASSIGN_OR_RETURN(values, RealView<C>::Of(*t));
    }
    return absl::OkStatus();
  }

  C At(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (mask == nullptr) return C{0};
    if (j >= keys) return -std::numeric_limits<C>::infinity();
    int64_t offset = b * strides[0] + h * strides[1] + i * strides[2] + j * strides[3];
    if (!values) {
      return mask->data<bool>()[offset] ? C{0} : -std::numeric_limits<C>::infinity();
    }
    return (*values)[offset];
  }
};

// Softmax over the `n` values at `row` (a row with no finite value gives
// NaN, as the reference's exp(-inf - -inf)).
template <typename C>
void SoftmaxRow(C* row, int64_t n) {
  C top = -std::numeric_limits<C>::infinity();
  for (int64_t j = 0; j < n; ++j) top = std::max(top, row[j]);
  C sum{0};
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - top);
    sum += row[j];
  }
  for (int64_t j = 0; j < n; ++j) row[j] /= sum;
}

template <typename T>
Outputs Attend(const KernelCall& call) {
  using C = nn::Real<T>;
  const Tensor* q_in = call.input(0);
  const Tensor* k_in = call.input(1);
  const Tensor* v_in = call.input(2);
  int64_t q_heads = call.Int("q_num_heads", 0), kv_heads = call.Int("kv_num_heads", 0);
  OC_ASSIGN_OR_RETURN(Heads<C> q, ToHeads<C>(call, *q_in, q_heads, "Q"));
  OC_ASSIGN_OR_RETURN(Heads<C> k, ToHeads<C>(call, *k_in, kv_heads, "K"));
  OC_ASSIGN_OR_RETURN(Heads<C> v, ToHeads<C>(call, *v_in, kv_heads, "V"));
  std::optional<Heads<C>> past_k, past_v;
  if (call.input(4) != nullptr) {
    OC_ASSIGN_OR_RETURN(past_k, ToHeads<C>(call, *call.input(4), 0, "past_key"));
  }
  if (call.input(5) != nullptr) {
    OC_ASSIGN_OR_RETURN(past_v, ToHeads<C>(call, *call.input(5), 0, "past_value"));
  }
  if (past_k.has_value() != past_v.has_value()) {
    return call.Error("past_key and past_value must be given together");
  }
  OC_ASSIGN_OR_RETURN(k, Concatenate<C>(call, past_k, std::move(k)));
  OC_ASSIGN_OR_RETURN(v, Concatenate<C>(call, past_v, std::move(v)));
  if (k.batch != q.batch || v.batch != q.batch || k.heads != v.heads ||
      k.sequence != v.sequence || k.size != q.size || k.heads < 1 ||
      q.heads % k.heads != 0) {
    return call.Error("Q, K and V do not agree in batch, heads, sequence or head size");
  }
  int64_t past = past_k ? past_k->sequence : 0;
  int64_t total = k.sequence;
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, {q.batch, q.heads, q.sequence, total}).status());
  std::optional<std::vector<int64_t>> nonpad;
  if (const Tensor* lengths = call.input(6)) {
    OC_ASSIGN_OR_RETURN(nonpad, ToInt64s(*lengths));
    if (static_cast<int64_t>(nonpad->size()) != q.batch) {
      return call.Error("nonpad_kv_seqlen must hold one length per batch");
    }
  }
  MaskBias<C> mask;
  OC_RETURN_IF_ERROR(mask.Init(call, call.input(3), q.batch, q.heads, q.sequence));
  bool causal = call.Int("is_causal", 0) != 0;
  double scale = call.attribute("scale") != nullptr ? call.Float("scale", 1)
                                                    : 1 / std::sqrt(static_cast<double>(q.size));
  double softcap = call.Float("softcap", 0);
  int64_t mode = call.Int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return call.Error("qk_matmul_output_mode must be 0 to 3");
  C inf = std::numeric_limits<C>::infinity();

  Heads<C> y;
  y.batch = q.batch;
  y.heads = q.heads;
  y.sequence = q.sequence;
  y.size = v.size;
  y.values.resize(y.batch * y.heads * y.sequence * y.size);
  std::vector<C> qk_out(q.batch * q.heads * q.sequence * total);
  nn::Matrix<C> scores(q.sequence, total);
  for (int64_t b = 0; b < q.batch; ++b) {
    for (int64_t h = 0; h < q.heads; ++h) {
      int64_t kv = h / (q.heads / k.heads);
      nn::Multiply(q.at(b, h), k.at(b, kv), scores.data(), q.sequence, q.size, total,
                   {.transpose_b = true, .scale = scale});
      C* kept = qk_out.data() + (b * q.heads + h) * q.sequence * total;
      for (int64_t i = 0; i < q.sequence; ++i) {
        for (int64_t j = 0; j < total; ++j) {
          C s = scores(i, j);
          if (softcap > 0) s = static_cast<C>(softcap * std::tanh(s / softcap));
          C bias = mask.At(b, h, i, j);
          if (causal && j - past > i) bias += -inf;
          if (nonpad && j >= (*nonpad)[b]) bias += -inf;
          if (mode <= 1) kept[i * total + j] = s;
          s += bias;
          if (mode == 2) kept[i * total + j] = s;
          scores(i, j) = s;
        }
        SoftmaxRow(&scores(i, 0), total);
        if (mode == 3) {
          for (int64_t j = 0; j < total; ++j) kept[i * total + j] = scores(i, j);
        }
      }
      nn::Multiply(scores.data(), v.at(b, kv),
                   y.values.data() + ((b * y.heads + h) * y.sequence) * y.size, y.sequence, total,
                   y.size);
    }
  }
  int32_t type = q_in->elem_type();
  std::vector<Tensor> outputs;
  if (q_in->rank() == 3) {
    // Back to [batch, sequence, heads * size].
    std::vector<C> packed(y.values.size());
    for (int64_t b = 0; b < y.batch; ++b) {
      for (int64_t h = 0; h < y.heads; ++h) {
        for (int64_t s = 0; s < y.sequence; ++s) {
          for (int64_t e = 0; e < y.size; ++e) {
            packed[((b * y.sequence + s) * y.heads + h) * y.size + e] =
                y.values[((b * y.heads + h) * y.sequence + s) * y.size + e];
          }
        }
      }
    }
    outputs.push_back(nn::StoreTensor<T, C>(type, {y.batch, y.sequence, y.heads * y.size},
                                            packed));
  } else {
    outputs.push_back(nn::StoreTensor<T, C>(type, y.dims(), y.values));
  }
  outputs.push_back(nn::StoreTensor<T, C>(type, k.dims(), k.values));
  outputs.push_back(nn::StoreTensor<T, C>(type, v.dims(), v.values));
  outputs.push_back(nn::StoreTensor<T, C>(type, {q.batch, q.heads, q.sequence, total}, qk_out));
  return outputs;
}

Outputs AttentionKernel(const KernelCall& call) {
  OC_RETURN_IF_ERROR(nn::ThreeOfOneType(call, "Q, K and V"));
  int32_t type = call.input(0)->elem_type();
  Outputs out = nn::UnsupportedType(call, type);
  nn::VisitFloatType(type, [&](auto v) { out = Attend<decltype(v)>(call); });
  return out;
}

// FlexAttention's softmax precision: the attribute, else float for 16-bit
// inputs and the inputs' type otherwise.
absl::StatusOr<int32_t> SoftmaxPrecision(const KernelCall& call, int32_t type) {
  int64_t precision = call.Int("softmax_precision", type == onnx::TensorProto::DOUBLE
                                                        ? onnx::TensorProto::DOUBLE
                                                        : onnx::TensorProto::FLOAT);
  switch (precision) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return static_cast<int32_t>(precision);
    default:
      return call.Error(absl::StrCat("softmax_precision ", precision,
                                     " is not float16, bfloat16, float or double"));
  }
}

std::string Shape(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The scores or probabilities `values` (of `dims`, in the compute type C)
// as the softmax precision (storage P) gives them: rounded to it, and
// passed through `mod` when there is one (its result checked).
template <typename P, typename C>
absl::Status ApplyMod(const KernelCall& call, const AttentionMod& mod, const char* name,
                      int32_t precision, const std::vector<int64_t>& dims,
                      std::vector<C>& values) {
  if (!mod && std::is_same_v<P, C>) return absl::OkStatus();
  Tensor t = nn::StoreTensor<P, C>(precision, dims, values);
  if (mod) {
    OC_ASSIGN_OR_RETURN(t, mod(std::move(t)));
    if (t.elem_type() != precision || t.dims() != dims) {
      return call.Error(absl::StrCat(name, " gives ", ElementTypeName(t.elem_type()),
                                     Shape(t.dims()), ", not ", ElementTypeName(precision),
                                     Shape(dims)));
    }
  }
  OC_ASSIGN_OR_RETURN(RealView<C> v, RealView<C>::Of(t));
  values.assign(v.span().begin(), v.span().end());
  return absl::OkStatus();
}

// Y of FlexAttention for inputs of storage T, the softmax precision of
// storage P.
template <typename T, typename P>
absl::StatusOr<Tensor> Flex(const KernelCall& call, int32_t precision,
                            const AttentionMod& score_mod, const AttentionMod& prob_mod) {
  using C = nn::Real<P>;
  OC_ASSIGN_OR_RETURN(Heads<C> q, ToHeads<C>(call, *call.input(0), 0, "Q"));
  OC_ASSIGN_OR_RETURN(Heads<C> k, ToHeads<C>(call, *call.input(1), 0, "K"));
  OC_ASSIGN_OR_RETURN(Heads<C> v, ToHeads<C>(call, *call.input(2), 0, "V"));
  if (k.batch != q.batch || v.batch != q.batch || k.heads != v.heads ||
      k.sequence != v.sequence || k.size != q.size || k.heads < 1 ||
      q.heads % k.heads != 0) {
    return call.Error("Q, K and V do not agree in batch, heads, sequence or head size");
  }
  std::vector<int64_t> dims = {q.batch, q.heads, q.sequence, k.sequence};
  OC_ASSIGN_OR_RETURN(int64_t count, nn::CheckedCount(call, dims));
  double scale = call.attribute("scale") != nullptr ? call.Float("scale", 1)
                                                    : 1 / std::sqrt(static_cast<double>(q.size));
  int64_t group = q.heads / k.heads, block = q.sequence * k.sequence;
  std::vector<C> scores(count);
  for (int64_t b = 0; b < q.batch; ++b) {
    for (int64_t h = 0; h < q.heads; ++h) {
      nn::Multiply(q.at(b, h), k.at(b, h / group), scores.data() + (b * q.heads + h) * block,
                   q.sequence, q.size, k.sequence, {.transpose_b = true, .scale = scale});
    }
  }
  OC_RETURN_IF_ERROR((ApplyMod<P, C>(call, score_mod, "score_mod", precision, dims, scores)));
  for (int64_t row = 0; k.sequence > 0 && row < count / k.sequence; ++row) {
    SoftmaxRow(scores.data() + row * k.sequence, k.sequence);
  }
  OC_RETURN_IF_ERROR((ApplyMod<P, C>(call, prob_mod, "prob_mod", precision, dims, scores)));
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, {q.batch, q.heads, q.sequence, v.size}).status());
  std::vector<C> y(q.batch * q.heads * q.sequence * v.size);
  for (int64_t b = 0; b < q.batch; ++b) {
    for (int64_t h = 0; h < q.heads; ++h) {
      nn::Multiply(scores.data() + (b * q.heads + h) * block, v.at(b, h / group),
                   y.data() + (b * q.heads + h) * q.sequence * v.size, q.sequence, k.sequence,
                   v.size);
    }
  }
  return nn::StoreTensor<T, C>(call.input(0)->elem_type(), {q.batch, q.heads, q.sequence, v.size},
                               y);
}

Outputs FlexAttentionKernel(const KernelCall& call) {
  for (const char* name : {"score_mod", "prob_mod"}) {
    if (call.attribute(name) != nullptr) {
      return call.Error(absl::StrCat("its ", name, " subgraph runs with the node's graph only"));
    }
  }
  OC_ASSIGN_OR_RETURN(Tensor y, FlexAttention(call, nullptr, nullptr));
  return nn::One(std::move(y));
}

}  // namespace onnxconvert::eval::attention_ops

namespace onnxconvert::eval {

absl::StatusOr<Tensor> FlexAttention(const KernelCall& call, const AttentionMod& score_mod,
                                     const AttentionMod& prob_mod) {
  for (int i = 0; i < 3; ++i) {
    if (call.input(i) == nullptr) return call.Error("Q, K and V are required");
    if (call.input(i)->elem_type() != call.input(0)->elem_type()) {
      return call.Error("Q, K and V differ in element type");
    }
    if (call.input(i)->rank() != 4) return call.Error("Q, K and V must be 4-D");
  }
  int32_t type = call.input(0)->elem_type();
  OC_ASSIGN_OR_RETURN(int32_t precision, attention_ops::SoftmaxPrecision(call, type));
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, type);
  nn::VisitFloatType(type, [&](auto t) {
    nn::VisitFloatType(precision, [&](auto p) {
      out = attention_ops::Flex<decltype(t), decltype(p)>(call, precision, score_mod, prob_mod);
    });
  });
  return out;
}

}  // namespace onnxconvert::eval
