// The loss kernels (kernels_loss.cc), one table-driven case per behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// Log-probabilities of 2 samples over 3 classes.
constexpr char kLogProb[] = "float[2,3] x = {-1, -2, -3, -4, -5, -6}";

const Case kCases[] = {
    {"nll_none_sum_mean", 13,
     std::string("g () => (float[2] n, float s, float m) <") + kLogProb +
         ", int64[2] t = {2, 0}> { n = NegativeLogLikelihoodLoss<reduction = \"none\">(x, t) "
         "s = NegativeLogLikelihoodLoss<reduction = \"sum\">(x, t) "
         "m = NegativeLogLikelihoodLoss(x, t) }",
     "float[2] {3, 4}; float[] {7}; float[] {3.5}"},
    {"nll_weighted_mean_divides_by_weights", 13,
     std::string("g () => (float m) <") + kLogProb +
         ", int64[2] t = {2, 0}, float[3] w = {1, 0, 3}> "
         "{ m = NegativeLogLikelihoodLoss(x, t, w) }",
     "float[] {3.25}"},
    {"nll_ignore_index_drops_the_target", 13,
     std::string("g () => (float m, float[2] n) <") + kLogProb +
         ", int64[2] t = {2, -1}> { m = NegativeLogLikelihoodLoss<ignore_index = -1>(x, t) "
         "n = NegativeLogLikelihoodLoss<ignore_index = -1, reduction = \"none\">(x, t) }",
     "float[] {3}; float[2] {3, 0}"},
    {"nll_all_ignored_mean_is_nan", 13,
     std::string("g () => (float m) <") + kLogProb +
         ", int64[2] t = {1, 1}> { m = NegativeLogLikelihoodLoss<ignore_index = 1>(x, t) }",
     "float[] {nan}"},
    {"nll_target_out_of_range", 13,
     std::string("g () => (float m) <") + kLogProb +
         ", int64[2] t = {3, 0}> { m = NegativeLogLikelihoodLoss(x, t) }",
     "node '' (NegativeLogLikelihoodLoss-13): target 3 is not a class"},
    {"nll_spatial_dims", 13,
     "g () => (float[1,2] n) <float[1,2,2] x = {-1, -2, -3, -4}, int64[1,2] t = {1, 0}> "
     "{ n = NegativeLogLikelihoodLoss<reduction = \"none\">(x, t) }",
     "float[1,2] {3, 2}"},
    {"sce_log_prob_output", 13,
     "g () => (float l, float[1,2] p) <float[1,2] s = {0, 0}, int64[1] t = {1}> "
     "{ l, p = SoftmaxCrossEntropyLoss(s, t) }",
     "float[] {0.693147}; float[1,2] {-0.693147, -0.693147}"},
    {"sce_large_scores_stay_finite", 13,
     "g () => (float l) <float[1,2] s = {1000, 0}, int64[1] t = {1}> "
     "{ l = SoftmaxCrossEntropyLoss(s, t) }",
     "float[] {1000}"},
    {"sce_unknown_reduction", 13,
     "g () => (float l) <float[1,2] s = {0, 0}, int64[1] t = {1}> "
     "{ l = SoftmaxCrossEntropyLoss<reduction = \"max\">(s, t) }",
     "node '' (SoftmaxCrossEntropyLoss-13): reduction \"max\" is unknown"},
};

INSTANTIATE_TEST_SUITE_P(Loss, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
