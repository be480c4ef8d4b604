// Quantization: QuantizeLinear and DequantizeLinear (per tensor, per axis,
// blocked from 21; 8-, 16-, 4- and 2-bit integers, the float8 kinds and
// float4e2m1; saturate; output_dtype; precision) and DynamicQuantizeLinear.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::quant_ops {

using nn::Outputs;
using nn::RealView;

// For each element of a tensor of `dims`, the offset of its scale (and
// zero point) in `param`: one for all (a single value), one per slice of
// `axis` (1-D), or one per block of `block_size` along `axis` (same rank).
absl::StatusOr<std::vector<int64_t>> ParamOffsets(const KernelCall& call,
                                                  absl::Span<const int64_t> dims,
                                                  const Tensor& param, int64_t block_size) {
  int64_t count = nn::Product(dims, 0, dims.size());
  if (param.size() == 1) return std::vector<int64_t>(count, 0);
  int64_t rank = static_cast<int64_t>(dims.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(call, call.Int("axis", 1), rank));
  std::vector<int64_t> param_dims(rank, 1);
  std::vector<int64_t> divisor(rank, 1);
  if (block_size <= 0) {
    if (param.rank() != 1 || param.dims()[0] != dims[axis]) {
      return call.Error(absl::StrCat("a scale of ", param.size(), " values is neither per "
                                     "tensor nor one per slice of axis ", axis));
    }
    param_dims[axis] = dims[axis];
  } else {
    if (param.rank() != rank) return call.Error("a blocked scale must have the input's rank");
    for (int64_t d = 0; d < rank; ++d) {
      int64_t want = d == axis ? (dims[d] + block_size - 1) / block_size : dims[d];
      if (param.dims()[d] != want) {
        return call.Error("a blocked scale's dims do not match the input's and block_size");
      }
    }
    param_dims.assign(param.dims().begin(), param.dims().end());
    divisor[axis] = block_size;
  }
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = param_dims[d] == 1 && d != axis ? 0 : stride;
    stride *= param_dims[d];
  }
  std::vector<int64_t> offsets(count);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) offset += index[d] / divisor[d] * strides[d];
    offsets[i] = offset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

// ParamOffsets for `x` (block_size from the attribute), or an error unless
// `zero_point` (when set) has the scale's shape; `side` names the pair ("y":
// y_scale and y_zero_point).
absl::StatusOr<std::vector<int64_t>> ScaleOffsets(const KernelCall& call, const Tensor& x,
                                                  const Tensor& scale, const Tensor* zero_point,
                                                  absl::string_view side) {
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                      ParamOffsets(call, x.dims(), scale, call.Int("block_size", 0)));
  if (zero_point != nullptr && zero_point->dims() != scale.dims() &&
      !(zero_point->size() == 1 && scale.size() == 1)) {
    return call.Error(absl::StrCat(side, "_zero_point's shape differs from ", side, "_scale's"));
  }
  return offsets;
}

// What a QuantizeLinear or DequantizeLinear reads: x as C, the scale as
// float, the zero point (when given) as C, and each element's ScaleOffsets.
template <typename C>
struct ScaledInput {
  std::vector<int64_t> offsets;
  RealView<C> x;
  RealView<float> scale;
  std::optional<RealView<C>> zero_point;
};

// The ScaledInput of `x`, `scale` and `zero_point` (null: none); `side`
// as for ScaleOffsets.
template <typename C>
absl::StatusOr<ScaledInput<C>> ReadScaledInput(const KernelCall& call, const Tensor& x,
                                               const Tensor& scale, const Tensor* zero_point,
                                               absl::string_view side) {
  ScaledInput<C> in;
  OC_ASSIGN_OR_RETURN(in.offsets, ScaleOffsets(call, x, scale, zero_point, side));
  OC_ASSIGN_OR_RETURN(in.x, RealView<C>::Of(x));
  OC_ASSIGN_OR_RETURN(in.scale, RealView<float>::Of(scale));
  if (zero_point != nullptr) {
    OC_ASSIGN_OR_RETURN(in.zero_point, RealView<C>::Of(*zero_point));
  }
  return in;
}

// The integer range of a quantized integer type, or nullopt.
std::optional<std::pair<double, double>> IntegerRange(int32_t type) {
  switch (type) {
    case onnx::TensorProto::UINT8: return std::make_pair(0.0, 255.0);
    case onnx::TensorProto::INT8: return std::make_pair(-128.0, 127.0);
    case onnx::TensorProto::UINT16: return std::make_pair(0.0, 65535.0);
    case onnx::TensorProto::INT16: return std::make_pair(-32768.0, 32767.0);
    case onnx::TensorProto::INT32:
      return std::make_pair(-2147483648.0, 2147483647.0);
    default:
      if (NarrowIntRange(type).first != NarrowIntRange(type).second) {
        auto [low, high] = NarrowIntRange(type);
        return std::make_pair(static_cast<double>(low), static_cast<double>(high));
      }
      return std::nullopt;
  }
}

// Stores `value` (in range, whole) as element `i` of an integer tensor.
void StoreInteger(Tensor& t, int64_t i, double value) {
  switch (t.elem_type()) {
    case onnx::TensorProto::UINT8: t.data<uint8_t>()[i] = static_cast<uint8_t>(value); return;
    case onnx::TensorProto::INT8: t.data<int8_t>()[i] = static_cast<int8_t>(value); return;
    case onnx::TensorProto::UINT16: t.data<uint16_t>()[i] = static_cast<uint16_t>(value); return;
    case onnx::TensorProto::INT16: t.data<int16_t>()[i] = static_cast<int16_t>(value); return;
    case onnx::TensorProto::INT32: t.data<int32_t>()[i] = static_cast<int32_t>(value); return;
    default:  // narrow integers, one byte each
      t.data<int8_t>()[i] = static_cast<int8_t>(value);
  }
}

// `value` rounded to float16 or bfloat16 when `type` is one (else as is).
float RoundTo(int32_t type, float value) {
  if (type == onnx::TensorProto::FLOAT16) return HalfToFloat(FloatToHalf(value));
  if (type == onnx::TensorProto::BFLOAT16) return BHalfToFloat(FloatToBHalf(value));
  return value;
}

// QuantizeLinear: x / y_scale (in x's precision, or `precision`'s),
// rounded half to even, plus the zero point, saturated to the integer
// type; float8 and float4 targets take x / y_scale converted (saturating
// when `saturate`; float4 adds the zero point first).
Outputs QuantizeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "x"));
  OC_ASSIGN_OR_RETURN(const Tensor* scale, nn::Required(call, 1, "y_scale"));
  const Tensor* zero_point = call.input(2);
  int32_t out_type = static_cast<int32_t>(call.Int("output_dtype", 0));
  if (zero_point != nullptr) {
    if (out_type != 0 && out_type != zero_point->elem_type()) {
      return call.Error("output_dtype differs from y_zero_point's type");
    }
    out_type = zero_point->elem_type();
  }
  if (out_type == 0) out_type = onnx::TensorProto::UINT8;
  std::optional<std::pair<double, double>> range = IntegerRange(out_type);
  if ((!range && !IsNarrowFloat(out_type)) || out_type == onnx::TensorProto::INT32) {
    return call.Error(absl::StrCat("cannot quantize to ", ElementTypeName(out_type)));
  }
  OC_ASSIGN_OR_RETURN(ScaledInput<double> in,
                      ReadScaledInput<double>(call, *x, *scale, zero_point, "y"));
  int32_t precision = static_cast<int32_t>(call.Int("precision", 0));
  int32_t compute = precision != 0 ? precision : x->elem_type();
  bool saturate = call.Int("saturate", 1) != 0;
  Tensor out(out_type, x->dims());
  for (int64_t i = 0; i < x->size(); ++i) {
    float s = RoundTo(compute, in.scale[in.offsets[i]]);
    // An int32 x divides in double (as numpy promotes it); floats in their
    // own precision.
    double q = x->elem_type() == onnx::TensorProto::INT32 && precision == 0
                   ? in.x[i] / static_cast<double>(s)
                   : RoundTo(compute, RoundTo(compute, static_cast<float>(in.x[i])) / s);
    double zp = in.zero_point ? (*in.zero_point)[in.offsets[i]] : 0;
    if (range) {
      double y = std::nearbyint(q);
      y = std::isnan(y) ? range->first : std::clamp(y + zp, range->first, range->second);
      StoreInteger(out, i, y);
    } else if (out_type == onnx::TensorProto::FLOAT4E2M1) {
      out.data<uint8_t>()[i] = FloatToNarrowFloat(out_type, static_cast<float>(q + zp), true);
    } else {
      out.data<uint8_t>()[i] = FloatToNarrowFloat(out_type, static_cast<float>(q), saturate);
    }
  }
  return nn::One(std::move(out));
}

// DequantizeLinear: (x - zero point) * scale in float, stored as the
// scale's type or output_dtype (the float8/float4 kinds take no zero point
// but zero).
Outputs DequantizeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "x"));
  OC_ASSIGN_OR_RETURN(const Tensor* scale, nn::Required(call, 1, "x_scale"));
  const Tensor* zero_point = call.input(2);
  if (!IntegerRange(x->elem_type()) && !IsNarrowFloat(x->elem_type())) {
    return call.Error(absl::StrCat("cannot dequantize ", ElementTypeName(x->elem_type())));
  }
  if (zero_point != nullptr && zero_point->elem_type() != x->elem_type()) {
    return call.Error("x_zero_point's type differs from x's");
  }
  OC_ASSIGN_OR_RETURN(ScaledInput<float> in,
                      ReadScaledInput<float>(call, *x, *scale, zero_point, "x"));
  if (in.zero_point && IsNarrowFloat(x->elem_type())) {
    for (float z : in.zero_point->span()) {
      if (z != 0) return call.Error("a float8 or float4 zero point must be zero");
    }
  }
  int32_t out_type = static_cast<int32_t>(call.Int("output_dtype", 0));
  if (out_type == 0) out_type = scale->elem_type();
  std::vector<float> y(x->size());
  for (int64_t i = 0; i < x->size(); ++i) {
    float zp = in.zero_point ? (*in.zero_point)[in.offsets[i]] : 0.0f;
    y[i] = (in.x[i] - zp) * in.scale[in.offsets[i]];
  }
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, out_type);
  nn::VisitFloatType(out_type, [&](auto v) {
    out = nn::StoreTensor<decltype(v), float>(out_type, x->dims(), y);
  });
  return nn::One(std::move(out));
}

// DynamicQuantizeLinear: uint8 over [min(0, min x), max(0, max x)]: the
// scale (range / 255), the zero point (rounded, saturated) and x quantized
// with them.
Outputs DynamicQuantizeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "x"));
  if (x->elem_type() != onnx::TensorProto::FLOAT) return nn::UnsupportedType(call, x->elem_type());
  absl::Span<const float> v = x->data<float>();
  float high = 0, low = 0;
  for (float e : v) {
    if (std::isnan(e)) return call.Error("x holds NaN");
    high = std::max(high, e);
    low = std::min(low, e);
  }
  float scale = (high == low ? 1.0f : high - low) / 255.0f;
  float initial = 0.0f - low / scale;
  float zp = std::nearbyint(std::clamp(initial, 0.0f, 255.0f));
  Tensor y(onnx::TensorProto::UINT8, x->dims());
  for (size_t i = 0; i < v.size(); ++i) {
    float q = std::nearbyint(v[i] / scale) + zp;
    y.data<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
  }
  Tensor s(onnx::TensorProto::FLOAT, {});
  s.data<float>()[0] = scale;
  Tensor z(onnx::TensorProto::UINT8, {});
  z.data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  outputs.push_back(std::move(s));
  outputs.push_back(std::move(z));
  return outputs;
}

}  // namespace onnxconvert::eval::quant_ops
