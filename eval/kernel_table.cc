#include "absl/types/span.h"
#include "eval/kernel.h"
#include "eval/kernels.h"

namespace onnxconvert::eval {
namespace {

using elementwise_ops::Arith;
using elementwise_ops::Compare;
using elementwise_ops::Logic;
using elementwise_ops::Unary;
using elementwise_ops::Variadic;
using math_ops::Bitwise;
using math_ops::Fn;
using math_ops::Softmax;
using pool_ops::Pool;
using random_ops::Distribution;
using reduce_ops::Reduction;
using rnn_ops::Cell;

// The flags of the FlagInstances tables.
constexpr bool kLegacy = true, kNumpy = false;
constexpr bool kGlobal = true, kWindowed = false;
constexpr bool kLike = true, kShaped = false;

}  // namespace

absl::Span<const KernelRow> KernelTable() {
  static const KernelRow kRows[] = {
    // Shapes and data movement (kernels_shape.cc).
    {"", "Identity", 1, kLast, shape_ops::IdentityKernel},
    {"", "Reshape", 1, kLast, shape_ops::ReshapeKernel},
    {"", "Flatten", 1, kLast, shape_ops::FlattenKernel},
    {"", "Transpose", 1, kLast, shape_ops::TransposeKernel},
    {"", "Squeeze", 1, kLast, shape_ops::SqueezeKernel},
    {"", "Unsqueeze", 1, kLast, shape_ops::UnsqueezeKernel},
    {"", "Concat", 1, kLast, shape_ops::ConcatKernel},
    {"", "Slice", 1, kLast, shape_ops::SliceKernel},
    {"", "Gather", 1, kLast, shape_ops::GatherKernel},
    {"", "Split", 1, kLast, shape_ops::SplitKernel},
    {"", "Expand", 8, kLast, shape_ops::ExpandKernel},
    {"", "Tile", 6, kLast, shape_ops::TileKernel},
    {"", "ConstantOfShape", 9, kLast, shape_ops::ConstantOfShapeKernel},
    {"", "Shape", 1, kLast, shape_ops::ShapeKernel},
    {"", "Size", 1, kLast, shape_ops::SizeKernel},
    {"", "Range", 11, kLast, shape_ops::RangeKernel},
    // Elementwise ops (kernels_elementwise.cc).
    // Versions 1 to 6 broadcast only under broadcast = 1 (with `axis`).
    {"", "Add", 1, 6, elementwise_ops::kArithmetic[kLegacy][Arith::kAdd]},
    {"", "Add", 7, kLast, elementwise_ops::kArithmetic[kNumpy][Arith::kAdd]},
    {"", "Sub", 1, 6, elementwise_ops::kArithmetic[kLegacy][Arith::kSub]},
    {"", "Sub", 7, kLast, elementwise_ops::kArithmetic[kNumpy][Arith::kSub]},
    {"", "Mul", 1, 6, elementwise_ops::kArithmetic[kLegacy][Arith::kMul]},
    {"", "Mul", 7, kLast, elementwise_ops::kArithmetic[kNumpy][Arith::kMul]},
    {"", "Div", 1, 6, elementwise_ops::kArithmetic[kLegacy][Arith::kDiv]},
    {"", "Div", 7, kLast, elementwise_ops::kArithmetic[kNumpy][Arith::kDiv]},
    {"", "Equal", 1, 6, elementwise_ops::kComparison[kLegacy][Compare::kEqual]},
    {"", "Equal", 7, kLast, elementwise_ops::kComparison[kNumpy][Compare::kEqual]},
    {"", "Less", 1, 6, elementwise_ops::kComparison[kLegacy][Compare::kLess]},
    {"", "Less", 7, kLast, elementwise_ops::kComparison[kNumpy][Compare::kLess]},
    {"", "Greater", 1, 6, elementwise_ops::kComparison[kLegacy][Compare::kGreater]},
    {"", "Greater", 7, kLast, elementwise_ops::kComparison[kNumpy][Compare::kGreater]},
    {"", "And", 1, 6, elementwise_ops::kLogical[kLegacy][Logic::kAnd]},
    {"", "And", 7, kLast, elementwise_ops::kLogical[kNumpy][Logic::kAnd]},
    {"", "Or", 1, 6, elementwise_ops::kLogical[kLegacy][Logic::kOr]},
    {"", "Or", 7, kLast, elementwise_ops::kLogical[kNumpy][Logic::kOr]},
    {"", "Xor", 1, 6, elementwise_ops::kLogical[kLegacy][Logic::kXor]},
    {"", "Xor", 7, kLast, elementwise_ops::kLogical[kNumpy][Logic::kXor]},
    {"", "LessOrEqual", 12, kLast, elementwise_ops::kComparison[kNumpy][Compare::kLessOrEqual]},
    {"", "GreaterOrEqual", 12, kLast,
     elementwise_ops::kComparison[kNumpy][Compare::kGreaterOrEqual]},
    {"", "Not", 1, kLast, elementwise_ops::kUnary[Unary::kNot]},
    {"", "Max", 1, kLast, elementwise_ops::kVariadic[Variadic::kMax]},
    {"", "Min", 1, kLast, elementwise_ops::kVariadic[Variadic::kMin]},
    {"", "Sum", 1, kLast, elementwise_ops::kVariadic[Variadic::kSum]},
    {"", "Mean", 1, kLast, elementwise_ops::kVariadic[Variadic::kMean]},
    {"", "Neg", 1, kLast, elementwise_ops::kUnary[Unary::kNeg]},
    {"", "Abs", 1, kLast, elementwise_ops::kUnary[Unary::kAbs]},
    {"", "Sqrt", 1, kLast, elementwise_ops::kUnary[Unary::kSqrt]},
    {"", "Exp", 1, kLast, elementwise_ops::kUnary[Unary::kExp]},
    {"", "Log", 1, kLast, elementwise_ops::kUnary[Unary::kLog]},
    {"", "Floor", 1, kLast, elementwise_ops::kUnary[Unary::kFloor]},
    {"", "Ceil", 1, kLast, elementwise_ops::kUnary[Unary::kCeil]},
    {"", "Reciprocal", 1, kLast, elementwise_ops::kUnary[Unary::kReciprocal]},
    {"", "Relu", 1, kLast, elementwise_ops::kUnary[Unary::kRelu]},
    {"", "Where", 9, kLast, elementwise_ops::WhereKernel},
    // Casts (kernels_cast.cc).
    {"", "Cast", 1, kLast, cast_ops::CastKernel},
    {"", "CastLike", 15, kLast, cast_ops::CastLikeKernel},
    {"", "BitCast", 26, kLast, cast_ops::BitCastKernel},
    // Matrix products (kernels_linalg.cc).
    {"", "MatMul", 1, kLast, linalg_ops::MatMulKernel},
    {"", "Gemm", 1, kLast, linalg_ops::GemmKernel},
    {"", "MatMulInteger", 10, kLast, linalg_ops::MatMulIntegerKernel},
    {"", "QLinearMatMul", 10, kLast, linalg_ops::QLinearMatMulKernel},
    {"", "Einsum", 12, kLast, linalg_ops::EinsumKernel},
    {"", "Det", 11, kLast, linalg_ops::DetKernel},
    // Convolutions (kernels_conv.cc).
    {"", "Conv", 1, kLast, conv_ops::ConvKernel},
    {"", "ConvTranspose", 1, kLast, conv_ops::ConvTransposeKernel},
    {"", "ConvInteger", 10, kLast, conv_ops::ConvIntegerKernel},
    {"", "QLinearConv", 10, kLast, conv_ops::QLinearConvKernel},
    {"", "DeformConv", 19, kLast, conv_ops::DeformConvKernel},
    // Pools (kernels_pool.cc).
    {"", "MaxPool", 1, kLast, pool_ops::kPool[kWindowed][Pool::kMax]},
    {"", "AveragePool", 1, kLast, pool_ops::kPool[kWindowed][Pool::kAverage]},
    {"", "LpPool", 1, kLast, pool_ops::kPool[kWindowed][Pool::kLp]},
    {"", "GlobalMaxPool", 1, kLast, pool_ops::kPool[kGlobal][Pool::kMax]},
    {"", "GlobalAveragePool", 1, kLast, pool_ops::kPool[kGlobal][Pool::kAverage]},
    {"", "GlobalLpPool", 1, kLast, pool_ops::kPool[kGlobal][Pool::kLp]},
    {"", "MaxUnpool", 9, kLast, pool_ops::MaxUnpoolKernel},
    {"", "RoiAlign", 10, kLast, pool_ops::RoiAlignKernel},
    // Normalizations (kernels_norm.cc).
    {"", "BatchNormalization", 1, kLast, norm_ops::BatchNormKernel},
    {"", "InstanceNormalization", 1, kLast, norm_ops::InstanceNormKernel},
    {"", "LayerNormalization", 17, kLast, norm_ops::LayerNormKernel<false>},
    {"", "RMSNormalization", 23, kLast, norm_ops::LayerNormKernel<true>},
    {"", "GroupNormalization", 18, kLast, norm_ops::GroupNormKernel},
    {"", "LRN", 1, kLast, norm_ops::LrnKernel},
    {"", "MeanVarianceNormalization", 9, kLast, norm_ops::MvnKernel},
    {"", "LpNormalization", 1, kLast, norm_ops::LpNormKernel},
    // Recurrent layers (kernels_rnn.cc).
    {"", "RNN", 1, kLast, rnn_ops::kRecurrent[Cell::kRnn]},
    {"", "GRU", 1, kLast, rnn_ops::kRecurrent[Cell::kGru]},
    {"", "LSTM", 1, kLast, rnn_ops::kRecurrent[Cell::kLstm]},
    // Quantization (kernels_quant.cc).
    {"", "QuantizeLinear", 10, kLast, quant_ops::QuantizeKernel},
    {"", "DequantizeLinear", 10, kLast, quant_ops::DequantizeKernel},
    {"", "DynamicQuantizeLinear", 11, kLast, quant_ops::DynamicQuantizeKernel},
    // Random ops (kernels_random.cc).
    {"", "Dropout", 1, kLast, random_ops::DropoutKernel},
    {"", "RandomNormal", 1, kLast, random_ops::kRandom[kShaped][Distribution::kNormal]},
    {"", "RandomUniform", 1, kLast, random_ops::kRandom[kShaped][Distribution::kUniform]},
    {"", "RandomNormalLike", 1, kLast, random_ops::kRandom[kLike][Distribution::kNormal]},
    {"", "RandomUniformLike", 1, kLast, random_ops::kRandom[kLike][Distribution::kUniform]},
    {"", "Bernoulli", 15, kLast, random_ops::BernoulliKernel},
    {"", "Multinomial", 7, kLast, random_ops::MultinomialKernel},
    // Attention (kernels_attention.cc).
    {"", "Attention", 23, kLast, attention_ops::AttentionKernel},
    {"ai.onnx.preview", "FlexAttention", 1, kLast, attention_ops::FlexAttentionKernel},
    // Unary and binary math, activations, softmax (kernels_math.cc).
    {"", "Sin", 7, kLast, math_ops::kFloatUnary[Fn::kSin]},
    {"", "Cos", 7, kLast, math_ops::kFloatUnary[Fn::kCos]},
    {"", "Tan", 7, kLast, math_ops::kFloatUnary[Fn::kTan]},
    {"", "Asin", 7, kLast, math_ops::kFloatUnary[Fn::kAsin]},
    {"", "Acos", 7, kLast, math_ops::kFloatUnary[Fn::kAcos]},
    {"", "Atan", 7, kLast, math_ops::kFloatUnary[Fn::kAtan]},
    {"", "Sinh", 9, kLast, math_ops::kFloatUnary[Fn::kSinh]},
    {"", "Cosh", 9, kLast, math_ops::kFloatUnary[Fn::kCosh]},
    {"", "Tanh", 1, kLast, math_ops::kFloatUnary[Fn::kTanh]},
    {"", "Asinh", 9, kLast, math_ops::kFloatUnary[Fn::kAsinh]},
    {"", "Acosh", 9, kLast, math_ops::kFloatUnary[Fn::kAcosh]},
    {"", "Atanh", 9, kLast, math_ops::kFloatUnary[Fn::kAtanh]},
    {"", "Sigmoid", 1, kLast, math_ops::kFloatUnary[Fn::kSigmoid]},
    {"", "Erf", 9, kLast, math_ops::kFloatUnary[Fn::kErf]},
    {"", "Softplus", 1, kLast, math_ops::kFloatUnary[Fn::kSoftplus]},
    {"", "Softsign", 1, kLast, math_ops::kFloatUnary[Fn::kSoftsign]},
    {"", "HardSigmoid", 1, kLast, math_ops::kFloatUnary[Fn::kHardSigmoid]},
    {"", "HardSwish", 14, kLast, math_ops::kFloatUnary[Fn::kHardSwish]},
    {"", "Elu", 1, kLast, math_ops::kFloatUnary[Fn::kElu]},
    {"", "Selu", 1, kLast, math_ops::kFloatUnary[Fn::kSelu]},
    {"", "LeakyRelu", 1, kLast, math_ops::kFloatUnary[Fn::kLeakyRelu]},
    {"", "Celu", 12, kLast, math_ops::kFloatUnary[Fn::kCelu]},
    {"", "Gelu", 20, kLast, math_ops::kFloatUnary[Fn::kGelu]},
    {"", "Mish", 18, kLast, math_ops::kFloatUnary[Fn::kMish]},
    {"", "ThresholdedRelu", 10, kLast, math_ops::kFloatUnary[Fn::kThresholdedRelu]},
    {"", "Swish", 24, kLast, math_ops::kFloatUnary[Fn::kSwish]},
    {"", "Round", 11, kLast, math_ops::RoundKernel},
    {"", "Sign", 9, kLast, math_ops::SignKernel},
    {"", "IsNaN", 9, kLast, math_ops::IsNaNKernel},
    {"", "IsInf", 10, kLast, math_ops::IsInfKernel},
    {"", "Shrink", 9, kLast, math_ops::ShrinkKernel},
    {"", "Clip", 1, kLast, math_ops::ClipKernel},
    {"", "PRelu", 1, kLast, math_ops::PReluKernel},
    {"", "Pow", 1, kLast, math_ops::PowKernel},
    {"", "Mod", 10, kLast, math_ops::ModKernel},
    {"", "BitShift", 11, kLast, math_ops::BitShiftKernel},
    {"", "BitwiseAnd", 18, kLast, math_ops::kBitwise[Bitwise::kAnd]},
    {"", "BitwiseOr", 18, kLast, math_ops::kBitwise[Bitwise::kOr]},
    {"", "BitwiseXor", 18, kLast, math_ops::kBitwise[Bitwise::kXor]},
    {"", "BitwiseNot", 18, kLast, math_ops::BitwiseNotKernel},
    {"", "Softmax", 1, kLast, math_ops::kSoftmax[Softmax::kSoftmax]},
    {"", "LogSoftmax", 1, kLast, math_ops::kSoftmax[Softmax::kLogSoftmax]},
    {"", "Hardmax", 1, kLast, math_ops::kSoftmax[Softmax::kHardmax]},
    // Reductions, ArgMax/ArgMin, TopK, cumulative ops (kernels_reduce.cc).
    {"", "ReduceSum", 1, kLast, reduce_ops::kReduce[Reduction::kSum]},
    {"", "ReduceMean", 1, kLast, reduce_ops::kReduce[Reduction::kMean]},
    {"", "ReduceProd", 1, kLast, reduce_ops::kReduce[Reduction::kProd]},
    {"", "ReduceMax", 1, kLast, reduce_ops::kReduce[Reduction::kMax]},
    {"", "ReduceMin", 1, kLast, reduce_ops::kReduce[Reduction::kMin]},
    {"", "ReduceL1", 1, kLast, reduce_ops::kReduce[Reduction::kL1]},
    {"", "ReduceL2", 1, kLast, reduce_ops::kReduce[Reduction::kL2]},
    {"", "ReduceSumSquare", 1, kLast, reduce_ops::kReduce[Reduction::kSumSquare]},
    {"", "ReduceLogSum", 1, kLast, reduce_ops::kReduce[Reduction::kLogSum]},
    {"", "ReduceLogSumExp", 1, kLast, reduce_ops::kReduce[Reduction::kLogSumExp]},
    {"", "ArgMax", 1, kLast, reduce_ops::ArgKernel<true>},
    {"", "ArgMin", 1, kLast, reduce_ops::ArgKernel<false>},
    {"", "TopK", 1, kLast, reduce_ops::TopKKernel},
    {"", "CumSum", 11, kLast, reduce_ops::CumulativeKernel<false>},
    {"", "CumProd", 26, kLast, reduce_ops::CumulativeKernel<true>},
    // Indexing and rearrangement (kernels_index.cc).
    {"", "Pad", 1, kLast, index_ops::PadKernel},
    {"", "GatherElements", 11, kLast, index_ops::GatherElementsKernel},
    {"", "GatherND", 11, kLast, index_ops::GatherNDKernel},
    {"", "Scatter", 9, kLast, index_ops::ScatterElementsKernel},  // deprecated from 11, as it was
    {"", "ScatterElements", 11, kLast, index_ops::ScatterElementsKernel},
    {"", "ScatterND", 11, kLast, index_ops::ScatterNDKernel},
    {"", "TensorScatter", 24, kLast, index_ops::TensorScatterKernel},
    {"", "OneHot", 9, kLast, index_ops::OneHotKernel},
    {"", "NonZero", 9, kLast, index_ops::NonZeroKernel},
    {"", "Compress", 9, kLast, index_ops::CompressKernel},
    {"", "Trilu", 14, kLast, index_ops::TriluKernel},
    {"", "ReverseSequence", 10, kLast, index_ops::ReverseSequenceKernel},
    {"", "DepthToSpace", 1, kLast, index_ops::BlockKernel<true>},
    {"", "SpaceToDepth", 1, kLast, index_ops::BlockKernel<false>},
    {"", "EyeLike", 9, kLast, index_ops::EyeLikeKernel},
    {"", "Unique", 11, kLast, index_ops::UniqueKernel},
    {"", "CenterCropPad", 18, kLast, index_ops::CenterCropPadKernel},
    {"", "Col2Im", 18, kLast, index_ops::Col2ImKernel},
    // Resize (kernels_resize.cc).
    {"", "Resize", 10, kLast, resize_ops::ResizeKernel},
    {"", "Upsample", 1, kLast, resize_ops::UpsampleKernel},  // deprecated from 10, as 9 was
    // Strings (kernels_string.cc).
    {"", "StringNormalizer", 10, kLast, string_ops::StringNormalizerKernel},
    {"", "StringConcat", 20, kLast, string_ops::StringConcatKernel},
    {"", "StringSplit", 20, kLast, string_ops::StringSplitKernel},
    {"", "RegexFullMatch", 20, kLast, string_ops::RegexFullMatchKernel},
    {"", "TfIdfVectorizer", 9, kLast, string_ops::TfIdfVectorizerKernel},
    // ai.onnx.ml (kernels_ml.cc).
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, kLast, ml_ops::ArrayFeatureExtractorKernel},
    {"ai.onnx.ml", "Binarizer", 1, kLast, ml_ops::BinarizerKernel},
    {"ai.onnx.ml", "LabelEncoder", 1, kLast, ml_ops::LabelEncoderKernel},
    {"ai.onnx.ml", "TreeEnsemble", 5, kLast, ml_ops::TreeEnsembleKernel},
    // Losses (kernels_loss.cc).
    {"", "NegativeLogLikelihoodLoss", 12, kLast, loss_ops::NegativeLogLikelihoodLossKernel},
    {"", "SoftmaxCrossEntropyLoss", 12, kLast, loss_ops::SoftmaxCrossEntropyLossKernel},
    // ai.onnx.preview.training optimizers (kernels_training.cc).
    {"ai.onnx.preview.training", "Adagrad", 1, kLast, training_ops::AdagradKernel},
    {"ai.onnx.preview.training", "Adam", 1, kLast, training_ops::AdamKernel},
    {"ai.onnx.preview.training", "Momentum", 1, kLast, training_ops::MomentumKernel},
    // Detection (kernels_detection.cc).
    {"", "NonMaxSuppression", 10, kLast, detection_ops::NonMaxSuppressionKernel},
    // Signal processing (kernels_signal.cc).
    {"", "DFT", 17, kLast, signal_ops::DftKernel},
    {"", "STFT", 17, kLast, signal_ops::StftKernel},
    {"", "MelWeightMatrix", 17, kLast, signal_ops::MelWeightMatrixKernel},
    // Sampling (kernels_sample.cc).
    {"", "GridSample", 16, kLast, sample_ops::GridSampleKernel},
  };
  return kRows;
}

}  // namespace onnxconvert::eval
