// The indexing kernels (kernels_index.cc), one table-driven case per
// behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

const Case kCases[] = {
    // Pad: attributes before 11, inputs after, axes from 18, every mode.
    {"pad_2_attribute_constant", 2,
     "g () => (float[4] y) <float[2] a = {1, 2}> { y = Pad<pads = [1, 1], value = 9.0>(a) }",
     "float[4] {9, 1, 2, 9}"},
    {"pad_1_paddings", 1,
     "g () => (float[3] y) <float[2] a = {1, 2}> { y = Pad<paddings = [0, 1]>(a) }",
     "float[3] {1, 2, 0}"},
    {"pad_11_reflect_repeats", 11,
     "g () => (int64[9] y) <int64[3] a = {1, 2, 3}, int64[2] p = {4, 2}> "
     "{ y = Pad<mode = \"reflect\">(a, p) }",
     "int64[9] {1, 2, 3, 2, 1, 2, 3, 2, 1}"},
    {"pad_11_edge", 11,
     "g () => (int64[2,4] y) <int64[2,2] a = {1, 2, 3, 4}, int64[4] p = {0, 1, 0, 1}> "
     "{ y = Pad<mode = \"edge\">(a, p) }",
     "int64[2,4] {1, 1, 2, 2, 3, 3, 4, 4}"},
    {"pad_19_wrap", 19,
     "g () => (int64[6] y) <int64[3] a = {1, 2, 3}, int64[2] p = {2, 1}> "
     "{ y = Pad<mode = \"wrap\">(a, p) }",
     "int64[6] {2, 3, 1, 2, 3, 1}"},
    {"pad_18_wrap_unknown", 18,
     "g () => (int64[6] y) <int64[3] a = {1, 2, 3}, int64[2] p = {2, 1}> "
     "{ y = Pad<mode = \"wrap\">(a, p) }",
     "node '' (Pad-18): mode \"wrap\" is unknown"},
    {"pad_negative_crops_then_pads", 13,
     "g () => (int64[4] y) <int64[4] a = {1, 2, 3, 4}, int64[2] p = {-2, 2}, int64 c = {7}> "
     "{ y = Pad(a, p, c) }",
     "int64[4] {3, 4, 7, 7}"},
    {"pad_18_axes_negative", 18,
     "g () => (int64[2,3] y) <int64[2,2] a = {1, 2, 3, 4}, int64[2] p = {1, 0}, "
     "int64[1] x = {-1}> { y = Pad(a, p, , x) }",
     "int64[2,3] {0, 1, 2, 0, 3, 4}"},
    {"pad_strings_fill_empty", 13,
     "g () => (string[3] y) <string[1] a = {\"x\"}, int64[2] p = {1, 1}> { y = Pad(a, p) }",
     "string[3] {\"\", \"x\", \"\"}"},
    {"pad_edge_of_empty_axis_refused", 13,
     "g () => (float[2] y) <float[0] a = {}, int64[2] p = {1, 1}> "
     "{ y = Pad<mode = \"edge\">(a, p) }",
     "node '' (Pad-13): mode \"edge\" pads an empty axis"},
    {"pad_wrong_pad_count", 13,
     "g () => (float[2] y) <float[2] a = {1, 2}, int64[1] p = {1}> { y = Pad(a, p) }",
     "node '' (Pad-13): 1 pads for 1 axes"},
    {"pad_int64_min_refused", 13,
     "g () => (float[2] y) <float[2] a = {1, 2}, int64[2] p = {-9223372036854775808, 0}> "
     "{ y = Pad(a, p) }",
     "node '' (Pad-13): the pads crop axis 0 below nothing"},
    {"pad_crop_below_nothing", 13,
     "g () => (float[2] y) <float[2] a = {1, 2}, int64[2] p = {-2, -1}> { y = Pad(a, p) }",
     "node '' (Pad-13): the pads crop axis 0 below nothing"},
    // Gathers.
    {"gather_elements_negative_index", 13,
     "g () => (int64[2,2] y) <int64[2,2] a = {1, 2, 3, 4}, int64[2,2] i = {-1, 0, 1, 1}> "
     "{ y = GatherElements<axis = 1>(a, i) }",
     "int64[2,2] {2, 1, 4, 4}"},
    {"gather_elements_out_of_range", 13,
     "g () => (int64[1] y) <int64[2] a = {1, 2}, int64[1] i = {2}> { y = GatherElements(a, i) }",
     "node '' (GatherElements-13): index 2 is out of range for a dim of 2"},
    {"gather_nd_slices", 13,
     "g () => (int64[2,2] y) <int64[2,2] a = {1, 2, 3, 4}, int64[2,1] i = {1, 0}> "
     "{ y = GatherND(a, i) }",
     "int64[2,2] {3, 4, 1, 2}"},
    {"gather_nd_batch_dims", 13,
     "g () => (int64[2] y) <int64[2,2] a = {1, 2, 3, 4}, int64[2,1] i = {1, -2}> "
     "{ y = GatherND<batch_dims = 1>(a, i) }",
     "int64[2] {2, 3}"},
    {"gather_nd_batch_mismatch", 13,
     "g () => (int64[3] y) <int64[2,2] a = {1, 2, 3, 4}, int64[3,1] i = {1, 0, 0}> "
     "{ y = GatherND<batch_dims = 1>(a, i) }",
     "node '' (GatherND-13): batch dims differ"},
    // Scatters: last update wins without reduction; reductions by version.
    {"scatter_elements_reductions", 18,
     "g () => (float[3] n, float[3] s, float[3] m, float[3] x) <float[3] a = {1, 2, 3}, "
     "int64[2] i = {0, 0}, float[2] u = {5, 7}> { n = ScatterElements(a, i, u) "
     "s = ScatterElements<reduction = \"add\">(a, i, u) "
     "m = ScatterElements<reduction = \"mul\">(a, i, u) "
     "x = ScatterElements<reduction = \"max\">(a, i, u) }",
     "float[3] {7, 2, 3}; float[3] {13, 2, 3}; float[3] {35, 2, 3}; float[3] {7, 2, 3}"},
    {"scatter_elements_16_has_no_max", 16,
     "g () => (float[3] y) <float[3] a = {1, 2, 3}, int64[1] i = {0}, float[1] u = {5}> "
     "{ y = ScatterElements<reduction = \"max\">(a, i, u) }",
     "node '' (ScatterElements-16): reduction \"max\" is unknown"},
    {"scatter_9_axis_1", 9,
     "g () => (int64[2,2] y) <int64[2,2] a = {1, 2, 3, 4}, int64[2,1] i = {1, 0}, "
     "int64[2,1] u = {8, 9}> { y = Scatter<axis = 1>(a, i, u) }",
     "int64[2,2] {1, 8, 9, 4}"},
    {"scatter_nd_slice_and_add", 18,
     "g () => (int64[2,2] y, int64[2,2] z) <int64[2,2] a = {1, 2, 3, 4}, int64[1,1] i = {1}, "
     "int64[1,2] u = {10, 20}> { y = ScatterND(a, i, u) "
     "z = ScatterND<reduction = \"add\">(a, i, u) }",
     "int64[2,2] {1, 2, 10, 20}; int64[2,2] {1, 2, 13, 24}"},
    {"scatter_nd_updates_shape_checked", 13,
     "g () => (int64[2,2] y) <int64[2,2] a = {1, 2, 3, 4}, int64[1,1] i = {1}, "
     "int64[1,3] u = {1, 2, 3}> { y = ScatterND(a, i, u) }",
     "node '' (ScatterND-13): updates' shape does not fit indices and data"},
    {"scatter_reduction_of_strings_refused", 18,
     "g () => (string[1] y) <string[1] a = {\"a\"}, int64[1] i = {0}, string[1] u = {\"b\"}> "
     "{ y = ScatterElements<reduction = \"add\">(a, i, u) }",
     "node '' (ScatterElements-18): reduction of string"},
    // TensorScatter: update written from each batch entry's index.
    {"tensor_scatter_linear", 24,
     "g () => (int64[2,3,1] y) <int64[2,3,1] p = {1, 2, 3, 4, 5, 6}, int64[2,2,1] u = {7, 8, 9, 10}, "
     "int64[2] w = {0, 1}> { y = TensorScatter(p, u, w) }",
     "int64[2,3,1] {7, 8, 3, 4, 9, 10}"},
    {"tensor_scatter_circular_wraps", 24,
     "g () => (int64[1,3,1] y) <int64[1,3,1] p = {1, 2, 3}, int64[1,2,1] u = {7, 8}, "
     "int64[1] w = {2}> { y = TensorScatter<mode = \"circular\">(p, u, w) }",
     "int64[1,3,1] {8, 2, 7}"},
    {"tensor_scatter_linear_past_the_end", 24,
     "g () => (int64[1,3,1] y) <int64[1,3,1] p = {1, 2, 3}, int64[1,2,1] u = {7, 8}, "
     "int64[1] w = {2}> { y = TensorScatter(p, u, w) }",
     "node '' (TensorScatter-24): a write index is out of range"},
    // OneHot: negative indices from depth, out of range gives off values,
    // float indices truncate.
    {"one_hot_axis_and_out_of_range", 11,
     "g () => (float[3,3] y) <int64[3] i = {-1, 5, 0}, int64 d = {3}, float[2] v = {0, 1}> "
     "{ y = OneHot<axis = 0>(i, d, v) }",
     "float[3,3] {0, 0, 1, 0, 0, 0, 1, 0, 0}"},
    {"one_hot_float_indices_truncate", 11,
     "g () => (int32[2,2] y) <float[2] i = {1.7, nan}, float d = {2.9}, int32[2] v = {-1, 5}> "
     "{ y = OneHot(i, d, v) }",
     "int32[2,2] {-1, 5, -1, -1}"},
    // NonZero, Compress, Trilu.
    {"nonzero_2d_and_strings", 13,
     "g () => (int64[2,2] y, int64[1,1] z) <float[2,2] a = {0, 1, nan, 0}, "
     "string[2] s = {\"\", \"x\"}> { y = NonZero(a) z = NonZero(s) }",
     "int64[2,2] {0, 1, 1, 0}; int64[1,1] {1}"},
    {"compress_short_condition_and_flatten", 11,
     "g () => (int64[2,1] y, int64[2] z) <int64[2,2] a = {1, 2, 3, 4}, bool[1] c = {1}, "
     "bool[4] f = {0, 1, 0, 1}> { y = Compress<axis = 1>(a, c) z = Compress(a, f) }",
     "int64[2,1] {1, 3}; int64[2] {2, 4}"},
    {"compress_past_the_axis", 11,
     "g () => (int64[1] y) <int64[2] a = {1, 2}, bool[3] c = {0, 0, 1}> "
     "{ y = Compress<axis = 0>(a, c) }",
     "node '' (Compress-11): condition selects past the axis"},
    {"trilu_upper_k_and_lower", 14,
     "g () => (int64[2,3] u, int64[2,3] l) <int64[2,3] a = {1, 2, 3, 4, 5, 6}, int64 k = {1}> "
     "{ u = Trilu(a, k) l = Trilu<upper = 0>(a) }",
     "int64[2,3] {0, 2, 3, 0, 0, 6}; int64[2,3] {1, 0, 0, 4, 5, 0}"},
    {"trilu_huge_k", 14,
     "g () => (int64[2,2] y) <int64[2,2] a = {1, 2, 3, 4}, int64 k = {-9223372036854775808}> "
     "{ y = Trilu(a, k) }",
     "int64[2,2] {1, 2, 3, 4}"},
    // ReverseSequence, DepthToSpace, SpaceToDepth.
    {"reverse_sequence_batch_axis_0", 10,
     "g () => (int64[2,3] y) <int64[2,3] a = {1, 2, 3, 4, 5, 6}, int64[2] n = {2, 3}> "
     "{ y = ReverseSequence<batch_axis = 0, time_axis = 1>(a, n) }",
     "int64[2,3] {2, 1, 3, 6, 5, 4}"},
    {"reverse_sequence_length_too_long", 10,
     "g () => (int64[2,2] y) <int64[2,2] a = {1, 2, 3, 4}, int64[2] n = {3, 1}> "
     "{ y = ReverseSequence(a, n) }",
     "node '' (ReverseSequence-10): a sequence length is out of range"},
    {"depth_to_space_dcr_crd_roundtrip", 13,
     "g () => (int64[1,1,2,2] d, int64[1,1,2,2] c, int64[1,4,1,1] s) "
     "<int64[1,4,1,1] a = {1, 2, 3, 4}> { d = DepthToSpace<blocksize = 2>(a) "
     "c = DepthToSpace<blocksize = 2, mode = \"CRD\">(a) s = SpaceToDepth<blocksize = 2>(d) }",
     "int64[1,1,2,2] {1, 2, 3, 4}; int64[1,1,2,2] {1, 2, 3, 4}; int64[1,4,1,1] {1, 2, 3, 4}"},
    {"depth_to_space_dcr_orders_blocks_first", 13,
     "g () => (int64[1,2,2,2] y) <int64[1,8,1,1] a = {0, 1, 2, 3, 4, 5, 6, 7}> "
     "{ y = DepthToSpace<blocksize = 2>(a) }",
     "int64[1,2,2,2] {0, 2, 4, 6, 1, 3, 5, 7}"},
    {"depth_to_space_huge_blocksize", 13,
     "g () => (int64[1,1,1,1] y) <int64[1,4,1,1] a = {1, 2, 3, 4}> "
     "{ y = DepthToSpace<blocksize = 4294967296>(a) }",
     "node '' (DepthToSpace-13): blocksize is not in [1, 2^31]"},
    {"space_to_depth_indivisible", 13,
     "g () => (int64[1,4,1,1] y) <int64[1,1,3,2] a = {1, 2, 3, 4, 5, 6}> "
     "{ y = SpaceToDepth<blocksize = 2>(a) }",
     "node '' (SpaceToDepth-13): height or width is not a multiple of blocksize"},
    // EyeLike, Unique, CenterCropPad, Col2Im.
    {"eye_like_k_and_dtype", 9,
     "g () => (int32[2,3] y) <float[2,3] a = {0, 0, 0, 0, 0, 0}> "
     "{ y = EyeLike<k = 1, dtype = 6>(a) }",
     "int32[2,3] {0, 1, 0, 0, 0, 1}"},
    {"eye_like_huge_negative_k", 9,
     "g () => (float[2,2] y) <float[2,2] a = {1, 1, 1, 1}> "
     "{ y = EyeLike<k = -9223372036854775807>(a) }",
     "float[2,2] {0, 0, 0, 0}"},
    {"unique_sorted_outputs", 11,
     "g () => (float[3] y, int64[3] i, int64[5] v, int64[3] c) <float[5] a = {2, 1, nan, 2, nan}> "
     "{ y, i, v, c = Unique(a) }",
     "float[3] {1, 2, nan}; int64[3] {1, 0, 2}; int64[5] {1, 0, 2, 1, 2}; int64[3] {1, 2, 2}"},
    {"unique_unsorted_first_occurrence", 11,
     "g () => (int64[3] y, int64[3] i, int64[4] v, int64[3] c) <int64[4] a = {3, 1, 3, 2}> "
     "{ y, i, v, c = Unique<sorted = 0>(a) }",
     "int64[3] {3, 1, 2}; int64[3] {0, 1, 3}; int64[4] {0, 1, 0, 2}; int64[3] {2, 1, 1}"},
    {"unique_axis_rows", 11,
     "g () => (int64[2,2] y) <int64[3,2] a = {1, 2, 0, 5, 1, 2}> { y = Unique<axis = 0>(a) }",
     "int64[2,2] {0, 5, 1, 2}"},
    {"unique_strings", 11,
     "g () => (string[2] y) <string[3] a = {\"b\", \"a\", \"b\"}> { y = Unique(a) }",
     "string[2] {\"a\", \"b\"}"},
    {"center_crop_pad_odd_crop_and_pad", 18,
     "g () => (int64[2] c, int64[4] p) <int64[5] a = {1, 2, 3, 4, 5}, int64[1] s = {2}, "
     "int64[2] b = {1, 2}, int64[1] t = {4}> { c = CenterCropPad(a, s) p = CenterCropPad(b, t) }",
     "int64[2] {2, 3}; int64[4] {0, 1, 2, 0}"},
    {"col2im_overlap_sums", 18,
     "g () => (float[1,1,3] y) <float[1,2,2] a = {1, 2, 3, 4}, int64[1] i = {3}, "
     "int64[1] b = {2}> { y = Col2Im(a, i, b) }",
     "float[1,1,3] {1, 5, 4}"},
    {"col2im_huge_dilation", 18,
     "g () => (float[1,1,3] y) <float[1,2,2] a = {1, 2, 3, 4}, int64[1] i = {3}, "
     "int64[1] b = {2}> { y = Col2Im<dilations = [9223372036854775807]>(a, i, b) }",
     "node '' (Col2Im-18): a block dim, dilation or stride is not positive, an image dim or pad "
     "is negative, or one is past 2^31"},
    {"col2im_shape_mismatch", 18,
     "g () => (float[1,1,3] y) <float[1,2,3] a = {1, 2, 3, 4, 5, 6}, int64[1] i = {3}, "
     "int64[1] b = {2}> { y = Col2Im(a, i, b) }",
     "node '' (Col2Im-18): the input's dims do not fit the block and image shapes"},
};

INSTANTIATE_TEST_SUITE_P(Index, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
