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

// How many nodes ahead the value table is prefetched.
constexpr int kLookahead = 8;
// Graphs with fewer nodes stay in the cache: fetching ahead only costs.
constexpr int kLookaheadNodes = 262144;

using OpsetMap = absl::flat_hash_map<std::string, int64_t>;


// The empty type of a value whose type is unknown.
const onnx::TypeProto& NoType() { return onnx::TypeProto::default_instance(); }

bool HasType(const onnx::TypeProto& type) {
  return type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

bool HasType(const onnx::TypeProto* type) { return type != nullptr && HasType(*type); }

// Whether `type` is no type or a plain tensor type (element type and dims,
// nothing else), which TensorTypeHash and TensorTypeEq compare in full.
bool Internable(const onnx::TypeProto& type) {
  if (type.has_denotation() || !type.unknown_fields().empty()) return false;
  if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) return true;  // no type
  if (!type.has_tensor_type()) return false;
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  if (!tensor.unknown_fields().empty() || !tensor.shape().unknown_fields().empty()) return false;
  for (const auto& dim : tensor.shape().dim()) {
    if (dim.has_denotation() || !dim.unknown_fields().empty()) return false;
  }
  return true;
}

// Hashes an internable tensor type by element type and dims.
struct TensorTypeHash {
  size_t operator()(const onnx::TypeProto* type) const {
    const onnx::TypeProto::Tensor& tensor = type->tensor_type();
    size_t h = absl::HashOf(type->has_tensor_type(), tensor.elem_type(), tensor.has_shape(),
                            tensor.shape().dim_size());
    for (const auto& dim : tensor.shape().dim()) {
      h = absl::HashOf(h, static_cast<int>(dim.value_case()), dim.dim_value(), dim.dim_param());
    }
    return h;
  }
};

// Equality of internable tensor types, field by field.
struct TensorTypeEq {
  bool operator()(const onnx::TypeProto* a, const onnx::TypeProto* b) const {
    const onnx::TypeProto::Tensor& x = a->tensor_type();
    const onnx::TypeProto::Tensor& y = b->tensor_type();
    return a->has_tensor_type() == b->has_tensor_type() && x.elem_type() == y.elem_type() &&
           x.has_elem_type() == y.has_elem_type() && x.has_shape() == y.has_shape() &&
           SameDims(x.shape(), y.shape());
  }
};

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

  // The type of `name` here or in an enclosing graph, or null.
  const onnx::TypeProto* FindType(absl::string_view name) const {
    for (const GraphInferencer* g = this; g != nullptr; g = g->parent_) {
      if (auto it = g->types_->find(name); it != g->types_->end()) return it->second;
      if (g->base_ == nullptr) continue;
      if (auto it = g->base_->types.find(name); it != g->base_->types.end()) return it->second;
    }
    return nullptr;
  }

  // The extras of `name` here or in an enclosing graph, or null.
  const ValueFacts* FindExtras(absl::string_view name) const {
    for (const GraphInferencer* g = this; g != nullptr; g = g->parent_) {
      if (auto it = g->extras_->find(name); it != g->extras_->end()) return &it->second;
      if (g->base_ == nullptr) continue;
      if (auto it = g->base_->facts.find(name); it != g->base_->facts.end()) return &it->second;
    }
    return nullptr;
  }

  // The types of the graph outputs, once Run has finished.
  const std::vector<onnx::TypeProto>& FinalOutputTypes() const { return output_types_; }

  // The types of the graph outputs as inferred so far.
  std::vector<onnx::TypeProto> OutputTypes() const {
    std::vector<onnx::TypeProto> types;
    for (const auto& output : graph_.output()) {
      const onnx::TypeProto* type = FindType(output.name());
      types.push_back(type != nullptr ? *type : output.type());
    }
    return types;
  }

  const std::string& path() const { return path_; }
  int depth() const { return depth_; }
  Engine& engine() { return engine_; }
  
  const onnx::TypeProto* Declared(absl::string_view name) const {
    auto it = declared_->find(name);
    return it == declared_->end() ? nullptr : it->second;
  }

  // Picks up the types `done` holds for this graph, inferred before, so
  // that InferNode re-infers single nodes against them, reading `done` and
  // writing what changes into `overlay`.
  void Resume(const GraphTypes& done, GraphTypes& overlay) {
    base_ = &done;
    types_ = &overlay.types;
    extras_ = &overlay.facts;
    declared_ = &done.declared;
  }

  // Picks up the types `done` holds for this graph, inferred before, so
  // that InferNode infers further nodes straight into it.
  void Extend(GraphTypes& done) {
    base_ = nullptr;
    types_ = &done.types;
    extras_ = &done.facts;
    declared_ = &done.declared;
  }

  // Stores the type of initializer `tensor`.
  void AddInitializer(const onnx::TensorProto& tensor);

  // Infers `node` (the `index`th of the graph, or -1) and stores the types
  // of its outputs. Resumed, an output that had a type must come out with
  // the same one.
  absl::Status InferNode(const onnx::NodeProto& node, int index);

 private:

  const onnx::GraphProto& graph_;
  const GraphInferencer* parent_;
  std::string path_;
  Engine& engine_;
  int depth_;
  // Types of this graph's values: the result's map, filled as nodes are
  // inferred (keys view the model).
  absl::flat_hash_map<absl::string_view, const onnx::TypeProto*>* types_ = nullptr;
  // Facts of this graph's values: the result's map.
  absl::flat_hash_map<absl::string_view, ValueFacts>* extras_ = nullptr;
  // Declared types (value_info, graph outputs): the result's map.
  const absl::flat_hash_map<absl::string_view, const onnx::TypeProto*>* declared_ = nullptr;
  std::vector<onnx::TypeProto> output_types_;
  // Resumed: the types inferred before, read under types_ and extras_
  // (which then hold only what changed).
  const GraphTypes* base_ = nullptr;
};

// What a node's outputs follow from when its rule reads only its inputs'
// types and values and its attributes: the op version, which input and
// output slots are filled, the input types (stored types, compared by
// address) and the attributes (serialized, each after its size); the
// values read are checked apart (MemoEntry::facts).
struct MemoKey {
  const OpSchema* schema = nullptr;
  uint64_t outputs = 0;  // bit i: output i is named
  absl::InlinedVector<const void*, 4> inputs;  // kAbsentInput where unnamed
  std::string attributes;

  bool operator==(const MemoKey& other) const {
    return schema == other.schema && outputs == other.outputs && inputs == other.inputs &&
           attributes == other.attributes;
  }
  template <typename H>
  friend H AbslHashValue(H h, const MemoKey& key) {
    return H::combine(std::move(h), key.schema, key.outputs, key.inputs, key.attributes);
  }
};

// What a rule found when it asked for the value of an input: the input's
// constant and shape data (null where unknown), compared by address.
struct FactRead {
  size_t input = 0;
  const onnx::TensorProto* constant = nullptr;
  const onnx::TensorShapeProto* shape_data = nullptr;
};

// The stored output types a rule gave for a MemoKey, and the input values
// it asked for: a node like it takes these types only if its inputs' values
// are the same (the same objects, or unknown alike).
struct MemoEntry {
  absl::InlinedVector<FactRead, 2> facts;
  absl::InlinedVector<const onnx::TypeProto*, 4> outputs;
  // Set when a node with these outputs (the node's whole output list,
  // `checked_outputs` long) passed the checker.
  bool checked = false;
  int checked_outputs = 0;
};

class Engine {
 public:
  Engine(const onnx::ModelProto& model, const InferenceOptions& options, InferenceResult& result,
         const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>* imports = nullptr)
      : options_(options), result_(result) {
    for (const auto& opset : imports != nullptr ? *imports : model.opset_import()) {
      opsets_[std::string(Registry::CanonicalDomain(opset.domain()))] = opset.version();
    }
  }

  const InferenceOptions& options() const { return options_; }
  InferenceResult& result() { return result_; }
  int64_t OpsetOf(absl::string_view domain) const {
    auto it = opsets_.find(Registry::CanonicalDomain(domain));
    return it == opsets_.end() ? 0 : it->second;
  }
  // The schema `node` binds to at the imported opsets (null if none) and
  // its rule, remembered for the last few ops: graphs repeat a few ops.
  std::pair<const OpSchema*, InferenceFn> Resolve(const onnx::NodeProto& node) {
    for (const Resolved& known : resolved_) {
      if (known.op == node.op_type() && known.domain == node.domain()) {
        return {known.schema, known.rule};
      }
    }
    int64_t opset = OpsetOf(node.domain());
    const OpSchema* schema =
        opset > 0 ? Registry::Get().Lookup(node.domain(), node.op_type(), opset) : nullptr;
    InferenceFn rule = schema != nullptr ? FindInferenceRule(*schema) : nullptr;
    Resolved& slot = resolved_[next_resolved_++ % kResolved];
    slot = {node.op_type(), node.domain(), schema, rule};
    return {schema, rule};
  }
  // A cleared scratch type for output `slot` of a node at nesting `depth`,
  // valid until the node is done. Scratch types live on an arena of their
  // own, so that clearing one frees nothing and filling it allocates from
  // the arena.
  onnx::TypeProto* Scratch(int depth, size_t slot) {
    if (scratch_.size() <= static_cast<size_t>(depth)) scratch_.resize(depth + 1);
    auto& level = scratch_[depth];
    while (level.size() <= slot) {
      level.push_back(google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&scratch_arena_));
    }
    level[slot]->Clear();
    return level[slot];
  }
  // Notes that a node at nesting `depth` is done: every few nodes of the
  // main graph (when no scratch type is in use), the scratch arena starts
  // over within its first block.
  void NodeDone(int depth) {
    if (depth != 0 || ++nodes_since_reset_ < kNodesPerScratchReset) return;
    nodes_since_reset_ = 0;
    scratch_.clear();
    scratch_arena_.Reset();
  }
  // A stored type equal to `type`: tensor types are shared between values
  // (stored types never change), others are copied into the arena.
  const onnx::TypeProto* Store(const onnx::TypeProto& type) {
    if (!Internable(type)) return Copy(type);
    auto it = interned_.find(&type);
    if (it != interned_.end()) return *it;
    const onnx::TypeProto* stored = Copy(type);
    interned_.insert(stored);
    return stored;
  }
  // The outputs remembered for `key`, or null.
  MemoEntry* Recall(const MemoKey& key) {
    auto it = memo_.find(key);
    return it == memo_.end() ? nullptr : &it->second;
  }
  // Remembers `entry` for `key`, while the table is not full: the entry
  // as stored, or null.
  MemoEntry* Remember(MemoKey key, MemoEntry entry) {
    if (memo_.size() >= kMaxMemo) return nullptr;
    return &memo_.insert_or_assign(std::move(key), std::move(entry)).first->second;
  }
  // The memo entry whose output types the node last inferred took, when
  // it took them all as they are stored there (else null); valid until the
  // next node is inferred.
  MemoEntry* last_entry() const { return last_entry_; }
  void set_last_entry(MemoEntry* entry) { last_entry_ = entry; }
  int last_outputs() const { return last_outputs_; }
  void set_last_outputs(int outputs) { last_outputs_ = outputs; }
  const onnx::TensorProto* Own(onnx::TensorProto tensor) {
    result_.constants.push_back(std::move(tensor));
    return &result_.constants.back();
  }
  std::string FreshSymbol() { return absl::StrCat("unk__", next_symbol_++); }

 private:
  const InferenceOptions& options_;
  InferenceResult& result_;
  const onnx::TypeProto* Copy(const onnx::TypeProto& type) {
    auto* copy = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(result_.arena.get());
    *copy = type;
    return copy;
  }

  OpsetMap opsets_;
  struct Resolved {
    std::string op;
    std::string domain = "\x01";  // matches no node until filled
    const OpSchema* schema = nullptr;
    InferenceFn rule = nullptr;
  };
  static constexpr size_t kResolved = 8;
  std::array<Resolved, kResolved> resolved_;
  size_t next_resolved_ = 0;
  int next_symbol_ = 0;
  static constexpr size_t kScratchBlockBytes = 64 << 10;
  static constexpr int kNodesPerScratchReset = 32;
  static google::protobuf::ArenaOptions ScratchArenaOptions(char* block) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = kScratchBlockBytes;
    return options;
  }
  std::unique_ptr<char[]> scratch_block_{new char[kScratchBlockBytes]};
  google::protobuf::Arena scratch_arena_{ScratchArenaOptions(scratch_block_.get())};
  std::vector<std::vector<onnx::TypeProto*>> scratch_;
  int nodes_since_reset_ = 0;
  absl::flat_hash_set<const onnx::TypeProto*, TensorTypeHash, TensorTypeEq> interned_;
  static constexpr size_t kMaxMemo = 4096;
  absl::flat_hash_map<MemoKey, MemoEntry> memo_;
  MemoEntry* last_entry_ = nullptr;
  int last_outputs_ = 0;
};

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

// The memo key of `ctx`'s node, or nullopt when it has too many outputs
// to say which are named or too large attributes.
std::optional<MemoKey> MemoKeyOf(const NodeContext& ctx) {
  const onnx::NodeProto& node = ctx.wiring();
  if (node.output_size() > 64) return std::nullopt;
  MemoKey key;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    size_t size = attribute.ByteSizeLong();
    // The size goes before the bytes, in at most 2 bytes under the bound.
    if (key.attributes.size() + 2 + size > kMaxMemoAttributeBytes) return std::nullopt;
    wire::AppendVarint(size, key.attributes);
    wire::AppendSerialized(attribute, size, key.attributes);
  }
  key.schema = &ctx.op();
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) key.outputs |= uint64_t{1} << i;
  }
  key.inputs.resize(node.input_size());
  for (int i = 0; i < node.input_size(); ++i) {
    key.inputs[i] = node.input(i).empty() ? static_cast<const void*>(&kAbsentInput)
                                          : ctx.input_types()[i];
  }
  return key;
}

std::string NodeLabel(const onnx::NodeProto& node, int index, const OpSchema* schema) {
  std::string op = schema != nullptr ? schema->Label() : node.op_type();
  if (!node.name().empty()) return absl::StrCat("node '", node.name(), "' (", op, ")");
  return index >= 0 ? absl::StrCat("node #", index, " (", op, ")")
                    : absl::StrCat("unnamed node (", op, ")");
}

absl::Status GraphInferencer::InferNode(const onnx::NodeProto& node, int index) {
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
  std::optional<MemoKey> memo_key;
  // The outputs remembered from a node like this one, if any.
  MemoEntry* recalled = nullptr;
  engine_.set_last_entry(nullptr);
  // Whether every output's stored type is the one the memo holds for it.
  bool stored_as_remembered = true;
  if (schema != nullptr) {
    ++engine_.result().nodes_inferred;
    NodeContext& context = ctx.emplace(node, *schema, *this);
    if (rule == nullptr) {
      ++engine_.result().ops_without_rules[schema->Label()];
    } else {
      memo_key = MemoKeyOf(context);
      if (memo_key) recalled = engine_.Recall(*memo_key);
      if (recalled != nullptr && !context.SameFacts(recalled->facts)) recalled = nullptr;
      absl::Status status = recalled != nullptr ? absl::OkStatus() : rule(context);
      if (!status.ok()) {
        memo_key.reset();
        absl::Status failed = fail(status.message());
        if (!failed.ok()) return failed;
      }
    }
    // Element types the rule left unset follow from the type constraints.
    if (recalled == nullptr) InferFromConstraints(context);
    if (recalled != nullptr || !context.pure()) memo_key.reset();
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
      if (auto it = types_->find(name); it != types_->end()) {
        before = it->second;
      } else if (auto known = base_->types.find(name); known != base_->types.end()) {
        before = known->second;
        same_string = known->first.data() == name.data();
      }
      if (before != nullptr && !SameType(*before, *stored)) {
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
  if (memo_key) entry = engine_.Remember(*std::move(memo_key), std::move(remembered));
  if (stored_as_remembered) {
    engine_.set_last_entry(entry);
    engine_.set_last_outputs(node.output_size());
  }
  ctx.reset();
  engine_.NodeDone(depth_);
  return absl::OkStatus();
}

}  // namespace

struct NodeReinferencer::State {
  // `outer`: the graphs enclosing `graph`, innermost first, with their
  // types; read only.
  State(const onnx::ModelProto& model, const onnx::GraphProto& graph, GraphTypes& done,
        InferenceResult& result, const Imports* imports,
        absl::Span<const std::pair<const onnx::GraphProto*, GraphTypes*>> outer,
        bool in_place = false)
      : result(result), done(done), engine(model, Strict(), scratch, imports) {
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

void NodeReinferencer::NoteChecked() {
  MemoEntry* entry = state_->engine.last_entry();
  if (entry == nullptr || entry->checked) return;
  entry->checked = true;
  entry->checked_outputs = state_->engine.last_outputs();
}

void NodeReinferencer::AddInitializer(const onnx::TensorProto& tensor) {
  state_->inferencer->AddInitializer(tensor);
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
