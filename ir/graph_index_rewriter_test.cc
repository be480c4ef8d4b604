#include "ir/graph_index_rewriter.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/graph_index_test_util.h"
#include "ir/rewriter_test_cases.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"

namespace onnxconvert::ir {
namespace {

// One rewrite of the node named `anchor` of `graph` (ONNX text), and the
// graph's nodes after it, as "name: Op(inputs) -> outputs".
struct Case {
  const char* name;
  const char* graph;
  const char* anchor;
  std::function<void(Rewriter&)> rewrite;
  std::vector<std::string> nodes;
  const char* error = "";  // a piece of Finish's error, or "" for none
};

using graph_index_testing::Describe;
using graph_index_testing::Node;
using rewriter_testing::SharedCasesTest;

constexpr const char* kChain = R"(g (float[4] X) => (float[4] Y) {
  [a] A = Relu(X)
  [b] Y = Abs(A)
})";

const Case kCases[] = {
    // An output renamed so that a node inserted after produces the old name
    // (as Clip 11 -> 6 moves its bounds out).
    {"detach_and_insert_after", kChain, "a",
     [](Rewriter& r) {
       std::string fresh = r.DetachOutput(0);
       r.InsertAfter(Node("n", "Neg", {fresh}, {"A"}));
     },
     {"a: Relu(X) -> A__0", "n: Neg(A__0) -> A", "b: Abs(A) -> Y"}},
    // The anchor replaced by the nodes inserted before it.
    {"replace_by_inserted", kChain, "a",
     [](Rewriter& r) {
       r.InsertBefore(Node("e", "Exp", {"X"}, {"T"}));
       r.InsertBefore(Node("l", "Log", {"T"}, {"A"}))->set_domain("");
       r.RemoveAnchor();
     },
     {"e: Exp(X) -> T", "l: Log(T) -> A", "b: Abs(A) -> Y"}},
    // The anchor edited in place (a new input, another op) and a constant
    // added for it; inserted nodes around it keep their places.
    {"edit_in_place_with_constant", kChain, "b",
     [](Rewriter& r) {
       onnx::TensorProto axes;
       axes.set_name("axes");
       axes.set_data_type(onnx::TensorProto::INT64);
       axes.add_dims(1);
       axes.add_int64_data(0);
       absl::StatusOr<std::string> name = r.AddConstant(std::move(axes));
       ASSERT_TRUE(name.ok()) << name.status();
       ASSERT_NE(r.ConstantOf(*name), nullptr);
       r.InsertAfter(Node("after", "Identity", {"Y"}, {"Z"}));
       r.anchor().set_op_type("Unsqueeze");
       r.anchor().add_input(*name);
       r.InsertBefore(Node("before", "Identity", {"X"}, {"W"}));
     },
     {"a: Relu(X) -> A", "before: Identity(X) -> W", "b: Unsqueeze(A, axes__0) -> Y",
      "after: Identity(Y) -> Z"}},
    // A node that would produce a value twice: Finish names the anchor and
    // the value; the pointer returned is still usable.
    {"insert_refused", kChain, "b",
     [](Rewriter& r) {
       r.InsertBefore(Node("dup", "Neg", {"X"}, {"A"}))->set_name("still usable");
     },
     {"a: Relu(X) -> A", "b: Abs(A) -> Y"}, "rewriting node 'b' (Abs)"},
};

class GraphIndexRewriterTest : public ::testing::TestWithParam<Case> {};

TEST_P(GraphIndexRewriterTest, RewritesAroundTheAnchor) {
  const Case& c = GetParam();
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(c.graph);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&*graph);
  ASSERT_TRUE(index.ok()) << index.status();
  NodeId anchor = kNoNode;
  for (NodeId id : (*index)->LiveNodes()) {
    if ((*index)->node(id).name() == c.anchor) anchor = id;
  }
  ASSERT_NE(anchor, kNoNode);
  GraphIndexRewriter rewrite(**index, anchor);
  c.rewrite(rewrite.rewriter());
  absl::Status finished = rewrite.Finish();
  if (*c.error != '\0') {
    EXPECT_FALSE(finished.ok());
    EXPECT_NE(finished.message().find(c.error), absl::string_view::npos) << finished;
  } else {
    ASSERT_TRUE(finished.ok()) << finished;
  }
  ASSERT_TRUE((*index)->Commit().ok());
  ASSERT_TRUE((*index)->CheckConsistency().ok()) << (*index)->CheckConsistency();
  std::vector<std::string> nodes;
  for (const onnx::NodeProto& node : graph->node()) nodes.push_back(Describe(node));
  EXPECT_EQ(nodes, c.nodes);
}

INSTANTIATE_TEST_SUITE_P(Cases, GraphIndexRewriterTest, ::testing::ValuesIn(kCases),
                         rewriter_testing::NamedAfterCase());

// The shared cases applied to an index and committed.
TEST_P(SharedCasesTest, AppliesAsTheTextSays) {
  const rewriter_testing::RewriteCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&graph_);
  ASSERT_TRUE(index.ok()) << index.status();
  auto id_of = [&](const char* name) {
    for (NodeId id : (*index)->LiveNodes()) {
      if ((*index)->node(id).name() == name) return id;
    }
    return kNoNode;
  };
  const NodeId anchor = id_of(c.anchor.c_str());
  ASSERT_NE(anchor, kNoNode);
  GraphIndexRewriter rewrite(**index, anchor);
  absl::Status status =
      c.rewrite(rewrite.rewriter(), [&](const char* name) -> const onnx::NodeProto& {
        const NodeId id = id_of(name);
        if (id == kNoNode) ADD_FAILURE() << "no node " << name;
        return (*index)->node(id == kNoNode ? anchor : id);
      });
  rewriter_testing::ExpectStatus(c, status);
  ASSERT_TRUE(rewrite.Finish().ok());
  ASSERT_TRUE((*index)->Commit().ok());
  ASSERT_TRUE((*index)->CheckConsistency().ok()) << (*index)->CheckConsistency();
  rewriter_testing::ExpectGraph(c, graph_);
}

INSTANTIATE_TEST_SUITE_P(Cases, SharedCasesTest,
                         ::testing::ValuesIn(rewriter_testing::ReadRewriteCases()),
                         rewriter_testing::NamedAfterCase());

// A node to erase that is not the graph's: Finish names it and the anchor.
TEST(GraphIndexRewriterTest, ErasingAForeignNodeFails) {
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(kChain);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&*graph);
  ASSERT_TRUE(index.ok()) << index.status();
  GraphIndexRewriter rewrite(**index, 1);
  const onnx::NodeProto stranger = Node("s", "Neg", {"X"}, {"S"});
  rewrite.rewriter().EraseNode(stranger);
  absl::Status finished = rewrite.Finish();
  EXPECT_EQ(finished.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(finished.message().find("rewriting node 'b' (Abs): node 's'"),
            absl::string_view::npos)
      << finished;
}

// Nodes erased by id (as a rule's match erases them) go as those erased
// through the rewriter do; the anchor stays.
TEST(GraphIndexRewriterTest, ErasesNodesById) {
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(R"(g (float[4] X) => (float[4] Y) {
  [a] A = Relu(X)
  [b] B = Neg(A)
  [c] Y = Abs(X)
})");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&*graph);
  ASSERT_TRUE(index.ok()) << index.status();
  GraphIndexRewriter rewrite(**index, 2);
  rewrite.EraseNode(1);
  rewrite.EraseNode(0);
  ASSERT_TRUE(rewrite.Finish().ok());
  EXPECT_FALSE((*index)->IsLive(0));
  EXPECT_FALSE((*index)->IsLive(1));
  ASSERT_TRUE((*index)->Commit().ok());
  ASSERT_TRUE((*index)->CheckConsistency().ok()) << (*index)->CheckConsistency();
  std::vector<std::string> nodes;
  for (const onnx::NodeProto& node : graph->node()) nodes.push_back(Describe(node));
  EXPECT_EQ(nodes, std::vector<std::string>{"c: Abs(X) -> Y"});
}

// What the rewriter tells of the graph around the anchor: uses, constants,
// and types through the caller's lookup, an enclosing graph's included.
TEST(GraphIndexRewriterTest, SeesAroundTheAnchor) {
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(R"(g (bool c, float[4] X) => (float[4] Y) <float[1] k = {2.0}> {
  [a] A = Relu(X)
  [u] U = Neg(X)
  [if] Y = If(c) <then_branch = t () => (float[4] o) { [m] o = Mul(A, k) },
                  else_branch = e () => (float[4] p) { [n] p = Neg(A) }>
})");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(&*graph);
  ASSERT_TRUE(index.ok()) << index.status();
  GraphIndexRewriter outer_rewrite(**index, 0);
  Rewriter& outer = outer_rewrite.rewriter();
  EXPECT_EQ(outer.ValueUsed("A"), std::optional<bool>(true));  // by the If's branches
  EXPECT_EQ(outer.ValueUsed("U"), std::optional<bool>(false));
  EXPECT_NE(outer.ConstantOf("k"), nullptr);
  EXPECT_EQ(outer.ConstantOf("A"), nullptr);
  EXPECT_EQ(outer.TypeOf("A"), nullptr);  // no lookup given

  onnx::TypeProto float4;
  float4.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  std::vector<GraphIndex*> branches = (*index)->Subgraphs(2);
  ASSERT_EQ(branches.size(), 2u);
  const GraphIndex* asked = nullptr;
  GraphIndexRewriter inner_rewrite(*branches[0], 0,
                                   [&](const GraphIndex& scope, absl::string_view value) {
                                     asked = &scope;
                                     return value == "A" ? &float4 : nullptr;
                                   });
  Rewriter& inner = inner_rewrite.rewriter();
  EXPECT_EQ(inner.TypeOf("A"), &float4);
  EXPECT_EQ(asked, index->get());  // the graph defining A
  EXPECT_NE(inner.ConstantOf("k"), nullptr);  // an enclosing graph's constant
  EXPECT_TRUE(inner_rewrite.Finish().ok());
}

}  // namespace
}  // namespace onnxconvert::ir
