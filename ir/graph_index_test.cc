#include "ir/graph_index.h"

#include <algorithm>
#include <random>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"
#include "ir/model_io.h"
#include "ir/text_parser.h"
#include "tests/corpus.h"

namespace onnxconvert {
namespace {

onnx::GraphProto Graph(absl::string_view text) {
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(text);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *graph : onnx::GraphProto();
}

onnx::ModelProto Model(absl::string_view text) { return testing::ModelFromText(text); }

constexpr absl::string_view kChain = R"(
g (float[N] X, float[N] B) => (float[N] Y) <float[1] W = {2.0}> {
  [mul] T = Mul(X, W)
  [add] U = Add(T, B)
  [clip] Y = Clip(U, "", W)
})";

TEST(GraphIndexTest, ProducersAndConsumers) {
  onnx::GraphProto graph = Graph(kChain);
  auto index = GraphIndex::Build(graph);
  ASSERT_TRUE(index.ok()) << index.status();
  struct Case {
    std::string name;
    ValueSource::Kind kind;
    int index;
    std::vector<std::pair<int, int>> uses;
  };
  const Case cases[] = {
      {"X", ValueSource::kGraphInput, 0, {{0, 0}}},
      {"W", ValueSource::kInitializer, 0, {{0, 1}, {2, 2}}},
      {"T", ValueSource::kNodeOutput, 0, {{1, 0}}},
      {"U", ValueSource::kNodeOutput, 1, {{2, 0}}},
      {"Y", ValueSource::kNodeOutput, 2, {{ValueUse::kGraphOutput, 0}}},
  };
  for (const Case& c : cases) {
    const ValueSource* source = (*index)->Producer(c.name);
    ASSERT_NE(source, nullptr) << c.name;
    EXPECT_EQ(source->kind, c.kind) << c.name;
    EXPECT_EQ(source->index, c.index) << c.name;
    std::vector<std::pair<int, int>> uses;
    for (const ValueUse& use : (*index)->Consumers(c.name)) uses.push_back({use.node, use.slot});
    EXPECT_EQ(uses, c.uses) << c.name;
  }
  EXPECT_EQ((*index)->Producer(""), nullptr);  // the missing optional input
  EXPECT_EQ((*index)->NodesOf("", "Add").size(), 1u);
  EXPECT_EQ((*index)->NodesOf("ai.onnx", "Add").size(), 1u);
  EXPECT_TRUE((*index)->NodesOf("", "Relu").empty());
}

TEST(GraphIndexTest, OuterScopeReferencesThroughNestedSubgraphs) {
  onnx::GraphProto graph = Graph(R"(
g (bool C, float[N] X, float[N] Z) => (float[N] Y) {
  [if_1] Y = If <then_branch = then (  ) => (float[N] A) {
      [inner_if] A = If <then_branch = t2 () => (float[N] B) { B = Add(X, Z) },
                         else_branch = e2 () => (float[N] B2) { B2 = Identity(X) }> (C)
    }, else_branch = else () => (float[N] D) { D = Identity(X) }> (C)
})");
  auto index = GraphIndex::Build(graph);
  ASSERT_TRUE(index.ok()) << index.status();
  std::vector<std::string> outer((*index)->OuterReferences(0).begin(),
                                 (*index)->OuterReferences(0).end());
  std::sort(outer.begin(), outer.end());
  EXPECT_EQ(outer, (std::vector<std::string>{"C", "X", "Z"}));
  bool z_used_by_if = false;
  for (const ValueUse& use : (*index)->Consumers("Z")) z_used_by_if |= use.node == 0;
  EXPECT_TRUE(z_used_by_if);

  auto subgraph = GraphIndex::Build(graph.node(0).attribute(0).g(), index->get());
  ASSERT_TRUE(subgraph.ok());
  EXPECT_TRUE((*subgraph)->IsVisible("X"));
  EXPECT_EQ((*subgraph)->Producer("X"), nullptr);
  EXPECT_TRUE((*subgraph)->TopologicalOrder().ok());
}

TEST(GraphIndexTest, TopologicalOrderOfShuffledGraph) {
  onnx::GraphProto graph = Graph(kChain);
  std::reverse(graph.mutable_node()->begin(), graph.mutable_node()->end());
  auto index = GraphIndex::Build(graph);
  ASSERT_TRUE(index.ok());
  absl::StatusOr<std::vector<int>> order = (*index)->TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status();
  std::vector<std::string> names;
  for (int n : *order) names.push_back(graph.node(n).name());
  EXPECT_EQ(names, (std::vector<std::string>{"mul", "add", "clip"}));
}

struct ErrorCase {
  std::string name;
  std::string text;
  std::string expected;
  bool at_build;  // fails in Build rather than TopologicalOrder
};

TEST(GraphIndexTest, ErrorsNameTheNodes) {
  const ErrorCase cases[] = {
      {"cycle", "g (float X) => (float Y) { [a] A = Add(X, B) \n [b] B = Relu(A) \n Y = Identity(B) }",
       "cycle through node 'a' (Add), node 'b' (Relu)", false},
      {"undefined", "g (float X) => (float Y) { [r] Y = Relu(Q) }",
       "node 'r' (Relu) uses 'Q', which nothing defines", false},
      {"defined_twice", "g (float X) => (float Y) { [a] Y = Relu(X) \n [b] Y = Abs(X) }",
       "value 'Y' is defined twice: by node 'a' (Relu) and by node 'b' (Abs)", true},
  };
  for (const ErrorCase& c : cases) {
    onnx::GraphProto graph = Graph(c.text);
    auto index = GraphIndex::Build(graph);
    absl::Status status = index.status();
    if (index.ok()) {
      ASSERT_FALSE(c.at_build) << c.name;
      status = (*index)->TopologicalOrder().status();
    }
    ASSERT_FALSE(status.ok()) << c.name;
    EXPECT_TRUE(absl::StrContains(status.message(), c.expected)) << c.name << ": " << status;
  }
}

TEST(GraphIndexTest, FreshNamesNeverCollide) {
  onnx::ModelProto model = Model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool C, float X) => (float Y) {
  t__0 = Relu(X)
  Y = If <then_branch = b () => (float t__1) { t__1 = Identity(X) },
          else_branch = e () => (float t__2) { t__2 = Identity(X) }> (C)
})");
  NameGenerator names(model);
  absl::flat_hash_set<std::string> issued;
  for (int i = 0; i < 100; ++i) {
    std::string name = names.FreshName("t");
    EXPECT_NE(name, "t__0");
    EXPECT_NE(name, "t__1");
    EXPECT_NE(name, "t__2");
    EXPECT_TRUE(issued.insert(name).second) << name;
  }
}

TEST(GraphIndexTest, EditorAppliesBatchedEditsInOnePass) {
  onnx::GraphProto graph = Graph(kChain);
  GraphEditor editor(graph);
  onnx::NodeProto neg;
  neg.set_name("neg");
  neg.set_op_type("Neg");
  neg.add_input("X");
  neg.add_output("NX");
  editor.InsertBefore(0, neg);
  onnx::NodeProto sub = graph.node(1);
  sub.set_name("sub");
  sub.set_op_type("Sub");
  editor.Replace(1, {sub});
  editor.RenameUses("X", "NX");
  onnx::TensorProto extra;
  extra.set_name("E");
  editor.AddInitializer(extra);
  EXPECT_TRUE(editor.HasEdits());
  editor.Commit();
  EXPECT_FALSE(editor.HasEdits());
  std::vector<std::string> names;
  for (const auto& node : graph.node()) names.push_back(node.name());
  EXPECT_EQ(names, (std::vector<std::string>{"neg", "mul", "sub", "clip"}));
  EXPECT_EQ(graph.node(1).input(0), "NX");
  EXPECT_EQ(graph.node(0).input(0), "NX");  // renames apply to every use
  EXPECT_EQ(graph.initializer_size(), 2);
  auto index = GraphIndex::Build(graph);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ((*index)->NodesOf("", "Sub").size(), 1u);
}

TEST(GraphIndexTest, EveryCorpusGraphIndexesInItsOwnOrder) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    std::vector<std::unique_ptr<GraphIndex>> indexes;
    auto index = GraphIndex::Build(loaded->model.graph());
    ASSERT_TRUE(index.ok()) << c.name << ": " << index.status();
    absl::StatusOr<std::vector<int>> order = (*index)->TopologicalOrder();
    ASSERT_TRUE(order.ok()) << c.name << ": " << order.status();
    // Kahn's algorithm from a topologically sorted graph keeps its order.
    for (int i = 0; i < static_cast<int>(order->size()); ++i) {
      if ((*order)[i] != i) {
        // Equal-rank nodes may be reordered; check the original order is valid.
        absl::flat_hash_set<std::string> defined;
        for (const auto& v : loaded->model.graph().input()) defined.insert(v.name());
        for (const auto& t : loaded->model.graph().initializer()) defined.insert(t.name());
        for (const auto& node : loaded->model.graph().node()) {
          for (const auto& in : node.input()) {
            EXPECT_TRUE(in.empty() || defined.contains(in)) << c.name << ": " << in;
          }
          for (const auto& out : node.output()) defined.insert(out);
        }
        break;
      }
    }
  }
}

}  // namespace
}  // namespace onnxconvert
