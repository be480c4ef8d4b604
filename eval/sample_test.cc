// GridSample (kernels_sample.cc), one table-driven case per behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A 2x2 image and a grid of one point at (x, y) = (-1, -1), its corner.
constexpr char kCorner[] = "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {-1, -1}";

std::string Sample(const std::string& attributes, const std::string& inits = kCorner) {
  return "g () => (float[1,1,1,1] y) <" + inits + "> { y = GridSample" + attributes + "(x, g) }";
}

const Case kCases[] = {
    {"linear_zeros_half_outside", 20, Sample(""), "float[1,1,1,1] {0.25}"},
    {"linear_align_corners", 20, Sample("<align_corners = 1>"), "float[1,1,1,1] {1}"},
    {"linear_center", 20,
     Sample("", "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {0, 0}"),
     "float[1,1,1,1] {2.5}"},
    {"border_clamps_the_taps", 20, Sample("<padding_mode = \"border\">"), "float[1,1,1,1] {1}"},
    {"reflection_reflects_coordinates", 20,
     Sample("<padding_mode = \"reflection\">",
            "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {-2, -1}"),
     "float[1,1,1,1] {1.5}"},
    {"reflection_folds_far_coordinates", 20,
     Sample("<padding_mode = \"reflection\">",
            "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {7, -1}"),
     "float[1,1,1,1] {1}"},
    {"nearest_rounds", 20,
     Sample("<mode = \"nearest\">",
            "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {0.1, -0.6}"),
     "float[1,1,1,1] {2}"},
    {"nearest_rounds_half_to_even", 20,
     Sample("<mode = \"nearest\", align_corners = 1>",
            "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {0, 0}"),
     "float[1,1,1,1] {1}"},
    {"cubic_1d", 20,
     "g () => (float[1,1,1] y) <float[1,1,4] x = {0, 1, 2, 3}, float[1,1,1] g = {0}> "
     "{ y = GridSample<mode = \"cubic\", align_corners = 1>(x, g) }",
     "float[1,1,1] {1.5}"},
    {"cubic_zeros_and_border", 20,
     "g () => (float[1,1,1] a, float[1,1,1] b) <float[1,1,4] x = {1, 1, 1, 1}, "
     "float[1,1,1] g = {-0.666667}> "
     "{ a = GridSample<mode = \"cubic\", align_corners = 1>(x, g) "
     "b = GridSample<mode = \"cubic\", align_corners = 1, padding_mode = \"border\">(x, g) }",
     "float[1,1,1] {1.09375}; float[1,1,1] {1}"},
    {"volumetric_linear", 20,
     "g () => (float[1,1,1,1,1] y) <float[1,1,2,2,2] x = {0, 1, 2, 3, 4, 5, 6, 7}, "
     "float[1,1,1,1,3] g = {0, 0, 0}> { y = GridSample(x, g) }",
     "float[1,1,1,1,1] {3.5}"},
    {"v16_names_bilinear", 16, Sample("<mode = \"bilinear\">"), "float[1,1,1,1] {0.25}"},
    {"v16_refuses_linear", 16, Sample("<mode = \"linear\">"),
     "node '' (GridSample-16): mode \"linear\" is unknown"},
    {"grid_of_wrong_shape", 20,
     Sample("", "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,3] g = {0, 0, 0}"),
     "node '' (GridSample-20): grid must have shape [N, O1..O2, 2]"},
    {"nan_coordinate", 20,
     Sample("", "float[1,1,2,2] x = {1, 2, 3, 4}, float[1,1,1,2] g = {nan, 0}"),
     "node '' (GridSample-20): a grid coordinate is not finite"},
};

INSTANTIATE_TEST_SUITE_P(Sample, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
