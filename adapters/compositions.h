#ifndef ONNX_CONVERT_ADAPTERS_COMPOSITIONS_H_
#define ONNX_CONVERT_ADAPTERS_COMPOSITIONS_H_

// Downgrades that write a node as several ops of the target version where
// the target cannot take what the node uses as it is (a value known only
// at run time, an attribute value it lacks). Used by the adapters of other
// families when their direct form does not apply.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "adapters/adapter_helpers.h"

namespace onnxconvert::adapters {

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

// Slice-10+ with constant steps other than 1, for Slice-1 (no steps):
// each axis taken by a step other than 1 becomes a Gather of the indices
// the slice takes (the axis size must be known), placed before the node,
// which becomes Slice-1 of the unit-step axes (attributes) or an Identity.
// Refused when the steps, starts, ends or axes are not constants.
absl::Status SliceStepsByGather(AdapterContext& ctx);

// Whether `ctx`'s node is an Unsqueeze or Squeeze-11+ of the single axis
// -1 of a value whose rank is unknown, for a version that takes axes from
// 0 only (and a target with Reshape-5).
bool LastAxisByReshapeApplies(const AdapterContext& ctx);

// Replaces such a node by a Reshape to the input's Shape with a 1 appended
// (Unsqueeze) or its last dim dropped (Squeeze): exact for every rank.
absl::Status LastAxisByReshape(AdapterContext& ctx);

// Whether two dims are known to be equal: the same number or the same
// symbol.
bool SameDim(const onnx::TensorShapeProto::Dimension& a,
             const onnx::TensorShapeProto::Dimension& b);

// Max, Min, Sum or Mean-8+ whose inputs' shapes are not known to be equal,
// for version 6 (no broadcasting): where one input's shape is the one every
// other input broadcasts to (each of their dims 1 or known equal to its), the
// others are unsqueezed to its rank and tiled to its shape (Tile-6, the
// repeats from its Shape where unknown). Exact; refused otherwise.
absl::Status TileToBroadcastShape(AdapterContext& ctx);

// Resize-11+ upsampling a float input linearly with half-pixel centres by
// the integer `factors` (one per axis; only the last two other than 1),
// for Resize-10 (asymmetric only): each of the output's phases is the sum
// of the four neighbours (Gather) weighted, in the order and float
// arithmetic of ONNX Runtime's bilinear kernel, and the phases are
// interleaved (Unsqueeze, Concat, Reshape). Needs the input's sizes; the
// node becomes an Identity of the result.
absl::Status HalfPixelLinearUpscale(AdapterContext& ctx, absl::Span<const int64_t> factors);

// Attributes (or attribute values) a later version added, composed for the
// older version (adapters/attribute_compositions.cc): MaxPool/AveragePool's
// ceil_mode as extra end padding; TopK's largest = 0 by negation;
// Reshape's allowzero by its constant shape; DepthToSpace's CRD mode by
// Reshape and Transpose; GatherND's batch_dims as batch coordinates in the
// indices; ScatterND/ScatterElements reductions over distinct constant
// indices. Each refuses, saying why, where nothing computes the same.
absl::Status CeilModeAsEndPads(AdapterContext& ctx);
absl::Status SmallestByNegation(AdapterContext& ctx);
absl::Status AllowZeroShape(AdapterContext& ctx);
absl::Status DepthToSpaceCrd(AdapterContext& ctx);
absl::Status BatchDimsAsIndices(AdapterContext& ctx);
absl::Status ScatterReductionByGather(AdapterContext& ctx);

// GroupNormalization-21 for 18 where the per-channel scale or bias is not
// one value per group: GroupNormalization-18 with per-group scale 1 and
// bias 0 (`groups` of them), then Mul and Add by the per-channel values.
absl::Status GroupNormPerChannelAfter(AdapterContext& ctx, int64_t groups);

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_COMPOSITIONS_H_
