// The ai.onnx.preview.training optimizer kernels (kernels_training.cc), one
// table-driven case per behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A case of `op` at opset 17 with training opset 1.
Case Training(std::string name, std::string graph, std::string expected) {
  return Case{std::move(name), 17, std::move(graph), std::move(expected), 0, 1};
}

const Case kCases[] = {
    Training("adagrad_step",
             "g () => (float[1] x2, float[1] h2) <float r = {0.1}, int64 t = {0}, "
             "float[1] x = {1}, float[1] gr = {0.5}, float[1] h = {0}> "
             "{ x2, h2 = ai.onnx.preview.training.Adagrad<epsilon = 0.0>(r, t, x, gr, h) }",
             "float[1] {0.9}; float[1] {0.25}"),
    Training("adagrad_decay_and_norm",
             "g () => (float[1] a, float[1] b) <float r = {0.1}, int64 t = {1}, "
             "float[1] x = {1}, float[1] gr = {0.5}, float[1] h = {0}> "
             "{ a, h1 = ai.onnx.preview.training.Adagrad<epsilon = 0.0, decay_factor = 1.0>"
             "(r, t, x, gr, h) "
             "b, h2 = ai.onnx.preview.training.Adagrad<epsilon = 0.0, norm_coefficient = 1.0>"
             "(r, t, x, gr, h) }",
             "float[1] {0.95}; float[1] {0.9}"),
    Training("adagrad_two_tensors",
             "g () => (float[1] x3, float[2] x4, float[1] h3, float[2] h4) <float r = {0.1}, "
             "int64 t = {0}, float[1] x1 = {1}, float[2] x2 = {1, 2}, float[1] g1 = {0.5}, "
             "float[2] g2 = {1, 2}, float[1] h1 = {0}, float[2] h2 = {0, 0}> "
             "{ x3, x4, h3, h4 = ai.onnx.preview.training.Adagrad<epsilon = 0.0>"
             "(r, t, x1, x2, g1, g2, h1, h2) }",
             "float[1] {0.9}; float[2] {0.9, 1.9}; float[1] {0.25}; float[2] {1, 4}"),
    Training("adagrad_shapes_differ",
             "g () => (float[1] x2, float[1] h2) <float r = {0.1}, int64 t = {0}, "
             "float[1] x = {1}, float[2] gr = {0.5, 1}, float[1] h = {0}> "
             "{ x2, h2 = ai.onnx.preview.training.Adagrad(r, t, x, gr, h) }",
             "node '' (Adagrad-1): input 3 differs in shape from input 2"),
    Training("adagrad_uneven_groups",
             "g () => (float[1] x2) <float r = {0.1}, int64 t = {0}, "
             "float[1] x = {1}, float[1] gr = {0.5}> "
             "{ x2 = ai.onnx.preview.training.Adagrad(r, t, x, gr) }",
             "node '' (Adagrad-1): expects 3 groups of equally many tensors after R and T"),
    Training("adam_first_step_no_bias_correction",
             "g () => (float[1] x2, float[1] v2, float[1] h2) <float r = {0.1}, int64 t = {0}, "
             "float[1] x = {1}, float[1] gr = {2}, float[1] v = {0}, float[1] h = {0}> "
             "{ x2, v2, h2 = ai.onnx.preview.training.Adam<alpha = 0.5, beta = 0.5, "
             "epsilon = 0.0>(r, t, x, gr, v, h) }",
             "float[1] {0.929289}; float[1] {1}; float[1] {2}"),
    Training("adam_bias_correction_and_post_norm",
             "g () => (float[1] a, float[1] b) <float r = {0.1}, int64 t = {1}, "
             "float[1] x = {1}, float[1] gr = {2}, float[1] v = {0}, float[1] h = {0}> "
             "{ a, v1, h1 = ai.onnx.preview.training.Adam<alpha = 0.5, beta = 0.5, "
             "epsilon = 0.0>(r, t, x, gr, v, h) "
             "b, v2, h2 = ai.onnx.preview.training.Adam<alpha = 0.5, beta = 0.5, "
             "epsilon = 0.0, norm_coefficient_post = 0.5>(r, t, x, gr, v, h) }",
             "float[1] {0.9}; float[1] {0.45}"),
    Training("momentum_standard_first_step_beta_is_one",
             "g () => (float[1] x2, float[1] v2) <float r = {0.1}, int64 t = {0}, "
             "float[1] x = {1}, float[1] gr = {2}, float[1] v = {3}> "
             "{ x2, v2 = ai.onnx.preview.training.Momentum<alpha = 0.5, beta = 0.25, "
             "mode = \"standard\", norm_coefficient = 0.0>(r, t, x, gr, v) }",
             "float[1] {0.65}; float[1] {3.5}"),
    Training("momentum_standard_and_nesterov",
             "g () => (float[1] a, float[1] b, float[1] v2) <float r = {0.1}, int64 t = {1}, "
             "float[1] x = {1}, float[1] gr = {2}, float[1] v = {3}> "
             "{ a, v1 = ai.onnx.preview.training.Momentum<alpha = 0.5, beta = 0.25, "
             "mode = \"standard\", norm_coefficient = 0.0>(r, t, x, gr, v) "
             "b, v2 = ai.onnx.preview.training.Momentum<alpha = 0.5, beta = 0.25, "
             "mode = \"nesterov\", norm_coefficient = 0.0>(r, t, x, gr, v) }",
             "float[1] {0.8}; float[1] {0.7}; float[1] {2}"),
    Training("momentum_unknown_mode",
             "g () => (float[1] x2, float[1] v2) <float r = {0.1}, int64 t = {1}, "
             "float[1] x = {1}, float[1] gr = {2}, float[1] v = {3}> "
             "{ x2, v2 = ai.onnx.preview.training.Momentum<alpha = 0.5, beta = 0.25, "
             "mode = \"heavy\", norm_coefficient = 0.0>(r, t, x, gr, v) }",
             "node '' (Momentum-1): mode \"heavy\" is unknown"),
    Training("momentum_requires_its_attributes",
             "g () => (float[1] x2, float[1] v2) <float r = {0.1}, int64 t = {1}, "
             "float[1] x = {1}, float[1] gr = {2}, float[1] v = {3}> "
             "{ x2, v2 = ai.onnx.preview.training.Momentum<alpha = 0.5>(r, t, x, gr, v) }",
             "node '' (Momentum-1): the attribute beta is required"),
};

INSTANTIATE_TEST_SUITE_P(Training, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
