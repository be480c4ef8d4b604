// Inference over every node test of the corpus, from the graph inputs alone:
// it must reproduce the declared element type of every graph output, never
// contradict a declared dimension, and recover most declared shapes.

#include <iostream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "schema/inference.h"
#include "schema/shape_util.h"
#include "tests/corpus.h"

namespace onnxconvert::schema {
namespace {

// The ops of the last node producing each graph output, for reporting.
std::string ProducerOp(const onnx::GraphProto& graph, const std::string& output) {
  for (const auto& node : graph.node()) {
    for (const auto& name : node.output()) {
      if (name == output) return node.op_type();
    }
  }
  return "(input)";
}

bool SameShape(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b) {
  if (a.dim_size() != b.dim_size()) return false;
  for (int i = 0; i < a.dim_size(); ++i) {
    if (a.dim(i).has_dim_value() != b.dim(i).has_dim_value()) return false;
    if (a.dim(i).has_dim_value() && a.dim(i).dim_value() != b.dim(i).dim_value()) return false;
  }
  return true;
}

TEST(InferenceCorpusTest, NodeTestsFromGraphInputsAlone) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  int outputs = 0, elem_ok = 0, shapes_declared = 0, shapes_ok = 0, contradictions = 0;
  std::map<std::string, int> elem_misses, shape_misses;
  for (const testing::CorpusCase& c : *cases) {
    if (!absl::StartsWith(c.name, "node/")) continue;
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    onnx::ModelProto stripped = loaded->model;
    stripped.mutable_graph()->clear_value_info();
    for (auto& output : *stripped.mutable_graph()->mutable_output()) output.clear_type();
    absl::StatusOr<InferenceResult> result = InferModel(stripped);
    ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
    const GraphTypes& types = result->graphs.at(&stripped.graph());
    for (const auto& declared : loaded->model.graph().output()) {
      ++outputs;
      auto it = types.types.find(declared.name());
      const onnx::TypeProto* inferred = it == types.types.end() ? nullptr : it->second;
      std::string op = ProducerOp(loaded->model.graph(), declared.name());
      bool is_tensor = declared.type().has_tensor_type();
      bool elem_match =
          inferred != nullptr &&
          (is_tensor ? ElemType(inferred) == declared.type().tensor_type().elem_type()
                     : inferred->value_case() == declared.type().value_case());
      if (elem_match) {
        ++elem_ok;
      } else {
        ++elem_misses[op];
        std::cerr << "element type miss: " << c.name << " output " << declared.name() << " ("
                  << op << ")\n";
      }
      const onnx::TensorShapeProto* want = ShapeOf(&declared.type());
      if (want == nullptr) continue;
      ++shapes_declared;
      const onnx::TensorShapeProto* got = ShapeOf(inferred);
      if (got != nullptr && got->dim_size() == want->dim_size()) {
        for (int i = 0; i < got->dim_size(); ++i) {
          if (got->dim(i).has_dim_value() && want->dim(i).has_dim_value() &&
              got->dim(i).dim_value() != want->dim(i).dim_value()) {
            ++contradictions;
            ADD_FAILURE() << c.name << ": output " << declared.name() << " dim " << i
                          << " inferred " << got->dim(i).dim_value() << ", declared "
                          << want->dim(i).dim_value();
          }
        }
      } else if (got != nullptr) {
        ++contradictions;
        ADD_FAILURE() << c.name << ": output " << declared.name() << " rank " << got->dim_size()
                      << " inferred, " << want->dim_size() << " declared";
      }
      if (got != nullptr && SameShape(*got, *want)) ++shapes_ok;
      else {
        ++shape_misses[op];
        if (getenv("SHOW_SHAPE_MISSES")) {
          std::cerr << "shape miss: " << c.name << " " << declared.name() << " (" << op << ")\n";
        }
      }
    }
  }
  std::cerr << "outputs: " << outputs << ", element types recovered: " << elem_ok
            << ", declared shapes: " << shapes_declared << ", shapes recovered: " << shapes_ok
            << " (" << (100.0 * shapes_ok / std::max(1, shapes_declared)) << "%)\n";
  std::cerr << "shape misses by op:";
  for (const auto& [op, n] : shape_misses) std::cerr << " " << op << "=" << n;
  std::cerr << "\n";
  EXPECT_EQ(elem_ok, outputs);
  EXPECT_EQ(contradictions, 0);
  EXPECT_GE(shapes_ok * 100, shapes_declared * 74);
}

}  // namespace
}  // namespace onnxconvert::schema
