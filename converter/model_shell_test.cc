// FinishAroundNodes: a model's fields written around its nodes.

#include "converter/model_shell.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "converter/wire_scan.h"
#include "ir/model_sink.h"
#include "ir/wire.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

constexpr char kModel[] = R"(<ir_version: 8, opset_import: ["" : 13, "local" : 1],
                               producer_name: "test", doc_string: "after the graph">
  g (float[2] X) => (float[2] Y)
    <float[2] W = {1.0, 2.0}, float[2] V = {3.0, 4.0}, float[2] T> {
    T = Add(X, W)
    Y = local.F(T, V) }
  <domain: "local", opset_import: ["" : 13]>
  F (A, B) => (C) { C = Mul(A, B) })";

// The nodes written first, then the rest around them: the model's bytes
// as protobuf encodes them; an initializer given as read is written as
// given, not as the shell holds it.
TEST(FinishAroundNodesTest, WritesTheModelAroundItsNodes) {
  onnx::ModelProto model = testing::ModelFromText(kModel);
  onnx::ModelProto shell = model;
  shell.mutable_graph()->mutable_node()->Clear();
  // V as read: its data, which the shell's header-only copy lacks.
  std::string v_field;
  wire::AppendMessageField(kGraphInitializer, model.graph().initializer(1), v_field);
  shell.mutable_graph()->mutable_initializer(1)->clear_float_data();
  const std::string shell_before = shell.SerializeAsString();

  StringModelSink sink;
  std::string nodes;
  for (const onnx::NodeProto& node : model.graph().node()) {
    wire::AppendMessageField(kGraphNode, node, nodes);
  }
  ASSERT_TRUE(sink.AppendNodes(nodes).ok());
  std::vector<absl::string_view> as_read = {"", v_field};
  ASSERT_TRUE(FinishAroundNodes(shell, as_read, sink).ok());
  EXPECT_TRUE(sink.bytes() == model.SerializeAsString());
  EXPECT_EQ(shell.SerializeAsString(), shell_before);
}

}  // namespace
}  // namespace onnxconvert::converter
