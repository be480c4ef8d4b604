#ifndef ONNX_CONVERT_SCHEMA_INFERENCE_INTERNAL_H_
#define ONNX_CONVERT_SCHEMA_INFERENCE_INTERNAL_H_

// Internal to schema/inference.cc and schema/inference_engine.cc: the engine
// that infers the graphs of a model (Engine, GraphInferencer), the memo of
// rule results, and the stored types they share.

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/arena.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"
#include "schema/inference_context.h"
#include "schema/inference_rules.h"
#include "schema/registry.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema::inference_internal {

// Opset versions by canonical domain.
using OpsetMap = absl::flat_hash_map<std::string, int64_t>;

// The empty type of a value whose type is unknown.
inline const onnx::TypeProto& NoType() { return onnx::TypeProto::default_instance(); }

// Whether `type` is set (not the empty type of an unknown value).
inline bool HasType(const onnx::TypeProto& type) {
  return type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

// Same; false for null.
inline bool HasType(const onnx::TypeProto* type) { return type != nullptr && HasType(*type); }

// Whether `type` is no type or a plain tensor type (element type and dims,
// nothing else), which TensorTypeHash and TensorTypeEq compare in full.
inline bool Internable(const onnx::TypeProto& type) {
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

// Infers one graph; subgraphs get their own, linked to their parent.
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
    // (A table that is empty, as a re-inference's overlay mostly is, is
    // not looked into: a lookup hashes the name first.)
    for (const GraphInferencer* g = this; g != nullptr; g = g->parent_) {
      if (!g->types_->empty()) {
        if (auto it = g->types_->find(name); it != g->types_->end()) return it->second;
      }
      if (g->base_ == nullptr) continue;
      if (auto it = g->base_->types.find(name); it != g->base_->types.end()) return it->second;
    }
    return nullptr;
  }

  // The extras of `name` here or in an enclosing graph, or null.
  const ValueFacts* FindExtras(absl::string_view name) const {
    for (const GraphInferencer* g = this; g != nullptr; g = g->parent_) {
      if (!g->extras_->empty()) {
        if (auto it = g->extras_->find(name); it != g->extras_->end()) return &it->second;
      }
      if (g->base_ == nullptr || g->base_->facts.empty()) continue;
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
  // The first named input of the node InferNode last inferred that had no
  // type here or in an enclosing graph, or -1.
  int last_untyped_input() const { return last_untyped_input_; }
  Engine& engine() { return engine_; }
  
  const onnx::TypeProto* Declared(absl::string_view name) const {
    if (declared_->empty()) return nullptr;
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
  int last_untyped_input_ = -1;
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

// What a rule found when it asked for the value of an input.
using FactRead = InputFact;

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

// What the inference of one model shares across its graphs: the opsets
// imported, the schemas and rules resolved, scratch types, the stored
// types, the memo of rule results and fresh symbols.
class Engine {
 public:
  Engine(const onnx::ModelProto& model, const InferenceOptions& options, InferenceResult& result,
         const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>* imports = nullptr)
      : options_(options), result_(result) {
    for (const auto& opset : imports != nullptr ? *imports : model.opset_import()) {
      opsets_[std::string(CanonicalDomain(opset.domain()))] = opset.version();
    }
  }

  const InferenceOptions& options() const { return options_; }
  InferenceResult& result() { return result_; }
  int64_t OpsetOf(absl::string_view domain) const {
    auto it = opsets_.find(CanonicalDomain(domain));
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
  // The key for the memo lookups of nodes at nesting `depth`, its room kept
  // from node to node (a deeper level's is another, and leaves it in place).
  MemoKey& ScratchKey(int depth) {
    if (scratch_keys_.size() <= static_cast<size_t>(depth)) scratch_keys_.resize(depth + 1);
    return scratch_keys_[depth];
  }
  // The outputs remembered for `key`, or null.
  MemoEntry* Recall(const MemoKey& key) {
    auto it = memo_.find(key);
    return it == memo_.end() ? nullptr : &it->second;
  }
  // Remembers `entry` for `key`, while the table is not full: the entry
  // as stored, or null.
  MemoEntry* Remember(const MemoKey& key, MemoEntry entry) {
    if (memo_.size() >= kMaxMemo) return nullptr;
    return &memo_.insert_or_assign(key, std::move(entry)).first->second;
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
  std::deque<MemoKey> scratch_keys_;  // deque: a deeper level keeps those above in place
  int nodes_since_reset_ = 0;
  absl::flat_hash_set<const onnx::TypeProto*, TensorTypeHash, TensorTypeEq> interned_;
  static constexpr size_t kMaxMemo = 4096;
  absl::flat_hash_map<MemoKey, MemoEntry> memo_;
  MemoEntry* last_entry_ = nullptr;
  int last_outputs_ = 0;
};

// Merges an inferred type into a declared one; errors describe a conflict.
// Defined in inference_engine.cc.
absl::StatusOr<onnx::TypeProto> MergeWithDeclared(const onnx::TypeProto& inferred,
                                                  const onnx::TypeProto& declared);

}  // namespace onnxconvert::schema::inference_internal

#endif  // ONNX_CONVERT_SCHEMA_INFERENCE_INTERNAL_H_
