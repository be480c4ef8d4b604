#include "ir/node_edits.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "gtest/gtest.h"
#include "ir/graph_index_test_util.h"
#include "ir/node_rewriter.h"
#include "ir/op_index.h"
#include "ir/rewriter_test_cases.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"

namespace onnxconvert::ir {
namespace {

// Fresh names "<hint>__<n>"; nothing known around the anchor; named
// constants go to `graph` (none without one).
class TestScope final : public RewriteScope {
 public:
  explicit TestScope(onnx::GraphProto* graph = nullptr) : graph_(graph) {}
  const onnx::TypeProto* TypeOf(absl::string_view) const override { return nullptr; }
  const onnx::TensorProto* ConstantOf(absl::string_view) const override { return nullptr; }
  std::optional<bool> ValueUsed(absl::string_view) const override { return std::nullopt; }
  std::string FreshName(absl::string_view hint) override {
    return absl::StrCat(hint, "__", next_++);
  }
  absl::StatusOr<std::string> AddConstant(onnx::TensorProto&&) override {
    return absl::FailedPreconditionError("no constants here");
  }
  absl::Status AddNamedConstant(onnx::TensorProto value) override {
    if (graph_ == nullptr) return absl::FailedPreconditionError("no constants here");
    *graph_->add_initializer() = std::move(value);
    return absl::OkStatus();
  }

 private:
  onnx::GraphProto* graph_;
  int next_ = 0;
};

using graph_index_testing::Describe;
using graph_index_testing::Node;
using rewriter_testing::SharedCasesTest;

std::vector<std::string> Describe(const NodeList& nodes) {
  std::vector<std::string> described;
  for (const onnx::NodeProto& node : nodes) described.push_back(Describe(node));
  return described;
}

// The site of the node named `name` among those of `index`.
const NodeSite* Find(const OpIndex& index, const char* op, const char* name) {
  for (const NodeSite& site : index.NodesOf("", op)) {
    if (site.node->name() == name) return &site;
  }
  return nullptr;
}

constexpr const char* kModel = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X, bool c) => (float[4] Y, float[4] Z) {
  [a] A = Relu(X)
  [b] Y = Abs(A)
  [if] Z = If(c) <then_branch = t () => (float[4] o) { [m] o = Neg(A) },
                  else_branch = e () => (float[4] p) { [n] p = Exp(A) }>
})";

// One rewrite of node `anchor` (of op `op`) through a NodeRewriter over a
// batch, then what the batch's Apply makes of the node list holding it and
// of the index.
struct Case {
  const char* name;
  const char* op;
  const char* anchor;
  std::function<void(NodeRewriter&, NodeEdits&, const NodeSite&)> rewrite;
  // The nodes around the anchor before Apply (NodeEdits::Around).
  std::vector<std::string> around;
  // The anchor's node list after Apply.
  std::vector<std::string> nodes;
  // Ops the index lists afterwards, and how many nodes of each.
  std::vector<std::pair<std::string, int>> indexed;
};

const Case kCases[] = {
    // Nodes inserted on both sides keep their order of insertion.
    {"insert_around", "Abs", "b",
     [](NodeRewriter& r, NodeEdits&, const NodeSite&) {
       r.InsertBefore(Node("p1", "Neg", {"A"}, {"P1"}));
       r.InsertAfter(Node("q1", "Exp", {"Y"}, {"Q1"}));
       r.InsertBefore(Node("p2", "Neg", {"P1"}, {"P2"}));
       r.InsertAfter(Node("q2", "Exp", {"Q1"}, {"Q2"}));
     },
     {"p1: Neg(A) -> P1", "p2: Neg(P1) -> P2", "b: Abs(A) -> Y", "q1: Exp(Y) -> Q1",
      "q2: Exp(Q1) -> Q2"},
     {"a: Relu(X) -> A", "p1: Neg(A) -> P1", "p2: Neg(P1) -> P2", "b: Abs(A) -> Y",
      "q1: Exp(Y) -> Q1", "q2: Exp(Q1) -> Q2", "if: If(c) -> Z"},
     {{"Abs", 1}, {"Neg", 3}, {"Exp", 3}}},
    // The anchor replaced by nodes inserted before it, which may produce
    // what it produced; an inserted node is edited after insertion.
    {"replace", "Abs", "b",
     [](NodeRewriter& r, NodeEdits&, const NodeSite&) {
       r.InsertBefore(Node("s", "Sqrt", {"A"}, {"S"}));
       r.InsertBefore(Node("m", "Mul", {"S"}, {"Y"}))->add_input("S");
       r.RemoveAnchor();
     },
     {"s: Sqrt(A) -> S", "m: Mul(S, S) -> Y"},
     {"a: Relu(X) -> A", "s: Sqrt(A) -> S", "m: Mul(S, S) -> Y", "if: If(c) -> Z"},
     {{"Abs", 0}, {"Sqrt", 1}, {"Mul", 1}}},
    // An output detached so that a node inserted after produces its old
    // name.
    {"detach_output", "Relu", "a",
     [](NodeRewriter& r, NodeEdits&, const NodeSite&) {
       std::string fresh = r.DetachOutput(0);
       r.InsertAfter(Node("n", "Neg", {fresh}, {"A"}));
     },
     {"a: Relu(X) -> A__0", "n: Neg(A__0) -> A"},
     {"a: Relu(X) -> A__0", "n: Neg(A__0) -> A", "b: Abs(A) -> Y", "if: If(c) -> Z"},
     {{"Relu", 1}, {"Neg", 2}}},
    // The anchor given another op: the index lists it under the new one.
    {"retype", "Abs", "b",
     [](NodeRewriter& r, NodeEdits& edits, const NodeSite& anchor) {
       std::string old_key = OpKeyOf(r.anchor());
       r.anchor().set_op_type("Neg");
       edits.Retyped(anchor, old_key);
     },
     {"b: Neg(A) -> Y"},
     {"a: Relu(X) -> A", "b: Neg(A) -> Y", "if: If(c) -> Z"},
     {{"Abs", 0}, {"Neg", 2}}},
    // A subgraph's node: its own list changes, the main graph's does not.
    {"in_subgraph", "Exp", "n",
     [](NodeRewriter& r, NodeEdits&, const NodeSite&) {
       r.InsertBefore(Node("k", "Neg", {"A"}, {"K"}));
     },
     {"k: Neg(A) -> K", "n: Exp(A) -> p"},
     {"k: Neg(A) -> K", "n: Exp(A) -> p"},
     {{"Exp", 1}, {"Neg", 2}}},
};

class NodeEditsTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodeEditsTest, AppliesWhereTheAnchorWas) {
  const Case& c = GetParam();
  for (bool on_arena : {false, true}) {
    SCOPED_TRACE(on_arena ? "on an arena" : "on the heap");
    absl::StatusOr<onnx::ModelProto> parsed = ParseModelText(kModel);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    google::protobuf::Arena arena;
    onnx::ModelProto heap_model;
    onnx::ModelProto* model = on_arena
                                  ? google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena)
                                  : &heap_model;
    *model = *parsed;
    OpIndex index(*model, {""});
    const NodeSite* site = Find(index, c.op, c.anchor);
    ASSERT_NE(site, nullptr);
    NodeSite anchor = *site;
    NodeEdits edits;
    TestScope scope;
    NodeRewriter rewriter(edits, anchor, scope);
    c.rewrite(rewriter, edits, anchor);
    std::vector<std::string> around;
    for (const onnx::NodeProto* node : edits.Around(anchor)) around.push_back(Describe(*node));
    EXPECT_EQ(around, c.around);
    Retired retired;
    edits.Apply(index, retired);
    EXPECT_EQ(Describe(*anchor.list), c.nodes);
    for (const auto& [op, count] : c.indexed) {
      EXPECT_EQ(index.NodesOf("", op).size(), static_cast<size_t>(count)) << op;
    }
    EXPECT_GT(edits.edits_made(), 0);
    EXPECT_EQ(edits.Around(anchor).size(), 1u) << "the batch is empty after Apply";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeEditsTest, ::testing::ValuesIn(kCases),
                         rewriter_testing::NamedAfterCase());

// The shared cases applied as the converter applies a step's batch.
TEST_P(SharedCasesTest, AppliesAsTheTextSays) {
  const rewriter_testing::RewriteCase& c = GetParam();
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  *model.mutable_graph() = std::move(graph_);
  OpIndex index(model, {""});
  NodeSite anchor{};
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.name() != c.anchor) continue;
    for (const NodeSite& site : index.NodesOf("", node.op_type())) {
      if (site.node == &node) anchor = site;
    }
  }
  ASSERT_NE(anchor.node, nullptr);
  NodeEdits edits;
  TestScope scope(model.mutable_graph());
  NodeRewriter rewriter(edits, anchor, scope);
  const onnx::GraphProto& main = model.graph();
  absl::Status status = c.rewrite(rewriter, [&](const char* name) -> const onnx::NodeProto& {
    for (const onnx::NodeProto& node : main.node()) {
      if (node.name() == name) return node;
    }
    ADD_FAILURE() << "no node " << name;
    return main.node(0);
  });
  rewriter_testing::ExpectStatus(c, status);
  Retired retired;
  edits.Apply(index, retired);
  rewriter_testing::ExpectGraph(c, model.graph());
}

INSTANTIATE_TEST_SUITE_P(Cases, SharedCasesTest,
                         ::testing::ValuesIn(rewriter_testing::ReadRewriteCases()),
                         rewriter_testing::NamedAfterCase());

// A function body holds no constants: the anchor stays.
TEST(NodeRewriterTest, ReplaceByConstantsRefusedInAFunction) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(R"(<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] X) => (float[2] Y) {
  [f] Y = local.F(X)
}
<domain: "local", opset_import: ["" : 13]>
F (x) => (y) {
  [s] y = Shape(x)
})");
  ASSERT_TRUE(model.ok()) << model.status();
  OpIndex index(*model, {""});
  const NodeSite* site = Find(index, "Shape", "s");
  ASSERT_NE(site, nullptr);
  ASSERT_EQ(site->graph, nullptr);
  NodeEdits edits;
  TestScope scope;
  NodeRewriter rewriter(edits, *site, scope);
  std::vector<onnx::TensorProto> values;
  values.push_back(rewriter_testing::Int64s({2}));
  EXPECT_EQ(rewriter.ReplaceByConstants(std::move(values)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(edits.IsRemoved(*site));
}

// A subgraph's nodes keep its path, and the index knows its enclosing graph.
TEST(OpIndexTest, KnowsSubgraphPathsAndParents) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kModel);
  ASSERT_TRUE(model.ok()) << model.status();
  OpIndex index(*model, {""});
  const NodeSite* m = Find(index, "Neg", "m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, "main/then_branch of 'if' (If)");
  EXPECT_EQ(index.ParentOf(m->graph), &model->graph());
  EXPECT_EQ(index.ParentOf(&model->graph()), nullptr);
}

// Function bodies are indexed under their function's path; left out, their
// nodes are neither indexed nor counted.
TEST(OpIndexTest, IndexesFunctionBodiesUnlessLeftOut) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] X) => (float[2] Y) { Y = local.F(X) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
F (I) => (O) { T = Relu(I) O = local.G(T) }
<domain: "local", opset_import: ["" : 13]>
G (I) => (O) { O = Relu(I) })");
  ASSERT_TRUE(model.ok()) << model.status();
  OpIndex with(*model, {""});
  ASSERT_EQ(with.NodesOf("", "Relu").size(), 2u);
  EXPECT_EQ(with.NodesOf("", "Relu")[0].path, "function 'local.F'");
  EXPECT_EQ(with.NodesOf("", "Relu")[0].graph, nullptr);
  EXPECT_EQ(with.others(), (std::map<std::string, int>{{"local.F", 1}, {"local.G", 1}}));
  OpIndex without(*model, {""}, /*with_functions=*/false);
  EXPECT_TRUE(without.NodesOf("", "Relu").empty());
  EXPECT_EQ(without.others(), (std::map<std::string, int>{{"local.F", 1}}));
}

// The nodes inserted around an anchor taken out of the batch, for a driver
// that applies them itself (GraphIndexRewriter).
TEST(NodeEditsTest, TakesInsertedNodesOut) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kModel);
  ASSERT_TRUE(model.ok()) << model.status();
  OpIndex index(*model, {""});
  NodeSite anchor = *Find(index, "Abs", "b");
  NodeEdits edits;
  edits.InsertBefore(anchor, Node("p", "Neg", {"A"}, {"P"}));
  edits.InsertAfter(anchor, Node("q", "Exp", {"Y"}, {"Q"}));
  edits.Remove(anchor);
  EXPECT_TRUE(edits.EditedAround(anchor));
  EXPECT_TRUE(edits.IsRemoved(anchor));
  EXPECT_EQ(edits.sides_inserted(), 2u);
  std::vector<onnx::NodeProto> before = edits.TakeInserted(anchor, /*after=*/false);
  std::vector<onnx::NodeProto> after = edits.TakeInserted(anchor, /*after=*/true);
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(Describe(before[0]), "p: Neg(A) -> P");
  EXPECT_EQ(Describe(after[0]), "q: Exp(Y) -> Q");
  EXPECT_EQ(edits.sides_inserted(), 0u);
  EXPECT_EQ(edits.Removed().size(), 1u);
}

}  // namespace
}  // namespace onnxconvert::ir
