// CheckNodeApart: a node with subgraphs checked apart from its graph.

#include "converter/subgraph_check.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

struct ApartCase {
  std::string name;
  std::string model;                   // ONNX text: the node is the graph's last
  std::vector<std::string> captures;   // what its subgraphs read
  std::vector<std::string> untyped;    // values given no type
  std::string error;                   // a part of the Unimplemented message; "" when it checks
};

class CheckNodeApartTest : public ::testing::TestWithParam<ApartCase> {};

TEST_P(CheckNodeApartTest, Checks) {
  const ApartCase& c = GetParam();
  onnx::ModelProto model = testing::ModelFromText(c.model);
  onnx::TypeProto float2;
  float2.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  float2.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  onnx::TypeProto boolean;
  boolean.mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  boolean.mutable_tensor_type()->mutable_shape();
  auto type_of = [&](absl::string_view name) -> const onnx::TypeProto* {
    for (const std::string& untyped : c.untyped) {
      if (name == untyped) return nullptr;
    }
    return name == "C" ? &boolean : &float2;
  };
  // The node apart: the shell holds the graph's other fields.
  onnx::NodeProto node = model.graph().node(model.graph().node_size() - 1);
  model.mutable_graph()->mutable_node()->Clear();
  const std::string before = node.SerializeAsString();
  std::vector<absl::string_view> captures(c.captures.begin(), c.captures.end());
  absl::Status status = CheckNodeApart(model, node, captures, type_of);
  EXPECT_EQ(node.SerializeAsString(), before) << "the node is given back as it was";
  if (c.error.empty()) {
    EXPECT_TRUE(status.ok()) << status;
    return;
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), c.error)) << status;
}

constexpr char kIf[] = R"(<ir_version: 7, opset_import: ["" : 13]>
  g (bool C, float[2] X) => (float[2] Y) {
    T = Relu(X)
    [if] Y = If(C) <then_branch = t () => (float[2] A) { A = Relu(T) },
                    else_branch = e () => (float[2] B) { B = Neg(X) }> })";

INSTANTIATE_TEST_SUITE_P(
    Cases, CheckNodeApartTest,
    ::testing::Values(
        ApartCase{"Checks", kIf, {"T", "X"}, {}, ""},
        ApartCase{"ACaptureWithNoTypeIsNotDefined", kIf, {"T", "X"}, {"T"},
                  "'T', read in a subgraph of node 'if', is not defined before its use"},
        ApartCase{"AnInputWithNoTypeIsNotDefined", kIf, {"T", "X"}, {"C"},
                  "'C', read in a subgraph of node 'if', is not defined before its use"},
        // Gelu is none of opset 13's.
        ApartCase{"ASubgraphNodeThatDoesNotCheck",
                  R"(<ir_version: 7, opset_import: ["" : 13]>
                     g (bool C, float[2] X) => (float[2] Y) {
                       [if] Y = If(C) <then_branch = t () => (float[2] A) { A = Gelu(X) },
                                       else_branch = e () => (float[2] B) { B = Neg(X) }> })",
                  {"X"}, {}, "the model does not check"}),
    [](const ::testing::TestParamInfo<ApartCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::converter
