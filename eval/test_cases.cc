#include "eval/test_cases.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/evaluator.h"
#include "ir/text_parser.h"
#include "schema/registry.h"

namespace onnxconvert::eval {

std::string Evaluate(const Case& c) {
  std::string imports = absl::StrCat("\"\" : ", c.opset);
  if (c.ml_opset > 0) absl::StrAppend(&imports, ", \"ai.onnx.ml\" : ", c.ml_opset);
  if (c.training_opset > 0) {
    absl::StrAppend(&imports, ", \"ai.onnx.preview.training\" : ", c.training_opset);
  }
  if (c.preview_opset > 0) {
    absl::StrAppend(&imports, ", \"ai.onnx.preview\" : ", c.preview_opset);
  }
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(
      absl::StrCat("<ir_version: 10, opset_import: [", imports, "]>\n", c.graph));
  if (!model.ok()) return absl::StrCat("parse: ", model.status().message());
  absl::flat_hash_map<std::string, Tensor> values;
  for (const onnx::TensorProto& init : model->graph().initializer()) {
    absl::StatusOr<Tensor> t = FromProto(init);
    if (!t.ok()) return std::string(t.status().message());
    values[init.name()] = *std::move(t);
  }
  for (const onnx::NodeProto& node : model->graph().node()) {
    int opset = node.domain().empty()                        ? c.opset
                : node.domain() == "ai.onnx.preview.training" ? c.training_opset
                : node.domain() == "ai.onnx.preview"          ? c.preview_opset
                                                              : c.ml_opset;
    const schema::OpSchema* op = schema::Registry::Get().Lookup(node.domain(), node.op_type(),
                                                                opset);
    if (op == nullptr) return absl::StrCat("no schema for ", node.op_type());
    std::vector<const Tensor*> inputs;
    for (const std::string& name : node.input()) {
      inputs.push_back(name.empty() ? nullptr : &values.at(name));
    }
    absl::StatusOr<std::vector<Tensor>> outputs = EvaluateNode(node, op->since_version, inputs);
    if (!outputs.ok()) return std::string(outputs.status().message());
    for (int i = 0; i < node.output_size(); ++i) values[node.output(i)] = (*outputs)[i];
  }
  std::vector<std::string> shown;
  for (const onnx::ValueInfoProto& output : model->graph().output()) {
    shown.push_back(DebugString(values.at(output.name())));
  }
  return absl::StrJoin(shown, "; ");
}

TEST_P(KernelCaseTest, ComputesOutputs) { EXPECT_EQ(Evaluate(GetParam()), GetParam().expected); }

}  // namespace onnxconvert::eval
