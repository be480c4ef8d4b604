#include "converter/converter.h"

#include <chrono>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/graph_index.h"
#include "ir/json_writer.h"
#include "schema/checker.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::converter {
namespace {

using schema::OpSchema;
using schema::Registry;

constexpr int kMaxDepth = 64;

// A node of ai.onnx somewhere in the model.
struct NodeSite {
  onnx::NodeProto* node;
  onnx::GraphProto* graph;  // null inside functions
  std::string path;
};

// Every ai.onnx node of the model by op type, collected once; adapters that
// only bump versions leave the structure, and so this index, unchanged.
class OpIndex {
 public:
  explicit OpIndex(onnx::ModelProto& model) {
    if (model.has_graph()) AddGraph(*model.mutable_graph(), "main", 0);
    for (onnx::FunctionProto& function : *model.mutable_functions()) {
      std::string path = absl::StrCat("function '", function.domain(), ".", function.name(), "'");
      for (onnx::NodeProto& node : *function.mutable_node()) Add(node, nullptr, path, 0);
    }
  }

  absl::Span<const NodeSite> NodesOf(absl::string_view op) const {
    auto it = by_op_.find(op);
    if (it == by_op_.end()) return {};
    return it->second;
  }
  const std::map<std::string, int>& others() const { return others_; }

 private:
  void AddGraph(onnx::GraphProto& graph, const std::string& path, int depth) {
    for (onnx::NodeProto& node : *graph.mutable_node()) Add(node, &graph, path, depth);
  }

  void Add(onnx::NodeProto& node, onnx::GraphProto* graph, const std::string& path,
           int depth) {
    if (Registry::CanonicalDomain(node.domain()).empty()) {
      by_op_[node.op_type()].push_back({&node, graph, path});
    } else {
      ++others_[absl::StrCat(node.domain(), ".", node.op_type())];
    }
    if (depth >= kMaxDepth) return;
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
      if (attribute.has_g()) {
        AddGraph(*attribute.mutable_g(), absl::StrCat(path, "/", attribute.name(), owner),
                 depth + 1);
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        AddGraph(*attribute.mutable_graphs(i),
                 absl::StrCat(path, "/", attribute.name(), "[", i, "]", owner), depth + 1);
      }
    }
  }

  absl::flat_hash_map<std::string, std::vector<NodeSite>> by_op_;
  std::map<std::string, int> others_;
};

std::optional<int64_t> AiOnnxOpset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (Registry::CanonicalDomain(opset.domain()).empty()) return opset.version();
  }
  return std::nullopt;
}

void SetAiOnnxOpset(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                    int64_t opset) {
  for (auto& entry : imports) {
    if (Registry::CanonicalDomain(entry.domain()).empty()) entry.set_version(opset);
  }
}

std::string NodeName(const onnx::NodeProto& node) {
  return node.name().empty() ? absl::StrCat("(unnamed ", node.op_type(), ")")
                             : absl::StrCat("'", node.name(), "'");
}

absl::Status StepError(absl::StatusCode code, int64_t from, int64_t to, const NodeSite& site,
                       const OpSchema& schema, absl::string_view reason) {
  return absl::Status(code, absl::StrFormat("step %d -> %d: %s \xE2\x80\xBA node %s (%s): %s",
                                            from, to, site.path, NodeName(*site.node),
                                            schema.Label(), reason));
}

// Element types of every value, looked up by graph and name.
class TypeTable {
 public:
  explicit TypeTable(const schema::InferenceResult* result) : result_(result) {}
  const onnx::TypeProto* TypeOf(const onnx::GraphProto* graph, absl::string_view name) const {
    if (result_ == nullptr || graph == nullptr) return nullptr;
    auto g = result_->graphs.find(graph);
    if (g == result_->graphs.end()) return nullptr;
    auto it = g->second.types.find(name);
    return it == g->second.types.end() ? nullptr : it->second;
  }

 private:
  const schema::InferenceResult* result_;
};

// Converts the nodes whose op changes between `from` and `to` (adjacent).
// Adds `value` as an initializer of `graph` under a fresh name.
absl::StatusOr<std::string> AddConstant(onnx::GraphProto* graph, NameGenerator& names,
                                        const onnx::NodeProto& node, onnx::TensorProto value) {
  if (graph == nullptr) {
    return absl::FailedPreconditionError(
        "a constant input would be needed inside a function body (not supported yet)");
  }
  std::string name = names.FreshName(node.name().empty() ? node.op_type() : node.name());
  value.set_name(name);
  *graph->add_initializer() = std::move(value);
  return name;
}

const onnx::TensorProto* InitializerOf(const onnx::GraphProto* graph, absl::string_view name) {
  if (graph == nullptr) return nullptr;
  for (const onnx::TensorProto& tensor : graph->initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

absl::StatusOr<StepReport> RunStep(const OpIndex& index, int64_t from, int64_t to,
                                   const TypeTable& types, NameGenerator& names, bool dry_run) {
  StepReport step;
  step.from_opset = from;
  step.to_opset = to;
  const Registry& registry = Registry::Get();
  // Upgrading k -> k+1 touches ops with a version introduced at k+1;
  // downgrading k -> k-1 touches ops with a version introduced at k.
  int64_t boundary = std::max(from, to);
  for (const OpSchema* changed : registry.ChangedAt("", boundary)) {
    absl::Span<const NodeSite> sites = index.NodesOf(changed->name);
    if (sites.empty()) continue;
    // The versions on both sides of the step are the same for every node.
    const OpSchema* current = registry.Lookup("", changed->name, from);
    const OpSchema* next = registry.Lookup("", changed->name, to);
    if (current == nullptr) continue;  // the op is not valid here anyway
    std::optional<adapters::AdapterPlan> plan;
    if (next != nullptr && next != current) plan = adapters::PlanAdapter(*current, *next);
    for (const NodeSite& site : sites) {
      if (next == nullptr) {
        return StepError(absl::StatusCode::kFailedPrecondition, from, to, site, *current,
                         absl::StrCat(changed->name, " does not exist before opset ",
                                      registry.VersionsOf("", changed->name).front(),
                                      " (expanding its function body is not supported yet)"));
      }
      if (current == next) continue;
      std::vector<adapters::Change> changes;
      adapters::AdapterContext ctx{
          *site.node, *current, *next,
          [&](absl::string_view value) { return types.TypeOf(site.graph, value); }, changes,
          [&](onnx::TensorProto value) {
            return AddConstant(site.graph, names, *site.node, std::move(value));
          },
          [&](absl::string_view name) { return InitializerOf(site.graph, name); }};
      adapters::AdapterEntry adapter = adapters::FindAdapter(*plan, *site.node);
      absl::Status status;
      switch (adapter.kind) {
        case adapters::AdapterEntry::kUnsupported:
          status = absl::FailedPreconditionError(adapter.reason);
          break;
        case adapters::AdapterEntry::kCompatible:
          status = adapters::CheckTypesAllowed(ctx);
          if (status.ok()) {
            changes.push_back({"version-bump", absl::StrCat(current->Label(), " -> ",
                                                             next->Label())});
          }
          break;
        case adapters::AdapterEntry::kRewrite:
          if (!dry_run) {
            status = adapter.fn(ctx);
            std::string misfit = status.ok() ? adapters::NodeFitsVersion(*next, *site.node) : "";
            if (!misfit.empty()) {
              status = absl::FailedPreconditionError(
                  absl::StrCat(adapter.name, " leaves the node unfit: ", misfit));
            }
          }
          break;
      }
      if (!status.ok()) {
        return StepError(status.code(), from, to, site, *current, status.message());
      }
      step.nodes.push_back({site.path, site.node->name(), std::string(changed->name),
                            current->since_version, next->since_version, adapter.name,
                            std::move(changes)});
    }
  }
  return step;
}

// Check and strict inference of the whole model; "ok" or the first error.
std::string Validate(const onnx::ModelProto& model) {
  schema::CheckReport report = schema::CheckModel(model);
  if (!report.status().ok()) return std::string(report.status().message());
  schema::InferenceOptions strict;
  strict.strict = true;
  absl::StatusOr<schema::InferenceResult> inferred = schema::InferModel(model, strict);
  if (!inferred.ok()) return std::string(inferred.status().message());
  return "ok";
}

}  // namespace

int64_t MinIrVersionForOpset(int64_t opset) {
  // (first opset, IR version) of each ONNX release that raised the IR.
  static constexpr std::pair<int64_t, int64_t> kFirstOpsetOfIr[] = {
      {1, 3}, {9, 4}, {10, 5}, {11, 6}, {12, 7}, {15, 8}, {19, 9},
      {21, 10}, {23, 11}, {24, 12}, {25, 13},
  };
  int64_t ir = 3;
  for (auto [first_opset, version] : kFirstOpsetOfIr) {
    if (opset >= first_opset) ir = version;
  }
  return ir;
}

absl::StatusOr<ConversionResult> ConvertModel(const onnx::ModelProto& model,
                                              const ConvertOptions& options) {
  std::optional<int64_t> source = AiOnnxOpset(model);
  if (!source) {
    return absl::InvalidArgumentError("the model imports no ai.onnx opset to convert from");
  }
  int64_t target = options.target_opset;
  int64_t newest = Registry::Get().MaxOpset("");
  if (target < 1 || target > newest) {
    return absl::InvalidArgumentError(
        absl::StrCat("target opset ", target, " does not exist (1 to ", newest, ")"));
  }
  ConversionResult result;
  result.model = model;
  ConversionReport& report = result.report;
  report.source_opset = *source;
  report.target_opset = target;
  report.source_ir_version = model.ir_version();

  schema::CheckReport check = schema::CheckModel(model);
  if (!check.status().ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the input model is invalid: ", check.status().message()));
  }
  absl::StatusOr<schema::InferenceResult> inferred = schema::InferModel(result.model);
  TypeTable types(inferred.ok() ? &*inferred : nullptr);

  OpIndex index(result.model);
  NameGenerator names(result.model);
  for (const auto& [op, count] : index.others()) report.untouched_ops.emplace_back(op, count);
  int64_t direction = target > *source ? 1 : -1;
  for (int64_t from = *source; from != target; from += direction) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<StepReport> step = RunStep(index, from, from + direction, types, names,
                                              options.dry_run);
    if (!step.ok()) return step.status();
    if (!options.dry_run) {
      SetAiOnnxOpset(*result.model.mutable_opset_import(), from + direction);
      for (auto& function : *result.model.mutable_functions()) {
        SetAiOnnxOpset(*function.mutable_opset_import(), from + direction);
      }
      if (step->nodes.empty()) {
        // No node binds to another operator version: what validated at the
        // previous opset is still valid.
        step->validation = "unchanged";
      } else if (options.validate_each_step) {
        step->validation = Validate(result.model);
        if (step->validation != "ok") {
          return absl::InternalError(absl::StrCat("step ", from, " -> ", from + direction,
                                                  ": the converted model does not validate: ",
                                                  step->validation));
        }
      }
    }
    step->milliseconds = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
    report.nodes_converted += static_cast<int>(step->nodes.size());
    report.steps.push_back(*std::move(step));
  }
  int64_t ir = options.ir_version.value_or(
      std::max(model.ir_version(), MinIrVersionForOpset(target)));
  if (!options.dry_run) result.model.set_ir_version(ir);
  report.target_ir_version = ir;
  return result;
}

std::string ConversionReport::ToJson() const {
  JsonWriter json;
  json.BeginObject();
  json.Key("source_opset").Int(source_opset).Key("target_opset").Int(target_opset);
  json.Key("source_ir_version").Int(source_ir_version);
  json.Key("target_ir_version").Int(target_ir_version);
  json.Key("nodes_converted").Int(nodes_converted);
  json.Key("steps").BeginArray();
  for (const StepReport& step : steps) {
    json.BeginObject().Key("from").Int(step.from_opset).Key("to").Int(step.to_opset);
    json.Key("validation").String(step.validation);
    json.Key("milliseconds").Double(step.milliseconds);
    json.Key("nodes").BeginArray();
    for (const NodeChange& node : step.nodes) {
      json.BeginObject().Key("graph").String(node.graph).Key("node").String(node.node);
      json.Key("op").String(node.op).Key("from_version").Int(node.from_version);
      json.Key("to_version").Int(node.to_version).Key("adapter").String(node.adapter);
      json.Key("changes").BeginArray();
      for (const adapters::Change& change : node.changes) {
        json.BeginObject().Key("kind").String(change.kind).Key("detail").String(change.detail)
            .EndObject();
      }
      json.EndArray().EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();
  json.Key("untouched_ops").BeginArray();
  for (const auto& [op, count] : untouched_ops) {
    json.BeginObject().Key("op").String(op).Key("count").Int(count).EndObject();
  }
  json.EndArray().EndObject();
  return json.Finish();
}

std::string ConversionReport::ToText() const {
  std::string out = absl::StrFormat("opset %d -> %d, ir_version %d -> %d, %d nodes converted\n",
                                    source_opset, target_opset, source_ir_version,
                                    target_ir_version, nodes_converted);
  for (const StepReport& step : steps) {
    absl::StrAppendFormat(&out, "step %d -> %d: %d nodes, validation %s (%.1f ms)\n",
                          step.from_opset, step.to_opset, step.nodes.size(), step.validation,
                          step.milliseconds);
    for (const NodeChange& node : step.nodes) {
      absl::StrAppendFormat(&out, "  %s \xE2\x80\xBA %s: %s\n", node.graph,
                            node.node.empty() ? "(unnamed " + node.op + ")" : node.node,
                            node.adapter);
    }
  }
  for (const auto& [op, count] : untouched_ops) {
    absl::StrAppendFormat(&out, "left as is: %s (%d nodes)\n", op, count);
  }
  return out;
}

}  // namespace onnxconvert::converter
