// The detection kernels (kernels_detection.cc), one table-driven case per
// behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// Three boxes of batch 0: 0 and 1 overlap (IoU 0.81), 2 lies apart; 1
// scores highest.
constexpr char kBoxes[] =
    "float[1,3,4] b = {0, 0, 1, 1,  0, 0.1, 1, 1.1,  0, 5, 1, 6}, "
    "float[1,1,3] s = {0.8, 0.9, 0.3}";

const Case kCases[] = {
    {"nms_suppresses_by_iou", 11,
     std::string("g () => (int64[2,3] y) <") + kBoxes +
         ", int64 m = {3}, float iou = {0.5}> { y = NonMaxSuppression(b, s, m, iou) }",
     "int64[2,3] {0, 0, 1, 0, 0, 2}"},
    {"nms_iou_must_exceed_the_threshold", 11,
     "g () => (int64[2,3] y) <float[1,2,4] b = {0, 0, 1, 1,  0, 0.5, 1, 1.5}, "
     "float[1,1,2] s = {0.9, 0.8}, int64 m = {2}, float iou = {0.3333333}> "
     "{ y = NonMaxSuppression(b, s, m, iou) }",
     "int64[1,3] {0, 0, 0}"},
    {"nms_score_threshold_is_strict", 11,
     std::string("g () => (int64[1,3] y) <") + kBoxes +
         ", int64 m = {3}, float iou = {0.5}, float st = {0.8}> "
         "{ y = NonMaxSuppression(b, s, m, iou, st) }",
     "int64[1,3] {0, 0, 1}"},
    {"nms_limits_boxes_per_class", 11,
     std::string("g () => (int64[1,3] y) <") + kBoxes +
         ", int64 m = {1}> { y = NonMaxSuppression(b, s, m) }",
     "int64[1,3] {0, 0, 1}"},
    {"nms_no_max_selects_nothing", 11,
     std::string("g () => (int64[0,3] y) <") + kBoxes + "> { y = NonMaxSuppression(b, s) }",
     "int64[0,3] {}"},
    {"nms_ties_take_the_lower_index", 11,
     "g () => (int64[2,3] y) <float[1,2,4] b = {0, 0, 1, 1,  0, 0, 1, 1}, "
     "float[1,2,2] s = {0.5, 0.5,  0.1, 0.7}, int64 m = {2}, float iou = {0.5}> "
     "{ y = NonMaxSuppression(b, s, m, iou) }",
     "int64[2,3] {0, 0, 0, 0, 1, 1}"},
    {"nms_center_point_boxes", 11,
     "g () => (int64[1,3] y) <float[1,2,4] b = {0.5, 0.5, 1, 1,  0.5, 0.6, 1, 1}, "
     "float[1,1,2] s = {0.9, 0.8}, int64 m = {2}, float iou = {0.5}> "
     "{ y = NonMaxSuppression<center_point_box = 1>(b, s, m, iou) }",
     "int64[1,3] {0, 0, 0}"},
    {"nms_flipped_corners", 10,
     "g () => (int64[1,3] y) <float[1,2,4] b = {1, 1, 0, 0,  0, 0.1, 1, 1.1}, "
     "float[1,1,2] s = {0.9, 0.8}, int64 m = {2}, float iou = {0.5}> "
     "{ y = NonMaxSuppression(b, s, m, iou) }",
     "int64[1,3] {0, 0, 0}"},
    {"nms_boxes_of_wrong_shape", 11,
     "g () => (int64[1,3] y) <float[1,2,3] b = {0, 0, 1, 0, 0, 1}, float[1,1,2] s = {1, 1}> "
     "{ y = NonMaxSuppression(b, s) }",
     "node '' (NonMaxSuppression-11): boxes must have shape [batches, boxes, 4]"},
    {"nms_nan_score", 11,
     "g () => (int64[1,3] y) <float[1,1,4] b = {0, 0, 1, 1}, float[1,1,1] s = {nan}> "
     "{ y = NonMaxSuppression(b, s) }",
     "node '' (NonMaxSuppression-11): a score is NaN"},
};

INSTANTIATE_TEST_SUITE_P(Detection, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
