// The inference engine: the context a node's rule sees (NodeContext), types
// from type constraints, merging with declared types, and GraphInferencer's
// walk over the nodes of a graph. The entry points are in inference.cc.

#include "schema/inference_internal.h"

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "base/limits.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/util/message_differencer.h"
#include "ir/wire.h"
#include "schema/inference_context.h"
#include "schema/inference_rules.h"
#include "schema/registry.h"
#include "schema/shape_util.h"
#include "schema/type_strings.h"

namespace onnxconvert::schema {
namespace inference_internal {
namespace {

// How many nodes ahead the value table is prefetched.
constexpr int kLookahead = 8;
// Graphs with fewer nodes stay in the cache: fetching ahead only costs.
constexpr int kLookaheadNodes = 262144;

}  // namespace

class NodeContext : public InferenceContext {
 public:
  NodeContext(const onnx::NodeProto& node, const OpSchema& schema, GraphInferencer& graph)
      : node_(node), schema_(schema), graph_(graph), inputs_(node.input_size(), nullptr),
        outputs_(node.output_size(), nullptr), owned_(node.output_size(), nullptr),
        output_data_(node.output_size(), nullptr),
        output_constants_(node.output_size(), nullptr) {
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      const onnx::TypeProto* type = graph.FindType(node.input(i));
      if (type == nullptr && untyped_input_ < 0) untyped_input_ = i;
      if (HasType(type)) inputs_[i] = type;
    }
  }

  // Reading the node, the opset or a fresh symbol, or recording an
  // output's value, makes the outputs more than a function of the op, the
  // input types and the input values the rule asked for.
  const onnx::NodeProto& node() const override {
    pure_ = false;
    return node_;
  }
  const onnx::NodeProto& wiring() const override { return node_; }
  const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& attributes() const override {
    return node_.attribute();
  }
  const OpSchema& op() const override { return schema_; }
  int64_t opset() const override {
    pure_ = false;
    return graph_.engine().OpsetOf(node_.domain());
  }

  const onnx::TypeProto* InputType(size_t i) const override {
    return i < inputs_.size() ? inputs_[i] : nullptr;
  }
  const onnx::TensorProto* InputConstant(size_t i) const override {
    const ValueFacts* extras = Extras(i);
    NoteFact(i, extras);
    return extras != nullptr ? extras->constant : nullptr;
  }
  const onnx::TensorShapeProto* InputShapeData(size_t i) const override {
    const ValueFacts* extras = Extras(i);
    NoteFact(i, extras);
    return extras != nullptr ? extras->shape_data : nullptr;
  }
  // The first named input that had no type, or -1.
  int untyped_input() const { return untyped_input_; }
  // The input types the rule sees (null: absent or unknown).
  absl::Span<const onnx::TypeProto* const> input_types() const { return inputs_; }
  // Whether the outputs follow from the op, the input types and the input
  // values in facts_read() alone, so far.
  bool pure() const { return pure_; }
  // The input values the rule asked for, as it found them.
  absl::Span<const FactRead> facts_read() const { return facts_read_; }
  // Whether the inputs' values are what `facts` found.
  bool SameFacts(absl::Span<const FactRead> facts) const {
    for (const FactRead& fact : facts) {
      const ValueFacts* extras = Extras(fact.input);
      const onnx::TensorProto* constant = extras != nullptr ? extras->constant : nullptr;
      const onnx::TensorShapeProto* data = extras != nullptr ? extras->shape_data : nullptr;
      if (constant != fact.constant || data != fact.shape_data) return false;
    }
    return true;
  }
  onnx::TypeProto* MutableOutputType(size_t i) override {
    // A slot the node does not list takes the write and drops it.
    if (i >= owned_.size()) return Discard();
    // A scratch type on first write; a shared input type is copied first.
    if (owned_[i] == nullptr) {
      onnx::TypeProto* type = graph_.engine().Scratch(graph_.depth(), i);
      if (outputs_[i] != nullptr) *type = *outputs_[i];
      outputs_[i] = owned_[i] = type;
    }
    return owned_[i];
  }
  const onnx::TypeProto* OutputTypeIfSet(size_t i) const override {
    return i < outputs_.size() && HasType(outputs_[i]) ? outputs_[i] : nullptr;
  }
  void ShareInputType(size_t in, size_t out) override {
    if (out >= outputs_.size()) return;
    const onnx::TypeProto* type = InputType(in);
    if (type == nullptr) return;
    outputs_[out] = type;  // stored types never change
    owned_[out] = nullptr;
  }
  // The type inferred for output `i`, or null.
  const onnx::TypeProto* Result(size_t i) const { return outputs_[i]; }
  // Whether Result(i) is an input's stored type, used as it is.
  bool IsShared(size_t i) const { return outputs_[i] != nullptr && owned_[i] == nullptr; }
  void SetOutputShapeData(size_t i, onnx::TensorShapeProto data) override {
    pure_ = false;
    if (i >= output_data_.size()) return;
    auto* stored = google::protobuf::Arena::CreateMessage<onnx::TensorShapeProto>(
        graph_.engine().result().arena.get());
    stored->Swap(&data);
    output_data_[i] = stored;
  }
  void SetOutputConstant(size_t i, onnx::TensorProto value) override {
    pure_ = false;
    if (i >= output_constants_.size()) return;
    output_constants_[i] = graph_.engine().Own(std::move(value));
  }
  void ShareOutputConstant(size_t i, const onnx::TensorProto& value) override {
    pure_ = false;
    if (i >= output_constants_.size()) return;
    output_constants_[i] = &value;
  }
  absl::StatusOr<std::vector<onnx::TypeProto>> InferSubgraph(
      absl::string_view attr_name, absl::Span<const onnx::TypeProto* const> input_types) override;
  std::string FreshSymbol() override {
    pure_ = false;
    return graph_.engine().FreshSymbol();
  }

  const onnx::TensorShapeProto* output_data(size_t i) const { return output_data_[i]; }
  const onnx::TensorProto* output_constant(size_t i) const { return output_constants_[i]; }

 private:
  // A scratch type for writes to output slots the node does not list.
  onnx::TypeProto* Discard() {
    discarded_.emplace();
    return &*discarded_;
  }
  const ValueFacts* Extras(size_t i) const {
    if (!HasInput(i)) return nullptr;
    return graph_.FindExtras(node_.input(i));
  }
  void NoteFact(size_t i, const ValueFacts* extras) const {
    for (const FactRead& fact : facts_read_) {
      if (fact.input == i) return;
    }
    facts_read_.push_back({i, extras != nullptr ? extras->constant : nullptr,
                           extras != nullptr ? extras->shape_data : nullptr});
  }

  const onnx::NodeProto& node_;
  const OpSchema& schema_;
  GraphInferencer& graph_;
  mutable bool pure_ = true;
  mutable absl::InlinedVector<FactRead, 2> facts_read_;
  int untyped_input_ = -1;
  absl::InlinedVector<const onnx::TypeProto*, 4> inputs_;
  absl::InlinedVector<const onnx::TypeProto*, 4> outputs_;  // scratch or stored
  absl::InlinedVector<onnx::TypeProto*, 4> owned_;  // the scratch type written, if any
  absl::InlinedVector<const onnx::TensorShapeProto*, 4> output_data_;
  absl::InlinedVector<const onnx::TensorProto*, 4> output_constants_;
  std::optional<onnx::TypeProto> discarded_;
};

absl::StatusOr<std::vector<onnx::TypeProto>> NodeContext::InferSubgraph(
    absl::string_view attr_name, absl::Span<const onnx::TypeProto* const> input_types) {
  pure_ = false;
  const onnx::AttributeProto* attribute = Attr(attr_name);
  if (attribute == nullptr || !attribute->has_g()) {
    return absl::InvalidArgumentError(absl::StrCat("no graph attribute '", attr_name, "'"));
  }
  if (graph_.depth() >= kMaxGraphDepth) return std::vector<onnx::TypeProto>();
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

// Sets `out` to `type` without shapes; a tensor keeps the shape `out` has.
void AssignKeepingShape(const onnx::TypeProto& type, onnx::TypeProto* out) {
  if (type.has_tensor_type()) {
    SetElemType(out, type.tensor_type().elem_type());
  } else {
    *out = type;
  }
}

// Whether `param` is variadic with a type of its own at each position.
bool Heterogeneous(const FormalParam& param) {
  return param.option == ParamOption::kVariadic && !param.is_homogeneous;
}

// Element types that follow from the op's type constraints: concrete output
// types, and type parameters bound by an input.
void InferFromConstraints(NodeContext& ctx) {
  const OpSchema& schema = ctx.op();
  for (size_t out = 0; out < ctx.num_outputs(); ++out) {
    if (!ctx.HasOutput(out)) continue;
    const onnx::TypeProto* set = ctx.OutputTypeIfSet(out);
    if (set != nullptr && (!set->has_tensor_type() || set->tensor_type().elem_type() != 0)) {
      continue;  // the rule gave it
    }
    const FormalParam* formal = FormalFor(schema.outputs, out);
    if (formal == nullptr) continue;
    const TypeConstraint* constraint = schema.FindConstraint(formal->type_str);
    if (constraint == nullptr) {
      if (const onnx::TypeProto* type = ConcreteType(formal->type_str)) {
        AssignKeepingShape(*type, ctx.MutableOutputType(out));
      }
      continue;
    }
    // A heterogeneous variadic (Scan-8's and Loop's V) binds its type
    // parameter anew at each position: no input's type says an output's.
    for (size_t in = 0; in < ctx.num_inputs() && !Heterogeneous(*formal); ++in) {
      const FormalParam* input = FormalFor(schema.inputs, in);
      const onnx::TypeProto* type = ctx.InputType(in);
      if (input == nullptr || type == nullptr || input->type_str != formal->type_str ||
          Heterogeneous(*input)) {
        continue;
      }
      AssignKeepingShape(*type, ctx.MutableOutputType(out));
      break;
    }
    const onnx::TypeProto* now = ctx.OutputTypeIfSet(out);
    bool unset = now == nullptr || (now->has_tensor_type() && now->tensor_type().elem_type() == 0);
    if (unset && constraint->allowed_types.size() == 1) {
      if (const onnx::TypeProto* type = ConcreteType(constraint->allowed_types[0])) {
        AssignKeepingShape(*type, ctx.MutableOutputType(out));
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

namespace {

// Whether `type`, a tensor type, declares a size below 0.
bool HasNegativeDim(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() < 0) return true;
  }
  return false;
}

}  // namespace

void GraphInferencer::AddInitializer(const onnx::TensorProto& tensor) {
  onnx::TypeProto* type = engine_.Scratch(depth_, 0);
  SetElemType(type, tensor.data_type());
  auto* shape = MutableShape(type);
  for (int64_t dim : tensor.dims()) AddDim(shape, dim);
  (*types_)[tensor.name()] = engine_.Store(*type);
  (*extras_)[tensor.name()].constant = &tensor;
}

absl::Status GraphInferencer::Run(absl::Span<const onnx::TypeProto* const> input_types) {
  GraphTypes& result = engine_.result().graphs[&graph_];
  result.path = path_;
  types_ = &result.types;
  declared_ = &result.declared;
  extras_ = &result.facts;
  types_->reserve(graph_.input_size() + graph_.initializer_size() + graph_.node_size());
  // Exporters write a dynamic size as dim_value -1 (older paddle2onnx):
  // read as unknown, as runtimes do.
  auto declared = [&](const onnx::TypeProto& type) {
    if (!HasNegativeDim(type)) return &type;
    onnx::TypeProto cleared = type;
    for (auto& dim : *cleared.mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (dim.has_dim_value() && dim.dim_value() < 0) dim.clear_dim_value();
    }
    return engine_.Store(cleared);
  };
  for (const auto& value : graph_.value_info()) result.declared[value.name()] = declared(value.type());
  for (const auto& value : graph_.output()) result.declared[value.name()] = declared(value.type());
  absl::flat_hash_set<absl::string_view> inputs;
  for (int i = 0; i < graph_.input_size(); ++i) {
    const auto& input = graph_.input(i);
    inputs.insert(input.name());
    const onnx::TypeProto* type = declared(input.type());
    absl::StatusOr<onnx::TypeProto> merged;
    if (i < static_cast<int>(input_types.size()) && input_types[i] != nullptr) {
      merged = MergeWithDeclared(*input_types[i], *type);
      if (merged.ok()) type = &*merged;
    }
    (*types_)[input.name()] = engine_.Store(*type);
  }
  for (const auto& tensor : graph_.initializer()) {
    if (inputs.contains(tensor.name())) continue;  // may be overridden at run time
    AddInitializer(tensor);
  }
  // Large graphs miss the cache on every new value: fetch ahead (small ones
  // stay in the cache, where that only costs).
  int lookahead_until = graph_.node_size() >= kLookaheadNodes ? graph_.node_size() - kLookahead : 0;
  for (int i = 0; i < graph_.node_size(); ++i) {
    if (i < lookahead_until) {
      for (const std::string& output : graph_.node(i + kLookahead).output()) {
        types_->prefetch(output);
      }
    }
    absl::Status status = InferNode(graph_.node(i), i);
    if (!status.ok()) return status;
  }
  output_types_ = OutputTypes();
  return absl::OkStatus();
}

// Stands for an input slot left empty in a MemoKey.
const char kAbsentInput = 0;

// The most bytes of attributes a MemoKey holds: a node with more (a graph,
// a large tensor) is not remembered.
constexpr size_t kMaxMemoAttributeBytes = 256;

// Makes `key` (a scratch key, its room reused) the memo key of `ctx`'s
// node; false when the node has too many outputs to say which are named or
// too large attributes.
bool MemoKeyOf(const NodeContext& ctx, MemoKey& key) {
  const onnx::NodeProto& node = ctx.wiring();
  if (node.output_size() > 64) return false;
  key.attributes.clear();
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    size_t size = attribute.ByteSizeLong();
    // The size goes before the bytes, in at most 2 bytes under the bound.
    if (key.attributes.size() + 2 + size > kMaxMemoAttributeBytes) return false;
    wire::AppendVarint(size, key.attributes);
    wire::AppendSerialized(attribute, size, key.attributes);
  }
  key.schema = &ctx.op();
  key.outputs = 0;
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) key.outputs |= uint64_t{1} << i;
  }
  key.inputs.resize(node.input_size());
  for (int i = 0; i < node.input_size(); ++i) {
    key.inputs[i] = node.input(i).empty() ? static_cast<const void*>(&kAbsentInput)
                                          : ctx.input_types()[i];
  }
  return true;
}

std::string NodeLabel(const onnx::NodeProto& node, int index, const OpSchema* schema) {
  std::string op = schema != nullptr ? schema->Label() : node.op_type();
  if (!node.name().empty()) return absl::StrCat("node '", node.name(), "' (", op, ")");
  return index >= 0 ? absl::StrCat("node #", index, " (", op, ")")
                    : absl::StrCat("unnamed node (", op, ")");
}

absl::Status GraphInferencer::InferNode(const onnx::NodeProto& node, int index) {
  last_untyped_input_ = -1;
  // Named variables, not a structured binding: the lambda below captures
  // `schema`, which clang 14 (the fuzzing build) does not allow of one.
  const auto resolved = engine_.Resolve(node);
  const OpSchema* schema = resolved.first;
  const InferenceFn rule = resolved.second;
  // The label is built only when something is reported.
  auto fail = [&](absl::string_view message) -> absl::Status {
    std::string text = absl::StrCat(path_, " \xE2\x80\xBA ", NodeLabel(node, index, schema),
                                    ": ", message);
    if (engine_.options().strict) return absl::InvalidArgumentError(text);
    engine_.result().notes.push_back(std::move(text));
    return absl::OkStatus();
  };
  if (schema != nullptr &&
      (node.input_size() < schema->min_input || node.input_size() > schema->max_input ||
       node.output_size() < schema->min_output || node.output_size() > schema->max_output)) {
    // Rules count on the arity the checker enforces: an unchecked node
    // outside it gets no rule (strict: an error).
    absl::Status failed = fail(absl::StrCat("has ", node.input_size(), " inputs and ",
                                            node.output_size(), " outputs, which ",
                                            schema->Label(), " does not take"));
    if (!failed.ok()) return failed;
    schema = nullptr;
  }
  std::optional<NodeContext> ctx;
  // Set while the outputs may be remembered for nodes like this one.
  // (The engine's scratch key of this depth: a rule may infer subgraphs,
  // whose nodes take keys of their own meanwhile.)
  MemoKey* memo_key = nullptr;
  // The outputs remembered from a node like this one, if any.
  MemoEntry* recalled = nullptr;
  engine_.set_last_entry(nullptr);
  // Whether every output's stored type is the one the memo holds for it.
  bool stored_as_remembered = true;
  if (schema == nullptr) {
    // No context looks the inputs up: looked up here for last_untyped_input().
    for (int i = 0; i < node.input_size() && last_untyped_input_ < 0; ++i) {
      if (!node.input(i).empty() && FindType(node.input(i)) == nullptr) last_untyped_input_ = i;
    }
  } else {
    ++engine_.result().nodes_inferred;
    NodeContext& context = ctx.emplace(node, *schema, *this);
    last_untyped_input_ = context.untyped_input();
    if (rule == nullptr) {
      ++engine_.result().ops_without_rules[schema->Label()];
    } else {
      MemoKey& scratch = engine_.ScratchKey(depth_);
      if (MemoKeyOf(context, scratch)) memo_key = &scratch;
      if (memo_key) recalled = engine_.Recall(*memo_key);
      if (recalled != nullptr && !context.SameFacts(recalled->facts)) recalled = nullptr;
      absl::Status status = recalled != nullptr ? absl::OkStatus() : rule(context);
      if (!status.ok()) {
        memo_key = nullptr;
        absl::Status failed = fail(status.message());
        if (!failed.ok()) return failed;
      }
    }
    // Element types the rule left unset follow from the type constraints.
    if (recalled == nullptr) InferFromConstraints(context);
    if (recalled != nullptr || !context.pure()) memo_key = nullptr;
  }
  MemoEntry remembered;
  if (memo_key) {
    remembered.facts.assign(ctx->facts_read().begin(), ctx->facts_read().end());
    remembered.outputs.resize(node.output_size(), nullptr);
  }
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    const onnx::TypeProto* declared = Declared(name);
    const onnx::TypeProto* inferred =
        recalled != nullptr ? recalled->outputs[i] : ctx ? ctx->Result(i) : nullptr;
    // The inferred type as stored: recalled and shared types already are.
    auto settle = [&]() -> const onnx::TypeProto* {
      if (inferred != nullptr && (recalled != nullptr || ctx->IsShared(i))) return inferred;
      return engine_.Store(inferred != nullptr ? *inferred : NoType());
    };
    const onnx::TypeProto* stored;
    if (declared != nullptr) {
      absl::StatusOr<onnx::TypeProto> merged =
          MergeWithDeclared(inferred != nullptr ? *inferred : NoType(), *declared);
      if (!merged.ok()) {
        absl::Status status = fail(absl::StrCat("output '", name, "': ", merged.status().message()));
        if (!status.ok()) return status;
      }
      stored = engine_.Store(merged.ok() ? *merged : *declared);
      if (memo_key) remembered.outputs[i] = settle();
    } else {
      stored = settle();
      if (memo_key) remembered.outputs[i] = stored;
    }
    const onnx::TypeProto* memo_type =
        recalled != nullptr ? recalled->outputs[i] : memo_key ? remembered.outputs[i] : nullptr;
    stored_as_remembered &= stored == memo_type;
    if (base_ != nullptr) {
      // Resumed: a value known before keeps its type; the overlay records
      // new values, and known ones whose name now lives in another string.
      const onnx::TypeProto* before = nullptr;
      bool same_string = false;
      auto it = types_->empty() ? types_->end() : types_->find(name);
      if (it != types_->end()) {
        before = it->second;
      } else if (auto known = base_->types.find(name); known != base_->types.end()) {
        before = known->second;
        same_string = known->first.data() == name.data();
      }
      if (before != nullptr && before != stored && !SameType(*before, *stored)) {
        return absl::FailedPreconditionError(absl::StrCat(
            path_, " \xE2\x80\xBA ", NodeLabel(node, index, schema), ": output '", name,
            "' was ", TypeString(*before), ", now ", TypeString(*stored)));
      }
      if (!same_string) types_->insert_or_assign(name, stored);
    } else {
      (*types_)[name] = stored;
    }
    if (ctx && (ctx->output_data(i) != nullptr || ctx->output_constant(i) != nullptr)) {
      (*extras_)[name] = {ctx->output_constant(i), ctx->output_data(i)};
    }
  }
  MemoEntry* entry = recalled;
  if (memo_key) entry = engine_.Remember(*memo_key, std::move(remembered));
  if (stored_as_remembered) {
    engine_.set_last_entry(entry);
    engine_.set_last_outputs(node.output_size());
  }
  ctx.reset();
  engine_.NodeDone(depth_);
  return absl::OkStatus();
}

}  // namespace inference_internal
}  // namespace onnxconvert::schema
