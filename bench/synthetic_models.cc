#include "bench/synthetic_models.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"

namespace onnxconvert::bench {
namespace {

onnx::NodeProto* AddNode(onnx::GraphProto& graph, const char* op, std::string name,
                         std::initializer_list<std::string> inputs, std::string output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(std::move(name));
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(std::move(output));
  return node;
}

void AddAxes(onnx::NodeProto* node) {
  onnx::AttributeProto* axes = node->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(0);
}

void SetType(onnx::ValueInfoProto* value, const std::string& name) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_param("N");
  tensor->mutable_shape()->add_dim()->set_dim_value(16);
}

}  // namespace

onnx::ModelProto MakeChainModel(int64_t nodes) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("onnx-convert-bench");
  model.add_opset_import()->set_version(12);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("chain");
  for (const char* name : {"W", "B"}) {
    onnx::TensorProto* tensor = graph.add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    if (name[0] == 'W') tensor->add_dims(16);
    tensor->add_dims(16);
    tensor->set_raw_data(std::string(4 * (name[0] == 'W' ? 256 : 16), '\0'));
  }
  SetType(graph.add_input(), "x0");
  std::string current = "x0";
  int64_t blocks = std::max<int64_t>(1, nodes / 5);
  for (int64_t b = 0; b < blocks; ++b) {
    std::string p = absl::StrCat("b", b);
    AddNode(graph, "MatMul", p + "_matmul", {current, "W"}, p + "_mm");
    AddNode(graph, "Add", p + "_add", {p + "_mm", "B"}, p + "_add");
    AddNode(graph, "Relu", p + "_relu", {p + "_add"}, p + "_relu");
    AddAxes(AddNode(graph, "Unsqueeze", p + "_unsqueeze", {p + "_relu"}, p + "_unsq"));
    current = absl::StrCat("x", b + 1);
    AddAxes(AddNode(graph, "Squeeze", p + "_squeeze", {p + "_unsq"}, current));
  }
  SetType(graph.add_output(), current);
  return model;
}

const std::string& SerializedChainModel(int64_t nodes) {
  static auto* cache = new std::map<int64_t, std::string>();
  auto [it, inserted] = cache->try_emplace(nodes);
  if (inserted) it->second = MakeChainModel(nodes).SerializeAsString();
  return it->second;
}

}  // namespace onnxconvert::bench
