#include "service/testing/test_models.h"

#include <fstream>
#include <initializer_list>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace onnxconvert::service::testing {
namespace {

void AddFloatValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                   const std::string& name, int rank) {
  onnx::ValueInfoProto* value = list->Add();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_param("N");
  for (int i = 1; i < rank; ++i) tensor->mutable_shape()->add_dim()->set_dim_value(4);
}

onnx::ModelProto ModelAt(int64_t opset, int64_t ir_version) {
  onnx::ModelProto model;
  model.set_ir_version(ir_version);
  model.set_producer_name("service_test");
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

// A node of `graph`: `op` named `name`, from `inputs` to `outputs`.
onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& op, const std::string& name,
                         std::initializer_list<std::string> inputs,
                         std::initializer_list<std::string> outputs) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

void AddAxes(onnx::NodeProto& node) {
  onnx::AttributeProto* axes = node.add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(0);
}

}  // namespace

onnx::ModelProto UnsqueezeChain(int64_t pairs) {
  onnx::ModelProto model = ModelAt(11, 6);
  onnx::GraphProto* graph = model.mutable_graph();
  std::string value = "x";
  for (int64_t i = 0; i < pairs; ++i) {
    onnx::NodeProto* up =
        AddNode(*graph, "Unsqueeze", absl::StrCat("u", i), {value}, {absl::StrCat("u", i, "_out")});
    AddAxes(*up);
    value = i + 1 == pairs ? "y" : absl::StrCat("s", i, "_out");
    AddAxes(*AddNode(*graph, "Squeeze", absl::StrCat("s", i), {up->output(0)}, {value}));
  }
  AddFloatValue(graph->mutable_input(), "x", 2);
  AddFloatValue(graph->mutable_output(), "y", 2);
  return model;
}

onnx::ModelProto ExternalDataModel(const std::string& location) {
  onnx::ModelProto model = ModelAt(13, 8);
  onnx::GraphProto* graph = model.mutable_graph();
  AddNode(*graph, "Add", "add", {"X", "W"}, {"Y"});
  onnx::TensorProto* weight = graph->add_initializer();
  weight->set_name("W");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(4);
  weight->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, entry] : {std::pair{"location", location}, std::pair{"offset", std::string("0")},
                            std::pair{"length", std::string("16")}}) {
    onnx::StringStringEntryProto* kv = weight->add_external_data();
    kv->set_key(key);
    kv->set_value(entry);
  }
  AddFloatValue(graph->mutable_input(), "X", 2);
  AddFloatValue(graph->mutable_output(), "Y", 2);
  return model;
}

onnx::ModelProto GeluModel() {
  onnx::ModelProto model = ModelAt(20, 9);
  onnx::GraphProto* graph = model.mutable_graph();
  AddNode(*graph, "Gelu", "gelu", {"X"}, {"Y"});
  AddFloatValue(graph->mutable_input(), "X", 2);
  AddFloatValue(graph->mutable_output(), "Y", 2);
  return model;
}

std::string TinyCnnPath() { return "examples/tiny_cnn.onnx"; }

std::string TinyCnnBytes() {
  std::ifstream in(TinyCnnPath(), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

const std::string& SlowModelBytes() {
  static const auto* bytes = new std::string(UnsqueezeChain(150000).SerializeAsString());
  return *bytes;
}

}  // namespace onnxconvert::service::testing
