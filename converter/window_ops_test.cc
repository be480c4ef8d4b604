// WindowOps: which nodes the windows may leave unparsed.

#include "converter/window_ops.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/text_parser.h"

namespace onnxconvert::converter {
namespace {

// Node `text` (ONNX text), serialized.
std::string Node(absl::string_view text) {
  absl::StatusOr<onnx::NodeProto> node = ParseNodeText(text);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? node->SerializeAsString() : "";
}

struct OpCase {
  std::string node;   // ONNX text
  int64_t source;     // opset
  int64_t target;     // one step at a time
  bool known;         // whether it has a schema at the source
  bool unparsed;      // whether it may be left unparsed
};

class WindowOpsTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(WindowOpsTest, Reads) {
  const OpCase& c = GetParam();
  std::vector<std::pair<int64_t, int64_t>> steps;
  int64_t direction = c.target > c.source ? 1 : -1;
  for (int64_t from = c.source; from != c.target; from += direction) {
    steps.emplace_back(from, from + direction);
  }
  WindowOps ops(c.source, steps);
  PlainNode plain;
  std::string bytes = Node(c.node);
  WindowOp op = ops.Read(bytes, plain);
  EXPECT_EQ(op.schema != nullptr, c.known) << c.node;
  EXPECT_EQ(op.unparsed, c.unparsed) << c.node;
  // Looked up once: the same again.
  WindowOp again = ops.Read(bytes, plain);
  EXPECT_EQ(again.schema, op.schema);
  EXPECT_EQ(again.unparsed, op.unparsed);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WindowOpsTest,
    ::testing::Values(
        // Relu is only rebound from 12 to 21.
        OpCase{"Y = Relu(X)", 12, 21, true, true},
        // Unsqueeze's axes become an input at 13.
        OpCase{"Y = Unsqueeze <axes = [0]> (X)", 12, 13, true, false},
        OpCase{"Y = Unsqueeze(X, A)", 13, 21, true, true},
        // Later windows read the values of Constant nodes.
        OpCase{"Y = Constant <value_float = 1.0> ()", 12, 13, true, false},
        // Gelu is none of opset 12's.
        OpCase{"Y = Gelu(X)", 12, 21, false, false},
        // Of other domains, or of an op left unparsed holding graphs: none
        // (If is only rebound from 13 to 14).
        OpCase{"Y = com.vendor.Relu(X)", 12, 13, false, false},
        OpCase{"Y = local.F(X)", 12, 13, false, false},
        OpCase{"Y = If(C) <then_branch = t () => (float A) { A = Relu(X) },"
               " else_branch = e () => (float B) { B = Neg(X) }>",
               13, 14, false, false},
        // Attributes of no graph: plain.
        OpCase{"Y = LeakyRelu <alpha = 0.5> (X)", 12, 13, true, true}));

}  // namespace
}  // namespace onnxconvert::converter
