// ai.onnx.ml conversions (LabelEncoder, tree ensembles), through the
// converter with an ai.onnx.ml target.

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/text_printer.h"
#include "tests/adapter_cases.h"
#include "tests/model_text.h"

namespace onnxconvert::adapters {
namespace {

struct MlCase {
  std::string name;
  int64_t ml_from;
  int64_t ml_to;
  std::string graph;
  std::string expected;  // every node, "; "-joined; "" when refused
  std::string error;
};

// Prints a case by its name (in the failures of parameterized tests).
void PrintTo(const MlCase& c, std::ostream* os) { *os << c.name; }

std::vector<MlCase> ConvertsAiOnnxMlOps() {
  return {
      {"label_encoder_up_strings_to_indices", 1, 2,
       "g (string[3] X) => (int64[3] Y) "
       "{ [le] Y = ai.onnx.ml.LabelEncoder <classes_strings = [\"a\", \"b\"]> (X) }",
       "[le] Y = ai.onnx.ml.LabelEncoder <keys_strings = [\"a\", \"b\"], values_int64s = [0, 1]> (X)",
       ""},
      {"label_encoder_up_indices_to_strings", 1, 2,
       "g (int64[3] X) => (string[3] Y) "
       "{ [le] Y = ai.onnx.ml.LabelEncoder <classes_strings = [\"a\", \"b\"]> (X) }",
       "[le] Y = ai.onnx.ml.LabelEncoder <keys_int64s = [0, 1], values_strings = [\"a\", \"b\"]> (X)",
       ""},
      {"label_encoder_down_positions", 2, 1,
       "g (string[3] X) => (int64[3] Y) { [le] Y = ai.onnx.ml.LabelEncoder "
       "<keys_strings = [\"a\", \"b\"], values_int64s = [0, 1]> (X) }",
       "[le] Y = ai.onnx.ml.LabelEncoder <classes_strings = [\"a\", \"b\"]> (X)", ""},
      {"label_encoder_down_arbitrary_map_refused", 2, 1,
       "g (string[3] X) => (int64[3] Y) { [le] Y = ai.onnx.ml.LabelEncoder "
       "<keys_strings = [\"a\", \"b\"], values_int64s = [7, 1]> (X) }",
       "", "which is all LabelEncoder-1 can express"},
      {"tree_regressor_up_to_tree_ensemble", 3, 5,
       "g (float[2,2] X) => (float[2,1] Y) { [t] Y = ai.onnx.ml.TreeEnsembleRegressor "
       "<n_targets = 1, nodes_treeids = [0, 0, 0], nodes_nodeids = [0, 1, 2], "
       "nodes_featureids = [1, 0, 0], nodes_modes = [\"BRANCH_LEQ\", \"LEAF\", \"LEAF\"], "
       "nodes_values = [0.5, 0.0, 0.0], nodes_truenodeids = [1, 0, 0], "
       "nodes_falsenodeids = [2, 0, 0], target_treeids = [0, 0], target_nodeids = [1, 2], "
       "target_ids = [0, 0], target_weights = [1.0, 2.0]> (X) }",
       "[t] Y = ai.onnx.ml.TreeEnsemble <aggregate_function = 1, post_transform = 0, "
       "n_targets = 1, tree_roots = [0], nodes_featureids = [1], nodes_modes = uint8[1] raw {0}, "
       "nodes_splits = float[1] {0.5}, nodes_truenodeids = [0], nodes_trueleafs = [1], "
       "nodes_falsenodeids = [1], nodes_falseleafs = [1], "
       "nodes_missing_value_tracks_true = [0], leaf_targetids = [0, 0], "
       "leaf_weights = float[2] {1.0, 2.0}> (X)",
       ""},
      {"tree_classifier_up_refused", 3, 5,
       "g (float[2,2] X) => (int64[2] L, float[2,2] S) { [t] L, S = "
       "ai.onnx.ml.TreeEnsembleClassifier <classlabels_int64s = [0, 1], nodes_treeids = [0], "
       "nodes_nodeids = [0], nodes_featureids = [0], nodes_modes = [\"LEAF\"], "
       "nodes_values = [0.0], nodes_truenodeids = [0], nodes_falsenodeids = [0], "
       "class_treeids = [0], class_nodeids = [0], class_ids = [0], class_weights = [1.0]> (X) }",
       "", "gives no labels"},
  };
}

// Each case of the table is a test named after it.
class MlAdapterTest : public ::testing::TestWithParam<MlCase> {};

TEST_P(MlAdapterTest, Converts) {
  const MlCase& c = GetParam();
  onnx::ModelProto model = testing::ModelFromText(absl::StrCat(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.onnx.ml\" : ", c.ml_from, "]>\n",
      c.graph));
  converter::ConvertOptions options;
  options.target_opset = 21;
  options.ml_target_opset = c.ml_to;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
  if (c.error.empty()) {
    ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
    EXPECT_EQ(AllNodesText(result->model.graph()), c.expected) << c.name;
    for (const auto& opset : result->model.opset_import()) {
      if (opset.domain() == "ai.onnx.ml") {
        EXPECT_EQ(opset.version(), c.ml_to) << c.name;
      }
    }
    return;
  }
  ASSERT_FALSE(result.ok()) << c.name;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
  EXPECT_TRUE(absl::StrContains(result.status().message(), c.error))
      << c.name << ": " << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "ai.onnx.ml step"))
      << c.name << ": " << result.status();
}

INSTANTIATE_TEST_SUITE_P(ConvertsAiOnnxMlOps, MlAdapterTest,
                         ::testing::ValuesIn(ConvertsAiOnnxMlOps()),
                         [](const ::testing::TestParamInfo<MlCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace onnxconvert::adapters
