// GraphIndex edit tests: insertions, replacements, removals and rewiring,
// refused edits, edits inside subgraphs, commits, and random edits checked
// against an index rebuilt from scratch.

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph_index.h"
#include "ir/graph_index_editor.h"
#include "ir/graph_index_test_util.h"

namespace onnxconvert::graph_index_testing {
namespace {

using Kind = ValueSource::Kind;
using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------
// Edits.

onnx::GraphProto Chain() {
  return Graph({"X"}, {},
               {Node("a", "Relu", {"X"}, {"A"}), Node("b", "Abs", {"A"}, {"B"}),
                Node("c", "Neg", {"B"}, {"Y"})},
               {"Y"});
}

// The names of the nodes of `graph`, in its order.
std::vector<std::string> NamesInOrder(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) names.push_back(node.name());
  return names;
}

// The chain of Chain() and its index, which the first tests edit; the
// others build graphs of their own.
class GraphIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(index_, nullptr); }

  onnx::GraphProto graph_ = Chain();
  std::unique_ptr<GraphIndex> index_ = BuildOrDie(graph_);
};

TEST_F(GraphIndexTest, CommitPlacesReplacementsWhereTheNodeWas) {
  absl::StatusOr<std::vector<NodeId>> ids =
      Edit(index_).ReplaceNode(1, {Node("b1", "Exp", {"A"}, {"T"}), Node("b2", "Log", {"T"}, {"B"})});
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<NodeId>{3, 4}));
  EXPECT_FALSE(index_->IsLive(1));
  EXPECT_EQ(NodeNames(*index_, index_->LiveNodes()),
            (std::vector<std::string>{"a", "b1", "b2", "c"}));
  EXPECT_EQ(index_->Producer("B"), (ValueSource{Kind::kNodeOutput, 4, 0}));
  EXPECT_TRUE(index_->NodesOf("", "Abs").empty());
  EXPECT_EQ(graph_.node_size(), 5);  // the dead node stays until Commit
  EXPECT_TRUE(index_->HasPendingEdits());
  ExpectConsistent(*index_, "after replace");

  std::vector<NodeId> new_ids;
  ASSERT_TRUE(index_->Commit(&new_ids).ok());
  EXPECT_EQ(new_ids, (std::vector<NodeId>{0, kNoNode, 3, 1, 2}));
  EXPECT_EQ(NamesInOrder(graph_), (std::vector<std::string>{"a", "b1", "b2", "c"}));
  CommitAndExpectIdentical(*index_, "after commit");
}

// Nodes inserted before and after one anchor, and around the nodes
// inserted, come out in the order the edits describe: each node after the
// nodes inserted before it and before those inserted after it, in the order
// they were inserted.
TEST_F(GraphIndexTest, InsertionsAroundAnAnchorKeepTheirOrder) {
  ASSERT_TRUE(Edit(index_).InsertNodesAfter(1, {Node("after1", "Exp", {"B"}, {"E1"})}).ok());
  ASSERT_TRUE(Edit(index_).InsertNodes({Node("before1", "Sqrt", {"A"}, {"S1"})}, 1).ok());
  absl::StatusOr<std::vector<NodeId>> after2 =
      Edit(index_).InsertNodesAfter(1, {Node("after2", "Log", {"E1"}, {"E2"})});
  ASSERT_TRUE(after2.ok()) << after2.status();
  // Around an inserted node, and after the last node.
  ASSERT_TRUE(Edit(index_).InsertNodesAfter((*after2)[0], {Node("after2b", "Abs", {"E2"}, {"E3"})}).ok());
  ASSERT_TRUE(Edit(index_).InsertNodes({Node("before2", "Neg", {"S1"}, {"S2"})}, 1).ok());
  ASSERT_TRUE(Edit(index_).InsertNodesAfter(2, {Node("last", "Relu", {"Y"}, {"Z"})}).ok());
  EXPECT_EQ(NodeNames(*index_, index_->LiveNodes()),
            (std::vector<std::string>{"a", "before1", "before2", "b", "after1", "after2",
                                      "after2b", "c", "last"}));
  ExpectConsistent(*index_, "after inserting around b");
  ASSERT_TRUE(index_->Commit().ok());
  EXPECT_EQ(NamesInOrder(graph_), (std::vector<std::string>{"a", "before1", "before2", "b", "after1",
                                                            "after2", "after2b", "c", "last"}));
  CommitAndExpectIdentical(*index_, "after commit");
}

// A removed node keeps its place until Commit: nodes inserted around it
// take it.
TEST_F(GraphIndexTest, InsertionsAroundARemovedNodeTakeItsPlace) {
  ASSERT_TRUE(Edit(index_).RemoveNode(1).ok());
  ASSERT_TRUE(Edit(index_).InsertNodesAfter(1, {Node("b2", "Exp", {"T"}, {"B"})}).ok());
  ASSERT_TRUE(Edit(index_).InsertNodes({Node("b1", "Log", {"A"}, {"T"})}, 1).ok());
  EXPECT_EQ(NodeNames(*index_, index_->LiveNodes()),
            (std::vector<std::string>{"a", "b1", "b2", "c"}));
  ExpectConsistent(*index_, "after replacing b around it");
  CommitAndExpectIdentical(*index_, "after commit");
  EXPECT_EQ(Edit(index_).InsertNodesAfter(7, {Node("x", "Relu", {"X"}, {"Q"})}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(GraphIndexTest, CommitMovesNodesAfterTheirProducers) {
  // An adapter added at the end, feeding the first node.
  ASSERT_TRUE(Edit(index_).InsertNodes({Node("k", "Sqrt", {"X"}, {"K"})}).ok());
  ASSERT_TRUE(Edit(index_).SetInput(0, 0, "K").ok());
  ExpectConsistent(*index_, "after insert");
  ASSERT_TRUE(index_->Commit().ok());
  EXPECT_EQ(NamesInOrder(graph_), (std::vector<std::string>{"k", "a", "b", "c"}));
  CommitAndExpectIdentical(*index_, "after commit");
}

TEST_F(GraphIndexTest, CommitRefusesACycleAndChangesNothing) {
  ASSERT_TRUE(Edit(index_).RemoveNode(1).ok());
  ASSERT_TRUE(Edit(index_).SetInput(0, 0, "Y").ok());
  ASSERT_TRUE(Edit(index_).InsertNodes({Node("b", "Abs", {"A"}, {"B"})}, 2).ok());
  const onnx::GraphProto before = graph_;
  const std::string snapshot = Snapshot(*index_);
  absl::Status status = index_->Commit();
  EXPECT_THAT(std::string(status.message()), HasSubstr("cycle"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("node 'a' (Relu) uses 'Y' from node 'c'"));
  EXPECT_EQ(graph_.SerializeAsString(), before.SerializeAsString());
  EXPECT_EQ(Snapshot(*index_), snapshot);
  ExpectConsistent(*index_, "after refused commit");
  // Undoing the edit makes it commit.
  ASSERT_TRUE(Edit(index_).SetInput(0, 0, "X").ok());
  CommitAndExpectIdentical(*index_, "after commit");
}

struct EditErrorCase {
  std::string name;
  std::function<absl::Status(GraphIndex&)> edit;
  absl::StatusCode code;
  std::string expected;
};

TEST_F(GraphIndexTest, RefusedEditsChangeNothing) {
  const EditErrorCase cases[] = {
      {"insert_existing_value",
       [](GraphIndex& index) {
         return Edit(index).InsertNodes({Node("x", "Relu", {"X"}, {"A"})}).status();
       },
       absl::StatusCode::kAlreadyExists,
       "main: value 'A' is produced twice: by node 'a' (Relu) output 0 and by new node 'x' "
       "(Relu)"},
      {"insert_twice_in_batch",
       [](GraphIndex& index) {
         return Edit(index)
             .InsertNodes({Node("x", "Relu", {"X"}, {"Q"}), Node("", "Abs", {"X"}, {"Q"})})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "value 'Q' is produced twice: by new node 'x' (Relu) and by new node #1 (Abs)"},
      {"replace_with_other_nodes_value",
       [](GraphIndex& index) {
         return Edit(index).ReplaceNode(1, {Node("x", "Relu", {"A"}, {"Y"})}).status();
       },
       absl::StatusCode::kAlreadyExists, "by node 'c' (Neg) output 0 and by new node 'x'"},
      {"insert_bad_subgraph",
       [](GraphIndex& index) {
         onnx::NodeProto node = Node("if", "If", {"X"}, {"Q"});
         AddGraphAttribute(
             node, "then_branch",
             Graph({}, {}, {Node("p", "Relu", {"X"}, {"T"}), Node("q", "Abs", {"X"}, {"T"})},
                   {"T"}));
         return Edit(index).InsertNodes({Node("fine", "Relu", {"X"}, {"F"}), node}).status();
       },
       absl::StatusCode::kInvalidArgument,
       "main/then_branch of 'if': value 'T' is produced twice"},
      {"insert_before_unknown_node",
       [](GraphIndex& index) {
         return Edit(index).InsertNodes({Node("x", "Relu", {"X"}, {"Q"})}, 7).status();
       },
       absl::StatusCode::kInvalidArgument, "main: node id 7 is not a node of this graph"},
      {"remove_unknown_node", [](GraphIndex& index) { return Edit(index).RemoveNode(-3); },
       absl::StatusCode::kInvalidArgument, "node id -3 is not a live node"},
      {"set_missing_slot", [](GraphIndex& index) { return Edit(index).SetInput(1, 1, "X"); },
       absl::StatusCode::kOutOfRange, "node 'b' (Abs) has 1 inputs, not slot 1"},
      {"initializer_clash",
       [](GraphIndex& index) {
         onnx::TensorProto tensor;
         tensor.set_name("B");
         return Edit(index).AddInitializer(tensor);
       },
       absl::StatusCode::kAlreadyExists,
       "cannot add initializer 'B': already produced by node 'b' (Abs) output 0"},
      {"initializer_without_name",
       [](GraphIndex& index) { return Edit(index).AddInitializer(onnx::TensorProto()); },
       absl::StatusCode::kInvalidArgument, "an initializer needs a name"},
      {"rename_to_nothing", [](GraphIndex& index) { return Edit(index).RenameUses("A", ""); },
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

TEST_F(GraphIndexTest, EditsInsideSubgraphsReachTheOuterGraphs) {
  onnx::GraphProto graph = ParseGraph(kNested);
  std::unique_ptr<GraphIndex> index = BuildOrDie(graph);
  ASSERT_NE(index, nullptr);
  const NodeId loop = IdOf(*index, "loop_1");
  GraphIndex* scan = GraphAt(*index, kScan);
  ASSERT_NE(scan, nullptr);

  // The deepest graph stops using Z and starts using X.
  ASSERT_TRUE(Edit(scan).SetInput(IdOf(*scan, "deep"), 1, "X").ok());
  ExpectConsistent(*index, "after redirecting in the scan body");
  EXPECT_EQ(Strings(index->OuterReferences(loop)), (std::vector<std::string>{"P", "X"}));
  EXPECT_TRUE(index->Consumers("Z").empty());
  EXPECT_EQ(Strings(GraphAt(*index, kThen)->FreeNames()),
            (std::vector<std::string>{"L", "P", "X"}));

  // Renaming in the main graph follows the uses into the scan body.
  onnx::TensorProto p2;
  p2.set_name("P2");
  ASSERT_TRUE(Edit(index).AddInitializer(p2).ok());
  ASSERT_TRUE(Edit(index).RenameUses("P", "P2").ok());
  ExpectConsistent(*index, "after renaming P");
  EXPECT_EQ(scan->node(IdOf(*scan, "deep")).input(0), "P2");
  EXPECT_TRUE(index->Consumers("P").empty());
  EXPECT_EQ(std::vector<ValueUse>(index->Consumers("P2").begin(), index->Consumers("P2").end()),
            std::vector<ValueUse>{ValueUse::Subgraph(loop)});
  EXPECT_EQ(index->FindInitializer("P2"), &graph.initializer(0));
  EXPECT_EQ(scan->FindInitializer("P2"), &graph.initializer(0));

  // X cannot become Z: the else branch has a Z of its own.
  const std::string snapshot = Snapshot(*index);
  absl::Status refused = Edit(index).RenameUses("X", "Z");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr(absl::StrCat(kElse, ": cannot rename the uses of 'X' to 'Z'")));
  EXPECT_EQ(Snapshot(*index), snapshot);

  // A node inside the loop body shadows an outer name: no longer taken from
  // outside.
  GraphIndex* body = GraphAt(*index, kBody);
  ASSERT_TRUE(Edit(body).InsertNodes({Node("shadow_p2", "Identity", {"i"}, {"P2"})}, 0).ok());
  ExpectConsistent(*index, "after shadowing P2");
  EXPECT_TRUE(index->Consumers("P2").empty());
  EXPECT_EQ(scan->DefiningScope("P2"), body);

  // Replacing the If drops the whole branch tree and what it used.
  ASSERT_TRUE(Edit(body).ReplaceNode(IdOf(*body, "if_2"), {Node("f", "Identity", {"L"}, {"F"})}).ok());
  ExpectConsistent(*index, "after replacing the If");
  EXPECT_EQ(index->GraphsInTree().size(), 2u);
  EXPECT_TRUE(index->OuterReferences(loop).empty());
  EXPECT_TRUE(index->Consumers("X").size() == 1);
  CommitAndExpectIdentical(*index, "after commit");

  // Removing the loop drops its body index.
  ASSERT_TRUE(Edit(index).RemoveNode(loop).ok());
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
    // The edits of a node picked at random, by the draw that chooses them;
    // draw 5 edits the Loop's body, draw 6 nothing.
    static constexpr std::string (RandomEditor::*kNodeEdits[])(NodeId) = {
        &RandomEditor::Replace, &RandomEditor::InsertAdapterBefore, &RandomEditor::Bypass,
        &RandomEditor::RedirectThroughNewNode, &RandomEditor::NewInitializer};
    const uint32_t draw = random_() % 7;
    if (draw == 5) return EditLoopBody();
    if (draw == 6) return "nothing";
    const NodeId id = PickSimpleNode();
    if (id == kNoNode) return "nothing";
    return (this->*kNodeEdits[draw])(id);
  }

 private:
  // A live main-graph node without subgraphs, with one output that is not a
  // graph output and a first input; kNoNode if none. The edits below but
  // EditLoopBody edit such a node.
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

  std::string Replace(NodeId id) {
    const onnx::NodeProto node = index_.node(id);
    const std::string middle = index_.FreshName("mid");
    const absl::StatusOr<std::vector<NodeId>> ids = Edit(index_).ReplaceNode(
        id, {Node(index_.FreshName("r"), "Neg", {node.input(0)}, {middle}),
             Node(index_.FreshName("r"), "Add", {middle, node.input(0)}, {node.output(0)})});
    EXPECT_TRUE(ids.ok()) << ids.status();
    return absl::StrCat("replace ", node.name());
  }

  std::string InsertAdapterBefore(NodeId id) {
    const std::string input = index_.node(id).input(0);
    const std::string adapted = index_.FreshName("adapted");
    EXPECT_TRUE(
        Edit(index_).InsertNodes({Node(index_.FreshName("cast"), "Cast", {input}, {adapted})}, id)
            .ok());
    EXPECT_TRUE(Edit(index_).SetInput(id, 0, adapted).ok());
    return absl::StrCat("adapter before ", index_.node(id).name());
  }

  std::string Bypass(NodeId id) {
    const onnx::NodeProto node = index_.node(id);
    EXPECT_TRUE(Edit(index_).RenameUses(node.output(0), node.input(0)).ok());
    EXPECT_TRUE(Edit(index_).RemoveNode(id).ok());
    return absl::StrCat("bypass ", node.name());
  }

  std::string RedirectThroughNewNode(NodeId id) {
    const std::string output = index_.node(id).output(0);
    const std::string redirected = index_.FreshName("redirected");
    EXPECT_TRUE(Edit(index_).RenameUses(output, redirected).ok());
    // Placed at the end: Commit must move its consumers after it.
    EXPECT_TRUE(
        Edit(index_).InsertNodes({Node(index_.FreshName("id"), "Identity", {output}, {redirected})})
            .ok());
    return absl::StrCat("redirect ", output);
  }

  std::string NewInitializer(NodeId id) {
    onnx::TensorProto tensor;
    tensor.set_name(index_.FreshName("init"));
    const std::string name = tensor.name();
    EXPECT_TRUE(Edit(index_).AddInitializer(std::move(tensor)).ok());
    const int slot = static_cast<int>(random_() % index_.node(id).input_size());
    EXPECT_TRUE(Edit(index_).SetInput(id, slot, name).ok());
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
    EXPECT_TRUE(Edit(body).InsertNodes({Node(body.FreshName("inner"), "Relu", {outer},
                                       {body.FreshName("inner_v")})},
                                 before)
                    .ok());
    if (!live.empty() && random_() % 2) {
      const NodeId victim = live[random_() % live.size()];
      const onnx::NodeProto& node = body.node(victim);
      if (node.output_size() == 1 && body.Consumers(node.output(0)).empty()) {
        EXPECT_TRUE(Edit(body).RemoveNode(victim).ok());
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

TEST_F(GraphIndexTest, RandomEditsKeepTheIndexConsistent) {
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

}  // namespace
}  // namespace onnxconvert::graph_index_testing
