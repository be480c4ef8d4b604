// GraphIndex tests: producers and consumers, outer-scope references, order,
// errors that name what is at fault, nesting limits and fresh names. Edits
// are tested in graph_index_edit_test.cc, ModelIndex in model_index_test.cc.

#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph_index.h"
#include "ir/graph_index_editor.h"
#include "ir/graph_index_test_util.h"
#include "ir/text_parser.h"

namespace onnxconvert::graph_index_testing {
namespace {

using Kind = ValueSource::Kind;
using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------
// Producers and consumers.

TEST(GraphIndexTest, ProducersAndConsumers) {
  onnx::GraphProto graph = Graph(
      {"X", "B"}, {"W", "B"},
      {Node("mul", "Mul", {"X", "W"}, {"T"}), Node("add", "Add", {"T", "B"}, {"U"}),
       Node("clip", "Clip", {"U", "", "W"}, {"Y"}),
       Node("drop", "Dropout", {"U"}, {"", "Mask"}),
       Node("gather", "Gather", {"S", "Y"}, {"G"})},
      {"Y", "G", "X"});
  onnx::SparseTensorProto* sparse = graph.add_sparse_initializer();
  sparse->mutable_values()->set_name("S");
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);

  struct Case {
    std::string name;
    ValueSource source;
    std::vector<ValueUse> uses;
  };
  const Case cases[] = {
      {"X", {Kind::kGraphInput, 0, -1}, {ValueUse::Input(0, 0), ValueUse::GraphOutput(2)}},
      // An initializer named like a graph input is its default: the input wins.
      {"B", {Kind::kGraphInput, 1, -1}, {ValueUse::Input(1, 1)}},
      {"W", {Kind::kInitializer, 0, -1}, {ValueUse::Input(0, 1), ValueUse::Input(2, 2)}},
      {"S", {Kind::kSparseInitializer, 0, -1}, {ValueUse::Input(4, 0)}},
      {"T", {Kind::kNodeOutput, 0, 0}, {ValueUse::Input(1, 0)}},
      {"U", {Kind::kNodeOutput, 1, 0}, {ValueUse::Input(2, 0), ValueUse::Input(3, 0)}},
      {"Y", {Kind::kNodeOutput, 2, 0}, {ValueUse::Input(4, 1), ValueUse::GraphOutput(0)}},
      {"Mask", {Kind::kNodeOutput, 3, 1}, {}},
      {"G", {Kind::kNodeOutput, 4, 0}, {ValueUse::GraphOutput(1)}},
      // Omitted optional inputs and outputs name nothing.
      {"", {}, {}},
      {"unknown", {}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(index->Producer(c.name), c.source) << c.name;
    const absl::Span<const ValueUse> uses = index->Consumers(c.name);
    EXPECT_EQ(std::vector<ValueUse>(uses.begin(), uses.end()), c.uses) << c.name;
  }
  EXPECT_EQ(Strings(index->ValueNames()),
            (std::vector<std::string>{"B", "G", "Mask", "S", "T", "U", "W", "X", "Y"}));
  EXPECT_TRUE(index->FreeNames().empty());
  EXPECT_NE(index->FindInitializer("W"), nullptr);
  EXPECT_EQ(index->FindInitializer("B"), nullptr);  // overridable
  EXPECT_EQ(index->FindInitializer("X"), nullptr);
  EXPECT_TRUE(index->CheckConsistency().ok());
  EXPECT_FALSE(index->HasPendingEdits());
}

TEST(GraphIndexTest, NodesOfTreatsAiOnnxAsTheDefaultDomain) {
  onnx::GraphProto graph = Graph({"X"}, {},
                                 {Node("a", "Add", {"X", "X"}, {"A"}),
                                  Node("b", "Add", {"A", "X"}, {"B"}, "ai.onnx"),
                                  Node("c", "Add", {"B", "X"}, {"C"}, "com.microsoft"),
                                  Node("d", "Relu", {"C"}, {"D"})},
                                 {"D"});
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  struct Case {
    std::string domain;
    std::string op_type;
    std::vector<NodeId> nodes;
  };
  const Case cases[] = {
      {"", "Add", {0, 1}},          {"ai.onnx", "Add", {0, 1}}, {"com.microsoft", "Add", {2}},
      {"", "Relu", {3}},            {"", "Sub", {}},            {"com.microsoft", "Relu", {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(index->NodesOf(c.domain, c.op_type), c.nodes) << c.domain << ":" << c.op_type;
  }
}

// ---------------------------------------------------------------------------
// Outer-scope references.

TEST(GraphIndexTest, OuterScopeReferencesThroughNestedSubgraphs) {
  onnx::GraphProto graph = ParseGraph(kNested);
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);

  struct GraphCase {
    std::string path;
    std::vector<std::string> free_names;
    std::string node;  // a node holding subgraphs, or ""
    std::vector<std::string> outer_references;
  };
  const GraphCase graphs[] = {
      {"main", {}, "loop_1", {"P", "X", "Z"}},
      {kBody, {"P", "X", "Z"}, "if_2", {"L", "P", "X", "Z"}},
      {kThen, {"L", "P", "Z"}, "scan_3", {"L", "P", "Z"}},
      {kScan, {"L", "P", "Z"}, "", {}},
      {kElse, {"X"}, "", {}},
  };
  std::vector<std::string> paths;
  for (const GraphIndex* graph : index->GraphsInTree()) paths.push_back(graph->path());
  EXPECT_EQ(paths, (std::vector<std::string>{"main", kBody, kThen, kScan, kElse}));
  for (const GraphCase& c : graphs) {
    const GraphIndex* graph = GraphAt(*index, c.path);
    ASSERT_NE(graph, nullptr);
    EXPECT_EQ(Strings(graph->FreeNames()), c.free_names) << c.path;
    if (!c.node.empty()) {
      EXPECT_EQ(Strings(graph->OuterReferences(IdOf(*graph, c.node))), c.outer_references)
          << c.path;
    }
    EXPECT_TRUE(graph->TopologicalOrder().ok()) << c.path;
    EXPECT_TRUE(graph->CheckConsistency().ok()) << c.path;
  }

  // Lookups fall through the scopes to the innermost definition.
  struct ScopeCase {
    std::string from;
    std::string name;
    Kind kind;
    std::string defining_path;  // "" when nothing defines it
  };
  const ScopeCase scopes[] = {
      {kScan, "P", Kind::kOuterScope, "main"},   {kScan, "Z", Kind::kOuterScope, "main"},
      {kScan, "L", Kind::kOuterScope, kBody},    {kScan, "D", Kind::kNodeOutput, kScan},
      {kScan, "s_in", Kind::kGraphInput, kScan}, {kElse, "Z", Kind::kNodeOutput, kElse},
      {kElse, "L", Kind::kOuterScope, kBody},    {kScan, "E", Kind::kUndefined, ""},
      {"main", "L", Kind::kUndefined, ""},
  };
  for (const ScopeCase& c : scopes) {
    const GraphIndex* graph = GraphAt(*index, c.from);
    ASSERT_NE(graph, nullptr);
    EXPECT_EQ(graph->Producer(c.name).kind, c.kind) << c.from << " " << c.name;
    const GraphIndex* scope = graph->DefiningScope(c.name);
    EXPECT_EQ(scope == nullptr ? "" : scope->path(), c.defining_path) << c.from << " " << c.name;
  }

  // Subgraph uses count as uses of the holding node in the outer graph.
  const NodeId loop = IdOf(*index, "loop_1");
  const std::vector<ValueUse> x_uses(index->Consumers("X").begin(), index->Consumers("X").end());
  EXPECT_EQ(x_uses, (std::vector<ValueUse>{ValueUse::Input(0, 0), ValueUse::Subgraph(loop)}));
  EXPECT_EQ(index->Consumers("P").size(), 1u);
  EXPECT_EQ(index->Consumers("Z").size(), 1u);
  EXPECT_TRUE(index->Consumers("L").empty());
}

TEST(GraphIndexTest, SubgraphUsesOrderTheHoldingNode) {
  // The loop body uses P, produced after the loop: the order must move the
  // loop after "pre".
  onnx::GraphProto graph = ParseGraph(kNested);
  std::swap(*graph.mutable_node(0), *graph.mutable_node(1));
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  absl::StatusOr<std::vector<NodeId>> order = index->TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(NodeNames(*index, *order), (std::vector<std::string>{"pre", "loop_1"}));
  EXPECT_THAT(std::string(index->CheckOrder().message()),
              HasSubstr("node 'loop_1' (Loop) uses 'P' before it is defined: node 'pre' (Relu) "
                        "produces it later"));
}

// ---------------------------------------------------------------------------
// Order.

// A random DAG of `count` nodes, each using one or two earlier values.
onnx::GraphProto RandomDag(int count, std::mt19937& random) {
  std::vector<onnx::NodeProto> nodes;
  std::vector<std::string> values = {"X"};
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> inputs = {values[random() % values.size()]};
    if (random() % 2) inputs.push_back(values[random() % values.size()]);
    std::string output = absl::StrCat("v", i);
    nodes.push_back(Node(absl::StrCat("n", i), inputs.size() == 1 ? "Relu" : "Add", inputs,
                         {output}));
    values.push_back(output);
  }
  return Graph({"X"}, {}, std::move(nodes), {values.back()});
}

// True if each node of `order` comes after the producers of its inputs.
bool IsValidOrder(const GraphIndex& index, const std::vector<NodeId>& order) {
  absl::flat_hash_set<std::string> defined = {"X"};
  for (NodeId id : order) {
    for (const std::string& input : index.node(id).input()) {
      if (!defined.contains(input)) return false;
    }
    for (const std::string& output : index.node(id).output()) defined.insert(output);
  }
  return static_cast<int>(order.size()) == index.live_node_count();
}

TEST(GraphIndexTest, TopologicalOrderOfShuffledGraphs) {
  for (int seed = 0; seed < 20; ++seed) {
    std::mt19937 random(seed);
    onnx::GraphProto graph = RandomDag(60, random);
    {
      std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
      ASSERT_NE(index, nullptr);
      absl::StatusOr<std::vector<NodeId>> order = index->TopologicalOrder();
      ASSERT_TRUE(order.ok()) << order.status();
      EXPECT_EQ(*order, index->LiveNodes()) << "a sorted graph keeps its order";
    }
    std::shuffle(graph.mutable_node()->pointer_begin(), graph.mutable_node()->pointer_end(),
                 random);
    std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
    ASSERT_NE(index, nullptr);
    absl::StatusOr<std::vector<NodeId>> order = index->TopologicalOrder();
    ASSERT_TRUE(order.ok()) << order.status();
    EXPECT_TRUE(IsValidOrder(*index, *order)) << "seed " << seed;
  }
}

// Where an error shows up.
enum class Stage { kBuild, kOrder, kCheckOrder, kSubgraphOrder };

struct ErrorCase {
  std::string name;
  onnx::GraphProto graph;
  Stage stage;
  std::vector<std::string> expected;
  std::vector<std::string> unexpected;
};

onnx::GraphProto WithIf(onnx::GraphProto then_branch) {
  onnx::NodeProto node = Node("if_1", "If", {"C"}, {"Y"});
  AddGraphAttribute(node, "then_branch", std::move(then_branch));
  AddGraphAttribute(node, "else_branch", Graph({}, {}, {}, {"X"}));
  return Graph({"C", "X"}, {}, {node}, {"Y"});
}

std::vector<ErrorCase> ErrorCases() {
  return {
      {"cycle",
       Graph({"X"}, {},
             {Node("a", "Add", {"X", "B"}, {"A"}), Node("b", "Relu", {"A"}, {"B"}),
              Node("c", "Identity", {"B"}, {"Y"})},
             {"Y"}),
       Stage::kOrder,
       {"the nodes form a cycle", "node 'a' (Add) uses 'B' from node 'b' (Relu)",
        "which uses 'A' from node 'a' (Add)"},
       {"node 'c'"}},
      {"self_cycle", Graph({"X"}, {}, {Node("s", "Add", {"X", "S"}, {"S"})}, {"S"}),
       Stage::kOrder,
       {"cycle", "node 's' (Add) uses 'S' from node 's' (Add)"},
       {}},
      {"cycle_through_subgraph",
       [] {
         onnx::GraphProto graph =
             WithIf(Graph({}, {}, {Node("inner", "Relu", {"A"}, {"T"})}, {"T"}));
         *graph.add_node() = Node("a", "Neg", {"Y"}, {"A"});
         return graph;
       }(),
       Stage::kOrder,
       {"cycle", "node 'if_1' (If) uses 'A' from node 'a' (Neg)"},
       {}},
      {"undefined", Graph({"X"}, {}, {Node("r", "Relu", {"Q"}, {"Y"})}, {"Y"}), Stage::kOrder,
       {"main: node 'r' (Relu) uses 'Q', which nothing defines"},
       {"later"}},
      {"defined_later",
       Graph({"X"}, {}, {Node("b", "Relu", {"T"}, {"Y"}), Node("a", "Abs", {"X"}, {"T"})},
             {"Y"}),
       Stage::kCheckOrder,
       {"node 'b' (Relu) uses 'T' before it is defined: node 'a' (Abs) produces it later"},
       {"nothing defines"}},
      {"undefined_graph_output", Graph({"X"}, {}, {}, {"Z"}), Stage::kOrder,
       {"graph output #0 'Z' is not defined"},
       {}},
      {"unnamed_node", Graph({"X"}, {}, {Node("", "Relu", {"Q"}, {"Y"})}, {"Y"}), Stage::kOrder,
       {"node #0 (Relu) uses 'Q'"},
       {}},
      {"undefined_in_subgraph",
       WithIf(Graph({}, {}, {Node("inner", "Relu", {"Q"}, {"T"})}, {"T"})), Stage::kSubgraphOrder,
       {"main/then_branch of 'if_1': node 'inner' (Relu) uses 'Q', which nothing defines here "
        "or in an enclosing graph"},
       {}},
      {"two_nodes_produce",
       Graph({"X"}, {}, {Node("a", "Relu", {"X"}, {"Y"}), Node("b", "Abs", {"X"}, {"Y"})},
             {"Y"}),
       Stage::kBuild,
       {"main: value 'Y' is produced twice: by node 'a' (Relu) output 0 and by node 'b' (Abs) "
        "output 0"},
       {}},
      {"node_produces_input", Graph({"X"}, {}, {Node("a", "Relu", {"X"}, {"X"})}, {"X"}),
       Stage::kBuild,
       {"value 'X' is produced twice: by graph input #0 and by node 'a' (Relu) output 0"},
       {}},
      {"initializer_twice", Graph({}, {"W", "W"}, {}, {"W"}), Stage::kBuild,
       {"value 'W' is produced twice: by initializer #0 and by initializer #1"},
       {}},
      {"one_node_twice", Graph({"X"}, {}, {Node("split", "Split", {"X"}, {"Y", "Y"})}, {"Y"}),
       Stage::kBuild,
       {"by node 'split' (Split) output 0 and by node 'split' (Split) output 1"},
       {}},
      {"twice_in_subgraph",
       WithIf(Graph({}, {},
                    {Node("p", "Relu", {"X"}, {"T"}), Node("q", "Abs", {"X"}, {"T"})}, {"T"})),
       Stage::kBuild,
       {"main/then_branch of 'if_1': value 'T' is produced twice: by node 'p' (Relu)"},
       {}},
  };
}

TEST(GraphIndexTest, ErrorsNameWhatIsAtFault) {
  for (ErrorCase& c : ErrorCases()) {
    absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&c.graph);
    absl::Status status = index.status();
    if (index.ok()) {
      ASSERT_NE(c.stage, Stage::kBuild) << c.name << " built";
      switch (c.stage) {
        case Stage::kBuild:
          break;
        case Stage::kOrder:
          status = (*index)->TopologicalOrder().status();
          EXPECT_EQ(status.code(), (*index)->CheckOrder().code()) << c.name;
          break;
        case Stage::kCheckOrder:
          EXPECT_TRUE((*index)->TopologicalOrder().ok()) << c.name;
          status = (*index)->CheckOrder();
          break;
        case Stage::kSubgraphOrder:
          status = (*index)->Subgraphs(0)[0]->TopologicalOrder().status();
          break;
      }
    }
    ASSERT_FALSE(status.ok()) << c.name;
    for (const std::string& text : c.expected) {
      EXPECT_THAT(std::string(status.message()), HasSubstr(text)) << c.name;
    }
    for (const std::string& text : c.unexpected) {
      EXPECT_THAT(std::string(status.message()), Not(HasSubstr(text))) << c.name;
    }
  }
}

// `depth` If nodes, each in the then branch of the one before.
onnx::GraphProto NestedIfs(int depth) {
  onnx::GraphProto graph = Graph({}, {}, {Node("leaf", "Identity", {"C"}, {"Y"})}, {"Y"});
  for (int level = 0; level < depth; ++level) {
    onnx::NodeProto node = Node(absl::StrCat("if_", level), "If", {"C"}, {"Y"});
    AddGraphAttribute(node, "then_branch", std::move(graph));
    graph = Graph({}, {}, {node}, {"Y"});
  }
  graph.add_input()->set_name("C");
  return graph;
}

TEST(GraphIndexTest, DeepNestingIsRefusedNotOverflowed) {
  onnx::GraphProto ok = NestedIfs(kMaxGraphDepth);
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&ok);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ((*index)->GraphsInTree().size(), static_cast<size_t>(kMaxGraphDepth) + 1);
  EXPECT_EQ(Strings((*index)->GraphsInTree().back()->FreeNames()), std::vector<std::string>{"C"});

  onnx::GraphProto deep = NestedIfs(kMaxGraphDepth + 1);
  absl::StatusOr<std::unique_ptr<GraphIndex>> refused = GraphIndex::Build(&deep);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("subgraphs nest deeper than 64 levels"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("main/then_branch of 'if_"));
}

// ---------------------------------------------------------------------------
// Fresh names.

// A model using names of the fresh-name form in every kind of place.
onnx::ModelProto ModelWithFreshLookingNames() {
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(R"((t__0, C) => (Y) <t__4> {
    [t__2] t__1 = Relu(t__0)
    [if] Y = If(C) <then_branch = () => (t__3) { [n] t__3 = Neg(t__1) },
                    else_branch = () => (t_x) { [m] t_x = Abs(t__1) }>
  })");
  EXPECT_TRUE(graph.ok()) << graph.status();
  onnx::ModelProto model;
  if (graph.ok()) *model.mutable_graph() = *std::move(graph);
  onnx::FunctionProto* function = model.add_functions();
  function->set_name("f");
  function->add_input("t__5");
  function->add_output("t__6");
  *function->add_node() = Node("t__7", "Relu", {"t__5"}, {"t__6"});
  onnx::GraphProto* algorithm = model.add_training_info()->mutable_algorithm();
  *algorithm->add_node() = Node("step", "Neg", {"t__1"}, {"t__8"});
  algorithm->add_output()->set_name("t__8");
  return model;
}

const absl::flat_hash_set<std::string> kTakenNames = {"t__0", "t__1", "t__2", "t__3", "t__4",
                                                      "t__5", "t__6", "t__7", "t__8"};

TEST(GraphIndexTest, FreshNamesAvoidEveryNameOfTheModel) {
  onnx::ModelProto model = ModelWithFreshLookingNames();
  absl::StatusOr<std::unique_ptr<ModelIndex>> index = ModelIndex::Build(&model);
  ASSERT_TRUE(index.ok()) << index.status();
  absl::flat_hash_set<std::string> issued;
  GraphIndex* then_branch = (*index)->main_graph()->Subgraphs(1)[0];
  for (int i = 0; i < 30; ++i) {
    // The model, its graphs and subgraphs all draw from one pool.
    for (std::string name : {(*index)->FreshName("t"), (*index)->main_graph()->FreshName("t"),
                             then_branch->FreshName("t")}) {
      EXPECT_FALSE(kTakenNames.contains(name)) << name;
      EXPECT_TRUE(issued.insert(name).second) << name;
      EXPECT_TRUE(absl::StartsWith(name, "t__")) << name;
    }
  }
  // Names brought in by edits are avoided too.
  ASSERT_TRUE(Edit((*index)->main_graph())
                  .InsertNodes({Node("t__500", "Relu", {"t__0"}, {"t__501"})})
                  .ok());
  ASSERT_TRUE(Edit(then_branch).InsertNodes({Node("k", "Relu", {"t__1"}, {"t__502"})}).ok());
  for (int i = 0; i < 1000; ++i) {
    const std::string name = (*index)->FreshName("t");
    EXPECT_TRUE(name != "t__500" && name != "t__501" && name != "t__502") << name;
    EXPECT_TRUE(issued.insert(name).second) << name;
  }
  // A graph indexed alone has a pool of its own, over its tree.
  onnx::GraphProto copy = model.graph();
  std::unique_ptr<GraphIndex> alone = BuildOrDie(copy);
  ASSERT_NE(alone, nullptr);
  EXPECT_EQ(alone->FreshName("t"), "t__5");
  EXPECT_EQ(alone->FreshName("t__3"), "t__3__0");
  EXPECT_EQ(alone->FreshName("t_"), "t___0");
  EXPECT_EQ(alone->FreshName(""), "__0");
}

TEST(GraphIndexTest, NameGeneratorAvoidsEveryNameOfTheModel) {
  const onnx::ModelProto model = ModelWithFreshLookingNames();
  NameGenerator names(model);
  names.Reserve("t__10");
  absl::flat_hash_set<std::string> issued;
  for (int i = 0; i < 100; ++i) {
    const std::string name = names.FreshName("t");
    EXPECT_FALSE(kTakenNames.contains(name) || name == "t__10") << name;
    EXPECT_TRUE(issued.insert(name).second) << name;
  }
  EXPECT_EQ(names.FreshName("u"), "u__0");
}

}  // namespace
}  // namespace onnxconvert::graph_index_testing
