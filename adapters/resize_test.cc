// Resize across its versions, through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> KeepsTheSamplingOfEachVersion() {
  return {
      {"resize_10_up_samples_asymmetrically", 10, 11,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> "
       "{ [r] Y = Resize(X, s) }",
       "[r] Y = Resize <coordinate_transformation_mode = \"asymmetric\", nearest_mode = \"floor\"> "
       "(X, r__0, s)", ""},
      {"resize_11_down_asymmetric", 11, 10,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[0] roi = {}, float[4] s = {1.0, 1.0, "
       "2.0, 2.0}> { [r] Y = Resize <mode = \"linear\", coordinate_transformation_mode = "
       "\"asymmetric\"> (X, roi, s) }",
       "[r] Y = Resize <mode = \"linear\"> (X, s)", ""},
      // Half-pixel centres: whole upsampling factors are composed (their
      // numbers are checked in tests/conformance/numeric_cases.txt), others
      // refused.
      {"resize_11_down_half_pixel_by_1_5_refused", 11, 10,
       "g (float[1,1,2,2] X) => (float[1,1,3,3] Y) <float[0] roi = {}, float[4] s = {1.0, 1.0, "
       "1.5, 1.5}> { [r] Y = Resize <mode = \"linear\"> (X, roi, s) }", "",
       "coordinate_transformation_mode is half_pixel"},
      {"resize_11_down_half_pixel_nearest_doubling_floors", 11, 10,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[0] roi = {}, float[4] s = {1.0, 1.0, "
       "2.0, 2.0}> { [r] Y = Resize <nearest_mode = \"round_prefer_ceil\"> (X, roi, s) }",
       "[r] Y = Resize(X, s)", ""},
      {"resize_11_down_sizes_as_scales", 11, 10,
       "g (float[1,1,2,3] X) => (float[1,1,4,9] Y) <float[0] roi = {}, float[0] s = {}, "
       "int64[4] z = {1, 1, 4, 9}> { [r] Y = Resize <coordinate_transformation_mode = "
       "\"asymmetric\", nearest_mode = \"floor\"> (X, roi, s, z) }",
       "[r] Y = Resize(X, r__0)", ""},
      {"resize_11_down_sizes_of_unknown_input_refused", 11, 10,
       "g (float[1,1,N,3] X) => (float[1,1,4,9] Y) <float[0] roi = {}, float[0] s = {}, "
       "int64[4] z = {1, 1, 4, 9}> { [r] Y = Resize <coordinate_transformation_mode = "
       "\"asymmetric\", nearest_mode = \"floor\"> (X, roi, s, z) }",
       "", "it resizes to explicit sizes, not known at conversion for an input of known sizes"},
      {"resize_13_down_fills_roi", 13, 11,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> "
       "{ [r] Y = Resize(X, \"\", s) }",
       "[r] Y = Resize(X, r__0, s)", ""},
      {"resize_18_down_antialias_refused", 18, 13,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> "
       "{ [r] Y = Resize <antialias = 1, mode = \"linear\"> (X, \"\", s) }", "",
       "antialias is set"},
      {"resize_18_down_axes_to_full_scales", 18, 13,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[2] s = {2.0, 2.0}> "
       "{ [r] Y = Resize <axes = [2, 3]> (X, \"\", s) }",
       "[r] Y = Resize(X, \"\", r__0)", ""},
  };
}

INSTANTIATE_TEST_SUITE_P(KeepsTheSamplingOfEachVersion, ConversionCaseTest,
                         ::testing::ValuesIn(KeepsTheSamplingOfEachVersion()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
