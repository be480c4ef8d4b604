// ModelIndex tests, and every graph of the ONNX backend test corpus indexed
// and kept in order.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph_index.h"
#include "ir/graph_index_editor.h"
#include "ir/graph_index_test_util.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert::graph_index_testing {
namespace {

using Kind = ValueSource::Kind;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Models.

TEST(ModelIndexTest, IndexesEveryGraphOfTheModel) {
  onnx::ModelProto model;
  *model.mutable_graph() = ParseGraph(kNested);
  model.mutable_graph()->add_initializer()->set_name("W");
  onnx::TrainingInfoProto* training = model.add_training_info();
  *training->mutable_initialization() = Graph({}, {}, {Node("zero", "Constant", {}, {"W0"})},
                                              {"W0"});
  // The algorithm runs with the main graph and may use its values.
  *training->mutable_algorithm() =
      Graph({}, {}, {Node("step", "Sub", {"W", "R"}, {"W_new"})}, {"W_new"});
  onnx::FunctionProto* function = model.add_functions();
  function->set_name("MyFn");
  function->set_domain("custom");
  function->add_input("a");
  function->add_output("b");
  onnx::NodeProto call = Node("if_f", "If", {"a"}, {"b"});
  AddGraphAttribute(call, "then_branch", Graph({}, {}, {Node("fa", "Neg", {"a"}, {"na"})}, {"na"}));
  *function->add_node() = call;

  absl::StatusOr<std::unique_ptr<ModelIndex>> index = ModelIndex::Build(&model);
  ASSERT_TRUE(index.ok()) << index.status();
  std::vector<std::string> paths;
  for (const GraphIndex* graph : (*index)->Graphs()) paths.push_back(graph->path());
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "main", kBody, kThen, kScan, kElse, "training_info[0]/initialization",
                       "training_info[0]/algorithm", "function 'custom:MyFn'",
                       "function 'custom:MyFn'/then_branch of 'if_f'"}));
  const GraphIndex* algorithm = (*index)->FindGraph("training_info[0]/algorithm");
  ASSERT_NE(algorithm, nullptr);
  EXPECT_EQ(algorithm->Producer("W").kind, Kind::kOuterScope);
  EXPECT_EQ(algorithm->DefiningScope("R"), (*index)->main_graph());
  EXPECT_TRUE(algorithm->TopologicalOrder().ok());
  EXPECT_TRUE((*index)->main_graph()->Consumers("W").empty()) << "not a subgraph use";

  GraphIndex* fn = (*index)->function(0);
  EXPECT_EQ(fn->Producer("a"), (ValueSource{Kind::kGraphInput, 0, -1}));
  EXPECT_EQ(Strings(fn->OuterReferences(0)), std::vector<std::string>{"a"});
  EXPECT_EQ(Edit(fn).AddInitializer(onnx::TensorProto()).code(),
            absl::StatusCode::kFailedPrecondition);
  // Edits of a function go through the same API.
  ASSERT_TRUE(Edit(fn).InsertNodes({Node("pre", "Abs", {"a"}, {"a2"})}, 0).ok());
  ASSERT_TRUE(Edit(fn).SetInput(0, 0, "a2").ok());
  ASSERT_TRUE((*index)->Commit().ok());
  EXPECT_EQ(model.functions(0).node(0).name(), "pre");
  EXPECT_EQ(model.functions(0).node(1).input(0), "a2");
  for (const GraphIndex* graph : (*index)->Graphs()) {
    EXPECT_TRUE(graph->CheckConsistency().ok()) << graph->path();
    EXPECT_FALSE(graph->HasPendingEdits()) << graph->path();
  }

  // Read-only indexing of the same model.
  absl::StatusOr<std::unique_ptr<const ModelIndex>> read_only =
      ModelIndex::Build(std::as_const(model));
  ASSERT_TRUE(read_only.ok()) << read_only.status();
  EXPECT_EQ((*read_only)->Graphs().size(), paths.size());
  EXPECT_EQ((*read_only)->FindGraph("nowhere"), nullptr);
}

TEST(ModelIndexTest, ErrorsNameTheGraph) {
  onnx::ModelProto model;
  *model.mutable_graph() = Graph({"X"}, {}, {}, {"X"});
  onnx::FunctionProto* function = model.add_functions();
  function->set_name("Bad");
  function->add_input("a");
  *function->add_node() = Node("n", "Relu", {"a"}, {"a"});
  absl::StatusOr<std::unique_ptr<ModelIndex>> index = ModelIndex::Build(&model);
  ASSERT_FALSE(index.ok());
  EXPECT_THAT(std::string(index.status().message()),
              HasSubstr("function 'Bad': value 'a' is produced twice: by function input #0 and "
                        "by node 'n' (Relu) output 0"));
}

// ---------------------------------------------------------------------------
// The ONNX backend test corpus.

TEST(GraphIndexCorpusTest, EveryGraphIndexesAndKeepsItsOrder) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  int graphs = 0;
  int64_t nodes = 0;
  int with_subgraphs = 0;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    const std::string bytes = loaded->model.SerializeAsString();
    absl::StatusOr<std::unique_ptr<const ModelIndex>> index =
        ModelIndex::Build(std::as_const(loaded->model));
    ASSERT_TRUE(index.ok()) << c.name << ": " << index.status();
    EXPECT_EQ(loaded->model.SerializeAsString(), bytes) << c.name << ": indexing wrote";
    const std::vector<const GraphIndex*> all = (*index)->Graphs();
    with_subgraphs += all.size() > 1;
    for (const GraphIndex* graph : all) {
      ++graphs;
      nodes += graph->node_count();
      absl::StatusOr<std::vector<NodeId>> order = graph->TopologicalOrder();
      ASSERT_TRUE(order.ok()) << c.name << ": " << order.status();
      EXPECT_EQ(*order, graph->LiveNodes()) << c.name << ": " << graph->path();
      absl::Status check = graph->CheckOrder();
      EXPECT_TRUE(check.ok()) << c.name << ": " << check;
      absl::Status consistent = graph->CheckConsistency();
      EXPECT_TRUE(consistent.ok()) << c.name << ": " << consistent;
    }
  }
  std::printf("indexed %zu models: %d graphs (%d models with subgraphs or functions), %lld nodes\n",
              cases->size(), graphs, with_subgraphs, static_cast<long long>(nodes));
}

}  // namespace
}  // namespace onnxconvert::graph_index_testing
