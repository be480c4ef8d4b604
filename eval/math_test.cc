// The math kernels (kernels_math.cc), one table-driven case per behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A graph of one unary node `op` (with `attrs`) on float input {values}.
std::string Unary(const std::string& op, const std::string& values, int n,
                  const std::string& attrs = "") {
  return "g () => (float[" + std::to_string(n) + "] y) <float[" + std::to_string(n) +
         "] a = {" + values + "}> { y = " + op + attrs + "(a) }";
}

const Case kCases[] = {
    // Unary functions compute in double and keep NaN.
    {"sin_cos_tan", 13,
     "g () => (float[2] s, float[2] c, float[2] t) <float[2] a = {0, 1.5707964}> "
     "{ s = Sin(a) c = Cos(a) t = Tan(a) }",
     "float[2] {0, 1}; float[2] {1, -4.37114e-08}; float[2] {0, -2.28773e+07}"},
    {"asin_out_of_domain_is_nan", 13, Unary("Asin", "2, 0.5, nan", 3),
     "float[3] {nan, 0.523599, nan}"},
    {"acosh_atanh", 22,
     "g () => (float[2] y, float[2] z) <float[2] a = {1, 2}, float[2] b = {0, 1}> "
     "{ y = Acosh(a) z = Atanh(b) }",
     "float[2] {0, 1.31696}; float[2] {0, inf}"},
    {"sigmoid_saturates_without_overflow", 13, Unary("Sigmoid", "-1000, 0, 1000", 3),
     "float[3] {0, 0.5, 1}"},
    {"softplus_large_input_is_the_input", 13, Unary("Softplus", "-1000, 0, 1000", 3),
     "float[3] {0, 0.693147, 1000}"},
    {"softsign", 13, Unary("Softsign", "-3, 0, 1", 3), "float[3] {-0.75, 0, 0.5}"},
    {"hard_sigmoid_defaults_keep_nan", 13, Unary("HardSigmoid", "-3, 0, 1, 3, nan", 5),
     "float[5] {0, 0.5, 0.7, 1, nan}"},
    {"hard_sigmoid_attributes", 13, Unary("HardSigmoid", "-1, 0, 1", 3, "<alpha = 0.5, beta = 0.6>"),
     "float[3] {0.1, 0.6, 1}"},
    {"hard_swish", 14, Unary("HardSwish", "-4, -1, 0, 1, 4, nan", 6),
     "float[6] {-0, -0.333333, 0, 0.666667, 4, nan}"},
    {"elu_alpha", 13, Unary("Elu", "-1, 0, 2", 3, "<alpha = 2.0>"),
     "float[3] {-1.26424, 0, 2}"},
    {"selu_defaults", 13, Unary("Selu", "-1, 0, 2", 3), "float[3] {-1.11133, 0, 2.1014}"},
    {"selu_1_defaults", 1, Unary("Selu", "-1", 1), "float[1] {-1.11129}"},
    {"leaky_relu_default_alpha", 13, Unary("LeakyRelu", "-10, 5", 2), "float[2] {-0.1, 5}"},
    {"celu", 12, Unary("Celu", "-1, 1", 2, "<alpha = 2.0>"), "float[2] {-0.786939, 1}"},
    {"celu_alpha_zero_refused", 12, Unary("Celu", "-1", 1, "<alpha = 0.0>"),
     "node '' (Celu-12): alpha is 0"},
    {"gelu_exact_and_tanh", 20,
     "g () => (float[2] y, float[2] z) <float[2] a = {-1, 1}> "
     "{ y = Gelu(a) z = Gelu<approximate = \"tanh\">(a) }",
     "float[2] {-0.158655, 0.841345}; float[2] {-0.158808, 0.841192}"},
    {"gelu_unknown_approximation", 20, Unary("Gelu", "1", 1, "<approximate = \"fast\">"),
     "node '' (Gelu-20): approximate is \"fast\""},
    {"mish", 18, Unary("Mish", "-1, 0, 1", 3), "float[3] {-0.303401, 0, 0.865098}"},
    {"thresholded_relu", 10, Unary("ThresholdedRelu", "1, 1.5, 3", 3, "<alpha = 1.5>"),
     "float[3] {0, 0, 3}"},
    {"swish_alpha", 24, Unary("Swish", "-1, 2", 2, "<alpha = 2.0>"),
     "float[2] {-0.119203, 1.96403}"},
    {"erf_9_of_integers_truncates", 9,
     "g () => (int32[3] y) <int32[3] a = {-1, 0, 6}> { y = Erf(a) }", "int32[3] {0, 0, 1}"},
    {"tanh_float16", 13,
     "g () => (float16[2] y) <float[2] a = {0.5, -20}> { h = Cast<to = 10>(a) y = Tanh(h) }",
     "float16[2] {0.462158, -1}"},
    {"float_function_refuses_integers", 13,
     "g () => (int64[1] y) <int64[1] a = {1}> { y = Sin(a) }",
     "node '' (Sin-7): no kernel for elements of int64"},
    // Round halves to even; Sign keeps NaN; IsNaN, IsInf.
    {"round_half_to_even", 11, Unary("Round", "0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6", 7),
     "float[7] {0, 2, 2, -0, -2, 2, -3}"},
    {"sign_float_keeps_nan", 13, Unary("Sign", "-2, 0, 3, nan", 4),
     "float[4] {-1, 0, 1, nan}"},
    {"sign_integers", 13, "g () => (int8[3] y) <int8[3] a = {-128, 0, 127}> { y = Sign(a) }",
     "int8[3] {-1, 0, 1}"},
    {"isnan_isinf", 20,
     "g () => (bool[4] n, bool[4] i, bool[4] p) <float[4] a = {nan, inf, -inf, 1}> "
     "{ n = IsNaN(a) i = IsInf(a) p = IsInf<detect_negative = 0>(a) }",
     "bool[4] {true, false, false, false}; bool[4] {false, true, true, false}; "
     "bool[4] {false, true, false, false}"},
    // Shrink, integers truncated back.
    {"shrink", 9, Unary("Shrink", "-2, -0.5, 0, 0.5, 2", 5, "<lambd = 1.0, bias = 0.5>"),
     "float[5] {-1.5, 0, 0, 0, 1.5}"},
    {"shrink_integers", 9,
     "g () => (int32[3] y) <int32[3] a = {-5, 1, 5}> { y = Shrink<lambd = 1.5, bias = 1.5>(a) }",
     "int32[3] {-3, 0, 3}"},
    // Clip: attributes before 11, inputs after; max wins over min; NaN.
    {"clip_6_attributes", 6, Unary("Clip", "-5, 0, 5, nan", 4, "<min = -1.0, max = 1.0>"),
     "float[4] {-1, 0, 1, nan}"},
    {"clip_6_default_is_float_max", 6,
     "g () => (double[1] y) <double[1] a = {1e300}> { y = Clip(a) }",
     "double[1] {3.40282e+38}"},
    {"clip_1_unbounded_by_default", 1,
     "g () => (double[1] y) <double[1] a = {1e300}> { y = Clip<min = 0.0>(a) }",
     "double[1] {1e+300}"},
    {"clip_11_inputs_one_absent", 11,
     "g () => (float[3] y) <float[3] a = {-5, 0, 5}, float lo = {-1}> { y = Clip(a, lo, ) }",
     "float[3] {-1, 0, 5}"},
    {"clip_min_above_max_gives_max", 13,
     "g () => (float[3] y) <float[3] a = {-5, 0, 5}, float lo = {2}, float hi = {1}> "
     "{ y = Clip(a, lo, hi) }",
     "float[3] {1, 1, 1}"},
    {"clip_integers", 13,
     "g () => (int64[3] y) <int64[3] a = {-5, 0, 5}, int64 lo = {-1}, int64 hi = {3}> "
     "{ y = Clip(a, lo, hi) }",
     "int64[3] {-1, 0, 3}"},
    {"clip_integers_refused_before_12", 11,
     "g () => (int64[1] y) <int64[1] a = {1}> { y = Clip(a) }",
     "node '' (Clip-11): no kernel for elements of int64"},
    {"clip_bound_of_two_elements_refused", 13,
     "g () => (float[1] y) <float[1] a = {1}, float[2] lo = {0, 1}> { y = Clip(a, lo) }",
     "node '' (Clip-13): min is not one element of the input's type"},
    // PRelu broadcasts the slope to X; integers wrap.
    {"prelu_broadcast_slope", 16,
     "g () => (float[2,2] y) <float[2,2] a = {-1, 2, -3, 4}, float[2] s = {0.5, 2}> "
     "{ y = PRelu(a, s) }",
     "float[2,2] {-0.5, 2, -1.5, 4}"},
    {"prelu_slope_must_broadcast_to_x", 16,
     "g () => (float[2] y) <float[2] a = {-1, 2}, float[2,2] s = {1, 2, 3, 4}> "
     "{ y = PRelu(a, s) }",
     "node '' (PRelu-16): slope does not broadcast to X"},
    {"prelu_integers_wrap", 16,
     "g () => (int32[1] y) <int32[1] a = {-2147483648}, int32[1] s = {2}> { y = PRelu(a, s) }",
     "int32[1] {0}"},
    // Pow: mixed types from 12; integer powers wrap; negative integer
    // exponents are refused; legacy broadcast before 7.
    {"pow_float", 13,
     "g () => (float[3] y) <float[3] a = {2, -8, 4}, float[3] b = {3, 0.333333, -0.5}> "
     "{ y = Pow(a, b) }",
     "float[3] {8, nan, 0.5}"},
    {"pow_float_base_integer_exponent", 15,
     "g () => (float[2] y) <float[2] a = {2, 3}, int64[1] b = {2}> { y = Pow(a, b) }",
     "float[2] {4, 9}"},
    {"pow_integers_wrap", 15,
     "g () => (int32[3] y) <int32[3] a = {2, -3, 0}, int64[3] b = {31, 3, 0}> { y = Pow(a, b) }",
     "int32[3] {-2147483648, -27, 1}"},
    {"pow_integer_base_float_exponent_truncates", 15,
     "g () => (int64[2] y) <int64[2] a = {2, 10}, float[2] b = {0.5, 2}> { y = Pow(a, b) }",
     "int64[2] {1, 100}"},
    {"pow_negative_integer_exponent_refused", 15,
     "g () => (int64[1] y) <int64[1] a = {2}, int64[1] b = {-1}> { y = Pow(a, b) }",
     "node '' (Pow-15): an integer to a negative integer power"},
    {"pow_integer_overflowing_float_exponent_refused", 15,
     "g () => (int32[1] y) <int32[1] a = {10}, float[1] b = {20}> { y = Pow(a, b) }",
     "node '' (Pow-15): the value 1e+20 does not fit 32-bit integers"},
    {"pow_7_mixed_types_refused", 7,
     "g () => (float[1] y) <float[1] a = {2}, double[1] b = {2}> { y = Pow(a, b) }",
     "node '' (Pow-7): the inputs' types differ, which this version does not allow"},
    {"pow_1_legacy_axis", 1,
     "g () => (float[2,2] y) <float[2,2] a = {1, 2, 3, 4}, float[2] b = {2, 3}> "
     "{ y = Pow<broadcast = 1, axis = 0>(a, b) }",
     "float[2,2] {1, 4, 27, 64}"},
    // Mod: the divisor's sign by default, C's fmod with fmod = 1.
    {"mod_integers_take_divisors_sign", 13,
     "g () => (int32[4] y) <int32[4] a = {-4, 7, 4, -7}, int32[4] b = {3, -3, -3, -3}> "
     "{ y = Mod(a, b) }",
     "int32[4] {2, -2, -2, -1}"},
    {"mod_fmod_integers_take_dividends_sign", 13,
     "g () => (int32[2] y) <int32[2] a = {-4, 7}, int32[2] b = {3, -3}> "
     "{ y = Mod<fmod = 1>(a, b) }",
     "int32[2] {-1, 1}"},
    {"mod_int_min_by_minus_one", 13,
     "g () => (int64[1] y) <int64[1] a = {-9223372036854775808}, int64[1] b = {-1}> "
     "{ y = Mod(a, b) }",
     "int64[1] {0}"},
    {"mod_by_zero_refused", 13,
     "g () => (uint8[1] y) <uint8[1] a = {3}, uint8[1] b = {0}> { y = Mod(a, b) }",
     "node '' (Mod-13): integer modulo by zero"},
    {"mod_float_needs_fmod", 13,
     "g () => (float[1] y) <float[1] a = {3}, float[1] b = {2}> { y = Mod(a, b) }",
     "node '' (Mod-13): fmod must be 1 for floating-point inputs"},
    {"mod_float_fmod", 13,
     "g () => (float[2] y) <float[2] a = {-4.5, 7}, float[2] b = {2, -3}> "
     "{ y = Mod<fmod = 1>(a, b) }",
     "float[2] {-0.5, 1}"},
    // BitShift: shifting by the width or more gives 0.
    {"bitshift_left_and_wide", 11,
     "g () => (uint8[3] y) <uint8[3] a = {255, 1, 1}, uint8[3] b = {1, 7, 8}> "
     "{ y = BitShift<direction = \"LEFT\">(a, b) }",
     "uint8[3] {254, 128, 0}"},
    {"bitshift_right_uint64", 11,
     "g () => (uint64[2] y) <uint64[2] a = {18446744073709551615, 8}, uint64[2] b = {63, 64}> "
     "{ y = BitShift<direction = \"RIGHT\">(a, b) }",
     "uint64[2] {1, 0}"},
    {"bitshift_needs_direction", 11,
     "g () => (uint8[1] y) <uint8[1] a = {1}> { y = BitShift(a, a) }",
     "node '' (BitShift-11): direction is not LEFT or RIGHT"},
    {"bitshift_refuses_signed", 11,
     "g () => (int8[1] y) <int8[1] a = {1}> { y = BitShift<direction = \"LEFT\">(a, a) }",
     "node '' (BitShift-11): no kernel for elements of int8"},
    {"bitwise_ops_signed", 18,
     "g () => (int8[2] a, int8[2] o, int8[2] x, int8[2] n) <int8[2] p = {-1, 12}, "
     "int8[2] q = {5, 10}> { a = BitwiseAnd(p, q) o = BitwiseOr(p, q) x = BitwiseXor(p, q) "
     "n = BitwiseNot(p) }",
     "int8[2] {5, 8}; int8[2] {-1, 14}; int8[2] {-6, 6}; int8[2] {0, -13}"},
    {"bitwise_refuses_float", 18,
     "g () => (float[1] y) <float[1] a = {1}> { y = BitwiseNot(a) }",
     "node '' (BitwiseNot-18): no kernel for elements of float"},
    // Softmax family: along the axis from 13, over the 2D coercion before.
    {"softmax_13_axis", 13,
     "g () => (float[2,2] y) <float[2,2] a = {0, 0, 1, 3}> { y = Softmax<axis = 0>(a) }",
     "float[2,2] {0.268941, 0.0474259, 0.731059, 0.952574}"},
    {"softmax_13_large_values", 13,
     "g () => (float[2] y) <float[2] a = {1000, 1000}> { y = Softmax(a) }",
     "float[2] {0.5, 0.5}"},
    {"softmax_11_coerces_to_2d", 11,
     "g () => (float[1,2,2] y) <float[1,2,2] a = {0, 0, 0, 0}> { y = Softmax(a) }",
     "float[1,2,2] {0.25, 0.25, 0.25, 0.25}"},
    {"log_softmax_11_negative_axis", 11,
     "g () => (float[2,2] y) <float[2,2] a = {0, 0, 1, 1}> { y = LogSoftmax<axis = -1>(a) }",
     "float[2,2] {-0.693147, -0.693147, -0.693147, -0.693147}"},
    {"hardmax_first_of_ties", 13,
     "g () => (float[2,3] y) <float[2,3] a = {1, 3, 3, -1, -2, -1}> { y = Hardmax(a) }",
     "float[2,3] {0, 1, 0, 1, 0, 0}"},
    {"hardmax_1_coerces", 1,
     "g () => (float[1,2,2] y) <float[1,2,2] a = {1, 2, 5, 3}> { y = Hardmax(a) }",
     "float[1,2,2] {0, 0, 1, 0}"},
    {"softmax_axis_out_of_range", 13,
     "g () => (float[2] y) <float[2] a = {1, 2}> { y = Softmax<axis = 1>(a) }",
     "node '' (Softmax-13): axis 1 is out of range for rank 1"},
    {"softmax_empty", 13,
     "g () => (float[0,2] y) <float[0,2] a = {}> { y = Softmax(a) }", "float[0,2] {}"},
};

INSTANTIATE_TEST_SUITE_P(Math, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
