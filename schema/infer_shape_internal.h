#ifndef ONNX_CONVERT_SCHEMA_INFER_SHAPE_INTERNAL_H_
#define ONNX_CONVERT_SCHEMA_INFER_SHAPE_INTERNAL_H_

// Internal to schema/infer_shape.cc and schema/infer_tensor.cc: reading
// input shapes and shape data, writing output shapes, and axes lists, as the
// rules of both files do.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/onnx.pb.h"
#include "schema/inference_context.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema::shape_internal {

// A dimension of a shape.
using Dim = onnx::TensorShapeProto::Dimension;

// The shape of input `i`; null when unknown.
inline const onnx::TensorShapeProto* InputShape(InferenceContext& ctx, size_t i) {
  return ShapeOf(ctx.InputType(i));
}

// The shape of output `i`, emptied for the rule to fill.
inline onnx::TensorShapeProto* OutputShape(InferenceContext& ctx, size_t i = 0) {
  onnx::TensorShapeProto* shape = MutableShape(ctx.MutableOutputType(i));
  shape->clear_dim();
  return shape;
}

// Sets output 0 to the rank of input 0 with every size unknown (ops that
// keep the rank, when what sets the sizes is known only at run time).
absl::Status SameRankOnly(InferenceContext& ctx);

// The value of input `i` as dims (known values or symbols), from a constant
// or from propagated shape data.
std::optional<onnx::TensorShapeProto> DimsValue(InferenceContext& ctx, size_t i);

// The product of `shape`'s dims [begin, end): nullopt when one is unknown
// or the product overflows.
std::optional<int64_t> DimProduct(const onnx::TensorShapeProto& shape, int begin, int end);

// An error naming `what` and the entry when a known entry of `dims` is
// negative.
absl::Status CheckSizes(const onnx::TensorShapeProto& dims, absl::string_view what);

// Output `i` gets `rank` unknown dims, when `rank` is known and at most
// kMaxInferredRank.
void SetUnknownDims(InferenceContext& ctx, const Dim& rank, size_t i = 0);

// A short list of axes, kept inline.
using AxisList = absl::InlinedVector<int64_t, 8>;

// Axes from the `axes` attribute or, from `axes_input_version` on, input 1.
std::optional<AxisList> Axes(InferenceContext& ctx, int axes_input_version, size_t input = 1);

}  // namespace onnxconvert::schema::shape_internal

#endif  // ONNX_CONVERT_SCHEMA_INFER_SHAPE_INTERNAL_H_
