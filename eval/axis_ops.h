#ifndef ONNX_CONVERT_EVAL_AXIS_OPS_H_
#define ONNX_CONVERT_EVAL_AXIS_OPS_H_

// Cutting tensors along an axis and joining them again: what Scan, Loop,
// SplitToSequence and ConcatFromSequence do with their tensors. Errors say
// what is wrong without naming a node; callers add that.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eval/tensor.h"

namespace onnxconvert::eval {

// `axis` in [0, rank) after counting a negative one from the end, or an
// error naming it.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

// Copies `count` elements of `from` at `from_offset` into `to` at
// `to_offset` (same element type).
void CopyElements(const Tensor& from, int64_t from_offset, Tensor& to, int64_t to_offset,
                  int64_t count);

// The elements of `tensor` whose index on `axis` is in [start, start +
// count), with the axis kept (its extent `count`).
Tensor SliceAxis(const Tensor& tensor, int64_t axis, int64_t start, int64_t count);

// The elements of `tensor` whose index on `axis` is `index`, with the axis
// dropped.
Tensor TakeAxis(const Tensor& tensor, int64_t axis, int64_t index);

// `parts` joined along the existing `axis` (in [0, rank)): same element
// type, same dims but on `axis`. At least one part.
absl::StatusOr<Tensor> ConcatAxis(absl::Span<const Tensor* const> parts, int64_t axis);

// `parts` stacked along a new axis `axis` (in [0, rank]): same element type
// and dims. At least one part.
absl::StatusOr<Tensor> StackAxis(absl::Span<const Tensor* const> parts, int64_t axis);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_AXIS_OPS_H_
