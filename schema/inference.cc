// Type and shape inference: the context rules read (InferenceContext),
// whole models (InferModel, ApplyInferredTypes), single nodes inferred again
// after an edit (NodeReinferencer), and whether a node validates the same at
// two versions. The engine is in inference_engine.cc.

#include "schema/inference.h"

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
#include "schema/inference_internal.h"
#include "schema/inference_rules.h"
#include "schema/registry.h"
#include "schema/shape_util.h"
#include "schema/type_strings.h"

namespace onnxconvert::schema {

const onnx::AttributeProto* InferenceContext::Attr(absl::string_view name) const {
  for (const onnx::AttributeProto& attribute : attributes()) {
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

bool InferenceContext::SameTypeParam(size_t in, size_t out) const {
  const OpSchema& schema = op();
  const FormalParam* a = FormalFor(schema.inputs, in);
  const FormalParam* b = FormalFor(schema.outputs, out);
  return a != nullptr && b != nullptr && a->type_str == b->type_str;
}

absl::Status InferenceContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(message));
}

namespace {

using inference_internal::HasType;
using inference_internal::Internable;
using inference_internal::TensorTypeEq;
using inference_internal::GraphInferencer;
using inference_internal::MemoEntry;
using inference_internal::MergeWithDeclared;
using inference_internal::Engine;

}  // namespace

struct NodeReinferencer::State {
  // `outer`: the graphs enclosing `graph`, innermost first, with their
  // types; read only.
  State(const onnx::ModelProto& model, const onnx::GraphProto& graph, GraphTypes& done,
        InferenceResult& result, const Imports* imports,
        absl::Span<const std::pair<const onnx::GraphProto*, GraphTypes*>> outer,
        bool in_place = false)
      : result(result), done(done), graph(&graph), in_place(in_place),
        engine(model, Strict(), scratch, imports) {
    const GraphInferencer* parent = nullptr;
    int depth = 0;
    for (auto it = outer.rbegin(); it != outer.rend(); ++it, ++depth) {
      GraphInferencer& enclosing =
          enclosing_.emplace_back(*it->first, parent, it->second->path, engine, depth);
      enclosing.Resume(*it->second, enclosing_overlays_.emplace_back());
      parent = &enclosing;
    }
    inferencer.emplace(graph, parent, done.path, engine, depth);
    if (in_place) {
      inferencer->Extend(done);
    } else {
      inferencer->Resume(done, overlay);
    }
  }
  static const InferenceOptions& Strict() {
    static const InferenceOptions strict{.strict = true};
    return strict;
  }
  InferenceResult& result;
  GraphTypes& done;
  // Whether the nodes are new to `done`: their subgraphs' types are then
  // kept in the result at Commit.
  const onnx::GraphProto* graph;
  bool in_place;
  GraphTypes overlay;       // what the nodes inferred changed
  InferenceResult scratch;  // owns the types and constants inferred
  bool arena_kept = false;  // the result holds scratch's arena
  Engine engine;
  // The enclosing graphs, outermost first (empty overlays: only read).
  std::deque<GraphInferencer> enclosing_;
  std::deque<GraphTypes> enclosing_overlays_;
  std::optional<GraphInferencer> inferencer;
};

absl::StatusOr<std::unique_ptr<NodeReinferencer>> NodeReinferencer::Create(
    const onnx::ModelProto& model, const onnx::GraphProto& graph,
    absl::Span<const onnx::TensorProto* const> added, InferenceResult& result,
    const Imports* imports, absl::Span<const onnx::GraphProto* const> enclosing) {
  auto done = result.graphs.find(&graph);
  if (done == result.graphs.end()) {
    return absl::FailedPreconditionError("the graph was not inferred before");
  }
  std::vector<std::pair<const onnx::GraphProto*, GraphTypes*>> outer;
  for (const onnx::GraphProto* g : enclosing) {
    auto types = result.graphs.find(g);
    if (types == result.graphs.end()) {
      return absl::FailedPreconditionError("an enclosing graph was not inferred before");
    }
    outer.emplace_back(g, &types->second);
  }
  auto state = std::make_unique<State>(model, graph, done->second, result, imports, outer);
  for (const onnx::TensorProto* tensor : added) state->inferencer->AddInitializer(*tensor);
  return std::unique_ptr<NodeReinferencer>(new NodeReinferencer(std::move(state)));
}

absl::StatusOr<std::unique_ptr<NodeReinferencer>> NodeReinferencer::CreateInPlace(
    const onnx::ModelProto& model, const onnx::GraphProto& graph, InferenceResult& result,
    const Imports* imports) {
  auto done = result.graphs.find(&graph);
  if (done == result.graphs.end()) {
    return absl::FailedPreconditionError("the graph was not inferred before");
  }
  auto state = std::make_unique<State>(model, graph, done->second, result, imports,
                                       absl::Span<const std::pair<const onnx::GraphProto*,
                                                                  GraphTypes*>>(),
                                       /*in_place=*/true);
  return std::unique_ptr<NodeReinferencer>(new NodeReinferencer(std::move(state)));
}

NodeReinferencer::NodeReinferencer(std::unique_ptr<State> state) : state_(std::move(state)) {}

NodeReinferencer::~NodeReinferencer() = default;

absl::Status NodeReinferencer::Infer(const onnx::NodeProto& node) {
  return state_->inferencer->InferNode(node, -1);
}

bool NodeReinferencer::RepeatsCheckedNode() const {
  const MemoEntry* entry = state_->engine.last_entry();
  return entry != nullptr && entry->checked &&
         entry->checked_outputs == state_->engine.last_outputs();
}

bool NodeReinferencer::LastInferredPurely(absl::Span<const InputFact>& facts) const {
  const MemoEntry* entry = state_->engine.last_entry();
  if (entry == nullptr) return false;
  facts = entry->facts;
  return true;
}

void NodeReinferencer::NoteChecked() {
  MemoEntry* entry = state_->engine.last_entry();
  if (entry == nullptr || entry->checked) return;
  entry->checked = true;
  entry->checked_outputs = state_->engine.last_outputs();
}

void NodeReinferencer::AddInitializer(const onnx::TensorProto& tensor) {
  state_->inferencer->AddInitializer(tensor);
}

int NodeReinferencer::UntypedInput() const {
  return state_->inferencer->last_untyped_input();
}

const onnx::TypeProto* NodeReinferencer::TypeOf(absl::string_view name) const {
  return state_->inferencer->FindType(name);
}

void NodeReinferencer::Commit() {
  GraphTypes& done = state_->done;
  GraphTypes& overlay = state_->overlay;
  for (const auto& [name, type] : overlay.types) {
    // A known name's key may view the string of a node since removed:
    // every entry for it is keyed anew, by the overlay's view.
    done.types.erase(name);
    done.types.emplace(name, type);
    if (overlay.facts.contains(name)) continue;
    auto fact = done.facts.find(name);
    if (fact == done.facts.end() || fact->first.data() == name.data()) continue;
    ValueFacts kept = fact->second;
    done.facts.erase(fact);
    done.facts.emplace(name, kept);
  }
  for (const auto& [name, facts] : overlay.facts) {
    done.facts.erase(name);
    done.facts.emplace(name, facts);
  }
  overlay.types.clear();
  overlay.facts.clear();
  // The result now views types and constants the scratch result owns.
  InferenceResult& result = state_->result;
  if (!state_->arena_kept) result.kept_arenas.push_back(state_->scratch.arena);
  state_->arena_kept = true;
  result.kept_constants.push_back(std::move(state_->scratch.constants));
  state_->scratch.constants.clear();
  // In place, the subgraphs of the nodes inferred are new too: their types
  // (in the scratch arena, now kept) go into the result.
  if (!state_->in_place) return;
  for (auto& [graph, types] : state_->scratch.graphs) {
    if (graph != state_->graph) result.graphs[graph] = std::move(types);
  }
  state_->scratch.graphs.clear();
}

struct MainGraphRefresher::State {
  State(const onnx::ModelProto& model, InferenceResult& result)
      : graph(model.graph()), types(result.graphs[&model.graph()]),
        engine(model, kStrict, result),
        inferencer(model.graph(), nullptr, types.path, engine, 0) {
    inferencer.Extend(types);
  }

  // What was known of a value before it changed: what forgetting it takes
  // out (ForgetValue).
  using Known = ForgottenValue;

  Known Current(absl::string_view name) const {
    Known known;
    if (auto it = types.types.find(name); it != types.types.end()) known.type = it->second;
    if (auto it = types.facts.find(name); it != types.facts.end()) known.facts = it->second;
    return known;
  }

  // What was known of `name` before: as forgotten, else as stored now.
  Known Before(absl::string_view name) {
    if (forgotten.empty()) return Current(name);
    auto it = forgotten.find(name);
    if (it == forgotten.end()) return Current(name);
    Known known = it->second;
    forgotten.erase(it);
    return known;
  }

  static bool SameTensor(const onnx::TensorProto* a, const onnx::TensorProto* b) {
    if (a == b) return true;
    if (a == nullptr || b == nullptr) return false;
    return a->SerializeAsString() == b->SerializeAsString();
  }
  static bool SameShape(const onnx::TensorShapeProto* a, const onnx::TensorShapeProto* b) {
    if (a == b) return true;
    if (a == nullptr || b == nullptr) return false;
    return a->SerializeAsString() == b->SerializeAsString();
  }
  // Whether `after` differs from `before`.
  static bool Changed(const Known& before, const Known& after) {
    if ((before.type == nullptr) != (after.type == nullptr)) return true;
    if (before.type != nullptr && !SameType(*before.type, *after.type)) return true;
    if (before.facts.has_value() != after.facts.has_value()) return true;
    return before.facts.has_value() &&
           (!SameTensor(before.facts->constant, after.facts->constant) ||
            !SameShape(before.facts->shape_data, after.facts->shape_data));
  }

  static constexpr InferenceOptions kStrict{.strict = true};
  const onnx::GraphProto& graph;
  GraphTypes& types;
  Engine engine;
  GraphInferencer inferencer;
  absl::flat_hash_map<std::string, Known> forgotten;
};

MainGraphRefresher::MainGraphRefresher(const onnx::ModelProto& model, InferenceResult& result)
    : state_(std::make_unique<State>(model, result)) {}

MainGraphRefresher::~MainGraphRefresher() = default;

std::optional<ForgottenValue> ForgetValue(GraphTypes& types, const std::string& name) {
  auto type = types.types.find(name);
  if (type == types.types.end() || type->first.data() != name.data()) return std::nullopt;
  ForgottenValue forgotten;
  forgotten.type = type->second;
  types.types.erase(type);
  if (auto fact = types.facts.find(name); fact != types.facts.end()) {
    forgotten.facts = fact->second;
    types.facts.erase(fact);
  }
  return forgotten;
}

void MainGraphRefresher::ForgetOutputs(const onnx::NodeProto& node) {
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    std::optional<ForgottenValue> forgotten = ForgetValue(state_->types, output);
    if (forgotten.has_value()) state_->forgotten.try_emplace(output, *forgotten);
  }
}

bool MainGraphRefresher::Known(absl::string_view name) const {
  return state_->types.types.contains(name);
}

void MainGraphRefresher::AddInitializer(const onnx::TensorProto& tensor) {
  state_->forgotten.erase(tensor.name());
  state_->types.types.erase(tensor.name());
  state_->types.facts.erase(tensor.name());
  state_->inferencer.AddInitializer(tensor);
}

absl::StatusOr<bool> MainGraphRefresher::Infer(int index) {
  const onnx::NodeProto& node = state_->graph.node(index);
  absl::InlinedVector<State::Known, 2> before;
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    before.push_back(state_->Before(output));
    // Facts the node no longer gives must not stay behind.
    state_->types.facts.erase(output);
  }
  absl::Status status = state_->inferencer.InferNode(node, index);
  if (!status.ok()) return status;
  bool changed = false;
  size_t k = 0;
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    changed |= State::Changed(before[k++], state_->Current(output));
  }
  return changed;
}

bool NodeValidationUnchanged(const OpSchema& from, const OpSchema& to) {
  if (FindInferenceRule(from) != FindInferenceRule(to)) return false;
  if (from.min_input != to.min_input || from.max_input != to.max_input ||
      from.min_output != to.min_output || from.max_output != to.max_output ||
      from.deprecated != to.deprecated) {
    return false;
  }
  auto same_params = [](absl::Span<const FormalParam> a, absl::Span<const FormalParam> b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].type_str != b[i].type_str || a[i].option != b[i].option ||
          a[i].is_homogeneous != b[i].is_homogeneous) {
        return false;
      }
    }
    return true;
  };
  if (!same_params(from.inputs, to.inputs) || !same_params(from.outputs, to.outputs)) {
    return false;
  }
  if (from.attributes.size() != to.attributes.size()) return false;
  for (const AttrSpec& spec : from.attributes) {
    const AttrSpec* other = to.FindAttr(spec.name);
    if (other == nullptr || other->type != spec.type || other->required != spec.required ||
        !SameDefault(spec, *other)) {
      return false;
    }
  }
  // Every type allowed before is allowed after; a constraint that allowed
  // one type (which inference assigns outright) allows the same one.
  for (const TypeConstraint& before : from.type_constraints) {
    const TypeConstraint* after = to.FindConstraint(before.type_param);
    if (after == nullptr) return false;
    if ((before.allowed_types.size() == 1) != (after->allowed_types.size() == 1)) return false;
    for (absl::string_view type : before.allowed_types) {
      if (std::find(after->allowed_types.begin(), after->allowed_types.end(), type) ==
          after->allowed_types.end()) {
        return false;
      }
    }
  }
  return from.type_constraints.size() == to.type_constraints.size();
}

bool SameType(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  if (&a == &b) return true;
  if (Internable(a) && Internable(b)) return TensorTypeEq()(&a, &b);
  // Not by serializing: that writes cached sizes, and other threads may be
  // reading these types.
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

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
        if (found == types.end() || !HasType(found->second)) continue;
        onnx::ValueInfoProto* value = graph.add_value_info();
        value->set_name(output);
        *value->mutable_type() = *found->second;
        listed.insert(output);
      }
    }
  }
  if (depth >= kMaxGraphDepth) return;
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
