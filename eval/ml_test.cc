// The ai.onnx.ml kernels (kernels_ml.cc), one table-driven case per
// behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A TreeEnsemble over two features: node 0 sends x0 <= 1 to leaf 0
// (target 0, weight 1) and the rest to node 1, which sends x1 in {2, 3}
// (or NaN) to leaf 1 (target 1, weight 10), else to leaf 2 (target 0,
// weight 100). Then `rest` adds attributes.
std::string Trees(const std::string& x, const std::string& rest) {
  return "g () => (float[2,2] y) <" + x +
         "> { y = ai.onnx.ml.TreeEnsemble<n_targets = 2, tree_roots = [0], "
         "nodes_featureids = [0, 1], nodes_modes = uint8[2] {0, 6}, "
         "nodes_splits = float[2] {1, 0}, nodes_truenodeids = [0, 1], nodes_trueleafs = [1, 1], "
         "nodes_falsenodeids = [1, 2], nodes_falseleafs = [0, 1], "
         "nodes_missing_value_tracks_true = [0, 1], "
         "membership_values = float[3] {2, 3, nan}, leaf_targetids = [0, 1, 0], "
         "leaf_weights = float[3] {1, 10, 100}" + rest + ">(x) }";
}

const Case kCases[] = {
    {"array_feature_extractor_rows", 13,
     "g () => (int64[2,2] y) <int64[2,3] x = {1, 2, 3, 4, 5, 6}, int64[2] i = {2, 0}> "
     "{ y = ai.onnx.ml.ArrayFeatureExtractor(x, i) }",
     "int64[2,2] {3, 1, 6, 4}", 3},
    {"array_feature_extractor_vector_gives_a_row", 13,
     "g () => (string[1,1] y) <string[2] x = {\"a\", \"b\"}, int64[1] i = {1}> "
     "{ y = ai.onnx.ml.ArrayFeatureExtractor(x, i) }",
     "string[1,1] {\"b\"}", 3},
    {"array_feature_extractor_out_of_range", 13,
     "g () => (int64[1,1] y) <int64[2] x = {1, 2}, int64[1] i = {-1}> "
     "{ y = ai.onnx.ml.ArrayFeatureExtractor(x, i) }",
     "node '' (ArrayFeatureExtractor-1): index -1 is out of range", 3},
    {"binarizer", 13,
     "g () => (float[3] y) <float[3] x = {-1, 0.5, 2}> "
     "{ y = ai.onnx.ml.Binarizer<threshold = 0.5>(x) }",
     "float[3] {0, 0, 1}", 3},
    {"label_encoder_1_strings_to_positions", 13,
     "g () => (int64[3] y) <string[3] x = {\"b\", \"z\", \"a\"}> "
     "{ y = ai.onnx.ml.LabelEncoder<classes_strings = [\"a\", \"b\"], default_int64 = 9>(x) }",
     "int64[3] {1, 9, 0}", 1},
    {"label_encoder_2_default_string", 13,
     "g () => (string[2] y) <int64[2] x = {7, 8}> "
     "{ y = ai.onnx.ml.LabelEncoder<keys_int64s = [7], values_strings = [\"seven\"]>(x) }",
     "string[2] {\"seven\", \"_Unused\"}", 2},
    {"label_encoder_float_keys_nan", 13,
     "g () => (int64[2] y) <float[2] x = {nan, 1}> "
     "{ y = ai.onnx.ml.LabelEncoder<keys_floats = [nan, 2.0], values_int64s = [5, 6]>(x) }",
     "int64[2] {5, -1}", 2},
    {"label_encoder_4_tensors", 13,
     "g () => (int32[2] y) <string[2] x = {\"a\", \"q\"}> "
     "{ y = ai.onnx.ml.LabelEncoder<keys_tensor = string[1] {\"a\"}, "
     "values_tensor = int32[1] {3}, default_tensor = int32[1] {42}>(x) }",
     "int32[2] {3, 42}", 4},
    {"label_encoder_key_type_mismatch", 13,
     "g () => (int64[1] y) <int64[1] x = {1}> "
     "{ y = ai.onnx.ml.LabelEncoder<keys_strings = [\"a\"], values_int64s = [1]>(x) }",
     "node '' (LabelEncoder-2): X's type is not the keys' type", 2},
    {"tree_ensemble_branches_members_missing", 13,
     Trees("float[2,2] x = {5, 3, 5, nan}", ""), "float[2,2] {0, 10, 0, 10}", 5},
    {"tree_ensemble_leq_and_not_member", 13,
     Trees("float[2,2] x = {1, 0, 2, 4}", ""), "float[2,2] {1, 0, 100, 0}", 5},
    {"tree_ensemble_logistic", 13,
     Trees("float[2,2] x = {1, 0, 2, 4}", ", post_transform = 2"),
     "float[2,2] {0.731059, 0.5, 1, 0.5}", 5},
    {"tree_ensemble_probit_refused", 13,
     Trees("float[2,2] x = {1, 0, 2, 4}", ", post_transform = 4"),
     "node '' (TreeEnsemble-5): post_transform 4 is not supported", 5},
    {"tree_ensemble_max_starts_at_lowest", 13,
     Trees("float[2,2] x = {1, 0, 2, 4}", ", aggregate_function = 3"),
     "float[2,2] {1, -3.40282e+38, 100, -3.40282e+38}", 5},
};

INSTANTIATE_TEST_SUITE_P(Ml, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
