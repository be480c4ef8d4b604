#ifndef ONNX_CONVERT_ADAPTERS_FAMILIES_H_
#define ONNX_CONVERT_ADAPTERS_FAMILIES_H_

// Internal to adapters/: the adapter functions of each operator family file
// that registry.cc lists in the one table of rewrite adapters (each with the
// conversions its rows register it for), and the registration of the
// families whose rows are made from a data table of their own.

#include "absl/status/status.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {

// Registers a row per direction of each attribute moved to an input
// (attribute_inputs.cc, its kMoved table).
void RegisterAttributeInputAdapters(RewriteTable& table);
// Registers the drops of neutral added attributes and the refusals of added
// values (added_attributes.cc, its kAddedAttributes and kAddedValues tables).
void RegisterAddedAttributeAdapters(RewriteTable& table);
// Registers legacy <-> numpy broadcasting for each op of broadcast.cc's
// kBroadcastOps table.
void RegisterBroadcastAdapters(RewriteTable& table);
// Registers each op replaced across its deprecation (replacements.cc, its
// kRenames table).
void RegisterReplacementAdapters(RewriteTable& table);

// softmax.cc
// Softmax/LogSoftmax/Hardmax 11->13: axis semantics checked; 13->11: axis semantics checked.
absl::Status SoftmaxAxisSemantics(AdapterContext& ctx);

// added_attributes.cc
// GridSample 20->16: mode names; 16->20: mode names.
absl::Status GridSampleModes(AdapterContext& ctx);
// Constant 12->11: value_* to value.
absl::Status ConstantShorthandToValue(AdapterContext& ctx);
// RoiAlign 10->16: output_half_pixel written out; 16->10: output_half_pixel only.
absl::Status RoiAlignPixelMode(AdapterContext& ctx);

// broadcast.cc
// Max/Min/Sum/Mean 8->6: same-shape inputs only.
absl::Status VariadicSameShapes(AdapterContext& ctx);
// Gemm 6->7: C broadcast attribute dropped.
absl::Status GemmLegacyToNumpy(AdapterContext& ctx);
// Gemm 7->6: C broadcast attribute set.
absl::Status GemmNumpyToLegacy(AdapterContext& ctx);

// replacements.cc
// CastLike 15->older: replaced by Cast.
absl::Status CastLikeToCast(AdapterContext& ctx);

// shape_ops.cc
// Pad 18->13: axes folded into pads.
absl::Status PadAxesToFullPads(AdapterContext& ctx);
// Shape 15->13: start/end to a Slice.
absl::Status ShapeRangeToSlice(AdapterContext& ctx);
// Split 13->18: num_outputs made explicit.
absl::Status SplitNumOutputsUp(AdapterContext& ctx);
// Split 18->13: num_outputs to sizes.
absl::Status SplitNumOutputsDown(AdapterContext& ctx);

// resize.cc
// Resize 10->11: roi added, asymmetric sampling.
absl::Status ResizeUp10To11(AdapterContext& ctx);
// Resize 11->10: asymmetric sampling only.
absl::Status ResizeDown11To10(AdapterContext& ctx);
// Resize 11->13: roi and scales kept.
absl::Status ResizeUp11To13(AdapterContext& ctx);
// Resize 13->11: roi and scales filled.
absl::Status ResizeDown13To11(AdapterContext& ctx);
// Resize 18->13: version-18 attributes at default.
absl::Status ResizeDown18To13(AdapterContext& ctx);

// control_flow.cc
// If 11->1: branches of one shape.
absl::Status IfBranchesOfOneShape(AdapterContext& ctx);
// Loop 11->1: body counters typed as scalars.
absl::Status LoopScalarCounters(AdapterContext& ctx);
// Scan 8->9: batch axis as an outer Scan.
absl::Status ScanBatchToOuterScan(AdapterContext& ctx);
// Scan 9->8: a batch of one.
absl::Status ScanAddBatchOfOne(AdapterContext& ctx);

// normalization.cc
// BatchNormalization 14->9: inference form only; 9->14: inference form only.
absl::Status BatchNormInferenceOnly(AdapterContext& ctx);
// GroupNormalization 18->21: per-group to per-channel; 21->18: per-channel to per-group.
absl::Status GroupNormAffine(AdapterContext& ctx);

// ml.cc
// TreeEnsembleRegressor 3->5: replaced by TreeEnsemble.
absl::Status RegressorToTreeEnsemble(AdapterContext& ctx);
// TreeEnsembleClassifier 3->5: no successor with labels.
absl::Status ClassifierHasNoSuccessor(AdapterContext& ctx);
// LabelEncoder 1->2: classes to keys/values.
absl::Status LabelEncoderClassesToKeys(AdapterContext& ctx);
// LabelEncoder 2->1: keys/values to classes.
absl::Status LabelEncoderKeysToClasses(AdapterContext& ctx);
// LabelEncoder 4->2: tensors to lists.
absl::Status LabelEncoderTensorsToLists(AdapterContext& ctx);
// TreeEnsembleRegressor/TreeEnsembleClassifier 3->1: tensors to floats.
absl::Status TreeTensorsToFloats(AdapterContext& ctx);
// TreeEnsemble 5->older: replaced by TreeEnsembleRegressor.
absl::Status TreeEnsembleToRegressor(AdapterContext& ctx);

// legacy.cc
// BatchNormalization 1->6: consumed_inputs dropped; 6->1: consumed_inputs supplied.
absl::Status OnlyLegacyHints(AdapterContext& ctx);
// Pad 1->2: paddings -> pads; 2->1: pads -> paddings.
absl::Status PadPaddings(AdapterContext& ctx);
// Cast 1->6: to as a number; 6->1: to as a name.
absl::Status CastTypeName(AdapterContext& ctx);
// LpPool/GlobalLpPool 1->2: p as an int; 2->1: p as a float.
absl::Status LpPoolOrder(AdapterContext& ctx);
// Selu 1->6: constants made explicit; 6->1: constants made explicit.
absl::Status SeluConstants(AdapterContext& ctx);
// Concat 1->4: axis made explicit.
absl::Status ConcatAxis(AdapterContext& ctx);
// GRU 1->3: direction spelled anew; 3->1: direction spelled as of old, Y_h given.
absl::Status GruDirection(AdapterContext& ctx);
// Clip 1->6: unset bounds mean the same; 6->1: unset bounds mean the same.
absl::Status ClipBounds(AdapterContext& ctx);
// Gemm 11->9: C = 0 when absent.
absl::Status GemmZeroC(AdapterContext& ctx);
// OptionalHasElement 18->15: no input: false.
absl::Status OptionalHasNoElement(AdapterContext& ctx);
// Constant 11->9: dense values only.
absl::Status ConstantDenseOnly(AdapterContext& ctx);
// Constant 9->1: other than float values as an initializer.
absl::Status ConstantAsInitializer(AdapterContext& ctx);

// recurrent.cc
// LSTM/GRU/RNN 14->7: layout 1 by Transposes.
absl::Status BatchFirstByTransposes(AdapterContext& ctx);

// dropout_mask.cc
// Dropout 7->10: mask: float -> bool; 10->7: mask: bool -> float.
absl::Status MaskType(AdapterContext& ctx);

// composed_ops.cc
// Shrink 9->older: two Clips and the jump at the edges.
absl::Status ShrinkBelow9(AdapterContext& ctx);
// ConstantOfShape 9->older: a constant, or the value tiled.
absl::Status ConstantOfShapeBelow9(AdapterContext& ctx);
// Equal 11->7: floats compared through Less and Greater.
absl::Status EqualOnFloats(AdapterContext& ctx);

// attribute_compositions.cc
// MaxPool 8->1: no Indices output.
absl::Status MaxPoolWithoutIndices(AdapterContext& ctx);
// QuantizeLinear/DequantizeLinear 21->19: blocks as arithmetic.
absl::Status BlockedQuantization(AdapterContext& ctx);

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_FAMILIES_H_
