#ifndef ONNX_CONVERT_IR_MODEL_SUMMARY_H_
#define ONNX_CONVERT_IR_MODEL_SUMMARY_H_

// A summary of a model (opsets, inputs and outputs, ops, functions,
// subgraphs, sizes) as a struct, text and JSON, for `onnx-convert inspect`
// and the service.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "proto/onnx.pb.h"

namespace onnxconvert {

// A graph input or output: its name and type in ONNX text syntax.
struct ValueSummary {
  std::string name;
  std::string type;  // e.g. "float[N,3,224,224]"; "" when the type is absent
};

// A model-local function.
struct FunctionSummary {
  std::string domain;
  std::string name;
  std::string overload;
  int64_t node_count = 0;
};

// A graph held by a node attribute, at any depth.
struct SubgraphSummary {
  std::string path;  // e.g. "main/then_branch of 'if_1'"
  int64_t node_count = 0;
};

// What `onnx-convert inspect` reports about a model.
struct ModelSummary {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string graph_name;
  std::vector<std::pair<std::string, int64_t>> opset_imports;
  // Nodes of the main graph and of all its subgraphs, by (domain, op_type);
  // functions are counted in `functions`.
  std::map<std::pair<std::string, std::string>, int64_t> op_counts;
  int64_t main_graph_nodes = 0;
  int64_t total_nodes = 0;  // main graph plus subgraphs
  int64_t initializer_count = 0;
  int64_t initializer_bytes = 0;
  int64_t sparse_initializer_count = 0;
  int64_t external_tensor_count = 0;
  int64_t external_bytes = 0;
  std::vector<std::string> external_files;  // sorted, distinct
  std::vector<FunctionSummary> functions;
  std::vector<SubgraphSummary> subgraphs;
  std::vector<ValueSummary> inputs;
  std::vector<ValueSummary> outputs;
  int64_t metadata_props = 0;
  int64_t training_info = 0;
};

// Summarizes a model; never fails (absent fields read as empty).
ModelSummary SummarizeModel(const onnx::ModelProto& model);

// The summary as aligned, human-readable text.
std::string SummaryToText(const ModelSummary& summary);

// The summary as JSON (deterministic key order).
std::string SummaryToJson(const ModelSummary& summary);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_MODEL_SUMMARY_H_
