// Definitions of the helpers graph_index_test_util.h declares.

#include "ir/graph_index_test_util.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace onnxconvert::graph_index_testing {

using Kind = ValueSource::Kind;

// ---------------------------------------------------------------------------
// Building graphs.

onnx::NodeProto Node(absl::string_view name, absl::string_view op,
                     std::vector<std::string> inputs, std::vector<std::string> outputs,
                     absl::string_view domain) {
  onnx::NodeProto node;
  node.set_name(std::string(name));
  node.set_op_type(std::string(op));
  node.set_domain(std::string(domain));
  for (std::string& input : inputs) node.add_input(std::move(input));
  for (std::string& output : outputs) node.add_output(std::move(output));
  return node;
}

std::string Describe(const onnx::NodeProto& node) {
  return absl::StrCat(node.name(), ": ", node.op_type(), "(", absl::StrJoin(node.input(), ", "),
                      ") -> ", absl::StrJoin(node.output(), ", "));
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

namespace {

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

}  // namespace

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

}  // namespace onnxconvert::graph_index_testing
