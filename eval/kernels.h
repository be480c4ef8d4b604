#ifndef ONNX_CONVERT_EVAL_KERNELS_H_
#define ONNX_CONVERT_EVAL_KERNELS_H_

// The kernels of the reference evaluator, one namespace per op family (one
// file each, eval/kernels_<family>.cc), for the one kernel table
// (kernel_table.cc). Internal to the evaluator.

#include <array>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/kernel.h"
#include "eval/tensor.h"

namespace onnxconvert::eval {

// The kernels of a kernel template on one enum E, one a value of E in
// [0, n), looked up by value.
template <typename E, int n>
struct Instances {
  KernelFn by_value[n];

  // The kernel for `value`.
  constexpr KernelFn operator[](E value) const { return by_value[static_cast<int>(value)]; }
};

// The Instances<E, n> that `instance` (a generic lambda from
// std::integral_constant<E, value> to the kernel for value) gives.
template <typename E, int n, typename Instance>
constexpr Instances<E, n> InstancesOf(Instance instance) {
  return [&]<int... i>(std::integer_sequence<int, i...>) {
    return Instances<E, n>{{instance(std::integral_constant<E, static_cast<E>(i)>())...}};
  }(std::make_integer_sequence<int, n>());
}

// The kernels of a kernel template on an enum E and a flag: Instances by
// flag (false, true).
template <typename E, int n>
using FlagInstances = std::array<Instances<E, n>, 2>;

// The FlagInstances<E, n> that `instance` (a generic lambda from
// std::integral_constant<E, value> and std::bool_constant<flag> to the
// kernel for value and flag) gives.
template <typename E, int n, typename Instance>
constexpr FlagInstances<E, n> FlagInstancesOf(Instance instance) {
  auto with = [&](auto flag) {
    return InstancesOf<E, n>([&](auto value) { return instance(value, flag); });
  };
  return {with(std::false_type()), with(std::true_type())};
}

// What a kernel returns.
using KernelResult = absl::StatusOr<std::vector<Tensor>>;

// Identity, Reshape, Flatten, Transpose, (Un)Squeeze, Concat, Slice,
// Gather, Split, Expand, Tile, ConstantOfShape, Shape, Size, Range.
namespace shape_ops {
KernelResult IdentityKernel(const KernelCall& call);
KernelResult ReshapeKernel(const KernelCall& call);
KernelResult FlattenKernel(const KernelCall& call);
KernelResult TransposeKernel(const KernelCall& call);
KernelResult SqueezeKernel(const KernelCall& call);
KernelResult UnsqueezeKernel(const KernelCall& call);
KernelResult ConcatKernel(const KernelCall& call);
KernelResult SliceKernel(const KernelCall& call);
KernelResult GatherKernel(const KernelCall& call);
KernelResult SplitKernel(const KernelCall& call);
KernelResult ExpandKernel(const KernelCall& call);
KernelResult TileKernel(const KernelCall& call);
KernelResult ConstantOfShapeKernel(const KernelCall& call);
KernelResult ShapeKernel(const KernelCall& call);
KernelResult SizeKernel(const KernelCall& call);
KernelResult RangeKernel(const KernelCall& call);
}  // namespace shape_ops

// Broadcasting arithmetic, comparison and logic, the variadic ops, the
// unary ops of all numeric types, and Where.
namespace elementwise_ops {
enum class Arith { kAdd, kSub, kMul, kDiv };
enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };
enum class Logic { kAnd, kOr, kXor };
enum class Variadic { kMax, kMin, kSum, kMean };
enum class Unary { kNeg, kAbs, kSqrt, kExp, kLog, kFloor, kCeil, kReciprocal, kRelu, kNot };
// The binary ops' kernels by legacy (versions 1 to 6: broadcast = 1 with
// `axis`; else from version 7, numpy-style) and op.
extern const FlagInstances<Arith, 4> kArithmetic;
extern const FlagInstances<Compare, 5> kComparison;
extern const FlagInstances<Logic, 3> kLogical;
// Max, Min, Sum and Mean of any number of inputs.
extern const Instances<Variadic, 4> kVariadic;
extern const Instances<Unary, 10> kUnary;
KernelResult WhereKernel(const KernelCall& call);
}  // namespace elementwise_ops

namespace cast_ops {
KernelResult CastKernel(const KernelCall& call);
KernelResult CastLikeKernel(const KernelCall& call);
KernelResult BitCastKernel(const KernelCall& call);
}  // namespace cast_ops

namespace linalg_ops {
KernelResult MatMulKernel(const KernelCall& call);
KernelResult GemmKernel(const KernelCall& call);
KernelResult MatMulIntegerKernel(const KernelCall& call);
KernelResult QLinearMatMulKernel(const KernelCall& call);
KernelResult EinsumKernel(const KernelCall& call);
KernelResult DetKernel(const KernelCall& call);
}  // namespace linalg_ops

namespace conv_ops {
KernelResult ConvKernel(const KernelCall& call);
KernelResult ConvTransposeKernel(const KernelCall& call);
KernelResult ConvIntegerKernel(const KernelCall& call);
KernelResult QLinearConvKernel(const KernelCall& call);
KernelResult DeformConvKernel(const KernelCall& call);
}  // namespace conv_ops

namespace pool_ops {
enum class Pool { kMax, kAverage, kLp };
// The pools by global (the Global* pools; else windowed) and kind.
extern const FlagInstances<Pool, 3> kPool;
KernelResult MaxUnpoolKernel(const KernelCall& call);
KernelResult RoiAlignKernel(const KernelCall& call);
}  // namespace pool_ops

namespace norm_ops {
KernelResult BatchNormKernel(const KernelCall& call);
KernelResult InstanceNormKernel(const KernelCall& call);
// LayerNormalization, or RMSNormalization when kRms.
template <bool kRms>
KernelResult LayerNormKernel(const KernelCall& call);
KernelResult GroupNormKernel(const KernelCall& call);
KernelResult LrnKernel(const KernelCall& call);
KernelResult MvnKernel(const KernelCall& call);
KernelResult LpNormKernel(const KernelCall& call);
}  // namespace norm_ops

namespace rnn_ops {
enum class Cell { kRnn, kGru, kLstm };
extern const Instances<Cell, 3> kRecurrent;
}  // namespace rnn_ops

namespace quant_ops {
KernelResult QuantizeKernel(const KernelCall& call);
KernelResult DequantizeKernel(const KernelCall& call);
KernelResult DynamicQuantizeKernel(const KernelCall& call);
}  // namespace quant_ops

namespace random_ops {
enum class Distribution { kNormal, kUniform };
KernelResult DropoutKernel(const KernelCall& call);
// RandomNormal/RandomUniform by like (their *Like forms) and distribution.
extern const FlagInstances<Distribution, 2> kRandom;
KernelResult BernoulliKernel(const KernelCall& call);
KernelResult MultinomialKernel(const KernelCall& call);
}  // namespace random_ops

namespace attention_ops {
KernelResult AttentionKernel(const KernelCall& call);
KernelResult FlexAttentionKernel(const KernelCall& call);
}  // namespace attention_ops

namespace math_ops {
// The functions of one floating-point input computed here.
enum class Fn {
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh,
  kSigmoid, kErf, kSoftplus, kSoftsign, kHardSigmoid, kHardSwish, kElu, kSelu, kLeakyRelu,
  kCelu, kGelu, kMish, kThresholdedRelu, kSwish,
};
enum class Bitwise { kAnd, kOr, kXor };
enum class Softmax { kSoftmax, kLogSoftmax, kHardmax };
extern const Instances<Fn, static_cast<int>(Fn::kSwish) + 1> kFloatUnary;
KernelResult RoundKernel(const KernelCall& call);
KernelResult SignKernel(const KernelCall& call);
KernelResult IsNaNKernel(const KernelCall& call);
KernelResult IsInfKernel(const KernelCall& call);
KernelResult ShrinkKernel(const KernelCall& call);
KernelResult ClipKernel(const KernelCall& call);
KernelResult PReluKernel(const KernelCall& call);
KernelResult PowKernel(const KernelCall& call);
KernelResult ModKernel(const KernelCall& call);
KernelResult BitShiftKernel(const KernelCall& call);
extern const Instances<Bitwise, 3> kBitwise;
KernelResult BitwiseNotKernel(const KernelCall& call);
extern const Instances<Softmax, 3> kSoftmax;
}  // namespace math_ops

namespace reduce_ops {
enum class Reduction {
  kSum, kMean, kProd, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp,
};
extern const Instances<Reduction, 10> kReduce;
// ArgMax, or ArgMin when not kMax.
template <bool kMax>
KernelResult ArgKernel(const KernelCall& call);
KernelResult TopKKernel(const KernelCall& call);
// CumProd, or CumSum when not kProd.
template <bool kProd>
KernelResult CumulativeKernel(const KernelCall& call);
}  // namespace reduce_ops

namespace index_ops {
KernelResult PadKernel(const KernelCall& call);
KernelResult GatherElementsKernel(const KernelCall& call);
KernelResult GatherNDKernel(const KernelCall& call);
KernelResult ScatterElementsKernel(const KernelCall& call);
KernelResult ScatterNDKernel(const KernelCall& call);
KernelResult TensorScatterKernel(const KernelCall& call);
KernelResult OneHotKernel(const KernelCall& call);
KernelResult NonZeroKernel(const KernelCall& call);
KernelResult CompressKernel(const KernelCall& call);
KernelResult TriluKernel(const KernelCall& call);
KernelResult ReverseSequenceKernel(const KernelCall& call);
// DepthToSpace, or SpaceToDepth when not kToSpace.
template <bool kToSpace>
KernelResult BlockKernel(const KernelCall& call);
KernelResult EyeLikeKernel(const KernelCall& call);
KernelResult UniqueKernel(const KernelCall& call);
KernelResult CenterCropPadKernel(const KernelCall& call);
KernelResult Col2ImKernel(const KernelCall& call);
}  // namespace index_ops

namespace resize_ops {
KernelResult ResizeKernel(const KernelCall& call);
KernelResult UpsampleKernel(const KernelCall& call);
}  // namespace resize_ops

namespace string_ops {
KernelResult StringNormalizerKernel(const KernelCall& call);
KernelResult StringConcatKernel(const KernelCall& call);
KernelResult StringSplitKernel(const KernelCall& call);
KernelResult RegexFullMatchKernel(const KernelCall& call);
KernelResult TfIdfVectorizerKernel(const KernelCall& call);
}  // namespace string_ops

namespace ml_ops {
KernelResult ArrayFeatureExtractorKernel(const KernelCall& call);
KernelResult BinarizerKernel(const KernelCall& call);
KernelResult LabelEncoderKernel(const KernelCall& call);
KernelResult TreeEnsembleKernel(const KernelCall& call);
}  // namespace ml_ops

namespace loss_ops {
KernelResult NegativeLogLikelihoodLossKernel(const KernelCall& call);
KernelResult SoftmaxCrossEntropyLossKernel(const KernelCall& call);
}  // namespace loss_ops

namespace training_ops {
KernelResult AdagradKernel(const KernelCall& call);
KernelResult AdamKernel(const KernelCall& call);
KernelResult MomentumKernel(const KernelCall& call);
}  // namespace training_ops

namespace detection_ops {
KernelResult NonMaxSuppressionKernel(const KernelCall& call);
}  // namespace detection_ops

namespace signal_ops {
KernelResult DftKernel(const KernelCall& call);
KernelResult StftKernel(const KernelCall& call);
KernelResult MelWeightMatrixKernel(const KernelCall& call);
}  // namespace signal_ops

namespace sample_ops {
KernelResult GridSampleKernel(const KernelCall& call);
}  // namespace sample_ops

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_KERNELS_H_
