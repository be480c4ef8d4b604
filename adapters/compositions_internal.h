#ifndef ONNX_CONVERT_ADAPTERS_COMPOSITIONS_INTERNAL_H_
#define ONNX_CONVERT_ADAPTERS_COMPOSITIONS_INTERNAL_H_

// Internal to adapters/compositions.cc, adapters/composed_ops.cc and
// adapters/shape_compositions.cc: the report kinds and limits the
// compositions share.

#include <cstdint>

#include "adapters/adapter.h"

namespace onnxconvert::adapters::compositions_internal {

// The report's kind for a change whose float results may round differently
// from the node's own kernel (or overflow where it would not).
inline constexpr ChangeKind kRounding = ChangeKind::kRoundingChanged;
// The report's kind for a change of what a NaN input gives.
inline constexpr ChangeKind kNanChanged = ChangeKind::kNanChanged;

// The largest axis whose reversed indices are written out as a constant.
inline constexpr int64_t kMaxReversedIndices = 1 << 16;

// Whether input `i` of the node is given.
inline bool Given(const AdapterContext& ctx, int i) {
  return i < ctx.node.input_size() && !ctx.node.input(i).empty();
}

}  // namespace onnxconvert::adapters::compositions_internal

#endif  // ONNX_CONVERT_ADAPTERS_COMPOSITIONS_INTERNAL_H_
