#ifndef ONNX_CONVERT_SCHEMA_SHAPE_UTIL_H_
#define ONNX_CONVERT_SCHEMA_SHAPE_UTIL_H_

// Helpers the inference rules share: reading and building types and shapes,
// arithmetic on dimensions that may be unknown, broadcasting, and the
// common rules (propagate a type, broadcast the inputs).

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"
#include "schema/inference_context.h"

namespace onnxconvert::schema {

// The element type of a tensor or sparse tensor type; 0 (UNDEFINED) when
// `type` is null, not a tensor, or has none.
int32_t ElemType(const onnx::TypeProto* type);

// The shape of a tensor or sparse tensor type, or nullptr when unknown
// (no type, not a tensor, or no shape field: unknown rank).
const onnx::TensorShapeProto* ShapeOf(const onnx::TypeProto* type);

// The rank of `type` if its shape is known.
std::optional<int> RankOf(const onnx::TypeProto* type);

// Sets `type` to a tensor of `elem_type` (keeps an existing shape).
void SetElemType(onnx::TypeProto* type, int32_t elem_type);

// The shape of tensor `type`, created (rank 0) when missing.
onnx::TensorShapeProto* MutableShape(onnx::TypeProto* type);

// Appends a dimension with a known value / a symbol / unknown.
void AddDim(onnx::TensorShapeProto* shape, int64_t value);
// Appends a dimension with `value`, or an unknown one when it is nullopt
// (e.g. a computed dim that overflowed).
void AddDim(onnx::TensorShapeProto* shape, std::optional<int64_t> value);
void AddSymbolicDim(onnx::TensorShapeProto* shape, absl::string_view symbol);
void AddUnknownDim(onnx::TensorShapeProto* shape);

// Sets `dim` to `value`, or clears it (unknown) when it is nullopt.
void SetDim(onnx::TensorShapeProto::Dimension* dim, std::optional<int64_t> value);

// Checked arithmetic for dims and shape values: the exact result, or
// nullopt when an operand is nullopt or the result does not fit in int64_t.
// Inference leaves a dim it cannot compute exactly unknown.
inline std::optional<int64_t> DimAdd(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t result;
  if (!a || !b || __builtin_add_overflow(*a, *b, &result)) return std::nullopt;
  return result;
}
inline std::optional<int64_t> DimSub(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t result;
  if (!a || !b || __builtin_sub_overflow(*a, *b, &result)) return std::nullopt;
  return result;
}
inline std::optional<int64_t> DimMul(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t result;
  if (!a || !b || __builtin_mul_overflow(*a, *b, &result)) return std::nullopt;
  return result;
}
// a / b rounded toward zero; nullopt also when b is 0 or the quotient
// overflows (INT64_MIN / -1).
inline std::optional<int64_t> DimDiv(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b || *b == 0 || (*b == -1 && *a == std::numeric_limits<int64_t>::min())) return std::nullopt;
  return *a / *b;
}
// a / b rounded down / up, for b > 0 (these never overflow).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return a % b != 0 && a < 0 ? q - 1 : q;
}
inline int64_t CeilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return a % b != 0 && a > 0 ? q + 1 : q;
}
// `value` rounded down to an integer when that fits in int64_t; nullopt for
// NaN, infinities and values out of range (casting those is undefined).
inline std::optional<int64_t> FloorToDim(double value) {
  // 2^63: doubles below it, and from -2^63 on, convert exactly.
  constexpr double kLimit = 9223372036854775808.0;
  double floored = std::floor(value);
  if (!(floored >= -kLimit && floored < kLimit)) return std::nullopt;
  return static_cast<int64_t>(floored);
}

// The most dims inference gives a shape whose rank comes from a value (the
// length of Reshape's or ConstantOfShape's shape input, Unsqueeze's axes):
// a longer one is left of unknown rank rather than built.
inline constexpr int64_t kMaxInferredRank = 4096;

// An error naming `what` when `value`, a size the model gives (a dim, a
// count, a length), is negative; OK otherwise.
absl::Status CheckSize(int64_t value, absl::string_view what);

// The element type an attribute (`to`, `dtype`, ...) names, or 0 (unknown)
// when `value` does not fit a TensorProto data type's int32 field.
int32_t ElemTypeFromAttr(int64_t value);

// True when the dimension has a known value.
inline bool IsKnown(const onnx::TensorShapeProto::Dimension& dim) {
  return dim.has_dim_value();
}

// Copies input `in`'s element type to output `out` (no-op when unknown).
void PropagateElemType(InferenceContext& ctx, size_t in, size_t out);
// Copies input `in`'s shape to output `out` (no-op when unknown).
void PropagateShape(InferenceContext& ctx, size_t in, size_t out);
// Copies input `in`'s whole type (tensor, sequence, optional, map) to `out`.
void PropagateType(InferenceContext& ctx, size_t in, size_t out);

// Dims [begin, end) of a shape, without copying them.
struct DimRange {
  explicit DimRange(const onnx::TensorShapeProto& s) : DimRange(s, 0, s.dim_size()) {}
  DimRange(const onnx::TensorShapeProto& s, int b, int e) : shape(&s), begin(b), end(e) {}
  int size() const { return end - begin; }
  const onnx::TensorShapeProto::Dimension& dim(int i) const { return shape->dim(begin + i); }

  const onnx::TensorShapeProto* shape;
  int begin;
  int end;
};

// Writes into `out` the multidirectional (numpy) broadcast of `ranges`,
// under the rules of BroadcastShapes.
absl::Status BroadcastDims(absl::Span<const DimRange> ranges, onnx::TensorShapeProto* out);

// The multidirectional (numpy) broadcast of `shapes`; an error naming the
// axis and both dims when two known dims differ and neither is 1. Unknown
// dims broadcast to unknown unless the other is a known dim > 1.
absl::StatusOr<onnx::TensorShapeProto> BroadcastShapes(
    absl::Span<const onnx::TensorShapeProto* const> shapes);

// True if both shapes have the same dims (values, symbols, unknowns).
bool SameDims(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b);

// Output 0 is shaped like input 0 and typed by the `dtype` attribute, or
// like input 0 when it is absent (EyeLike, RandomNormalLike, Bernoulli, ...).
absl::Status InferLikeInputTypedByDtype(InferenceContext& ctx);

// Output 0 = broadcast of every present input's shape when all are known.
absl::Status InferBroadcastShape(InferenceContext& ctx);

// `axis` in [-rank, rank) made non-negative; an error naming the attribute
// otherwise.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank,
                                      absl::string_view what);

// An int64 tensor (1-D, or a scalar when `scalar`) holding `values`.
onnx::TensorProto Int64Tensor(absl::Span<const int64_t> values, bool scalar = false);

// A float tensor (1-D, or a scalar when `scalar`) holding `values`.
onnx::TensorProto FloatTensor(absl::Span<const float> values, bool scalar = false);

// Makes the cleared `tensor` what Int64Tensor and FloatTensor give, in its
// own room (for a tensor reused from value to value).
void SetInt64Tensor(absl::Span<const int64_t> values, bool scalar, onnx::TensorProto& tensor);
void SetFloatTensor(absl::Span<const float> values, bool scalar, onnx::TensorProto& tensor);

// The tensor a Constant's shorthand attribute (value_int, value_ints,
// value_float, value_floats, value_string, value_strings) stands for, or
// nullopt for any other attribute.
std::optional<onnx::TensorProto> ShorthandTensor(const onnx::AttributeProto& attribute);

// The values of an integer tensor (int32, int64, int8, ..., raw or typed
// data); an error if not integral or not stored inline.
// Whether IntValues reads tensors of element type `data_type`.
bool HoldsIntValues(int32_t data_type);
absl::StatusOr<std::vector<int64_t>> IntValues(const onnx::TensorProto& tensor);
// The values of a floating-point tensor (float, double, float16, bfloat16).
absl::StatusOr<std::vector<double>> FloatValues(const onnx::TensorProto& tensor);

// Input `i`'s values as integers when constant, or as a shape-data vector
// of known dims; nullopt when not known.
std::optional<std::vector<int64_t>> KnownInts(InferenceContext& ctx, size_t i);
// The same of a value whose constant and shape data (either may be null)
// inference found.
std::optional<std::vector<int64_t>> KnownInts(const onnx::TensorProto* constant,
                                              const onnx::TensorShapeProto* data);

// Merges `inferred` into `existing` for strict checking: known dims must
// agree, a known dim refines a symbol or unknown. Returns an error naming
// the dimension index on conflict.
absl::Status MergeShape(const onnx::TensorShapeProto& inferred,
                        onnx::TensorShapeProto* existing);

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_SHAPE_UTIL_H_
