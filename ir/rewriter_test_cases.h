#ifndef ONNX_CONVERT_IR_REWRITER_TEST_CASES_H_
#define ONNX_CONVERT_IR_REWRITER_TEST_CASES_H_

// Rewrites through ir::Rewriter, ONNX text in and ONNX text out, run by both
// drivers of its one implementation: a NodeEdits batch applied as the
// converter applies a step's (node_edits_test.cc) and a GraphIndexRewriter
// (graph_index_rewriter_test.cc). Both must give the same graph.

#include <functional>
#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/graph_index_test_util.h"
#include "ir/rewriter.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir::rewriter_testing {

// The node of the graph (not a subgraph) named `name`.
using NodeByName = std::function<const onnx::NodeProto&(const char* name)>;

// One rewrite of the node named `anchor` of `graph`.
struct RewriteCase {
  const char* name;
  const char* graph;   // ONNX text
  const char* anchor;  // a node name of `graph`
  std::function<absl::Status(Rewriter&, const NodeByName&)> rewrite;
  const char* expected;    // the graph afterwards, ONNX text; unchanged on error
  const char* error = "";  // a piece of the rewrite's error, or "" for none
};

// Names the case in test output.
inline void PrintTo(const RewriteCase& c, std::ostream* out) { *out << c.name; }

// Expects `status`, the rewrite's, to be what `c` says: an error holding
// c.error, or ok.
inline void ExpectStatus(const RewriteCase& c, const absl::Status& status) {
  if (*c.error != '\0') {
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(c.error), absl::string_view::npos) << status;
  } else {
    EXPECT_TRUE(status.ok()) << status;
  }
}

// Expects `graph`, rewritten, to print as c.expected does.
inline void ExpectGraph(const RewriteCase& c, const onnx::GraphProto& graph) {
  absl::StatusOr<onnx::GraphProto> expected = ParseGraphText(c.expected);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(PrintGraphText(graph), PrintGraphText(*expected));
}

// The constant int64[n] {values...}.
inline onnx::TensorProto Int64s(std::vector<int64_t> values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor.add_int64_data(value);
  return tensor;
}

inline const std::vector<RewriteCase>& RewriteCases() {
  using graph_index_testing::Node;
  static const auto* cases = new std::vector<RewriteCase>{
      // Common subexpressions: the later node goes, its uses move to the
      // earlier one's output, a subgraph's included.
      {"replace_all_uses", R"(g (float[4] X, bool c) => (float[4] Y, float[4] Z) {
  [a] A = Relu(X)
  [b] B = Relu(X)
  [c] Y = Add(A, B)
  [if] Z = If(c) <then_branch = t () => (float[4] o) { [m] o = Neg(B) },
                  else_branch = e () => (float[4] p) { [n] p = Exp(B) }>
})",
       "b",
       [](Rewriter& r, const NodeByName&) {
         r.RemoveAnchor();
         r.ReplaceAllUses("B", "A");
         return absl::OkStatus();
       },
       R"(g (float[4] X, bool c) => (float[4] Y, float[4] Z) {
  [a] A = Relu(X)
  [c] Y = Add(A, A)
  [if] Z = If(c) <then_branch = t () => (float[4] o) { [m] o = Neg(A) },
                  else_branch = e () => (float[4] p) { [n] p = Exp(A) }>
})"},
      // A graph output keeps its name: its producer stays, and only the
      // node reading it moves.
      {"graph_output_keeps_its_name", R"(g (float[4] X) => (float[4] Y, float[4] B) {
  [a] A = Relu(X)
  [b] B = Relu(X)
  [c] Y = Add(A, B)
})",
       "b",
       [](Rewriter& r, const NodeByName&) {
         r.ReplaceAllUses("B", "A");
         return absl::OkStatus();
       },
       R"(g (float[4] X) => (float[4] Y, float[4] B) {
  [a] A = Relu(X)
  [b] B = Relu(X)
  [c] Y = Add(A, A)
})"},
      // A rule: the other matched node erased, the root replaced.
      {"erase_matched_node", R"(g (float[4] X) => (float[4] Y) {
  [a] A = Neg(X)
  [b] Y = Neg(A)
})",
       "b",
       [](Rewriter& r, const NodeByName& node) {
         r.EraseNode(node("a"));
         r.InsertBefore(Node("i", "Identity", {"X"}, {"Y"}))->clear_domain();
         r.RemoveAnchor();
         return absl::OkStatus();
       },
       R"(g (float[4] X) => (float[4] Y) {
  [i] Y = Identity(X)
})"},
      // A rule whose replacement forwards an input: the root goes, its
      // output's uses read the input.
      {"forward_input", R"(g (float[4] X) => (float[4] Y) {
  [a] A = Identity(X)
  [b] Y = Neg(A)
})",
       "a",
       [](Rewriter& r, const NodeByName&) {
         r.RemoveAnchor();
         r.ReplaceAllUses("A", "X");
         return absl::OkStatus();
       },
       R"(g (float[4] X) => (float[4] Y) {
  [b] Y = Neg(X)
})"},
      // Folding: the anchor becomes constants under its output names.
      {"replace_by_constants", R"(g (float[2] X) => (int64[1] Y) {
  [s] S = Shape(X)
  [i] Y = Identity(S)
})",
       "s",
       [](Rewriter& r, const NodeByName&) {
         std::vector<onnx::TensorProto> values;
         values.push_back(Int64s({2}));
         values.back().set_name("ignored");
         return r.ReplaceByConstants(std::move(values));
       },
       R"(g (float[2] X) => (int64[1] Y) <int64[1] S = {2}> {
  [i] Y = Identity(S)
})"},
      // As many constants as outputs, or nothing changes.
      {"constants_miscounted", R"(g (float[2] X) => (int64[1] Y) {
  [s] S = Shape(X)
  [i] Y = Identity(S)
})",
       "s",
       [](Rewriter& r, const NodeByName&) {
         std::vector<onnx::TensorProto> values;
         values.push_back(Int64s({2}));
         values.push_back(Int64s({3}));
         return r.ReplaceByConstants(std::move(values));
       },
       R"(g (float[2] X) => (int64[1] Y) {
  [s] S = Shape(X)
  [i] Y = Identity(S)
})",
       "2 constants cannot replace them"},
  };
  return *cases;
}

}  // namespace onnxconvert::ir::rewriter_testing

#endif  // ONNX_CONVERT_IR_REWRITER_TEST_CASES_H_
