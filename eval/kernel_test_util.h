#ifndef ONNX_CONVERT_EVAL_KERNEL_TEST_UTIL_H_
#define ONNX_CONVERT_EVAL_KERNEL_TEST_UTIL_H_

// What the kernel tests share: a case in ONNX text whose inputs are
// initializers, evaluated node by node, its outputs as text.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "ir/text_parser.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::eval::kernel_testing {

// One kernel case: the body of a model at ai.onnx `opset` and its outputs
// as text ("int64[2] {4, 2}", "; "-joined) or the first error's message.
struct KernelCase {
  std::string name;
  int opset;
  std::string graph;
  std::string expected;
};

// Evaluates `c.graph` node by node (each node bound to its version at
// `c.opset`); the graph outputs as text, or the first error's message.
inline std::string EvaluateNodeByNode(const KernelCase& c) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(absl::StrCat(
      "<ir_version: 10, opset_import: [\"\" : ", c.opset, "]>\n", c.graph));
  if (!model.ok()) return absl::StrCat("parse: ", model.status().message());
  absl::flat_hash_map<std::string, Tensor> values;
  for (const onnx::TensorProto& init : model->graph().initializer()) {
    absl::StatusOr<Tensor> t = FromProto(init);
    if (!t.ok()) return std::string(t.status().message());
    values[init.name()] = *std::move(t);
  }
  for (const onnx::NodeProto& node : model->graph().node()) {
    const schema::OpSchema* op = schema::Registry::Get().Lookup("", node.op_type(), c.opset);
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

}  // namespace onnxconvert::eval::kernel_testing

#endif  // ONNX_CONVERT_EVAL_KERNEL_TEST_UTIL_H_
