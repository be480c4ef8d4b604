// The evaluator's base kernels, one table-driven case per behaviour (see
// test_cases.h); the outputs compared as text or the error's text.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

const Case kCases[] = {
    // Broadcasting arithmetic, numpy rules from 7; legacy axis before.
    {"add_broadcast", 13,
     "g () => (float[2,3] y) <float[2,3] a = {1,2,3,4,5,6}, float[3] b = {10,20,30}> "
     "{ y = Add(a, b) }",
     "float[2,3] {11, 22, 33, 14, 25, 36}"},
    {"add_legacy_axis", 6,
     "g () => (float[2,3] y) <float[2,3] a = {1,2,3,4,5,6}, float[2] b = {10,20}> "
     "{ y = Add<broadcast = 1, axis = 0>(a, b) }",
     "float[2,3] {11, 12, 13, 24, 25, 26}"},
    {"add_legacy_no_broadcast", 6,
     "g () => (float[2,3] y) <float[2,3] a = {1,2,3,4,5,6}, float[3] b = {10,20,30}> "
     "{ y = Add(a, b) }",
     "node '' (Add-6): the inputs' shapes differ and broadcast is 0"},
    {"int_division_truncates", 13,
     "g () => (int64[4] y) <int64[4] a = {7,-7,7,-7}, int64[4] b = {2,2,-2,-2}> "
     "{ y = Div(a, b) }",
     "int64[4] {3, -3, -3, 3}"},
    {"int_division_by_zero", 13,
     "g () => (int32[1] y) <int32[1] a = {1}, int32[1] b = {0}> { y = Div(a, b) }",
     "node '' (Div-13): integer division by zero"},
    {"int_add_wraps", 13,
     "g () => (int64[1] y) <int64[1] a = {9223372036854775807}, int64[1] b = {1}> "
     "{ y = Add(a, b) }",
     "int64[1] {-9223372036854775808}"},
    {"not_broadcastable", 13,
     "g () => (float[2] y) <float[2] a = {1,2}, float[3] b = {1,2,3}> { y = Mul(a, b) }",
     "shapes [2], [3] do not broadcast"},
    {"equal_nan_unequal", 13,
     "g () => (bool[2] y) <float[2] a = {1, 2}> { n = Div(a, a) z = Sub(a, a) "
     "q = Div(z, z) y = Equal(q, q) }",
     "bool[2] {false, false}"},
    {"max_nan_propagates_and_broadcasts", 13,
     "g () => (float[3] y) <float[3] a = {1,5,3}, float[1] b = {2}> { y = Max(a, b) }",
     "float[3] {2, 5, 3}"},
    {"max_6_needs_equal_shapes", 6,
     "g () => (float[3] y) <float[3] a = {1,5,3}, float[1] b = {2}> { y = Max(a, b) }",
     "node '' (Max-6): the inputs' shapes differ, which this version does not broadcast"},
    {"where", 13,
     "g () => (int64[3] y) <bool[3] c = {1,0,1}, int64[3] a = {1,2,3}, int64[1] b = {9}> "
     "{ y = Where(c, a, b) }",
     "int64[3] {1, 9, 3}"},
    {"float16_computes_in_float", 13,
     "g () => (float16[2] y) <float[2] a = {1.5, 2048}, float[2] b = {0.25, 1}> "
     "{ ha = Cast<to = 10>(a) hb = Cast<to = 10>(b) y = Add(ha, hb) }",
     "float16[2] {1.75, 2048}"},
    // Shapes and data movement.
    {"reshape_zero_and_minus_one", 13,
     "g () => (int64[3,2] y) <int64[6] a = {1,2,3,4,5,6}, int64[2] s = {3, -1}> "
     "{ y = Reshape(a, s) }",
     "int64[3,2] {1, 2, 3, 4, 5, 6}"},
    {"reshape_wrong_count", 13,
     "g () => (int64[4] y) <int64[6] a = {1,2,3,4,5,6}, int64[1] s = {4}> { y = Reshape(a, s) }",
     "node '' (Reshape-13): the shape [4] holds 4 elements, not 6"},
    {"transpose", 13,
     "g () => (int64[3,2] y) <int64[2,3] a = {1,2,3,4,5,6}> { y = Transpose<perm = [1, 0]>(a) }",
     "int64[3,2] {1, 4, 2, 5, 3, 6}"},
    {"slice_negative_step_to_start", 13,
     "g () => (int64[4] y) <int64[4] a = {1,2,3,4}, int64[1] s = {-1}, "
     "int64[1] e = {-9223372036854775807}, int64[1] x = {0}, int64[1] t = {-1}> "
     "{ y = Slice(a, s, e, x, t) }",
     "int64[4] {4, 3, 2, 1}"},
    {"slice_step_two_clamped", 13,
     "g () => (int64[2] y) <int64[5] a = {1,2,3,4,5}, int64[1] s = {1}, int64[1] e = {100}, "
     "int64[1] x = {0}, int64[1] t = {2}> { y = Slice(a, s, e, x, t) }",
     "int64[2] {2, 4}"},
    {"slice_1_attributes", 9,
     "g () => (int64[1,2] y) <int64[2,3] a = {1,2,3,4,5,6}> "
     "{ y = Slice<starts = [1, 1], ends = [2, 3]>(a) }",
     "int64[1,2] {5, 6}"},
    {"concat_squeeze_unsqueeze", 13,
     "g () => (int64[2,2] y) <int64[2] a = {1,2}, int64[2] b = {3,4}, int64[1] z = {0}> "
     "{ ua = Unsqueeze(a, z) ub = Unsqueeze(b, z) c = Concat<axis = 0>(ua, ub) "
     "y = Identity(c) }",
     "int64[2,2] {1, 2, 3, 4}"},
    {"squeeze_11_attribute", 11,
     "g () => (int64[2] y) <int64[1,2] a = {1,2}> { y = Squeeze<axes = [0]>(a) }",
     "int64[2] {1, 2}"},
    {"gather_negative_index", 13,
     "g () => (int64[2,2] y) <int64[2,3] a = {1,2,3,4,5,6}, int64[2] i = {-1, 0}> "
     "{ y = Gather<axis = 1>(a, i) }",
     "int64[2,2] {3, 1, 6, 4}"},
    {"gather_out_of_range", 13,
     "g () => (int64[1] y) <int64[3] a = {1,2,3}, int64[1] i = {3}> { y = Gather(a, i) }",
     "node '' (Gather-13): index 3 is out of range"},
    {"split_sizes_input", 13,
     "g () => (int64[1,2] a, int64[2,2] b) <int64[3,2] x = {1,2,3,4,5,6}, int64[2] s = {1, 2}> "
     "{ a, b = Split(x, s) }",
     "int64[1,2] {1, 2}; int64[2,2] {3, 4, 5, 6}"},
    {"split_num_outputs_uneven", 18,
     "g () => (int64[2] a, int64[2] b, int64[1] c) <int64[5] x = {1,2,3,4,5}> "
     "{ a, b, c = Split<num_outputs = 3>(x) }",
     "int64[2] {1, 2}; int64[2] {3, 4}; int64[1] {5}"},
    {"split_2_equal_on_axis_1", 2,
     "g () => (int64[2,1] a, int64[2,1] b) <int64[2,2] x = {1,2,3,4}> "
     "{ a, b = Split<axis = 1>(x) }",
     "int64[2,1] {1, 3}; int64[2,1] {2, 4}"},
    {"expand_and_tile", 13,
     "g () => (int64[2,2] e, int64[4] t) <int64[2] a = {1,2}, int64[2] s = {2, 1}, "
     "int64[1] r = {2}> { e = Expand(a, s) t = Tile(a, r) }",
     "int64[2,2] {1, 2, 1, 2}; int64[4] {1, 2, 1, 2}"},
    {"constant_of_shape", 13,
     "g () => (int64[2,2] y) <int64[2] s = {2, 2}> "
     "{ y = ConstantOfShape<value = int64[1] {7}>(s) }",
     "int64[2,2] {7, 7, 7, 7}"},
    {"constant_of_shape_default_zero", 13,
     "g () => (float[3] y) <int64[1] s = {3}> { y = ConstantOfShape(s) }",
     "float[3] {0, 0, 0}"},
    {"shape_start_end_and_size", 15,
     "g () => (int64[1] s, int64 n) <float[2,3,4] a = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,"
     "17,18,19,20,21,22,23,24}> { s = Shape<start = 1, end = -1>(a) n = Size(a) }",
     "int64[1] {3}; int64[] {24}"},
    {"range", 13,
     "g () => (int64[3] y) <int64 a = {1}, int64 b = {8}, int64 d = {3}> { y = Range(a, b, d) }",
     "int64[3] {1, 4, 7}"},
    {"range_float16_steps_in_float16", 27,
     "g () => (float16[4] y) <float a = {2048}, float b = {2051}, float d = {1}> "
     "{ ha = Cast<to = 10>(a) hb = Cast<to = 10>(b) hd = Cast<to = 10>(d) y = Range(ha, hb, hd) }",
     "float16[4] {2048, 2048, 2048, 2048}"},
    {"range_int64_near_the_top_does_not_overflow", 13,
     "g () => (int64[1] y) <int64 a = {9223372036854775806}, int64 b = {9223372036854775807}, "
     "int64 d = {5}> { y = Range(a, b, d) }",
     "int64[1] {9223372036854775806}"},
    // Casts.
    {"cast_float_to_int_truncates", 13,
     "g () => (int32[3] y) <float[3] a = {1.9, -1.9, 0}> { y = Cast<to = 6>(a) }",
     "int32[3] {1, -1, 0}"},
    {"cast_out_of_range_refused", 13,
     "g () => (int8[1] y) <float[1] a = {300}> { y = Cast<to = 3>(a) }",
     "node '' (Cast-13): the value 300 is outside the target type's range"},
    {"cast_1_type_name", 1,
     "g () => (int64[2] y) <float[2] a = {2, 3}> { y = Cast<to = \"INT64\">(a) }",
     "int64[2] {2, 3}"},
    {"cast_to_bool", 13,
     "g () => (bool[3] y) <float[3] a = {0, 0.5, -2}> { y = Cast<to = 9>(a) }",
     "bool[3] {false, true, true}"},
    // Errors name the node and op.
    {"no_kernel", 20,
     "g () => (uint8[1,1,3] y) <uint8[1] a = {1}> { y = ImageDecoder(a) }",
     "node '' (ImageDecoder-20): the evaluator has no kernel for this op version"},
};

INSTANTIATE_TEST_SUITE_P(Eval, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
