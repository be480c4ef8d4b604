// The neural-network kernel families (linear algebra, convolution,
// pooling, normalization, recurrent, quantization, attention, dropout), one
// table-driven case per behaviour (see test_cases.h); the outputs compared
// as text ("float[2] {1, 2}") or the error's text.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"
#include "eval/test_cases.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"

namespace onnxconvert::eval {
namespace {

const Case kCases[] = {
    // Linear algebra.
    {"matmul_batched_broadcast", 13,
     "g () => (float[2,2,2] y) <float[2,2,2] a = {1,2,3,4,5,6,7,8}, float[2,2] b = {1,1,0,1}> "
     "{ y = MatMul(a, b) }",
     "float[2,2,2] {1, 3, 3, 7, 5, 11, 7, 15}"},
    {"matmul_vectors_drop_their_axes", 13,
     "g () => (float y) <float[3] a = {1,2,3}, float[3] b = {4,5,6}> { y = MatMul(a, b) }",
     "float[] {32}"},
    {"matmul_int32_wraps", 13,
     "g () => (int32[1,1] y) <int32[1,1] a = {2147483647}, int32[1,1] b = {2}> "
     "{ y = MatMul(a, b) }",
     "int32[1,1] {-2}"},
    {"matmul_inner_dims_differ", 13,
     "g () => (float[1,1] y) <float[1,2] a = {1,2}, float[3,1] b = {1,2,3}> "
     "{ y = MatMul(a, b) }",
     "node '' (MatMul-13): the inner dims differ (2 and 3)"},
    {"gemm_trans_alpha_beta_broadcast_c", 13,
     "g () => (float[1,2] y) <float[2,1] a = {1,2}, float[2,2] b = {1,2,3,4}, float[1] c = {1}> "
     "{ y = Gemm<transA = 1, alpha = 2.0, beta = 0.5>(a, b, c) }",
     "float[1,2] {14.5, 20.5}"},
    {"gemm_6_needs_broadcast_for_c", 6,
     "g () => (float[1,2] y) <float[1,1] a = {1}, float[1,2] b = {1,2}, float[2] c = {1,1}> "
     "{ y = Gemm(a, b, c) }",
     "node '' (Gemm-6): C's shape differs from the output's and broadcast is 0"},
    {"matmulinteger_zero_points", 10,
     "g () => (int32[1,1] y) <uint8[1,2] a = {3,4}, uint8[2,1] b = {5,6}, uint8 az = {1}, "
     "uint8 bz = {2}> { y = MatMulInteger(a, b, az, bz) }",
     "int32[1,1] {18}"},
    {"qlinearmatmul_requantizes", 21,
     "g () => (uint8[1,1] y) <uint8[1,2] a = {2,4}, float as = {0.5}, uint8 az = {0}, "
     "uint8[2,1] b = {2,2}, float bs = {1}, uint8 bz = {0}, float ys = {1}, uint8 yz = {1}> "
     "{ y = QLinearMatMul(a, as, az, b, bs, bz, ys, yz) }",
     "uint8[1,1] {7}"},
    {"einsum_implicit_contraction", 12,
     "g () => (float[2,2] y) <float[2,2] a = {1,2,3,4}, float[2,2] b = {1,1,0,1}> "
     "{ y = Einsum<equation = \"ij,jk\">(a, b) }",
     "float[2,2] {1, 3, 3, 7}"},
    {"einsum_diagonal", 12,
     "g () => (float[2] y) <float[2,2] a = {1,2,3,4}> { y = Einsum<equation = \"ii->i\">(a) }",
     "float[2] {1, 4}"},
    {"einsum_ellipsis_batch", 12,
     "g () => (float[2] y) <float[2,2] a = {1,2,3,4}, float[2,2] b = {1,1,1,1}> "
     "{ y = Einsum<equation = \"...j,...j->...\">(a, b) }",
     "float[2] {3, 7}"},
    {"det", 11,
     "g () => (float y) <float[2,2] a = {1,2,3,4}> { y = Det(a) }", "float[] {-2}"},
    // Convolution.
    {"conv_strides_end_pads", 11,
     "g () => (float[1,1,2,2] y) <float[1,1,3,3] x = {1,2,3,4,5,6,7,8,9}, "
     "float[1,1,2,2] w = {1,1,1,1}> { y = Conv<strides = [2, 2], pads = [0, 0, 1, 1]>(x, w) }",
     "float[1,1,2,2] {12, 9, 15, 9}"},
    // y = the exact sum 2^24 + 1 + 1 rounded once (2^24 + 2, a float), not
    // a float running sum that drops each 1 (shown less 2^24: 2, not 0).
    {"conv_sum_rounded_once", 11,
     "g () => (float[1,1,1,2] d) <float[1,3,1,2] x = {16777216, 1, 1, 1, 1, 16777216}, "
     "float[1,3,1,1] w = {1, 1, 1}, float big = {16777216}> "
     "{ y = Conv(x, w) d = Sub(y, big) }",
     "float[1,1,1,2] {2, 2}"},
    {"conv_groups_same_upper_bias", 11,
     "g () => (float[1,2,2,2] y) <float[1,2,2,2] x = {1,2,3,4,10,20,30,40}, "
     "float[2,1,2,2] w = {1,1,1,1,1,1,1,1}, float[2] b = {1,2}> "
     "{ y = Conv<group = 2, auto_pad = \"SAME_UPPER\">(x, w, b) }",
     "float[1,2,2,2] {11, 7, 8, 5, 102, 62, 72, 42}"},
    {"conv_group_mismatch", 11,
     "g () => (float[1,1,1] y) <float[1,2,1] x = {1,2}, float[1,2,1] w = {1,1}> "
     "{ y = Conv<group = 2>(x, w) }",
     "node '' (Conv-11): group 2 does not divide the 2 input channels and 1 output channels as "
     "W's shape says"},
    {"conv_transpose_output_padding", 11,
     "g () => (float[1,1,5] y) <float[1,1,2] x = {1,2}, float[1,1,2] w = {1,1}> "
     "{ y = ConvTranspose<strides = [2], output_padding = [1]>(x, w) }",
     "float[1,1,5] {1, 1, 2, 2, 0}"},
    {"conv_transpose_pads_crop", 11,
     "g () => (float[1,1,2] y) <float[1,1,2] x = {1,2}, float[1,1,2] w = {1,1}> "
     "{ y = ConvTranspose<pads = [1, 0]>(x, w) }",
     "float[1,1,2] {3, 2}"},
    {"deformconv_shifted_taps", 22,
     "g () => (float[1,1,2,2] y) <float[1,1,2,2] x = {1,2,3,4}, float[1,1,1,1] w = {2}, "
     "float[1,2,2,2] o = {0,0,0,0,0.5,0.5,0.5,0.5}> { y = DeformConv(x, w, o) }",
     "float[1,1,2,2] {3, 2, 7, 4}"},
    {"convinteger_zero_point", 10,
     "g () => (int32[1,1,2,2] y) <uint8[1,1,2,2] x = {2,3,4,5}, uint8[1,1,1,1] w = {2}, "
     "uint8 xz = {1}> { y = ConvInteger(x, w, xz) }",
     "int32[1,1,2,2] {2, 4, 6, 8}"},
    // Pooling.
    {"maxpool_indices_row_major", 12,
     "g () => (float[1,1,1,1] y, int64[1,1,1,1] i) <float[1,1,2,2] x = {1,4,3,2}> "
     "{ y, i = MaxPool<kernel_shape = [2, 2]>(x) }",
     "float[1,1,1,1] {4}; int64[1,1,1,1] {1}"},
    {"maxpool_indices_column_major", 12,
     "g () => (float[1,1,1,1] y, int64[1,1,1,1] i) <float[1,1,2,2] x = {1,4,3,2}> "
     "{ y, i = MaxPool<kernel_shape = [2, 2], storage_order = 1>(x) }",
     "float[1,1,1,1] {4}; int64[1,1,1,1] {2}"},
    {"maxpool_ceil_mode", 12,
     "g () => (float[1,1,1,2] y) <float[1,1,1,3] x = {1,2,3}> "
     "{ y = MaxPool<kernel_shape = [1, 2], strides = [1, 2], ceil_mode = 1>(x) }",
     "float[1,1,1,2] {2, 3}"},
    {"maxpool_int8", 12,
     "g () => (int8[1,1,1,1] y) <int8[1,1,1,2] x = {-5,-7}> "
     "{ y = MaxPool<kernel_shape = [1, 2]>(x) }",
     "int8[1,1,1,1] {-5}"},
    {"averagepool_count_include_pad", 11,
     "g () => (float[1,1,1,2] y) <float[1,1,1,2] x = {2,4}> "
     "{ y = AveragePool<kernel_shape = [1, 2], strides = [1, 2], pads = [0, 1, 0, 1], "
     "count_include_pad = 1>(x) }",
     "float[1,1,1,2] {1, 2}"},
    {"averagepool_excludes_pad", 11,
     "g () => (float[1,1,1,2] y) <float[1,1,1,2] x = {2,4}> "
     "{ y = AveragePool<kernel_shape = [1, 2], strides = [1, 2], pads = [0, 1, 0, 1]>(x) }",
     "float[1,1,1,2] {2, 4}"},
    {"global_average_and_lp", 11,
     "g () => (float[1,1,1,1] a, float[1,1,1,1] l) <float[1,1,1,2] x = {3,4}> "
     "{ a = GlobalAveragePool(x) l = GlobalLpPool(x) }",
     "float[1,1,1,1] {3.5}; float[1,1,1,1] {5}"},
    {"maxunpool", 11,
     "g () => (float[1,1,2,2] y) <float[1,1,1,1] x = {5}, int64[1,1,1,1] i = {3}> "
     "{ y = MaxUnpool<kernel_shape = [2, 2], strides = [2, 2]>(x, i) }",
     "float[1,1,2,2] {0, 0, 0, 5}"},
    {"roialign_bilinear_average", 16,
     "g () => (float[1,1,1,1] y) <float[1,1,2,2] x = {1,2,3,4}, float[1,4] r = {0,0,1,1}, "
     "int64[1] i = {0}> { y = RoiAlign<sampling_ratio = 1, "
     "coordinate_transformation_mode = \"output_half_pixel\">(x, r, i) }",
     "float[1,1,1,1] {2.5}"},
    // Normalization.
    {"batchnorm_inference", 15,
     "g () => (float[1,2,1,1] y) <float[1,2,1,1] x = {1,2}, float[2] s = {1,2}, "
     "float[2] b = {0,1}, float[2] m = {0,1}, float[2] v = {1,4}> "
     "{ y = BatchNormalization<epsilon = 0.0>(x, s, b, m, v) }",
     "float[1,2,1,1] {1, 2}"},
    {"batchnorm_training_running_stats", 15,
     "g () => (float[2,1,1,1] y, float[1] rm, float[1] rv) <float[2,1,1,1] x = {1,3}, "
     "float[1] s = {1}, float[1] b = {0}, float[1] m = {0}, float[1] v = {1}> "
     "{ y, rm, rv = BatchNormalization<epsilon = 0.0, momentum = 0.5, training_mode = 1>"
     "(x, s, b, m, v) }",
     "float[2,1,1,1] {-1, 1}; float[1] {1}; float[1] {1}"},
    {"instancenorm", 11,
     "g () => (float[1,1,2] y) <float[1,1,2] x = {1,3}, float[1] s = {2}, float[1] b = {1}> "
     "{ y = InstanceNormalization<epsilon = 0.0>(x, s, b) }",
     "float[1,1,2] {-1, 3}"},
    {"layernorm_mean_and_inv_std", 17,
     "g () => (float[1,2] y, float[1,1] m, float[1,1] r) <float[1,2] x = {1,3}, "
     "float[2] s = {1,1}, float[2] b = {0,0}> "
     "{ y, m, r = LayerNormalization<epsilon = 0.0>(x, s, b) }",
     "float[1,2] {-1, 1}; float[1,1] {2}; float[1,1] {1}"},
    {"groupnorm_18_per_group", 18,
     "g () => (float[1,2,2] y) <float[1,2,2] x = {1,1,3,3}, float[1] s = {2}, float[1] b = {0}> "
     "{ y = GroupNormalization<num_groups = 1, epsilon = 0.0>(x, s, b) }",
     "float[1,2,2] {-2, -2, 2, 2}"},
    {"groupnorm_21_per_channel", 21,
     "g () => (float[1,2,2] y) <float[1,2,2] x = {1,1,3,3}, float[2] s = {1,2}, "
     "float[2] b = {0,10}> { y = GroupNormalization<num_groups = 1, epsilon = 0.0>(x, s, b) }",
     "float[1,2,2] {-1, -1, 12, 12}"},
    {"lrn", 13,
     "g () => (float[1,2,1,1] y) <float[1,2,1,1] x = {1,2}> "
     "{ y = LRN<size = 2, alpha = 2.0, beta = 1.0, bias = 1.0>(x) }",
     "float[1,2,1,1] {0.166667, 0.4}"},
    {"mvn", 13,
     "g () => (float[1,1,1,2] y) <float[1,1,1,2] x = {1,3}> "
     "{ y = MeanVarianceNormalization(x) }",
     "float[1,1,1,2] {-1, 1}"},
    {"rmsnorm", 23,
     "g () => (float[1,2] y) <float[1,2] x = {3,4}, float[2] s = {1,2}> "
     "{ y = RMSNormalization<epsilon = 0.0>(x, s) }",
     "float[1,2] {0.848528, 2.26274}"},
    {"lpnorm_l1_zero_row", 22,
     "g () => (float[2,2] y) <float[2,2] x = {1,-3,0,0}> { y = LpNormalization<p = 1>(x) }",
     "float[2,2] {0.25, -0.75, 0, 0}"},
    // Recurrent layers.
    {"rnn_reverse_sequence_lens", 22,
     "g () => (float[2,1,2,1] y, float[1,2,1] h) <float[2,2,1] x = {1,10,2,20}, "
     "float[1,1,1] w = {1}, float[1,1,1] r = {0}, int32[2] l = {2,1}> "
     "{ y, h = RNN<hidden_size = 1, direction = \"reverse\", activations = [\"Relu\"]>"
     "(x, w, r, , l) }",
     "float[2,1,2,1] {1, 10, 2, 0}; float[1,2,1] {1, 10}"},
    {"gru_linear_before_reset", 22,
     "g () => (float[1,1,1] h) <float[1,1,1] x = {1}, float[1,3,1] w = {0,0,0}, "
     "float[1,3,1] r = {0,0,0}, float[1,1,1] h0 = {2}> "
     "{ y, h = GRU<hidden_size = 1, linear_before_reset = 1>(x, w, r, , , h0) }",
     "float[1,1,1] {1}"},
    {"lstm_initial_cell", 22,
     "g () => (float[1,1,1] h, float[1,1,1] c) <float[1,1,1] x = {1}, float[1,4,1] w = {0,0,0,0}, "
     "float[1,4,1] r = {0,0,0,0}, float[1,1,1] c0 = {2}> "
     "{ y, h, c = LSTM<hidden_size = 1>(x, w, r, , , , c0) }",
     "float[1,1,1] {0.380797}; float[1,1,1] {1}"},
    {"lstm_batch_major_layout", 22,
     "g () => (float[2,1,1,1] y) <float[2,1,1] x = {1,1}, float[1,4,1] w = {0,0,0,0}, "
     "float[1,4,1] r = {0,0,0,0}, float[2,1,1] c0 = {2,4}> "
     "{ y, h, c = LSTM<hidden_size = 1, layout = 1>(x, w, r, , , , c0) }",
     "float[2,1,1,1] {0.380797, 0.482014}"},
    // Quantization.
    {"quantize_per_axis_saturates", 21,
     "g () => (int8[2,2] y) <float[2,2] x = {1,-300,2.5,3.5}, float[2] s = {1,0.5}, "
     "int8[2] z = {0,0}> { y = QuantizeLinear<axis = 1>(x, s, z) }",
     "int8[2,2] {1, -128, 2, 7}"},
    {"quantize_float8_saturate", 21,
     "g () => (float8e4m3fn[2] y) <float[2] x = {1000, 0.3}, float s = {1}> "
     "{ y = QuantizeLinear<output_dtype = 17>(x, s) }",
     "float8e4m3fn[2] {448, 0.3125}"},
    {"quantize_float8_no_saturate", 21,
     "g () => (float8e4m3fn[1] y) <float[1] x = {1000}, float s = {1}> "
     "{ y = QuantizeLinear<output_dtype = 17, saturate = 0>(x, s) }",
     "float8e4m3fn[1] {nan}"},
    {"quantize_int4_blocked", 21,
     "g () => (int4[1,4] y) <float[1,4] x = {1,2,3,4}, float[1,2] s = {1,2}> "
     "{ y = QuantizeLinear<axis = 1, block_size = 2, output_dtype = 22>(x, s) }",
     "int4[1,4] {1, 2, 2, 2}"},
    {"dequantize_zero_point", 13,
     "g () => (float[2] y) <uint8[2] x = {0,255}, float s = {0.5}, uint8 z = {128}> "
     "{ y = DequantizeLinear(x, s, z) }",
     "float[2] {-64, 63.5}"},
    {"dequantize_int4_round_trip", 21,
     "g () => (float[2] y) <float[2] x = {-8, 7}, float s = {1}> "
     "{ q = QuantizeLinear<output_dtype = 22>(x, s) y = DequantizeLinear(q, s) }",
     "float[2] {-8, 7}"},
    {"dynamic_quantize", 11,
     "g () => (uint8[2] y, float s, uint8 z) <float[2] x = {-1, 1}> "
     "{ y, s, z = DynamicQuantizeLinear(x) }",
     // 1 / (2 / 255) rounds to 127.49999 in float: zero point 127.
     "uint8[2] {0, 254}; float[] {0.00784314}; uint8[] {127}"},
    {"cast_to_float8_saturates", 21,
     "g () => (float8e5m2[2] y) <float[2] x = {100000, 0.1}> { y = Cast<to = 19>(x) }",
     "float8e5m2[2] {57344, 0.09375}"},
    {"cast_to_int4_wraps", 21,
     "g () => (int4[2] y) <float[2] x = {9, -9}> { y = Cast<to = 22>(x) }",
     "int4[2] {-7, 7}"},
    // Attention and dropout.
    {"attention_causal", 23,
     "g () => (float[1,1,2,1] y) <float[1,1,2,1] q = {1,1}, float[1,1,2,1] k = {1,1}, "
     "float[1,1,2,1] v = {1,3}> { y = Attention<is_causal = 1>(q, k, v) }",
     "float[1,1,2,1] {1, 2}"},
    {"attention_bool_mask_3d_heads", 23,
     "g () => (float[1,1,2] y) <float[1,1,2] q = {1,1}, float[1,2,2] k = {1,1,1,1}, "
     "float[1,2,2] v = {1,2,3,4}, bool[1,2] m = {0,1}> "
     "{ y = Attention<q_num_heads = 2, kv_num_heads = 2>(q, k, v, m) }",
     "float[1,1,2] {3, 4}"},
    // FlexAttention (ai.onnx.preview 1) without subgraphs; its score_mod
    // and prob_mod run with the graph (graph_test.cc). Scores q.k * scale,
    // softmax over the keys, then the probabilities times V.
    // Scores 0 and 4 * 1/sqrt(4): y = e^2 / (1 + e^2).
    {"flexattention_default_scale", 26,
     "g () => (float[1,1,1,1] y) <float[1,1,1,4] q = {1,1,1,1}, "
     "float[1,1,2,4] k = {0,0,0,0,1,1,1,1}, float[1,1,2,1] v = {0,1}> "
     "{ y = ai.onnx.preview.FlexAttention(q, k, v) }",
     "float[1,1,1,1] {0.880797}", 0, 0, 1},
    // A scale of 0 is used, not the default: equal scores, the mean of V.
    {"flexattention_scale_zero_is_kept", 26,
     "g () => (float[1,1,1,1] y) <float[1,1,1,4] q = {1,1,1,1}, "
     "float[1,1,2,4] k = {0,0,0,0,1,1,1,1}, float[1,1,2,1] v = {0,1}> "
     "{ y = ai.onnx.preview.FlexAttention<scale = 0.0>(q, k, v) }",
     "float[1,1,1,1] {0.5}", 0, 0, 1},
    // Two query heads share the one K/V head; V's head size (2) differs
    // from Q's and K's (1). Head 0: scores {0, 1}; head 1: {0, -1}.
    {"flexattention_grouped_heads_share_kv", 26,
     "g () => (float[1,2,1,2] y) <float[1,2,1,1] q = {1,-1}, float[1,1,2,1] k = {0,1}, "
     "float[1,1,2,2] v = {1,0,0,1}> { y = ai.onnx.preview.FlexAttention(q, k, v) }",
     "float[1,2,1,2] {0.268941, 0.731059, 0.731059, 0.268941}", 0, 0, 1},
    // float16 computes in float (the default softmax precision) and rounds Y.
    {"flexattention_float16", 26,
     "g () => (float16[1,1,1,1] y) <float[1,1,1,1] a = {1}, float[1,1,2,1] b = {0,0}, "
     "float[1,1,2,1] c = {1,2}> { q = Cast<to = 10>(a) k = Cast<to = 10>(b) "
     "v = Cast<to = 10>(c) y = ai.onnx.preview.FlexAttention(q, k, v) }",
     "float16[1,1,1,1] {1.5}", 0, 0, 1},
    {"flexattention_heads_do_not_divide", 26,
     "g () => (float[1,3,1,1] y) <float[1,3,1,1] q = {1,1,1}, float[1,2,1,1] k = {1,1}, "
     "float[1,2,1,1] v = {1,1}> { y = ai.onnx.preview.FlexAttention(q, k, v) }",
     "node '' (FlexAttention-1): Q, K and V do not agree in batch, heads, sequence or head "
     "size", 0, 0, 1},
    {"flexattention_needs_4d", 26,
     "g () => (float[1,1,1] y) <float[1,1,1] q = {1}, float[1,1,1] k = {1}, "
     "float[1,1,1] v = {1}> { y = ai.onnx.preview.FlexAttention(q, k, v) }",
     "node '' (FlexAttention-1): Q, K and V must be 4-D", 0, 0, 1},
    {"flexattention_softmax_precision_checked", 26,
     "g () => (float[1,1,1,1] y) <float[1,1,1,1] q = {1}, float[1,1,1,1] k = {1}, "
     "float[1,1,1,1] v = {1}> "
     "{ y = ai.onnx.preview.FlexAttention<softmax_precision = 7>(q, k, v) }",
     "node '' (FlexAttention-1): softmax_precision 7 is not float16, bfloat16, float or double",
     0, 0, 1},
    {"dropout_inference_identity", 13,
     "g () => (float[2] y, bool[2] m) <float[2] x = {1,2}> { y, m = Dropout(x) }",
     "float[2] {1, 2}; bool[2] {true, true}"},
};

INSTANTIATE_TEST_SUITE_P(NnKernels, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

// The random ops draw values in their range, with the shape asked, and
// are reported as not deterministic.
TEST(NnKernelsRandom, UniformInRangeAndNotDeterministic) {
  Case c{"", 22,
         "g () => (float[3,2] y) <> { y = RandomUniform<shape = [3, 2], low = 2.0, high = 3.0, "
         "seed = 1.0>() }",
         ""};
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(absl::StrCat(
      "<ir_version: 10, opset_import: [\"\" : 22]>\n", c.graph));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::vector<Tensor>> out = EvaluateNode(model->graph().node(0), 22, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2}));
  for (float v : (*out)[0].data<float>()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LE(v, 3.0f);
  }
  EXPECT_FALSE(IsDeterministic("", "RandomUniform"));
  EXPECT_FALSE(IsDeterministic("", "Dropout"));
}

// Which ops verification may compare: the preview domains compute as
// ai.onnx does; a vendor's op is unknown.
TEST(DeterminismTest, ByDomainAndOp) {
  struct Row {
    const char* domain;
    const char* op;
    bool deterministic;
  };
  constexpr Row kRows[] = {
      {"", "Relu", true},
      {"ai.onnx", "Gemm", true},
      {"ai.onnx.ml", "TreeEnsemble", true},
      {"ai.onnx.preview", "FlexAttention", true},
      {"ai.onnx.preview.training", "Gradient", true},
      {"", "RandomNormalLike", false},
      {"", "Bernoulli", false},
      {"", "Multinomial", false},
      {"com.vendor", "Fancy", false},
  };
  for (const Row& row : kRows) {
    EXPECT_EQ(IsDeterministic(row.domain, row.op), row.deterministic)
        << row.domain << "." << row.op;
  }
}

// Narrow types round-trip through TensorProto packed (two int4 per byte,
// low nibble first).
TEST(NnKernelsNarrow, Int4PacksTwoPerByte) {
  Tensor t(onnx::TensorProto::INT4, {3});
  t.data<int8_t>()[0] = -1;
  t.data<int8_t>()[1] = 7;
  t.data<int8_t>()[2] = -8;
  onnx::TensorProto proto = ToProto(t, "t");
  EXPECT_EQ(proto.raw_data(), std::string("\x7f\x08", 2));
  absl::StatusOr<Tensor> back = FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DebugString(*back), "int4[3] {-1, 7, -8}");
}

}  // namespace
}  // namespace onnxconvert::eval
