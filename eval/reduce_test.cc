// The reduction kernels (kernels_reduce.cc), one table-driven case per
// behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A float[2,3] initializer `a` = {1..6}.
constexpr char kA[] = "float[2,3] a = {1, 2, 3, 4, 5, 6}";

const Case kCases[] = {
    // Axes by attribute before 18 (13 for ReduceSum), by input after.
    {"sum_attribute_axes_keepdims", 11,
     std::string("g () => (float[2,1] y) <") + kA + "> { y = ReduceSum<axes = [1]>(a) }",
     "float[2,1] {6, 15}"},
    {"sum_13_axes_input_negative", 13,
     std::string("g () => (float[3] y) <") + kA +
         ", int64[1] x = {-2}> { y = ReduceSum<keepdims = 0>(a, x) }",
     "float[3] {5, 7, 9}"},
    {"sum_13_no_axes_reduces_all", 13,
     std::string("g () => (float[1,1] y) <") + kA + "> { y = ReduceSum(a) }",
     "float[1,1] {21}"},
    {"sum_13_empty_axes_noop", 13,
     std::string("g () => (float[2,3] y) <") + kA +
         ", int64[0] x = {}> { y = ReduceSum<noop_with_empty_axes = 1>(a, x) }",
     "float[2,3] {1, 2, 3, 4, 5, 6}"},
    {"sum_repeated_axis_refused", 13,
     std::string("g () => (float y) <") + kA + ", int64[2] x = {1, -1}> { y = ReduceSum(a, x) }",
     "node '' (ReduceSum-13): axis -1 repeats"},
    {"sum_axis_out_of_range", 11,
     std::string("g () => (float y) <") + kA + "> { y = ReduceSum<axes = [2]>(a) }",
     "node '' (ReduceSum-11): axis 2 is out of range for rank 2"},
    {"sum_integers_wrap", 13,
     "g () => (int32[1] y) <int32[2] a = {2147483647, 1}> { y = ReduceSum(a) }",
     "int32[1] {-2147483648}"},
    {"mean_18_input_axes", 18,
     std::string("g () => (float[2] y) <") + kA +
         ", int64[1] x = {1}> { y = ReduceMean<keepdims = 0>(a, x) }",
     "float[2] {2, 5}"},
    {"mean_11_attribute_axes", 11,
     std::string("g () => (float[1,3] y) <") + kA + "> { y = ReduceMean<axes = [0]>(a) }",
     "float[1,3] {2.5, 3.5, 4.5}"},
    {"mean_integers_truncate", 18,
     "g () => (int32[1] y) <int32[2] a = {-3, 0}> { y = ReduceMean(a) }", "int32[1] {-1}"},
    {"max_min_nan_propagates", 18,
     "g () => (float[1] y, float[1] z) <float[3] a = {1, nan, 3}> "
     "{ y = ReduceMax(a) z = ReduceMin(a) }",
     "float[1] {nan}; float[1] {nan}"},
    {"max_min_bool", 20,
     "g () => (bool[1] y, bool[1] z) <bool[2] a = {1, 0}> { y = ReduceMax(a) z = ReduceMin(a) }",
     "bool[1] {true}; bool[1] {false}"},
    {"sum_refuses_bool", 13, "g () => (bool[1] y) <bool[2] a = {1, 0}> { y = ReduceSum(a) }",
     "node '' (ReduceSum-13): no kernel for elements of bool"},
    {"prod_l1_l2_sumsquare", 18,
     "g () => (float[1] p, float[1] a1, float[1] a2, float[1] s) <float[2] a = {-3, 4}> "
     "{ p = ReduceProd(a) a1 = ReduceL1(a) a2 = ReduceL2(a) s = ReduceSumSquare(a) }",
     "float[1] {-12}; float[1] {7}; float[1] {5}; float[1] {25}"},
    {"l2_integers_truncate", 18, "g () => (int64[1] y) <int64[2] a = {1, 1}> { y = ReduceL2(a) }",
     "int64[1] {1}"},
    {"log_sum_exp_large_values", 18,
     "g () => (float[1] y) <float[2] a = {1000, 1000}> { y = ReduceLogSumExp(a) }",
     "float[1] {1000.69}"},
    {"log_sum_exp_infinities", 18,
     "g () => (float[1] y, float[1] z) <float[2] a = {-inf, -inf}, float[2] b = {inf, 1}> "
     "{ y = ReduceLogSumExp(a) z = ReduceLogSumExp(b) }",
     "float[1] {-inf}; float[1] {inf}"},
    {"log_sum", 18,
     std::string("g () => (float[1,1] y) <") + kA + "> { y = ReduceLogSum(a) }",
     "float[1,1] {3.04452}"},
    // Reductions over nothing give the identity.
    {"empty_set_identities", 18,
     "g () => (float[2,1] s, float[2,1] p, float[2,1] mx, float[2,1] mn, float[2,1] ls, "
     "float[2,1] m) <float[2,0] a = {}, int64[1] x = {1}> { s = ReduceSum(a, x) "
     "p = ReduceProd(a, x) mx = ReduceMax(a, x) mn = ReduceMin(a, x) ls = ReduceLogSum(a, x) "
     "m = ReduceMean(a, x) }",
     "float[2,1] {0, 0}; float[2,1] {1, 1}; float[2,1] {-inf, -inf}; float[2,1] {inf, inf}; "
     "float[2,1] {-inf, -inf}; float[2,1] {nan, nan}"},
    {"empty_set_integer_max_is_lowest", 18,
     "g () => (int32[1] y) <int32[0] a = {}> { y = ReduceMax(a) }", "int32[1] {-2147483648}"},
    {"empty_set_integer_mean_refused", 18,
     "g () => (int32[1] y) <int32[0] a = {}> { y = ReduceMean(a) }",
     "node '' (ReduceMean-18): the mean of no integers"},
    {"reduce_non_reduced_axis_zero", 18,
     "g () => (float[0,1] y) <float[0,3] a = {}, int64[1] x = {1}> { y = ReduceSum(a, x) }",
     "float[0,1] {}"},
    // ArgMax / ArgMin: first index of ties unless select_last_index; NaN wins.
    {"argmax_ties_first_and_last", 13,
     "g () => (int64[1,2] f, int64[1,2] l) <float[3,2] a = {1, 5, 3, 5, 3, 0}> "
     "{ f = ArgMax(a) l = ArgMax<select_last_index = 1>(a) }",
     "int64[1,2] {1, 0}; int64[1,2] {2, 1}"},
    {"argmin_negative_axis_no_keepdims", 13,
     "g () => (int64[3] y) <float[3,2] a = {1, 5, 3, 2, 3, 3}> "
     "{ y = ArgMin<axis = -1, keepdims = 0>(a) }",
     "int64[3] {0, 1, 0}"},
    {"argmax_argmin_nan_wins", 13,
     "g () => (int64[1] y, int64[1] z) <float[3] a = {1, nan, 3}> "
     "{ y = ArgMax(a) z = ArgMin(a) }",
     "int64[1] {1}; int64[1] {1}"},
    {"argmax_empty_axis_refused", 13,
     "g () => (int64[1] y) <float[0] a = {}> { y = ArgMax(a) }",
     "node '' (ArgMax-13): the axis is empty"},
    // TopK: sorted, ties in index order, NaN largest; k by attribute before 10.
    {"topk_largest_ties", 11,
     "g () => (float[3] v, int64[3] i) <float[5] a = {1, 3, 3, nan, 2}, int64[1] k = {3}> "
     "{ v, i = TopK(a, k) }",
     "float[3] {nan, 3, 3}; int64[3] {3, 1, 2}"},
    {"topk_smallest_axis_0", 11,
     "g () => (float[1,2] v, int64[1,2] i) <float[2,2] a = {4, 1, 2, 1}, int64[1] k = {1}> "
     "{ v, i = TopK<axis = 0, largest = 0>(a, k) }",
     "float[1,2] {2, 1}; int64[1,2] {1, 0}"},
    {"topk_1_attribute", 1,
     "g () => (float[1] v, int64[1] i) <float[3] a = {1, 3, 2}> { v, i = TopK<k = 1>(a) }",
     "float[1] {3}; int64[1] {1}"},
    {"topk_integers", 11,
     "g () => (uint64[2] v, int64[2] i) <uint64[3] a = {18446744073709551615, 0, 7}, "
     "int64[1] k = {2}> { v, i = TopK(a, k) }",
     "uint64[2] {18446744073709551615, 7}; int64[2] {0, 2}"},
    {"topk_k_too_large", 11,
     "g () => (float[4] v, int64[4] i) <float[3] a = {1, 3, 2}, int64[1] k = {4}> "
     "{ v, i = TopK(a, k) }",
     "node '' (TopK-11): k = 4 is outside [0, 3]"},
    // CumSum / CumProd: exclusive, reverse, integer wrap.
    {"cumsum_exclusive_reverse", 14,
     "g () => (float[4] a1, float[4] a2, float[4] a3) <float[4] a = {1, 2, 3, 4}, "
     "int32 x = {0}> { a1 = CumSum<exclusive = 1>(a, x) a2 = CumSum<reverse = 1>(a, x) "
     "a3 = CumSum<exclusive = 1, reverse = 1>(a, x) }",
     "float[4] {0, 1, 3, 6}; float[4] {10, 9, 7, 4}; float[4] {9, 7, 4, 0}"},
    {"cumsum_2d_negative_axis", 14,
     std::string("g () => (float[2,3] y) <") + kA + ", int64 x = {-1}> { y = CumSum(a, x) }",
     "float[2,3] {1, 3, 6, 4, 9, 15}"},
    {"cumprod_integers_wrap", 26,
     "g () => (int32[3] y) <int32[3] a = {65536, 65536, 3}, int64 x = {0}> { y = CumProd(a, x) }",
     "int32[3] {65536, 0, 0}"},
    // Einsum (kernels_linalg.cc), whose summation these cases also check.
    {"einsum_matmul", 12,
     "g () => (float[2,2] y) <float[2,3] a = {1, 2, 3, 4, 5, 6}, float[3,2] b = {1, 0, 0, 1, 1, "
     "1}> { y = Einsum<equation = \"ij,jk->ik\">(a, b) }",
     "float[2,2] {4, 5, 10, 11}"},
    {"einsum_implicit_output_sorted", 12,
     "g () => (float[3,2] y) <float[2,3] a = {1, 2, 3, 4, 5, 6}> "
     "{ y = Einsum<equation = \"ji\">(a) }",
     "float[3,2] {1, 4, 2, 5, 3, 6}"},
    {"einsum_diagonal_and_trace", 12,
     "g () => (float[2] d, float t) <float[2,2] a = {1, 2, 3, 4}> "
     "{ d = Einsum<equation = \"ii->i\">(a) t = Einsum<equation = \"ii\">(a) }",
     "float[2] {1, 4}; float[] {5}"},
    {"einsum_ellipsis_batch", 12,
     "g () => (float[2,1,1] y) <float[2,1,2] a = {1, 2, 3, 4}, float[2,2,1] b = {1, 1, 2, 2}> "
     "{ y = Einsum<equation = \"...ij,...jk->...ik\">(a, b) }",
     "float[2,1,1] {3, 14}"},
    {"einsum_integers", 12,
     "g () => (int64 y) <int64[3] a = {1, 2, 3}> { y = Einsum<equation = \"i,i\">(a, a) }",
     "int64[] {14}"},
    {"einsum_mismatched_dims", 12,
     "g () => (float y) <float[2] a = {1, 2}, float[3] b = {1, 2, 3}> "
     "{ y = Einsum<equation = \"i,i->\">(a, b) }",
     "node '' (Einsum-12): subscript i has dims 2 and 3"},
    {"einsum_wrong_rank", 12,
     "g () => (float y) <float[2] a = {1, 2}> { y = Einsum<equation = \"ij->\">(a) }",
     "node '' (Einsum-12): an operand's subscripts do not match its rank"},
};

INSTANTIATE_TEST_SUITE_P(Reduce, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
