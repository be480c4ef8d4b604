#include "ir/model_summary.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/json_writer.h"
#include "base/limits.h"
#include "ir/tensor_util.h"
#include "ir/text_printer.h"

namespace onnxconvert {
namespace {

class Summarizer {
 public:
  explicit Summarizer(ModelSummary& summary) : summary_(summary) {}

  void AddTensor(const onnx::TensorProto& tensor) {
    if (!IsExternal(tensor)) return;
    ++summary_.external_tensor_count;
    summary_.external_bytes += TensorDataBytes(tensor);
    for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
      if (entry.key() == "location") external_files_.insert(entry.value());
    }
  }

  // Counts the nodes of `graph` and, recursively, of its subgraphs.
  void AddGraph(const onnx::GraphProto& graph, const std::string& path,
                int depth) {
    for (const onnx::TensorProto& tensor : graph.initializer()) AddTensor(tensor);
    for (const onnx::NodeProto& node : graph.node()) {
      ++summary_.op_counts[{node.domain(), node.op_type()}];
      ++summary_.total_nodes;
      AddAttributes(node, path, depth);
    }
  }

  std::set<std::string>& external_files() { return external_files_; }

 private:
  void AddAttributes(const onnx::NodeProto& node, const std::string& path,
                     int depth) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_t()) AddTensor(attribute.t());
      for (const onnx::TensorProto& tensor : attribute.tensors()) AddTensor(tensor);
      if (depth >= kMaxGraphDepth) continue;
      std::string prefix = absl::StrCat(path, "/", attribute.name());
      std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
      if (attribute.has_g()) AddSubgraph(attribute.g(), prefix + owner, depth);
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        AddSubgraph(attribute.graphs(i), absl::StrCat(prefix, "[", i, "]", owner),
                    depth);
      }
    }
  }

  void AddSubgraph(const onnx::GraphProto& graph, const std::string& path,
                   int depth) {
    summary_.subgraphs.push_back({path, graph.node_size()});
    AddGraph(graph, path, depth + 1);
  }

  ModelSummary& summary_;
  std::set<std::string> external_files_;
};

std::vector<ValueSummary> SummarizeValues(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
  std::vector<ValueSummary> result;
  for (const onnx::ValueInfoProto& value : values) {
    result.push_back({value.name(), value.has_type() ? PrintTypeText(value.type()) : ""});
  }
  return result;
}

std::string DomainName(const std::string& domain) {
  return domain.empty() ? "ai.onnx" : domain;
}

}  // namespace

ModelSummary SummarizeModel(const onnx::ModelProto& model) {
  ModelSummary summary;
  summary.ir_version = model.ir_version();
  summary.producer_name = model.producer_name();
  summary.producer_version = model.producer_version();
  summary.domain = model.domain();
  summary.model_version = model.model_version();
  summary.graph_name = model.graph().name();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    summary.opset_imports.emplace_back(opset.domain(), opset.version());
  }
  const onnx::GraphProto& graph = model.graph();
  summary.main_graph_nodes = graph.node_size();
  summary.initializer_count = graph.initializer_size();
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    summary.initializer_bytes += TensorDataBytes(tensor);
  }
  summary.sparse_initializer_count = graph.sparse_initializer_size();
  Summarizer summarizer(summary);
  summarizer.AddGraph(graph, "main", 0);
  for (const onnx::FunctionProto& function : model.functions()) {
    summary.functions.push_back({function.domain(), function.name(),
                                 function.overload(), function.node_size()});
  }
  summary.external_files.assign(summarizer.external_files().begin(),
                                summarizer.external_files().end());
  summary.inputs = SummarizeValues(graph.input());
  summary.outputs = SummarizeValues(graph.output());
  summary.metadata_props = model.metadata_props_size();
  summary.training_info = model.training_info_size();
  return summary;
}

std::string SummaryToText(const ModelSummary& s) {
  std::string out;
  auto line = [&out](absl::string_view key, absl::string_view value) {
    absl::StrAppendFormat(&out, "%-18s %s\n", absl::StrCat(key, ":"), value);
  };
  line("ir_version", absl::StrCat(s.ir_version));
  line("producer", absl::StrCat(s.producer_name, s.producer_version.empty() ? "" : " ",
                                s.producer_version));
  if (!s.domain.empty()) line("domain", s.domain);
  if (s.model_version != 0) line("model_version", absl::StrCat(s.model_version));
  line("graph", s.graph_name);
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : s.opset_imports) {
    opsets.push_back(absl::StrCat(DomainName(domain), " ", version));
  }
  line("opset_import", absl::StrJoin(opsets, ", "));
  line("nodes", absl::StrFormat("%d (main graph %d, subgraphs %d)", s.total_nodes,
                                s.main_graph_nodes, s.total_nodes - s.main_graph_nodes));
  line("initializers", absl::StrFormat("%d (%d bytes)", s.initializer_count,
                                       s.initializer_bytes));
  if (s.sparse_initializer_count > 0) {
    line("sparse_initializers", absl::StrCat(s.sparse_initializer_count));
  }
  line("external_data",
       s.external_tensor_count == 0
           ? std::string("none")
           : absl::StrFormat("%d tensors, %d bytes in %s", s.external_tensor_count,
                             s.external_bytes, absl::StrJoin(s.external_files, ", ")));
  line("functions", absl::StrCat(s.functions.size()));
  for (const FunctionSummary& f : s.functions) {
    absl::StrAppendFormat(&out, "  %s.%s%s: %d nodes\n", DomainName(f.domain), f.name,
                          f.overload.empty() ? "" : ":" + f.overload, f.node_count);
  }
  line("subgraphs", absl::StrCat(s.subgraphs.size()));
  for (const SubgraphSummary& g : s.subgraphs) {
    absl::StrAppendFormat(&out, "  %s: %d nodes\n", g.path, g.node_count);
  }
  line("metadata_props", absl::StrCat(s.metadata_props));
  if (s.training_info > 0) line("training_info", absl::StrCat(s.training_info));
  for (const auto& [label, values] :
       {std::pair{"inputs", &s.inputs}, std::pair{"outputs", &s.outputs}}) {
    line(label, absl::StrCat(values->size()));
    for (const ValueSummary& v : *values) {
      absl::StrAppendFormat(&out, "  %s: %s\n", v.name, v.type.empty() ? "?" : v.type);
    }
  }
  out += "ops:\n";
  for (const auto& [op, count] : s.op_counts) {
    absl::StrAppendFormat(&out, "  %s.%s: %d\n", DomainName(op.first), op.second, count);
  }
  return out;
}

std::string SummaryToJson(const ModelSummary& s) {
  JsonWriter json;
  json.BeginObject();
  json.Key("ir_version").Int(s.ir_version);
  json.Key("producer_name").String(s.producer_name);
  json.Key("producer_version").String(s.producer_version);
  json.Key("domain").String(s.domain);
  json.Key("model_version").Int(s.model_version);
  json.Key("graph_name").String(s.graph_name);
  json.Key("opset_import").BeginArray();
  for (const auto& [domain, version] : s.opset_imports) {
    json.BeginObject().Key("domain").String(domain).Key("version").Int(version).EndObject();
  }
  json.EndArray();
  json.Key("nodes").BeginObject();
  json.Key("total").Int(s.total_nodes);
  json.Key("main_graph").Int(s.main_graph_nodes);
  json.Key("by_op").BeginArray();
  for (const auto& [op, count] : s.op_counts) {
    json.BeginObject().Key("domain").String(op.first).Key("op_type").String(op.second)
        .Key("count").Int(count).EndObject();
  }
  json.EndArray().EndObject();
  json.Key("initializers").BeginObject().Key("count").Int(s.initializer_count)
      .Key("bytes").Int(s.initializer_bytes).Key("sparse").Int(s.sparse_initializer_count)
      .EndObject();
  json.Key("external_data").BeginObject().Key("tensors").Int(s.external_tensor_count)
      .Key("bytes").Int(s.external_bytes).Key("files").BeginArray();
  for (const std::string& file : s.external_files) json.String(file);
  json.EndArray().EndObject();
  json.Key("functions").BeginArray();
  for (const FunctionSummary& f : s.functions) {
    json.BeginObject().Key("domain").String(f.domain).Key("name").String(f.name)
        .Key("overload").String(f.overload).Key("nodes").Int(f.node_count).EndObject();
  }
  json.EndArray();
  json.Key("subgraphs").BeginArray();
  for (const SubgraphSummary& g : s.subgraphs) {
    json.BeginObject().Key("path").String(g.path).Key("nodes").Int(g.node_count).EndObject();
  }
  json.EndArray();
  for (const auto& [label, values] :
       {std::pair{"inputs", &s.inputs}, std::pair{"outputs", &s.outputs}}) {
    json.Key(label).BeginArray();
    for (const ValueSummary& v : *values) {
      json.BeginObject().Key("name").String(v.name).Key("type").String(v.type).EndObject();
    }
    json.EndArray();
  }
  json.Key("metadata_props").Int(s.metadata_props);
  json.Key("training_info").Int(s.training_info);
  json.EndObject();
  return json.Finish();
}

}  // namespace onnxconvert
