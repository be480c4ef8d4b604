#include <cstdio>
#include <cstdlib>

#include "adapters/compositions.h"
#include "adapters/families.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

constexpr char kMl[] = "ai.onnx.ml";

// Every rewrite adapter of a fixed (op, from, to), by the family file that
// defines it; `to` 0: the op is gone there.
constexpr RewriteRow kRewriteRows[] = {
    // softmax.cc
    {"Softmax", 11, 13, SoftmaxAxisSemantics, "axis semantics checked"},
    {"Softmax", 13, 11, SoftmaxAxisSemantics, "axis semantics checked"},
    {"LogSoftmax", 11, 13, SoftmaxAxisSemantics, "axis semantics checked"},
    {"LogSoftmax", 13, 11, SoftmaxAxisSemantics, "axis semantics checked"},
    {"Hardmax", 11, 13, SoftmaxAxisSemantics, "axis semantics checked"},
    {"Hardmax", 13, 11, SoftmaxAxisSemantics, "axis semantics checked"},
    // added_attributes.cc
    {"GridSample", 20, 16, GridSampleModes, "mode names"},
    {"GridSample", 16, 20, GridSampleModes, "mode names"},
    {"Constant", 12, 11, ConstantShorthandToValue, "value_* to value"},
    {"RoiAlign", 10, 16, RoiAlignPixelMode, "output_half_pixel written out"},
    {"RoiAlign", 16, 10, RoiAlignPixelMode, "output_half_pixel only"},
    // broadcast.cc
    {"Max", 8, 6, VariadicSameShapes, "same-shape inputs only"},
    {"Min", 8, 6, VariadicSameShapes, "same-shape inputs only"},
    {"Sum", 8, 6, VariadicSameShapes, "same-shape inputs only"},
    {"Mean", 8, 6, VariadicSameShapes, "same-shape inputs only"},
    {"Gemm", 6, 7, GemmLegacyToNumpy, "C broadcast attribute dropped"},
    {"Gemm", 7, 6, GemmNumpyToLegacy, "C broadcast attribute set"},
    // replacements.cc
    {"CastLike", 15, 0, CastLikeToCast, "replaced by Cast"},
    // shape_ops.cc
    {"Pad", 18, 13, PadAxesToFullPads, "axes folded into pads"},
    {"Shape", 15, 13, ShapeRangeToSlice, "start/end to a Slice"},
    {"Split", 13, 18, SplitNumOutputsUp, "num_outputs made explicit"},
    {"Split", 18, 13, SplitNumOutputsDown, "num_outputs to sizes"},
    // resize.cc
    {"Resize", 10, 11, ResizeUp10To11, "roi added, asymmetric sampling"},
    {"Resize", 11, 10, ResizeDown11To10, "asymmetric sampling only"},
    {"Resize", 11, 13, ResizeUp11To13, "roi and scales kept"},
    {"Resize", 13, 11, ResizeDown13To11, "roi and scales filled"},
    {"Resize", 18, 13, ResizeDown18To13, "version-18 attributes at default"},
    // control_flow.cc
    {"If", 11, 1, IfBranchesOfOneShape, "branches of one shape"},
    {"Loop", 11, 1, LoopScalarCounters, "body counters typed as scalars"},
    {"Scan", 8, 9, ScanBatchToOuterScan, "batch axis as an outer Scan"},
    {"Scan", 9, 8, ScanAddBatchOfOne, "a batch of one"},
    // normalization.cc
    {"BatchNormalization", 14, 9, BatchNormInferenceOnly, "inference form only"},
    {"BatchNormalization", 9, 14, BatchNormInferenceOnly, "inference form only"},
    {"GroupNormalization", 18, 21, GroupNormAffine, "per-group to per-channel"},
    {"GroupNormalization", 21, 18, GroupNormAffine, "per-channel to per-group"},
    // ml.cc
    {"TreeEnsembleRegressor", 3, 5, RegressorToTreeEnsemble, "replaced by TreeEnsemble", kMl},
    {"TreeEnsembleClassifier", 3, 5, ClassifierHasNoSuccessor, "no successor with labels", kMl},
    {"LabelEncoder", 1, 2, LabelEncoderClassesToKeys, "classes to keys/values", kMl},
    {"LabelEncoder", 2, 1, LabelEncoderKeysToClasses, "keys/values to classes", kMl},
    {"LabelEncoder", 4, 2, LabelEncoderTensorsToLists, "tensors to lists", kMl},
    {"TreeEnsembleRegressor", 3, 1, TreeTensorsToFloats, "tensors to floats", kMl},
    {"TreeEnsembleClassifier", 3, 1, TreeTensorsToFloats, "tensors to floats", kMl},
    {"TreeEnsemble", 5, 0, TreeEnsembleToRegressor, "replaced by TreeEnsembleRegressor", kMl},
    // legacy.cc
    {"BatchNormalization", 1, 6, OnlyLegacyHints, "consumed_inputs dropped"},
    {"BatchNormalization", 6, 1, OnlyLegacyHints, "consumed_inputs supplied"},
    {"Pad", 1, 2, PadPaddings, "paddings -> pads"},
    {"Pad", 2, 1, PadPaddings, "pads -> paddings"},
    {"Cast", 1, 6, CastTypeName, "to as a number"},
    {"Cast", 6, 1, CastTypeName, "to as a name"},
    {"LpPool", 1, 2, LpPoolOrder, "p as an int"},
    {"LpPool", 2, 1, LpPoolOrder, "p as a float"},
    {"GlobalLpPool", 1, 2, LpPoolOrder, "p as an int"},
    {"GlobalLpPool", 2, 1, LpPoolOrder, "p as a float"},
    {"Selu", 1, 6, SeluConstants, "constants made explicit"},
    {"Selu", 6, 1, SeluConstants, "constants made explicit"},
    {"Concat", 1, 4, ConcatAxis, "axis made explicit"},
    {"GRU", 1, 3, GruDirection, "direction spelled anew"},
    {"GRU", 3, 1, GruDirection, "direction spelled as of old, Y_h given"},
    {"Clip", 1, 6, ClipBounds, "unset bounds mean the same"},
    {"Clip", 6, 1, ClipBounds, "unset bounds mean the same"},
    {"Gemm", 11, 9, GemmZeroC, "C = 0 when absent"},
    {"OptionalHasElement", 18, 15, OptionalHasNoElement, "no input: false"},
    {"Constant", 11, 9, ConstantDenseOnly, "dense values only"},
    {"Constant", 9, 1, ConstantAsInitializer, "other than float values as an initializer"},
    // recurrent.cc
    {"LSTM", 14, 7, BatchFirstByTransposes, "layout 1 by Transposes"},
    {"GRU", 14, 7, BatchFirstByTransposes, "layout 1 by Transposes"},
    {"RNN", 14, 7, BatchFirstByTransposes, "layout 1 by Transposes"},
    // dropout_mask.cc
    {"Dropout", 7, 10, MaskType, "mask: float -> bool"},
    {"Dropout", 10, 7, MaskType, "mask: bool -> float"},
    // composed_ops.cc
    {"Shrink", 9, 0, ShrinkBelow9, "two Clips and the jump at the edges"},
    {"ConstantOfShape", 9, 0, ConstantOfShapeBelow9, "a constant, or the value tiled"},
    {"Equal", 11, 7, EqualOnFloats, "floats compared through Less and Greater"},
    // attribute_compositions.cc
    {"DepthToSpace", 11, 1, DepthToSpaceCrd, "CRD by Reshape and Transpose"},
    {"MaxPool", 8, 1, MaxPoolWithoutIndices, "no Indices output"},
    {"QuantizeLinear", 21, 19, BlockedQuantization, "blocks as arithmetic"},
    {"DequantizeLinear", 21, 19, BlockedQuantization, "blocks as arithmetic"},
    {"ScatterND", 16, 13, ScatterReductionByGather, "reductions over distinct indices"},
    {"ScatterND", 18, 16, ScatterReductionByGather, "max/min over distinct indices"},
    {"ScatterElements", 16, 13, ScatterReductionByGather, "reductions over distinct indices"},
    {"ScatterElements", 18, 16, ScatterReductionByGather, "max/min over distinct indices"},
};

}  // namespace

const RewriteTable& Rewrites() {
  static const RewriteTable* table = [] {
    auto* table = new RewriteTable();
    for (const RewriteRow& row : kRewriteRows) {
      table->Register(row.domain, row.op, row.from, row.to, row.fn, row.what);
    }
    RegisterAttributeInputAdapters(*table);
    RegisterAddedAttributeAdapters(*table);
    RegisterBroadcastAdapters(*table);
    RegisterReplacementAdapters(*table);
    return table;
  }();
  return *table;
}

}  // namespace onnxconvert::adapters
