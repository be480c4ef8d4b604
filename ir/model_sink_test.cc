#include "ir/model_sink.h"

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {
namespace {

// A model whose fields fall before its graph (ir_version), inside it (two
// nodes, then the graph's name) and after it (opset_import).
onnx::ModelProto SmallModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::GraphProto* graph = model.mutable_graph();
  for (const char* name : {"first", "second"}) {
    onnx::NodeProto* node = graph->add_node();
    node->set_name(name);
    node->set_op_type("Relu");
    node->add_input(std::string(name) + "_in");
    node->add_output(std::string(name) + "_out");
  }
  graph->set_name("g");
  model.add_opset_import()->set_version(13);
  return model;
}

struct SinkCase {
  std::string name;
  size_t expected_bytes;  // told to Expect; 0: not told
};

class StringModelSinkTest : public ::testing::TestWithParam<SinkCase> {};

TEST_P(StringModelSinkTest, GivesTheModelsBytes) {
  onnx::ModelProto model = SmallModel();
  onnx::ModelProto head;
  head.set_ir_version(model.ir_version());
  onnx::ModelProto tail;
  *tail.mutable_opset_import() = model.opset_import();
  onnx::GraphProto rest;
  rest.set_name(model.graph().name());

  StringModelSink sink;
  if (GetParam().expected_bytes > 0) sink.Expect(GetParam().expected_bytes);
  for (const onnx::NodeProto& node : model.graph().node()) {
    onnx::GraphProto one;
    *one.add_node() = node;  // the node field: tag, length, node
    ASSERT_TRUE(sink.AppendNodes(one.SerializeAsString()).ok());
  }
  std::string rest_bytes = rest.SerializeAsString();
  std::vector<absl::string_view> graph_rest = {rest_bytes};
  ASSERT_TRUE(
      sink.Finish(head.SerializeAsString(), graph_rest, tail.SerializeAsString()).ok());
  EXPECT_EQ(sink.bytes(), model.SerializeAsString());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StringModelSinkTest,
    ::testing::Values(// The node bytes grow as they come; the model is built anew.
                      SinkCase{"not_told", 0},
                      // Room reserved: the model is built in place.
                      SinkCase{"told", 1 << 10}),
    [](const ::testing::TestParamInfo<SinkCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert
