// The Resize and Upsample kernels (kernels_resize.cc), one table-driven
// case per behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A graph resizing x (float[1,1,1,2] {1, 3} unless `x` says otherwise) by
// scales {1, 1, 1, 2} through Resize with `attrs`.
std::string Upscale(const std::string& attrs, const std::string& x = "float[1,1,1,2] x = {1, 3}",
                    const std::string& out = "float[1,1,1,4]") {
  return "g () => (" + out + " y) <" + x +
         ", float[0] r = {}, float[4] s = {1, 1, 1, 2}> { y = Resize" + attrs + "(x, r, s) }";
}

const Case kCases[] = {
    // Nearest under each rounding.
    {"nearest_half_pixel_round_prefer_floor", 13, Upscale(""), "float[1,1,1,4] {1, 1, 3, 3}"},
    {"nearest_asymmetric_ceil", 13,
     Upscale("<coordinate_transformation_mode = \"asymmetric\", nearest_mode = \"ceil\">"),
     "float[1,1,1,4] {1, 3, 3, 3}"},
    {"nearest_copies_strings", 13,
     Upscale("", "string[1,1,1,2] x = {\"a\", \"b\"}", "string[1,1,1,4]"),
     "string[1,1,1,4] {\"a\", \"a\", \"b\", \"b\"}"},
    {"nearest_keeps_large_int64_exact", 13,
     Upscale("", "int64[1,1,1,2] x = {9007199254740993, 1}", "int64[1,1,1,4]"),
     "int64[1,1,1,4] {9007199254740993, 9007199254740993, 1, 1}"},
    // Linear and cubic under the coordinate modes.
    {"linear_half_pixel", 13, Upscale("<mode = \"linear\">"), "float[1,1,1,4] {1, 1.5, 2.5, 3}"},
    {"linear_align_corners", 13,
     Upscale("<mode = \"linear\", coordinate_transformation_mode = \"align_corners\">"),
     "float[1,1,1,4] {1, 1.66667, 2.33333, 3}"},
    {"linear_asymmetric", 13,
     Upscale("<mode = \"linear\", coordinate_transformation_mode = \"asymmetric\">"),
     "float[1,1,1,4] {1, 2, 3, 3}"},
    {"cubic_half_pixel", 13, Upscale("<mode = \"cubic\">"),
     "float[1,1,1,4] {0.789062, 1.45312, 2.54688, 3.21094}"},
    {"cubic_exclude_outside", 13, Upscale("<mode = \"cubic\", exclude_outside = 1>"),
     "float[1,1,1,4] {0.727273, 1.4589, 2.5411, 3.27273}"},
    {"cubic_integers_round_and_saturate", 13,
     Upscale("<mode = \"cubic\">", "uint8[1,1,1,2] x = {0, 255}", "uint8[1,1,1,4]"),
     "uint8[1,1,1,4] {0, 58, 197, 255}"},
    {"linear_refuses_strings", 13,
     Upscale("<mode = \"linear\">", "string[1,1,1,2] x = {\"a\", \"b\"}", "string[1,1,1,4]"),
     "node '' (Resize-13): no interpolation of string"},
    {"tf_crop_and_resize_extrapolates", 13,
     "g () => (float[1,1,1,3] y) <float[1,1,1,2] x = {1, 3}, "
     "float[8] r = {0, 0, 0, 0.5, 1, 1, 1, 1.5}, float[4] s = {1, 1, 1, 1.5}> "
     "{ y = Resize<mode = \"linear\", coordinate_transformation_mode = \"tf_crop_and_resize\", "
     "extrapolation_value = 9.0>(x, r, s) }",
     "float[1,1,1,3] {2, 3, 9}"},
    {"tf_half_pixel_for_nn_only_in_11", 13,
     Upscale("<coordinate_transformation_mode = \"tf_half_pixel_for_nn\">"),
     "node '' (Resize-13): coordinate_transformation_mode \"tf_half_pixel_for_nn\" is unknown"},
    {"tf_half_pixel_for_nn_11", 11,
     Upscale("<coordinate_transformation_mode = \"tf_half_pixel_for_nn\">"),
     "float[1,1,1,4] {1, 3, 3, 3}"},
    // Downsampling with antialias widens the kernel.
    {"linear_antialias_downsample", 18,
     "g () => (float[1,2] y) <float[1,4] x = {0, 4, 8, 12}, float[2] s = {1, 0.5}> "
     "{ y = Resize<mode = \"linear\", antialias = 1>(x, , s) }",
     "float[1,2] {2.5, 9.5}"},
    {"nearest_antialias_refused", 18,
     "g () => (float[1,2] y) <float[1,4] x = {0, 4, 8, 12}, float[2] s = {1, 0.5}> "
     "{ y = Resize<antialias = 1>(x, , s) }",
     "node '' (Resize-18): antialias applies to linear and cubic modes only"},
    // Sizes, axes and the aspect ratio policies.
    {"sizes_floor_of_scaled_dims", 13,
     "g () => (float[1,3] y) <float[1,2] x = {1, 3}, int64[2] z = {1, 3}> "
     "{ y = Resize(x, , , z) }",
     "float[1,3] {1, 1, 3}"},
    {"scales_and_sizes_refused", 13,
     "g () => (float[1,3] y) <float[1,2] x = {1, 3}, float[2] s = {1, 2}, int64[2] z = {1, 3}> "
     "{ y = Resize(x, , s, z) }",
     "node '' (Resize-13): give exactly one of scales and sizes"},
    {"axes_and_not_larger", 18,
     "g () => (float[1,2,3] y) <float[1,2,4] x = {1, 2, 3, 4, 5, 6, 7, 8}, int64[2] z = {3, 2}> "
     "{ y = Resize<axes = [-1, 1], keep_aspect_ratio_policy = \"not_larger\">(x, , , z) }",
     "float[1,2,3] {1, 2, 4, 5, 6, 8}"},
    {"not_smaller_rounds_half_up", 18,
     "g () => (float[1,3] y) <float[1,2] x = {1, 3}, int64[2] z = {1, 3}> "
     "{ y = Resize<keep_aspect_ratio_policy = \"not_smaller\">(x, , , z) }",
     "float[2,3] {1, 1, 3, 1, 1, 3}"},
    {"huge_size_refused", 13,
     "g () => (float[1,2] y) <float[1,2] x = {1, 3}, int64[2] z = {0, 9223372036854775807}> "
     "{ y = Resize(x, , , z) }",
     "node '' (Resize-13): a size is negative, too large or its axis empty"},
    {"negative_scale_refused", 13,
     "g () => (float[1,2] y) <float[1,2] x = {1, 3}, float[2] s = {1, -2}> { y = Resize(x, , s) }",
     "node '' (Resize-13): scale -2 is not positive"},
    // Resize-10 and Upsample: asymmetric, nearest rounds down.
    {"resize_10_nearest_floor", 10,
     "g () => (float[1,3] y) <float[1,2] x = {1, 3}, float[2] s = {1, 1.5}> { y = Resize(x, s) }",
     "float[1,3] {1, 1, 3}"},
    {"resize_10_linear_asymmetric", 10,
     "g () => (float[1,4] y) <float[1,2] x = {1, 3}, float[2] s = {1, 2}> "
     "{ y = Resize<mode = \"linear\">(x, s) }",
     "float[1,4] {1, 2, 3, 3}"},
    {"resize_10_cubic_refused", 10,
     "g () => (float[1,4] y) <float[1,2] x = {1, 3}, float[2] s = {1, 2}> "
     "{ y = Resize<mode = \"cubic\">(x, s) }",
     "node '' (Resize-10): mode \"cubic\" is unknown"},
    {"upsample_7_attribute_scales", 7,
     "g () => (int64[2,4] y) <int64[1,2] x = {1, 2}> { y = Upsample<scales = [2.0, 2.0]>(x) }",
     "int64[2,4] {1, 1, 2, 2, 1, 1, 2, 2}"},
    {"upsample_9_input_scales", 9,
     "g () => (int64[1,3] y) <int64[1,2] x = {1, 2}, float[2] s = {1, 1.5}> "
     "{ y = Upsample(x, s) }",
     "int64[1,3] {1, 1, 2}"},
    {"upsample_1_bilinear", 1,
     "g () => (float[1,1,1,4] y) <float[1,1,1,2] x = {1, 3}> "
     "{ y = Upsample<mode = \"bilinear\", height_scale = 1.0, width_scale = 2.0>(x) }",
     "float[1,1,1,4] {1, 2, 3, 3}"},
};

INSTANTIATE_TEST_SUITE_P(Resize, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
