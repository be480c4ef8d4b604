#include "schema/inference.h"

#include <deque>
#include <memory>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "schema/inference_context.h"
#include "schema/inference_rules.h"
#include "schema/registry.h"
#include "schema/shape_util.h"
#include "schema/type_strings.h"

namespace onnxconvert::schema {

const onnx::AttributeProto* InferenceContext::Attr(absl::string_view name) const {
  for (const onnx::AttributeProto& attribute : node().attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t InferenceContext::AttrInt(absl::string_view name, int64_t fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

float InferenceContext::AttrFloat(absl::string_view name, float fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr && a->has_f() ? a->f() : fallback;
}

std::string InferenceContext::AttrString(absl::string_view name,
                                         absl::string_view fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  return a != nullptr && a->has_s() ? a->s() : std::string(fallback);
}

std::optional<std::vector<int64_t>> InferenceContext::AttrInts(absl::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::Status InferenceContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(message));
}

namespace {

constexpr int kMaxDepth = 64;

using OpsetMap = absl::flat_hash_map<std::string, int64_t>;

// What inference knows of one value.
struct ValueState {
  onnx::TypeProto* type = nullptr;  // in the result's arena; never null once set
  const onnx::TensorProto* constant = nullptr;
  const onnx::TensorShapeProto* shape_data = nullptr;  // in the result's arena
};

bool HasType(const onnx::TypeProto& type) {
  return type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

bool HasType(const onnx::TypeProto* type) { return type != nullptr && HasType(*type); }

class Engine;

// Infers one graph; subgraphs get their own, linked to their parent.
class GraphInferencer {
 public:
  GraphInferencer(const onnx::GraphProto& graph, const GraphInferencer* parent, std::string path,
                  Engine& engine, int depth)
      : graph_(graph), parent_(parent), path_(std::move(path)), engine_(engine), depth_(depth) {}

  // Seeds inputs (with `input_types` overriding missing declarations) and
  // infers every node.
  absl::Status Run(absl::Span<const onnx::TypeProto* const> input_types);

  const ValueState* Find(absl::string_view name) const {
    for (const GraphInferencer* g = this; g != nullptr; g = g->parent_) {
      if (auto it = g->values_.find(name); it != g->values_.end()) return &it->second;
    }
    return nullptr;
  }

  // The types of the graph outputs, once Run has finished.
  const std::vector<onnx::TypeProto>& FinalOutputTypes() const { return output_types_; }

  // The types of the graph outputs as inferred so far.
  std::vector<onnx::TypeProto> OutputTypes() const {
    std::vector<onnx::TypeProto> types;
    for (const auto& output : graph_.output()) {
      const ValueState* state = Find(output.name());
      types.push_back(state != nullptr && state->type != nullptr ? *state->type : output.type());
    }
    return types;
  }

  const std::string& path() const { return path_; }
  int depth() const { return depth_; }
  Engine& engine() { return engine_; }
  
  const onnx::TypeProto* Declared(absl::string_view name) const {
    auto it = declared_.find(name);
    return it == declared_.end() ? nullptr : it->second;
  }

 private:
  absl::Status InferNode(const onnx::NodeProto& node, int index);

  const onnx::GraphProto& graph_;
  const GraphInferencer* parent_;
  std::string path_;
  Engine& engine_;
  int depth_;
  absl::flat_hash_map<absl::string_view, ValueState> values_;  // keys view the model
  absl::flat_hash_map<absl::string_view, const onnx::TypeProto*> declared_;
  std::vector<onnx::TypeProto> output_types_;
};

class Engine {
 public:
  Engine(const onnx::ModelProto& model, const InferenceOptions& options, InferenceResult& result)
      : options_(options), result_(result) {
    for (const auto& opset : model.opset_import()) {
      opsets_[std::string(Registry::CanonicalDomain(opset.domain()))] = opset.version();
    }
  }

  const InferenceOptions& options() const { return options_; }
  InferenceResult& result() { return result_; }
  int64_t OpsetOf(absl::string_view domain) const {
    auto it = opsets_.find(Registry::CanonicalDomain(domain));
    return it == opsets_.end() ? 0 : it->second;
  }
  onnx::TypeProto* NewType() {
    return google::protobuf::Arena::CreateMessage<onnx::TypeProto>(result_.arena.get());
  }
  const onnx::TensorProto* Own(onnx::TensorProto tensor) {
    owned_.push_back(std::move(tensor));
    return &owned_.back();
  }
  std::string FreshSymbol() { return absl::StrCat("unk__", next_symbol_++); }

 private:
  const InferenceOptions& options_;
  InferenceResult& result_;
  OpsetMap opsets_;
  std::deque<onnx::TensorProto> owned_;
  int next_symbol_ = 0;
};

// The formal parameter that actual slot `slot` binds to.
const FormalParam* FormalFor(absl::Span<const FormalParam> formals, size_t slot) {
  if (formals.empty()) return nullptr;
  if (slot < formals.size()) return &formals[slot];
  return formals.back().option == ParamOption::kVariadic ? &formals.back() : nullptr;
}

class NodeContext : public InferenceContext {
 public:
  NodeContext(const onnx::NodeProto& node, const OpSchema& schema, GraphInferencer& graph)
      : node_(node), schema_(schema), graph_(graph), outputs_(node.output_size()),
        output_data_(node.output_size()), output_constants_(node.output_size()) {
    for (onnx::TypeProto*& type : outputs_) type = graph.engine().NewType();
  }

  const onnx::NodeProto& node() const override { return node_; }
  const OpSchema& op() const override { return schema_; }
  int64_t opset() const override { return graph_.engine().OpsetOf(node_.domain()); }

  const onnx::TypeProto* InputType(size_t i) const override {
    const ValueState* state = Input(i);
    return state != nullptr && HasType(state->type) ? state->type : nullptr;
  }
  const onnx::TensorProto* InputConstant(size_t i) const override {
    const ValueState* state = Input(i);
    return state != nullptr ? state->constant : nullptr;
  }
  const onnx::TensorShapeProto* InputShapeData(size_t i) const override {
    const ValueState* state = Input(i);
    return state != nullptr ? state->shape_data : nullptr;
  }
  onnx::TypeProto* MutableOutputType(size_t i) override { return outputs_[i]; }
  void SetOutputShapeData(size_t i, onnx::TensorShapeProto data) override {
    output_data_[i] = std::move(data);
  }
  void SetOutputConstant(size_t i, onnx::TensorProto value) override {
    output_constants_[i] = graph_.engine().Own(std::move(value));
  }
  absl::StatusOr<std::vector<onnx::TypeProto>> InferSubgraph(
      absl::string_view attr_name, absl::Span<const onnx::TypeProto* const> input_types) override;
  std::string FreshSymbol() override { return graph_.engine().FreshSymbol(); }

  std::vector<onnx::TypeProto*>& outputs() { return outputs_; }
  std::vector<std::optional<onnx::TensorShapeProto>>& output_data() { return output_data_; }
  std::vector<const onnx::TensorProto*>& output_constants() { return output_constants_; }

 private:
  const ValueState* Input(size_t i) const {
    if (!HasInput(i)) return nullptr;
    return graph_.Find(node_.input(i));
  }

  const onnx::NodeProto& node_;
  const OpSchema& schema_;
  GraphInferencer& graph_;
  std::vector<onnx::TypeProto*> outputs_;  // in the result's arena
  std::vector<std::optional<onnx::TensorShapeProto>> output_data_;
  std::vector<const onnx::TensorProto*> output_constants_;
};

absl::StatusOr<std::vector<onnx::TypeProto>> NodeContext::InferSubgraph(
    absl::string_view attr_name, absl::Span<const onnx::TypeProto* const> input_types) {
  const onnx::AttributeProto* attribute = Attr(attr_name);
  if (attribute == nullptr || !attribute->has_g()) {
    return absl::InvalidArgumentError(absl::StrCat("no graph attribute '", attr_name, "'"));
  }
  if (graph_.depth() >= kMaxDepth) return std::vector<onnx::TypeProto>();
  GraphInferencer sub(attribute->g(), &graph_,
                      absl::StrCat(graph_.path(), "/", attr_name, " of '", node_.name(), "' (",
                                   node_.op_type(), ")"),
                      graph_.engine(), graph_.depth() + 1);
  absl::Status status = sub.Run(input_types);
  if (!status.ok()) return status;
  return sub.FinalOutputTypes();
}

// The parsed form of a spec type string such as "tensor(int64)", parsed
// once per process; null if it does not parse.
const onnx::TypeProto* ConcreteType(absl::string_view type_str) {
  static const auto* parsed = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, onnx::TypeProto>();
    for (const OpSchema& schema : Registry::Get().All()) {
      auto add = [map](absl::string_view text) {
        if (map->contains(text)) return;
        absl::StatusOr<onnx::TypeProto> type = ParseTypeString(text);
        if (type.ok()) (*map)[text] = *std::move(type);
      };
      for (const FormalParam& p : schema.outputs) add(p.type_str);
      for (const TypeConstraint& c : schema.type_constraints) {
        for (absl::string_view t : c.allowed_types) add(t);
      }
    }
    return map;
  }();
  auto it = parsed->find(type_str);
  return it == parsed->end() ? nullptr : &it->second;
}

// Element types that follow from the op's type constraints: concrete output
// types, and type parameters bound by an input.
void InferFromConstraints(NodeContext& ctx) {
  const OpSchema& schema = ctx.op();
  for (size_t out = 0; out < ctx.num_outputs(); ++out) {
    if (!ctx.HasOutput(out)) continue;
    const FormalParam* formal = FormalFor(schema.outputs, out);
    if (formal == nullptr) continue;
    const TypeConstraint* constraint = schema.FindConstraint(formal->type_str);
    if (constraint == nullptr) {
      if (const onnx::TypeProto* type = ConcreteType(formal->type_str)) {
        *ctx.MutableOutputType(out) = *type;
      }
      continue;
    }
    for (size_t in = 0; in < ctx.num_inputs(); ++in) {
      const FormalParam* input = FormalFor(schema.inputs, in);
      const onnx::TypeProto* type = ctx.InputType(in);
      if (input == nullptr || type == nullptr || input->type_str != formal->type_str) continue;
      if (type->has_tensor_type()) {
        SetElemType(ctx.MutableOutputType(out), type->tensor_type().elem_type());
      } else {
        *ctx.MutableOutputType(out) = *type;
      }
      break;
    }
    if (!HasType(*ctx.MutableOutputType(out)) && constraint->allowed_types.size() == 1) {
      if (const onnx::TypeProto* type = ConcreteType(constraint->allowed_types[0])) {
        *ctx.MutableOutputType(out) = *type;
      }
    }
  }
}

// Merges an inferred type into a declared one; errors describe a conflict.
absl::StatusOr<onnx::TypeProto> MergeWithDeclared(const onnx::TypeProto& inferred,
                                                  const onnx::TypeProto& declared) {
  if (!HasType(inferred)) return declared;
  if (!HasType(declared)) return inferred;
  if (inferred.value_case() != declared.value_case()) {
    return absl::InvalidArgumentError(absl::StrCat("type ", TypeString(inferred),
                                                   " inferred, but ", TypeString(declared),
                                                   " declared"));
  }
  onnx::TypeProto merged = declared;
  if (inferred.has_tensor_type()) {
    int32_t from = inferred.tensor_type().elem_type();
    int32_t to = declared.tensor_type().elem_type();
    if (from != 0 && to != 0 && from != to) {
      return absl::InvalidArgumentError(absl::StrCat("type ", TypeString(inferred),
                                                     " inferred, but ", TypeString(declared),
                                                     " declared"));
    }
    if (to == 0) merged.mutable_tensor_type()->set_elem_type(from);
    if (inferred.tensor_type().has_shape()) {
      if (!declared.tensor_type().has_shape()) {
        *merged.mutable_tensor_type()->mutable_shape() = inferred.tensor_type().shape();
      } else {
        absl::Status status = MergeShape(inferred.tensor_type().shape(),
                                         merged.mutable_tensor_type()->mutable_shape());
        if (!status.ok()) return status;
      }
    }
  }
  return merged;
}

absl::Status GraphInferencer::Run(absl::Span<const onnx::TypeProto* const> input_types) {
  values_.reserve(graph_.input_size() + graph_.initializer_size() + 2 * graph_.node_size());
  for (const auto& value : graph_.value_info()) declared_[value.name()] = &value.type();
  for (const auto& value : graph_.output()) declared_[value.name()] = &value.type();
  absl::flat_hash_set<absl::string_view> inputs;
  for (int i = 0; i < graph_.input_size(); ++i) {
    const auto& input = graph_.input(i);
    inputs.insert(input.name());
    ValueState& state = values_[input.name()];
    state.type = engine_.NewType();
    *state.type = input.type();
    if (i < static_cast<int>(input_types.size()) && input_types[i] != nullptr) {
      absl::StatusOr<onnx::TypeProto> merged = MergeWithDeclared(*input_types[i], input.type());
      if (merged.ok()) *state.type = *std::move(merged);
    }
  }
  for (const auto& tensor : graph_.initializer()) {
    if (inputs.contains(tensor.name())) continue;  // may be overridden at run time
    ValueState& state = values_[tensor.name()];
    state.constant = &tensor;
    state.type = engine_.NewType();
    SetElemType(state.type, tensor.data_type());
    auto* shape = MutableShape(state.type);
    for (int64_t dim : tensor.dims()) AddDim(shape, dim);
  }
  for (int i = 0; i < graph_.node_size(); ++i) {
    absl::Status status = InferNode(graph_.node(i), i);
    if (!status.ok()) return status;
  }
  output_types_ = OutputTypes();
  GraphTypes& types = engine_.result().graphs[&graph_];
  types.path = path_;
  types.types.reserve(values_.size());
  for (auto& [name, state] : values_) {
    if (HasType(state.type)) types.types.emplace(name, state.type);
  }
  values_.clear();
  return absl::OkStatus();
}

std::string NodeLabel(const onnx::NodeProto& node, int index, const OpSchema* schema) {
  std::string op = schema != nullptr ? schema->Label() : node.op_type();
  return node.name().empty() ? absl::StrCat("node #", index, " (", op, ")")
                             : absl::StrCat("node '", node.name(), "' (", op, ")");
}

absl::Status GraphInferencer::InferNode(const onnx::NodeProto& node, int index) {
  int64_t opset = engine_.OpsetOf(node.domain());
  const OpSchema* schema =
      opset > 0 ? Registry::Get().Lookup(node.domain(), node.op_type(), opset) : nullptr;
  // The label is built only when something is reported.
  auto fail = [&](absl::string_view message) -> absl::Status {
    std::string text = absl::StrCat(path_, " \xE2\x80\xBA ", NodeLabel(node, index, schema),
                                    ": ", message);
    if (engine_.options().strict) return absl::InvalidArgumentError(text);
    engine_.result().notes.push_back(std::move(text));
    return absl::OkStatus();
  };
  std::vector<onnx::TypeProto*> outputs(node.output_size(), nullptr);
  std::vector<std::optional<onnx::TensorShapeProto>> data(node.output_size());
  std::vector<const onnx::TensorProto*> constants(node.output_size());
  if (schema != nullptr) {
    ++engine_.result().nodes_inferred;
    NodeContext ctx(node, *schema, *this);
    InferFromConstraints(ctx);
    InferenceFn rule = FindInferenceRule(*schema);
    if (rule == nullptr) {
      ++engine_.result().ops_without_rules[schema->Label()];
    } else {
      absl::Status status = rule(ctx);
      if (!status.ok()) {
        absl::Status failed = fail(status.message());
        if (!failed.ok()) return failed;
      }
    }
    outputs = std::move(ctx.outputs());
    data = std::move(ctx.output_data());
    constants = std::move(ctx.output_constants());
  }
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    ValueState& state = values_[name];
    state.type = outputs[i] != nullptr ? outputs[i] : engine_.NewType();
    if (data[i]) {
      auto* shape_data =
          google::protobuf::Arena::CreateMessage<onnx::TensorShapeProto>(engine_.result().arena.get());
      shape_data->Swap(&*data[i]);
      state.shape_data = shape_data;
    }
    state.constant = constants[i];
    if (const onnx::TypeProto* declared = Declared(name)) {
      absl::StatusOr<onnx::TypeProto> merged = MergeWithDeclared(*state.type, *declared);
      if (!merged.ok()) {
        absl::Status status = fail(absl::StrCat("output '", name, "': ", merged.status().message()));
        if (!status.ok()) return status;
        *state.type = *declared;
      } else {
        *state.type = *std::move(merged);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InferenceResult> InferModel(const onnx::ModelProto& model,
                                           const InferenceOptions& options) {
  InferenceResult result;
  Engine engine(model, options, result);
  if (!model.has_graph()) return result;
  GraphInferencer main(model.graph(), nullptr, "main", engine, 0);
  absl::Status status = main.Run({});
  if (!status.ok()) return status;
  return result;
}

namespace {

void ApplyToGraph(const InferenceResult& result, onnx::GraphProto& graph, int depth) {
  auto it = result.graphs.find(&graph);
  if (it != result.graphs.end()) {
    const auto& types = it->second.types;
    absl::flat_hash_set<std::string> listed;
    for (const auto& input : graph.input()) listed.insert(input.name());
    for (const auto& tensor : graph.initializer()) listed.insert(tensor.name());
    auto refine = [&](onnx::ValueInfoProto& value) {
      listed.insert(value.name());
      auto found = types.find(value.name());
      if (found == types.end()) return;
      absl::StatusOr<onnx::TypeProto> merged = MergeWithDeclared(*found->second, value.type());
      if (merged.ok() && merged->SerializeAsString() != value.type().SerializeAsString()) {
        *value.mutable_type() = *std::move(merged);
      }
    };
    for (auto& output : *graph.mutable_output()) refine(output);
    for (auto& value : *graph.mutable_value_info()) refine(value);
    for (const auto& node : graph.node()) {
      for (const std::string& output : node.output()) {
        if (output.empty() || listed.contains(output)) continue;
        auto found = types.find(output);
        if (found == types.end()) continue;
        onnx::ValueInfoProto* value = graph.add_value_info();
        value->set_name(output);
        *value->mutable_type() = *found->second;
        listed.insert(output);
      }
    }
  }
  if (depth >= kMaxDepth) return;
  for (auto& node : *graph.mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) ApplyToGraph(result, *attribute.mutable_g(), depth + 1);
      for (auto& sub : *attribute.mutable_graphs()) ApplyToGraph(result, sub, depth + 1);
    }
  }
}

}  // namespace

void ApplyInferredTypes(const InferenceResult& result, onnx::ModelProto& model) {
  if (model.has_graph()) ApplyToGraph(result, *model.mutable_graph(), 0);
}

}  // namespace onnxconvert::schema
