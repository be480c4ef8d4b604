// Function bodies that depend on the call, written per op from the spec's
// definitions (onnx docs/Operators.md, and the corpus's *_expanded cases,
// which show the spec's expansions). Each builder returns ONNX text.
//
// The bodies are written to convert far down: the converter takes an
// input that must become an attribute in an older version (Reduce* axes,
// Unsqueeze axes, Slice starts) only from an initializer, never from a
// Constant node of a body, so the bodies avoid such inputs where an
// equivalent op does without them (Gather with constant indices instead of
// Slice and Split, Reshape instead of Unsqueeze and Squeeze,
// GlobalAveragePool over a [M, 1, K] view instead of ReduceMean with axes),
// and write int64 constants as float constants cast to int64, since
// Constant holds only floats before opset 9.

#include "schema/context_bodies.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "schema/context_bodies_internal.h"

namespace onnxconvert::schema {
namespace {

using bodies_internal::kFloat;
using bodies_internal::kDouble;
using bodies_internal::kInt64;
using bodies_internal::kBool;
using bodies_internal::Call;
using bodies_internal::List;
using bodies_internal::Iota;
using bodies_internal::Body;
using bodies_internal::AttentionBody;
using bodies_internal::RotaryEmbeddingBody;
using bodies_internal::CausalConvWithStateBody;
using bodies_internal::LinearAttentionBody;

// `axis` made non-negative for a tensor of rank `rank`.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= std::max(rank, 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(normalized);
}

// The first opset at which an op takes its axes as an input instead of an
// attribute.
struct AxesMove {
  const char* op;
  int since;
};
constexpr AxesMove kAxesInputSince[] = {
    {"Unsqueeze", 13},
    {"Squeeze", 13},
    {"ReduceSum", 13},
    {"ReduceMean", 18},
};

// `op` over `axes` of `x`, in the form the body's opset has.
std::string AxesOp(Body& b, absl::string_view op, const std::string& x,
                   absl::Span<const int64_t> axes, std::string attrs = "") {
  int since = 0;
  for (const AxesMove& move : kAxesInputSince) {
    if (op == move.op) since = move.since;
  }
  if (b.opset() >= since) return b.Op(op, {x, b.Int64s(axes)}, attrs);
  return b.Op(op, {x}, absl::StrCat(attrs, attrs.empty() ? "" : ", ", "axes = ", List(axes)));
}

// `x` viewed as [M, 1, K], M the product of its axes before `axis`, K of
// the rest: GlobalAveragePool then averages over the axes from `axis` on
// and needs no axes input.
std::string TrailingView3D(Body& b, const std::string& x, int axis) {
  std::string flat = b.Op("Flatten", {x}, absl::StrCat("axis = ", axis));
  return b.Reshape(flat, {0, 1, -1});
}

// ---------------------------------------------------------------------------
// Element-wise functions.

// Celu(X) = alpha * Elu(X / alpha) (float only).
absl::StatusOr<std::string> CeluBody(const Call& call) {
  Body b(call);
  std::string alpha = b.Scalar(call.Float("alpha"), kFloat);
  std::string elu = b.Op("Elu", {b.Op("Div", {"X", alpha})}, "alpha = 1.0");
  b.Output("Y", b.Op("Mul", {alpha, elu}));
  return b.Text();
}

// Gelu(x) = x/2 * (1 + erf(x / sqrt 2)), or with approximate = "tanh"
// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
absl::StatusOr<std::string> GeluBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  Body b(call);
  std::string approximate = call.String("approximate");
  std::string inner;
  if (approximate == "tanh") {
    std::string cube = b.Op("Mul", {"X", b.Op("Mul", {"X", "X"})});
    std::string poly = b.Op("Add", {"X", b.Op("Mul", {cube, b.Scalar(0.044715, t)})});
    inner = b.Op("Tanh", {b.Op("Mul", {poly, b.Scalar(std::sqrt(2.0 / M_PI), t)})});
  } else if (approximate == "none") {
    inner = b.Op("Erf", {b.Op("Mul", {"X", b.Scalar(1.0 / std::sqrt(2.0), t)})});
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("approximate = \"", approximate, "\" is neither \"none\" nor \"tanh\""));
  }
  std::string phi = b.Op("Add", {inner, b.Scalar(1.0, t)});
  b.Output("Y", b.Op("Mul", {b.Op("Mul", {"X", b.Scalar(0.5, t)}), phi}));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Normalizations.

// LayerNormalization: (X - mean) / sqrt(var + epsilon) over the axes from
// `axis` on, computed in stash_type, then * Scale + B in X's type; Mean and
// InvStdDev keep the reduced axes. ReduceMean-13 takes axes as an attribute.
absl::StatusOr<std::string> LayerNormalizationBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0));
  OC_ASSIGN_OR_RETURN(int axis, NormalizeAxis(call.Int("axis"), rank, "axis"));
  int32_t stash = static_cast<int32_t>(call.Int("stash_type"));
  std::vector<int64_t> axes = Iota(axis, rank - axis);
  Body b(call);
  std::string x = b.Cast("X", t, stash);
  std::string mean = AxesOp(b, "ReduceMean", x, axes);
  std::string deviation = b.Op("Sub", {x, mean});
  std::string variance = AxesOp(b, "ReduceMean", b.Op("Mul", {deviation, deviation}), axes);
  std::string stddev =
      b.Op("Sqrt", {b.Op("Add", {variance, b.Scalar(call.Float("epsilon"), stash)})});
  std::string normalized = b.Cast(b.Op("Div", {deviation, stddev}), stash, t);
  std::string y = b.Op("Mul", {normalized, "Scale"});
  if (call.Has(2)) y = b.Op("Add", {y, "B"});
  b.Output("Y", y);
  if (call.Wants(1)) b.Output("Mean", mean);
  if (call.Wants(2)) b.Output("InvStdDev", b.Op("Reciprocal", {stddev}));
  return b.Text();
}

// RMSNormalization: X / sqrt(mean(X^2) + epsilon) over the axes from `axis`
// on, computed in stash_type, cast back to X's type, then * scale.
absl::StatusOr<std::string> RmsNormalizationBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int32_t v, call.ElemType(1));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0));
  OC_ASSIGN_OR_RETURN(int axis, NormalizeAxis(call.Int("axis"), rank, "axis"));
  int32_t stash = static_cast<int32_t>(call.Int("stash_type"));
  Body b(call);
  std::string x = TrailingView3D(b, b.Cast("X", t, stash), axis);
  std::string mean_square = b.Op("GlobalAveragePool", {b.Op("Mul", {x, x})});
  std::string rms =
      b.Op("Sqrt", {b.Op("Add", {mean_square, b.Scalar(call.Float("epsilon"), stash)})});
  std::string normalized = b.Op("Reshape", {b.Op("Div", {x, rms}), b.Op("Shape", {"X"})});
  normalized = b.Cast(b.Cast(normalized, stash, t), t, v);
  b.Output("Y", b.Op("Mul", {normalized, "scale"}));
  return b.Text();
}

// GroupNormalization: X [N, C, ...] normalized per group of C / num_groups
// channels, then scaled and shifted: per group before opset 21 (scale and
// bias [num_groups]), per channel from 21 on (scale and bias [C], and the
// statistics in stash_type). 16-bit types are normalized in float.
absl::StatusOr<std::string> GroupNormalizationBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int64_t groups, call.NeedInt("num_groups"));
  bool per_channel = call.schema.since_version >= 21;
  int32_t stash = per_channel ? static_cast<int32_t>(call.Int("stash_type"))
                              : (t == kDouble ? kDouble : kFloat);
  Body b(call);
  std::string grouped = b.Reshape(b.Cast("X", t, stash), {0, groups, -1});
  std::string mean = b.Op("GlobalAveragePool", {grouped});
  std::string deviation = b.Op("Sub", {grouped, mean});
  std::string variance = b.Op("GlobalAveragePool", {b.Op("Mul", {deviation, deviation})});
  std::string stddev =
      b.Op("Sqrt", {b.Op("Add", {variance, b.Scalar(call.Float("epsilon"), stash)})});
  std::string normalized = b.Cast(b.Op("Div", {deviation, stddev}), stash, t);
  if (per_channel) {
    normalized = b.Reshape(b.Op("Reshape", {normalized, b.Op("Shape", {"X"})}), {0, 0, -1});
  }
  std::string scale = b.Reshape("scale", {1, -1, 1});
  std::string bias = b.Reshape("bias", {1, -1, 1});
  std::string y = b.Op("Add", {b.Op("Mul", {normalized, scale}), bias});
  b.Output("Y", b.Op("Reshape", {y, b.Op("Shape", {"X"})}));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Losses.

// What NegativeLogLikelihoodLoss computes from log-probabilities.
struct NllInputs {
  std::string log_prob;  // [N, C, d1, ...]
  int rank;              // of log_prob
  int64_t classes;       // C, or -1 when unknown
  std::string target;    // [N, d1, ...]
  std::string weight;    // [C], or "" when absent
};

// The class indices 0 .. C-1 of `tind` along axis 1 of a tensor of rank
// `rank` ([1, C, 1, ...]): a constant when C is known, else a Range.
std::string ClassIndices(Body& b, const NllInputs& in, int32_t tind) {
  std::vector<int64_t> shape(in.rank, 1);
  if (in.classes >= 0) {
    shape[1] = in.classes;
    std::vector<int64_t> classes = Iota(0, in.classes);
    return b.Constant(std::vector<double>(classes.begin(), classes.end()), shape, tind);
  }
  std::string count = b.Op("Gather", {b.Op("Shape", {in.log_prob}), b.Int64Scalar(1)});
  std::string range = b.Op("Range", {b.Int64Scalar(0), count, b.Int64Scalar(1)});
  shape[1] = -1;
  return b.Cast(b.Reshape(range, shape), kInt64, tind);
}

// loss[n, d...] = -log_prob[n, target[n, d...], d...] * weight[target],
// 0 where target == ignore_index, then reduced as `reduction` says ("mean"
// divides by the sum of the weights taken). The target's log-probability
// is selected with a one-hot mask (Where, then ReduceSum over the classes),
// which exists from opset 9 on, unlike GatherElements.
absl::StatusOr<std::string> Nll(Body& b, const Call& call, const NllInputs& in, int32_t t,
                                int32_t tind) {
  std::string reduction = call.String("reduction");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return absl::InvalidArgumentError(absl::StrCat("reduction \"", reduction, "\" is unknown"));
  }
  bool ignores = call.Attr("ignore_index") != nullptr;
  // target [N, 1, d...] against the classes [1, C, 1...]: [N, C, d...].
  std::string target = AxesOp(b, "Unsqueeze", in.target, {1});
  std::string selected = b.Op("Equal", {target, ClassIndices(b, in, tind)});
  std::string zero = b.Scalar(0, t);
  std::string ignored;
  if (ignores) {
    ignored = b.Op("Equal", {target, b.Scalar(call.Int("ignore_index"), tind)});
    selected = b.Op("And", {selected, b.Op("Not", {ignored})});
    target = b.Op("Where", {ignored, b.Scalar(0, tind), target});  // a class Gather can take
  }
  std::string picked = AxesOp(b, "ReduceSum", b.Op("Where", {selected, in.log_prob, zero}), {1});
  std::string loss = b.Op("Neg", {picked});
  std::string weight;  // the weight of each element, or "" for all ones
  if (!in.weight.empty()) {
    weight = b.Op("Gather", {in.weight, target});
    if (ignores) weight = b.Op("Where", {ignored, zero, weight});
    loss = b.Op("Mul", {loss, weight});
  } else if (ignores) {
    weight = b.Cast(b.Op("Not", {ignored}), kBool, t);
  }
  loss = b.Op("Reshape", {loss, b.Op("Shape", {in.target})});
  if (reduction == "none") return loss;
  if (reduction == "sum") return b.Op("ReduceSum", {loss}, "keepdims = 0");
  if (weight.empty()) return b.Op("ReduceMean", {loss}, "keepdims = 0");
  return b.Op("Div", {b.Op("ReduceSum", {loss}, "keepdims = 0"),
                      b.Op("ReduceSum", {weight}, "keepdims = 0")});
}

// NegativeLogLikelihoodLoss(input, target, weight).
absl::StatusOr<std::string> NegativeLogLikelihoodLossBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int32_t tind, call.ElemType(1));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0, 2));
  Body b(call);
  NllInputs in{"input", rank, call.Dim(0, 1), "target", call.Has(2) ? "weight" : ""};
  OC_ASSIGN_OR_RETURN(std::string loss, Nll(b, call, in, t, tind));
  b.Output("loss", loss);
  return b.Text();
}

// SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of LogSoftmax(scores)
// over axis 1. LogSoftmax before opset 13 flattens from its axis on, so the
// class axis is moved last for it when there are more axes.
absl::StatusOr<std::string> SoftmaxCrossEntropyLossBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int32_t tind, call.ElemType(1));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0, 2));
  Body b(call);
  std::string log_prob;
  if (rank <= 2) {
    log_prob = b.Op("LogSoftmax", {"scores"}, "axis = 1");
  } else {
    std::vector<int64_t> to_last = {0};
    for (int i = 2; i < rank; ++i) to_last.push_back(i);
    to_last.push_back(1);
    std::vector<int64_t> back = {0, rank - 1};
    for (int i = 1; i < rank - 1; ++i) back.push_back(i);
    std::string last = b.Op("Transpose", {"scores"}, absl::StrCat("perm = ", List(to_last)));
    std::string soft = b.Op("LogSoftmax", {last}, absl::StrCat("axis = ", rank - 1));
    log_prob = b.Op("Transpose", {soft}, absl::StrCat("perm = ", List(back)));
  }
  NllInputs in{log_prob, rank, call.Dim(0, 1), "labels", call.Has(2) ? "weights" : ""};
  OC_ASSIGN_OR_RETURN(std::string loss, Nll(b, call, in, t, tind));
  b.Output("output", loss);
  if (call.Wants(1)) b.Output("log_prob", log_prob);
  return b.Text();
}

// ---------------------------------------------------------------------------
// Shape manipulation.

// CenterCropPad: pads `input_data` evenly (the extra element at the end) up
// to `shape` along `axes`, then crops it evenly (the extra element at the
// end dropped) down to `shape`. Pad covers every axis: the axes CenterCropPad
// leaves alone keep their size.
absl::StatusOr<std::string> CenterCropPadBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0));
  OC_ASSIGN_OR_RETURN(int32_t tind, call.ElemType(1));
  std::vector<int64_t> axes = call.Ints("axes").value_or(Iota(0, rank));
  std::vector<int> position(rank, -1);  // where each axis is in `shape`
  for (size_t j = 0; j < axes.size(); ++j) {
    OC_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axes[j], rank, "axis"));
    position[axis] = static_cast<int>(j);
  }
  Body b(call);
  std::string shape = b.Cast("shape", tind, kInt64);
  std::string x_shape = b.Op("Shape", {"input_data"});
  std::vector<std::string> parts;
  for (int i = 0; i < rank; ++i) {
    parts.push_back(position[i] >= 0 ? b.Op("Gather", {shape, b.Int64s({position[i]})})
                                     : b.Op("Gather", {x_shape, b.Int64s({i})}));
  }
  std::string target = rank == 1 ? parts[0] : b.Op("Concat", parts, "axis = 0");
  std::string larger = b.Op("Where", {b.Op("Less", {x_shape, target}), target, x_shape});
  std::string two = b.Int64s({2});
  std::string pad = b.Op("Sub", {larger, x_shape});
  std::string pad_begin = b.Op("Div", {pad, two});
  std::string pads = b.Op("Concat", {pad_begin, b.Op("Sub", {pad, pad_begin})}, "axis = 0");
  std::string padded = b.Op("Pad", {"input_data", pads});
  std::string starts = b.Op("Div", {b.Op("Sub", {larger, target}), two});
  std::string ends = b.Op("Add", {starts, target});
  b.Output("output_data", b.Op("Slice", {padded, starts, ends}));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Builders by op name and since_version.

struct Entry {
  const char* op;
  int since_version;
  absl::StatusOr<std::string> (*build)(const Call&);
};

constexpr Entry kBuilders[] = {
    {"Attention", 23, AttentionBody},
    {"Attention", 24, AttentionBody},
    {"CausalConvWithState", 27, CausalConvWithStateBody},
    {"Celu", 12, CeluBody},
    {"CenterCropPad", 18, CenterCropPadBody},
    {"Gelu", 20, GeluBody},
    {"GroupNormalization", 18, GroupNormalizationBody},
    {"GroupNormalization", 21, GroupNormalizationBody},
    {"LayerNormalization", 17, LayerNormalizationBody},
    {"LinearAttention", 27, LinearAttentionBody},
    {"NegativeLogLikelihoodLoss", 12, NegativeLogLikelihoodLossBody},
    {"NegativeLogLikelihoodLoss", 13, NegativeLogLikelihoodLossBody},
    {"NegativeLogLikelihoodLoss", 22, NegativeLogLikelihoodLossBody},
    {"RMSNormalization", 23, RmsNormalizationBody},
    {"RotaryEmbedding", 23, RotaryEmbeddingBody},
    {"SoftmaxCrossEntropyLoss", 12, SoftmaxCrossEntropyLossBody},
    {"SoftmaxCrossEntropyLoss", 13, SoftmaxCrossEntropyLossBody},
};

}  // namespace

absl::StatusOr<std::string> ContextDependentBody(
    const OpSchema& schema, const onnx::NodeProto& node,
    absl::Span<const onnx::TypeProto* const> input_types) {
  Call call{schema, node, input_types};
  for (const Entry& entry : kBuilders) {
    if (schema.domain.empty() && schema.name == entry.op &&
        schema.since_version == entry.since_version) {
      return entry.build(call);
    }
  }
  return absl::UnimplementedError(
      absl::StrCat("the type-dependent function body of ", schema.Label(), " is not written yet"));
}

}  // namespace onnxconvert::schema
