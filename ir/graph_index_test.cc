#include "ir/graph_index.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert {
namespace {

using Kind = ValueSource::Kind;
using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------
// Building graphs.

onnx::NodeProto Node(absl::string_view name, absl::string_view op,
                     std::vector<std::string> inputs, std::vector<std::string> outputs,
                     absl::string_view domain = "") {
  onnx::NodeProto node;
  node.set_name(std::string(name));
  node.set_op_type(std::string(op));
  node.set_domain(std::string(domain));
  for (std::string& input : inputs) node.add_input(std::move(input));
  for (std::string& output : outputs) node.add_output(std::move(output));
  return node;
}

// A graph with `inputs`, float initializers `initializers`, `nodes` and
// `outputs`.
onnx::GraphProto Graph(std::vector<std::string> inputs, std::vector<std::string> initializers,
                       std::vector<onnx::NodeProto> nodes, std::vector<std::string> outputs) {
  onnx::GraphProto graph;
  graph.set_name("g");
  for (const std::string& name : inputs) graph.add_input()->set_name(name);
  for (const std::string& name : initializers) {
    onnx::TensorProto* tensor = graph.add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    tensor->add_float_data(1.0f);
  }
  for (onnx::NodeProto& node : nodes) *graph.add_node() = std::move(node);
  for (const std::string& name : outputs) graph.add_output()->set_name(name);
  return graph;
}

onnx::GraphProto ParseGraph(const std::string& text) {
  onnx::GraphProto graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph)) << text;
  return graph;
}

void AddGraphAttribute(onnx::NodeProto& node, absl::string_view name, onnx::GraphProto graph) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(std::string(name));
  attribute->set_type(onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = std::move(graph);
}

std::unique_ptr<GraphIndex> BuildOrDie(onnx::GraphProto& graph) {
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&graph);
  EXPECT_TRUE(index.ok()) << index.status();
  return index.ok() ? *std::move(index) : nullptr;
}

std::vector<std::string> Strings(const std::vector<absl::string_view>& views) {
  return std::vector<std::string>(views.begin(), views.end());
}

std::vector<std::string> NodeNames(const GraphIndex& index, const std::vector<NodeId>& ids) {
  std::vector<std::string> names;
  for (NodeId id : ids) names.push_back(index.node(id).name());
  return names;
}

NodeId IdOf(const GraphIndex& index, absl::string_view name) {
  for (NodeId id : index.LiveNodes()) {
    if (index.node(id).name() == name) return id;
  }
  ADD_FAILURE() << "no live node " << name;
  return kNoNode;
}

const GraphIndex* GraphAt(const GraphIndex& root, absl::string_view path) {
  for (const GraphIndex* graph : root.GraphsInTree()) {
    if (graph->path() == path) return graph;
  }
  ADD_FAILURE() << "no graph at " << path;
  return nullptr;
}

GraphIndex* GraphAt(GraphIndex& root, absl::string_view path) {
  return const_cast<GraphIndex*>(GraphAt(std::as_const(root), path));
}

// ---------------------------------------------------------------------------
// Comparing an edited index with one built from scratch.

// The graph as the index sees it: live nodes in LiveNodes() order, subgraphs
// likewise, so that a fresh Build describes what the index should.
onnx::GraphProto LiveCopy(const GraphIndex& index) {
  onnx::GraphProto copy = *index.graph();
  copy.clear_node();
  for (NodeId id : index.LiveNodes()) {
    onnx::NodeProto* node = copy.add_node();
    *node = index.node(id);
    const std::vector<const GraphIndex*> children = index.Subgraphs(id);
    size_t next = 0;
    for (onnx::AttributeProto& attribute : *node->mutable_attribute()) {
      if (attribute.has_g()) *attribute.mutable_g() = LiveCopy(*children[next++]);
      for (onnx::GraphProto& graph : *attribute.mutable_graphs()) {
        graph = LiveCopy(*children[next++]);
      }
    }
  }
  return copy;
}

std::string DescribeSource(const GraphIndex& index, const ValueSource& source) {
  switch (source.kind) {
    case Kind::kNodeOutput:
      return absl::StrCat("node ", index.node(source.index).name(), ":", source.slot);
    default:
      return absl::StrCat("kind ", static_cast<int>(source.kind), ":", source.index);
  }
}

std::string DescribeUse(const GraphIndex& index, const ValueUse& use) {
  if (use.is_graph_output()) return absl::StrCat("output ", use.slot);
  if (use.is_subgraph()) return absl::StrCat("subgraphs of ", index.node(use.node).name());
  return absl::StrCat("input ", index.node(use.node).name(), ":", use.slot);
}

// Everything the index answers, by names rather than ids, one fact a line.
std::string Snapshot(const GraphIndex& index) {
  std::vector<std::string> lines;
  lines.push_back(absl::StrCat("path ", index.path()));
  lines.push_back(absl::StrCat("free ", absl::StrJoin(index.FreeNames(), ",")));
  for (absl::string_view name : index.ValueNames()) {
    std::vector<std::string> uses;
    for (const ValueUse& use : index.Consumers(name)) uses.push_back(DescribeUse(index, use));
    std::sort(uses.begin(), uses.end());
    lines.push_back(absl::StrCat("value ", name, " from ",
                                 DescribeSource(index, index.Producer(name)), " used by ",
                                 absl::StrJoin(uses, ",")));
  }
  for (NodeId id : index.LiveNodes()) {
    const onnx::NodeProto& node = index.node(id);
    std::vector<std::string> same_op =
        NodeNames(index, index.NodesOf(node.domain(), node.op_type()));
    std::sort(same_op.begin(), same_op.end());  // ids differ from a fresh index's
    lines.push_back(absl::StrCat("node ", node.name(), " op ", node.domain(), ":",
                                 node.op_type(), " with ",
                                 absl::StrJoin(same_op, ","), " outer ",
                                 absl::StrJoin(index.OuterReferences(id), ",")));
    for (const GraphIndex* child : index.Subgraphs(id)) lines.push_back(Snapshot(*child));
  }
  absl::StatusOr<std::vector<NodeId>> order = index.TopologicalOrder();
  lines.push_back(order.ok() ? absl::StrCat("order ", absl::StrJoin(NodeNames(index, *order), ","))
                             : absl::StrCat("no order ", order.status().code()));
  std::sort(lines.begin() + 2, lines.end());
  return absl::StrJoin(lines, "\n");
}

// Checks every graph of the tree against its bookkeeping and against a
// fresh index of its live copy.
void ExpectConsistent(const GraphIndex& index, absl::string_view context) {
  for (const GraphIndex* graph : index.GraphsInTree()) {
    absl::Status status = graph->CheckConsistency();
    ASSERT_TRUE(status.ok()) << context << ": " << status;
  }
  onnx::GraphProto copy = LiveCopy(index);
  absl::StatusOr<std::unique_ptr<GraphIndex>> fresh = GraphIndex::Build(&copy);
  ASSERT_TRUE(fresh.ok()) << context << ": " << fresh.status();
  EXPECT_EQ(Snapshot(index), Snapshot(**fresh)) << context;
}

// Checks a committed index is exactly what Build gives on its graph: same
// ids, same uses in the same order.
void ExpectIdentical(const GraphIndex& index, const GraphIndex& fresh) {
  ASSERT_EQ(index.path(), fresh.path());
  ASSERT_EQ(index.node_count(), fresh.node_count()) << index.path();
  EXPECT_EQ(index.live_node_count(), index.node_count()) << index.path();
  EXPECT_EQ(index.ValueNames(), fresh.ValueNames()) << index.path();
  EXPECT_EQ(index.FreeNames(), fresh.FreeNames()) << index.path();
  for (absl::string_view name : fresh.ValueNames()) {
    EXPECT_EQ(index.Producer(name), fresh.Producer(name)) << index.path() << " " << name;
    const absl::Span<const ValueUse> expected = fresh.Consumers(name);
    const absl::Span<const ValueUse> actual = index.Consumers(name);
    EXPECT_EQ(std::vector<ValueUse>(actual.begin(), actual.end()),
              std::vector<ValueUse>(expected.begin(), expected.end()))
        << index.path() << " " << name;
  }
  for (NodeId id = 0; id < fresh.node_count(); ++id) {
    const onnx::NodeProto& node = fresh.node(id);
    EXPECT_EQ(index.node(id).name(), node.name());
    EXPECT_EQ(index.NodesOf(node.domain(), node.op_type()),
              fresh.NodesOf(node.domain(), node.op_type()));
    EXPECT_EQ(index.OuterReferences(id), fresh.OuterReferences(id));
    const std::vector<const GraphIndex*> children = index.Subgraphs(id);
    const std::vector<const GraphIndex*> fresh_children = fresh.Subgraphs(id);
    ASSERT_EQ(children.size(), fresh_children.size());
    for (size_t k = 0; k < children.size(); ++k) ExpectIdentical(*children[k], *fresh_children[k]);
  }
  absl::StatusOr<std::vector<NodeId>> order = index.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, index.LiveNodes()) << index.path();
  EXPECT_TRUE(index.CheckOrder().ok()) << index.CheckOrder();
}

// Commits every graph of the tree, then compares with a fresh index.
void CommitAndExpectIdentical(GraphIndex& index, absl::string_view context) {
  for (GraphIndex* graph : index.GraphsInTree()) {
    absl::Status status = graph->Commit();
    ASSERT_TRUE(status.ok()) << context << ": " << status;
    EXPECT_FALSE(graph->HasPendingEdits());
  }
  for (const GraphIndex* graph : index.GraphsInTree()) {
    absl::Status status = graph->CheckConsistency();
    ASSERT_TRUE(status.ok()) << context << ": " << status;
  }
  onnx::GraphProto copy = *index.graph();
  absl::StatusOr<std::unique_ptr<GraphIndex>> fresh = GraphIndex::Build(&copy);
  ASSERT_TRUE(fresh.ok()) << context << ": " << fresh.status();
  SCOPED_TRACE(context);
  ExpectIdentical(index, **fresh);
}

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

// Loop body -> If branch -> Scan body: the deepest graph uses P and Z from
// the main graph and L from the loop body; the else branch defines its own Z.
constexpr char kNested[] = R"pb(
  input { name: "N" } input { name: "C" } input { name: "X" } input { name: "Z" }
  node { name: "pre" op_type: "Relu" input: "X" output: "P" }
  node {
    name: "loop_1" op_type: "Loop" input: "N" input: "C" output: "R"
    attribute {
      name: "body" type: GRAPH
      g {
        input { name: "i" } input { name: "cond_in" }
        node { name: "mk" op_type: "Neg" input: "i" output: "L" }
        node {
          name: "if_2" op_type: "If" input: "cond_in" output: "F"
          attribute {
            name: "then_branch" type: GRAPH
            g {
              node {
                name: "scan_3" op_type: "Scan" input: "L" output: "S"
                attribute {
                  name: "body" type: GRAPH
                  g {
                    input { name: "s_in" }
                    node { name: "deep" op_type: "Add" input: "P" input: "Z" output: "D" }
                    node { name: "deep2" op_type: "Mul" input: "D" input: "L" output: "D2" }
                    output { name: "D2" }
                  }
                }
              }
              output { name: "S" }
            }
          }
          attribute {
            name: "else_branch" type: GRAPH
            g {
              node { name: "shadow" op_type: "Identity" input: "X" output: "Z" }
              node { name: "e" op_type: "Add" input: "Z" input: "X" output: "E" }
              output { name: "E" }
            }
          }
        }
        output { name: "cond_in" } output { name: "F" }
      }
    }
  }
  output { name: "R" }
)pb";

constexpr char kBody[] = "main/body of 'loop_1'";
constexpr char kThen[] = "main/body of 'loop_1'/then_branch of 'if_2'";
constexpr char kScan[] = "main/body of 'loop_1'/then_branch of 'if_2'/body of 'scan_3'";
constexpr char kElse[] = "main/body of 'loop_1'/else_branch of 'if_2'";

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
  onnx::ModelProto model;
  *model.mutable_graph() = ParseGraph(R"pb(
    input { name: "t__0" } input { name: "C" }
    node { name: "t__2" op_type: "Relu" input: "t__0" output: "t__1" }
    node {
      name: "if" op_type: "If" input: "C" output: "Y"
      attribute {
        name: "then_branch" type: GRAPH
        g { node { name: "n" op_type: "Neg" input: "t__1" output: "t__3" } output { name: "t__3" } }
      }
      attribute {
        name: "else_branch" type: GRAPH
        g { node { name: "m" op_type: "Abs" input: "t__1" output: "t_x" } output { name: "t_x" } }
      }
    }
    value_info { name: "t__4" }
    output { name: "Y" }
  )pb");
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
  ASSERT_TRUE((*index)
                  ->main_graph()
                  ->InsertNodes({Node("t__500", "Relu", {"t__0"}, {"t__501"})})
                  .ok());
  ASSERT_TRUE(then_branch->InsertNodes({Node("k", "Relu", {"t__1"}, {"t__502"})}).ok());
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

// ---------------------------------------------------------------------------
// Edits.

onnx::GraphProto Chain() {
  return Graph({"X"}, {},
               {Node("a", "Relu", {"X"}, {"A"}), Node("b", "Abs", {"A"}, {"B"}),
                Node("c", "Neg", {"B"}, {"Y"})},
               {"Y"});
}

TEST(GraphIndexTest, CommitPlacesReplacementsWhereTheNodeWas) {
  onnx::GraphProto graph = Chain();
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  absl::StatusOr<std::vector<NodeId>> ids =
      index->ReplaceNode(1, {Node("b1", "Exp", {"A"}, {"T"}), Node("b2", "Log", {"T"}, {"B"})});
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<NodeId>{3, 4}));
  EXPECT_FALSE(index->IsLive(1));
  EXPECT_EQ(NodeNames(*index, index->LiveNodes()),
            (std::vector<std::string>{"a", "b1", "b2", "c"}));
  EXPECT_EQ(index->Producer("B"), (ValueSource{Kind::kNodeOutput, 4, 0}));
  EXPECT_TRUE(index->NodesOf("", "Abs").empty());
  EXPECT_EQ(graph.node_size(), 5);  // the dead node stays until Commit
  EXPECT_TRUE(index->HasPendingEdits());
  ExpectConsistent(*index, "after replace");

  std::vector<NodeId> new_ids;
  ASSERT_TRUE(index->Commit(&new_ids).ok());
  EXPECT_EQ(new_ids, (std::vector<NodeId>{0, kNoNode, 3, 1, 2}));
  std::vector<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) names.push_back(node.name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b1", "b2", "c"}));
  CommitAndExpectIdentical(*index, "after commit");
}

// Nodes inserted before and after one anchor, and around the nodes
// inserted, come out in the order the edits describe: each node after the
// nodes inserted before it and before those inserted after it, in the order
// they were inserted.
TEST(GraphIndexTest, InsertionsAroundAnAnchorKeepTheirOrder) {
  onnx::GraphProto graph = Chain();
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->InsertNodesAfter(1, {Node("after1", "Exp", {"B"}, {"E1"})}).ok());
  ASSERT_TRUE(index->InsertNodes({Node("before1", "Sqrt", {"A"}, {"S1"})}, 1).ok());
  absl::StatusOr<std::vector<NodeId>> after2 =
      index->InsertNodesAfter(1, {Node("after2", "Log", {"E1"}, {"E2"})});
  ASSERT_TRUE(after2.ok()) << after2.status();
  // Around an inserted node, and after the last node.
  ASSERT_TRUE(index->InsertNodesAfter((*after2)[0], {Node("after2b", "Abs", {"E2"}, {"E3"})}).ok());
  ASSERT_TRUE(index->InsertNodes({Node("before2", "Neg", {"S1"}, {"S2"})}, 1).ok());
  ASSERT_TRUE(index->InsertNodesAfter(2, {Node("last", "Relu", {"Y"}, {"Z"})}).ok());
  EXPECT_EQ(NodeNames(*index, index->LiveNodes()),
            (std::vector<std::string>{"a", "before1", "before2", "b", "after1", "after2",
                                      "after2b", "c", "last"}));
  ExpectConsistent(*index, "after inserting around b");
  ASSERT_TRUE(index->Commit().ok());
  std::vector<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) names.push_back(node.name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "before1", "before2", "b", "after1", "after2",
                                             "after2b", "c", "last"}));
  CommitAndExpectIdentical(*index, "after commit");
}

// A removed node keeps its place until Commit: nodes inserted around it
// take it.
TEST(GraphIndexTest, InsertionsAroundARemovedNodeTakeItsPlace) {
  onnx::GraphProto graph = Chain();
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->RemoveNode(1).ok());
  ASSERT_TRUE(index->InsertNodesAfter(1, {Node("b2", "Exp", {"T"}, {"B"})}).ok());
  ASSERT_TRUE(index->InsertNodes({Node("b1", "Log", {"A"}, {"T"})}, 1).ok());
  EXPECT_EQ(NodeNames(*index, index->LiveNodes()),
            (std::vector<std::string>{"a", "b1", "b2", "c"}));
  ExpectConsistent(*index, "after replacing b around it");
  CommitAndExpectIdentical(*index, "after commit");
  EXPECT_EQ(index->InsertNodesAfter(7, {Node("x", "Relu", {"X"}, {"Q"})}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GraphIndexTest, CommitMovesNodesAfterTheirProducers) {
  onnx::GraphProto graph = Chain();
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  // An adapter added at the end, feeding the first node.
  ASSERT_TRUE(index->InsertNodes({Node("k", "Sqrt", {"X"}, {"K"})}).ok());
  ASSERT_TRUE(index->SetInput(0, 0, "K").ok());
  ExpectConsistent(*index, "after insert");
  ASSERT_TRUE(index->Commit().ok());
  std::vector<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) names.push_back(node.name());
  EXPECT_EQ(names, (std::vector<std::string>{"k", "a", "b", "c"}));
  CommitAndExpectIdentical(*index, "after commit");
}

TEST(GraphIndexTest, CommitRefusesACycleAndChangesNothing) {
  onnx::GraphProto graph = Chain();
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->RemoveNode(1).ok());
  ASSERT_TRUE(index->SetInput(0, 0, "Y").ok());
  ASSERT_TRUE(index->InsertNodes({Node("b", "Abs", {"A"}, {"B"})}, 2).ok());
  const onnx::GraphProto before = graph;
  const std::string snapshot = Snapshot(*index);
  absl::Status status = index->Commit();
  EXPECT_THAT(std::string(status.message()), HasSubstr("cycle"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("node 'a' (Relu) uses 'Y' from node 'c'"));
  EXPECT_EQ(graph.SerializeAsString(), before.SerializeAsString());
  EXPECT_EQ(Snapshot(*index), snapshot);
  ExpectConsistent(*index, "after refused commit");
  // Undoing the edit makes it commit.
  ASSERT_TRUE(index->SetInput(0, 0, "X").ok());
  CommitAndExpectIdentical(*index, "after commit");
}

struct EditErrorCase {
  std::string name;
  std::function<absl::Status(GraphIndex&)> edit;
  absl::StatusCode code;
  std::string expected;
};

TEST(GraphIndexTest, RefusedEditsChangeNothing) {
  const EditErrorCase cases[] = {
      {"insert_existing_value",
       [](GraphIndex& index) {
         return index.InsertNodes({Node("x", "Relu", {"X"}, {"A"})}).status();
       },
       absl::StatusCode::kAlreadyExists,
       "main: value 'A' is produced twice: by node 'a' (Relu) output 0 and by new node 'x' "
       "(Relu)"},
      {"insert_twice_in_batch",
       [](GraphIndex& index) {
         return index
             .InsertNodes({Node("x", "Relu", {"X"}, {"Q"}), Node("", "Abs", {"X"}, {"Q"})})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "value 'Q' is produced twice: by new node 'x' (Relu) and by new node #1 (Abs)"},
      {"replace_with_other_nodes_value",
       [](GraphIndex& index) {
         return index.ReplaceNode(1, {Node("x", "Relu", {"A"}, {"Y"})}).status();
       },
       absl::StatusCode::kAlreadyExists, "by node 'c' (Neg) output 0 and by new node 'x'"},
      {"insert_bad_subgraph",
       [](GraphIndex& index) {
         onnx::NodeProto node = Node("if", "If", {"X"}, {"Q"});
         AddGraphAttribute(
             node, "then_branch",
             Graph({}, {}, {Node("p", "Relu", {"X"}, {"T"}), Node("q", "Abs", {"X"}, {"T"})},
                   {"T"}));
         return index.InsertNodes({Node("fine", "Relu", {"X"}, {"F"}), node}).status();
       },
       absl::StatusCode::kInvalidArgument,
       "main/then_branch of 'if': value 'T' is produced twice"},
      {"insert_before_unknown_node",
       [](GraphIndex& index) {
         return index.InsertNodes({Node("x", "Relu", {"X"}, {"Q"})}, 7).status();
       },
       absl::StatusCode::kInvalidArgument, "main: node id 7 is not a node of this graph"},
      {"remove_unknown_node", [](GraphIndex& index) { return index.RemoveNode(-3); },
       absl::StatusCode::kInvalidArgument, "node id -3 is not a live node"},
      {"set_missing_slot", [](GraphIndex& index) { return index.SetInput(1, 1, "X"); },
       absl::StatusCode::kOutOfRange, "node 'b' (Abs) has 1 inputs, not slot 1"},
      {"initializer_clash",
       [](GraphIndex& index) {
         onnx::TensorProto tensor;
         tensor.set_name("B");
         return index.AddInitializer(tensor);
       },
       absl::StatusCode::kAlreadyExists,
       "cannot add initializer 'B': already produced by node 'b' (Abs) output 0"},
      {"initializer_without_name",
       [](GraphIndex& index) { return index.AddInitializer(onnx::TensorProto()); },
       absl::StatusCode::kInvalidArgument, "an initializer needs a name"},
      {"rename_to_nothing", [](GraphIndex& index) { return index.RenameUses("A", ""); },
       absl::StatusCode::kInvalidArgument, "cannot rename the uses of 'A' to an empty name"},
  };
  for (const EditErrorCase& c : cases) {
    onnx::GraphProto graph = Chain();
    std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
    ASSERT_NE(index, nullptr);
    const std::string before = graph.SerializeAsString();
    const std::string snapshot = Snapshot(*index);
    absl::Status status = c.edit(*index);
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected)) << c.name;
    EXPECT_EQ(graph.SerializeAsString(), before) << c.name;
    EXPECT_EQ(Snapshot(*index), snapshot) << c.name;
    EXPECT_FALSE(index->HasPendingEdits()) << c.name;
    EXPECT_TRUE(index->CheckConsistency().ok()) << c.name;
  }
}

TEST(GraphIndexTest, EditsInsideSubgraphsReachTheOuterGraphs) {
  onnx::GraphProto graph = ParseGraph(kNested);
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  const NodeId loop = IdOf(*index, "loop_1");
  GraphIndex* scan = GraphAt(*index, kScan);
  ASSERT_NE(scan, nullptr);

  // The deepest graph stops using Z and starts using X.
  ASSERT_TRUE(scan->SetInput(IdOf(*scan, "deep"), 1, "X").ok());
  ExpectConsistent(*index, "after redirecting in the scan body");
  EXPECT_EQ(Strings(index->OuterReferences(loop)), (std::vector<std::string>{"P", "X"}));
  EXPECT_TRUE(index->Consumers("Z").empty());
  EXPECT_EQ(Strings(GraphAt(*index, kThen)->FreeNames()),
            (std::vector<std::string>{"L", "P", "X"}));

  // Renaming in the main graph follows the uses into the scan body.
  onnx::TensorProto p2;
  p2.set_name("P2");
  ASSERT_TRUE(index->AddInitializer(p2).ok());
  ASSERT_TRUE(index->RenameUses("P", "P2").ok());
  ExpectConsistent(*index, "after renaming P");
  EXPECT_EQ(scan->node(IdOf(*scan, "deep")).input(0), "P2");
  EXPECT_TRUE(index->Consumers("P").empty());
  EXPECT_EQ(std::vector<ValueUse>(index->Consumers("P2").begin(), index->Consumers("P2").end()),
            std::vector<ValueUse>{ValueUse::Subgraph(loop)});
  EXPECT_EQ(index->FindInitializer("P2"), &graph.initializer(0));
  EXPECT_EQ(scan->FindInitializer("P2"), &graph.initializer(0));

  // X cannot become Z: the else branch has a Z of its own.
  const std::string snapshot = Snapshot(*index);
  absl::Status refused = index->RenameUses("X", "Z");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr(absl::StrCat(kElse, ": cannot rename the uses of 'X' to 'Z'")));
  EXPECT_EQ(Snapshot(*index), snapshot);

  // A node inside the loop body shadows an outer name: no longer taken from
  // outside.
  GraphIndex* body = GraphAt(*index, kBody);
  ASSERT_TRUE(body->InsertNodes({Node("shadow_p2", "Identity", {"i"}, {"P2"})}, 0).ok());
  ExpectConsistent(*index, "after shadowing P2");
  EXPECT_TRUE(index->Consumers("P2").empty());
  EXPECT_EQ(scan->DefiningScope("P2"), body);

  // Replacing the If drops the whole branch tree and what it used.
  ASSERT_TRUE(body->ReplaceNode(IdOf(*body, "if_2"), {Node("f", "Identity", {"L"}, {"F"})}).ok());
  ExpectConsistent(*index, "after replacing the If");
  EXPECT_EQ(index->GraphsInTree().size(), 2u);
  EXPECT_TRUE(index->OuterReferences(loop).empty());
  EXPECT_TRUE(index->Consumers("X").size() == 1);
  CommitAndExpectIdentical(*index, "after commit");

  // Removing the loop drops its body index.
  ASSERT_TRUE(index->RemoveNode(loop).ok());
  EXPECT_EQ(index->GraphsInTree().size(), 1u);
  ExpectConsistent(*index, "after removing the loop");
}

// Random edits of the kinds an opset step makes, each followed by a check
// against an index rebuilt from scratch; commits along the way.
class RandomEditor {
 public:
  RandomEditor(GraphIndex& index, uint32_t seed) : index_(index), random_(seed) {}

  // Makes one random edit; returns what it did.
  std::string Step() {
    switch (random_() % 7) {
      case 0:
        return Replace();
      case 1:
        return InsertAdapterBefore();
      case 2:
        return Bypass();
      case 3:
        return RedirectThroughNewNode();
      case 4:
        return NewInitializer();
      case 5:
        return EditLoopBody();
      default:
        return "nothing";
    }
  }

 private:
  // A live main-graph node without subgraphs, with one output that is not a
  // graph output and a first input; kNoNode if none.
  NodeId PickSimpleNode() {
    std::vector<NodeId> candidates;
    for (NodeId id : index_.LiveNodes()) {
      const onnx::NodeProto& node = index_.node(id);
      if (node.output_size() != 1 || node.input_size() == 0 || node.input(0).empty()) continue;
      if (!index_.Subgraphs(id).empty()) continue;
      bool graph_output = false;
      for (const ValueUse& use : index_.Consumers(node.output(0))) {
        graph_output |= use.is_graph_output();
      }
      if (!graph_output) candidates.push_back(id);
    }
    return candidates.empty() ? kNoNode : candidates[random_() % candidates.size()];
  }

  std::string Replace() {
    const NodeId id = PickSimpleNode();
    if (id == kNoNode) return "nothing";
    const onnx::NodeProto node = index_.node(id);
    const std::string middle = index_.FreshName("mid");
    const absl::StatusOr<std::vector<NodeId>> ids = index_.ReplaceNode(
        id, {Node(index_.FreshName("r"), "Neg", {node.input(0)}, {middle}),
             Node(index_.FreshName("r"), "Add", {middle, node.input(0)}, {node.output(0)})});
    EXPECT_TRUE(ids.ok()) << ids.status();
    return absl::StrCat("replace ", node.name());
  }

  std::string InsertAdapterBefore() {
    const NodeId id = PickSimpleNode();
    if (id == kNoNode) return "nothing";
    const std::string input = index_.node(id).input(0);
    const std::string adapted = index_.FreshName("adapted");
    EXPECT_TRUE(
        index_.InsertNodes({Node(index_.FreshName("cast"), "Cast", {input}, {adapted})}, id)
            .ok());
    EXPECT_TRUE(index_.SetInput(id, 0, adapted).ok());
    return absl::StrCat("adapter before ", index_.node(id).name());
  }

  std::string Bypass() {
    const NodeId id = PickSimpleNode();
    if (id == kNoNode) return "nothing";
    const onnx::NodeProto node = index_.node(id);
    EXPECT_TRUE(index_.RenameUses(node.output(0), node.input(0)).ok());
    EXPECT_TRUE(index_.RemoveNode(id).ok());
    return absl::StrCat("bypass ", node.name());
  }

  std::string RedirectThroughNewNode() {
    const NodeId id = PickSimpleNode();
    if (id == kNoNode) return "nothing";
    const std::string output = index_.node(id).output(0);
    const std::string redirected = index_.FreshName("redirected");
    EXPECT_TRUE(index_.RenameUses(output, redirected).ok());
    // Placed at the end: Commit must move its consumers after it.
    EXPECT_TRUE(
        index_.InsertNodes({Node(index_.FreshName("id"), "Identity", {output}, {redirected})})
            .ok());
    return absl::StrCat("redirect ", output);
  }

  std::string NewInitializer() {
    const NodeId id = PickSimpleNode();
    if (id == kNoNode) return "nothing";
    onnx::TensorProto tensor;
    tensor.set_name(index_.FreshName("init"));
    const std::string name = tensor.name();
    EXPECT_TRUE(index_.AddInitializer(std::move(tensor)).ok());
    const int slot = static_cast<int>(random_() % index_.node(id).input_size());
    EXPECT_TRUE(index_.SetInput(id, slot, name).ok());
    return absl::StrCat("initializer into ", index_.node(id).name());
  }

  std::string EditLoopBody() {
    const std::vector<NodeId> loops = index_.NodesOf("", "Loop");
    if (loops.empty()) return "nothing";
    GraphIndex& body = *index_.Subgraphs(loops[0])[0];
    const std::vector<NodeId> live = body.LiveNodes();
    const NodeId before = live.empty() ? kNoNode : live[random_() % live.size()];
    // X comes from the main graph, W too (W may have been redirected).
    const std::string outer = random_() % 2 ? "X" : "W";
    EXPECT_TRUE(body.InsertNodes({Node(body.FreshName("inner"), "Relu", {outer},
                                       {body.FreshName("inner_v")})},
                                 before)
                    .ok());
    if (!live.empty() && random_() % 2) {
      const NodeId victim = live[random_() % live.size()];
      const onnx::NodeProto& node = body.node(victim);
      if (node.output_size() == 1 && body.Consumers(node.output(0)).empty()) {
        EXPECT_TRUE(body.RemoveNode(victim).ok());
      }
    }
    return "edit loop body";
  }

  GraphIndex& index_;
  std::mt19937 random_;
};

// A chain with a Loop whose body uses main-graph values, and an If.
onnx::GraphProto EditableGraph() {
  std::vector<onnx::NodeProto> nodes;
  std::string previous = "X";
  for (int k = 0; k < 24; ++k) {
    const std::string output = absl::StrCat("v", k);
    const std::string name = absl::StrCat("n", k);
    if (k == 6) {
      onnx::NodeProto loop = Node(name, "Loop", {"", ""}, {output});
      AddGraphAttribute(loop, "body",
                        Graph({"i", "c"}, {},
                              {Node("use_v3", "Add", {"v3", "W"}, {"u"}),
                               Node("use_u", "Mul", {"u", "i"}, {"u2"})},
                              {"c", "u2"}));
      nodes.push_back(loop);
    } else if (k == 11) {
      onnx::NodeProto node = Node(name, "If", {previous}, {output});
      AddGraphAttribute(node, "then_branch",
                        Graph({}, {}, {Node("t", "Identity", {"v9"}, {"tv"})}, {"tv"}));
      AddGraphAttribute(node, "else_branch", Graph({}, {}, {}, {"v2"}));
      nodes.push_back(node);
    } else if (k % 3 == 2) {
      nodes.push_back(Node(name, "Add", {previous, absl::StrCat("v", k / 2)}, {output}));
    } else {
      nodes.push_back(Node(name, k % 2 ? "Sub" : "Mul", {previous, "W"}, {output}));
    }
    previous = output;
  }
  return Graph({"X"}, {"W"}, std::move(nodes), {previous, "v7"});
}

TEST(GraphIndexTest, RandomEditsKeepTheIndexConsistent) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    onnx::GraphProto graph = EditableGraph();
    std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
    ASSERT_NE(index, nullptr);
    RandomEditor editor(*index, seed);
    for (int step = 0; step < 120; ++step) {
      const std::string edit = editor.Step();
      const std::string context = absl::StrCat("seed ", seed, " step ", step, ": ", edit);
      ExpectConsistent(*index, context);
      if (step % 25 == 24) CommitAndExpectIdentical(*index, context);
      if (::testing::Test::HasFailure()) return;
    }
    CommitAndExpectIdentical(*index, absl::StrCat("seed ", seed, " at the end"));
  }
}

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
  EXPECT_EQ(fn->AddInitializer(onnx::TensorProto()).code(),
            absl::StatusCode::kFailedPrecondition);
  // Edits of a function go through the same API.
  ASSERT_TRUE(fn->InsertNodes({Node("pre", "Abs", {"a"}, {"a2"})}, 0).ok());
  ASSERT_TRUE(fn->SetInput(0, 0, "a2").ok());
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
}  // namespace onnxconvert
