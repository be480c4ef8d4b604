#ifndef ONNX_CONVERT_ADAPTERS_COMPOSITIONS_H_
#define ONNX_CONVERT_ADAPTERS_COMPOSITIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "adapters/adapter.h"

namespace onnxconvert::adapters {

// Downgrades that write a node as several ops of the target version where
// the target cannot take what the node uses as it is (a value known only
// at run time, an attribute value it lacks). Used by the adapters of other
// families when their direct form does not apply.

// Clip-11+ whose `min` or `max` input is not a constant: each such bound
// becomes a Max (min) or Min (max) with the input, and its slot is cleared
// for the caller to move the constant bound, if any, to an attribute. A
// Clip left without bounds is replaced by the Max or Min itself.
absl::Status ClipBoundsAtRunTime(AdapterContext& ctx);

// A Reduce*-18 whose `axes` input is not a constant: the node becomes
// ReduceSum-13 (which takes axes as an input) of X, |X|, X*X or exp(X),
// followed by Sqrt, Log or the division by the reduced count; ReduceMax,
// ReduceMin and ReduceProd (input of known rank), and ReduceSum-13 below
// 13, reduce each axis the axes name, one at a time (a Slice with run-time bounds picks the reduced
// or the whole tensor per axis).
absl::Status ReduceAxesAtRunTime(AdapterContext& ctx);

// ArgMax/ArgMin-12 with select_last_index = 1 for version 11: the arg of
// the input reversed along the axis (a Gather of reversed indices when the
// axis size is known, else a Slice with step -1), mapped back as
// size - 1 - index (the size read from Shape when unknown; such a Slice has
// no form below opset 10, where Slice-1 has no steps).
absl::Status ArgSelectLastIndex(AdapterContext& ctx);

// Split-18 with `num_outputs` = `parts` over an axis of unknown size, for
// Split-13: the sizes (ceil(size / parts) each, the rest last) computed in
// the graph from the input's Shape.
absl::Status SplitSizesAtRunTime(AdapterContext& ctx, int64_t axis, int64_t parts);

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_COMPOSITIONS_H_
