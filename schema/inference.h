#ifndef ONNX_CONVERT_SCHEMA_INFERENCE_H_
#define ONNX_CONVERT_SCHEMA_INFERENCE_H_

// Type and shape inference over a whole model (InferModel), re-inference of
// the nodes a converter step changed (NodeReinferencer), and writing the
// inferred types back into a model.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/arena.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::schema {

// Choices for type and shape inference.
struct InferenceOptions {
  // Any inconsistency (declared against inferred types, shapes that cannot
  // broadcast, ranks an op forbids) is an error naming the node; otherwise
  // it is noted and inference goes on.
  bool strict = false;
};

// What inference knows of a value besides its type, for the few values
// that have it: its constant value, or its value as symbolic dims.
struct ValueFacts {
  const onnx::TensorProto* constant = nullptr;  // the model's or the result's
  const onnx::TensorShapeProto* shape_data = nullptr;  // in the result's arena
};

// What an inference rule found when it asked for the value of an input:
// the input's constant and shape data (null where unknown), compared by
// address.
struct InputFact {
  size_t input = 0;
  const onnx::TensorProto* constant = nullptr;
  const onnx::TensorShapeProto* shape_data = nullptr;
};

// Types inferred for the values of one graph.
struct GraphTypes {
  std::string path;  // e.g. "main" or "main/body of 'loop' (Loop)"
  // Inferred (and merged with declared) types of every value with a known
  // type, by name. Names view the model's strings; types live in the
  // result's arena, and equal tensor types are one shared object.
  absl::flat_hash_map<absl::string_view, const onnx::TypeProto*> types;
  // Declared types (value_info, graph outputs) by name; they view the model.
  absl::flat_hash_map<absl::string_view, const onnx::TypeProto*> declared;
  // Facts of the values that have them, by name.
  absl::flat_hash_map<absl::string_view, ValueFacts> facts;
};

// What inference knew of one value, taken out by ForgetValue.
struct ForgottenValue {
  const onnx::TypeProto* type = nullptr;
  std::optional<ValueFacts> facts;
};

// Takes out of `types` what it knows of `name`, an output of a node removed
// from the graph (its string still alive), when its entry is keyed by that
// very string: a name it shares with a node still defining it (an invalid
// graph) keeps its entry. nullopt when there is no such entry.
std::optional<ForgottenValue> ForgetValue(GraphTypes& types, const std::string& name);

// What inference found for a model.
struct InferenceResult {
  // Owns every inferred TypeProto (one arena: cheap to build and to free).
  std::shared_ptr<google::protobuf::Arena> arena = MakeTypeArena();

  // An arena with blocks sized for many small types.
  static std::shared_ptr<google::protobuf::Arena> MakeTypeArena() {
    google::protobuf::ArenaOptions options;
    options.start_block_size = 64 << 10;
    options.max_block_size = 4 << 20;
    return std::make_shared<google::protobuf::Arena>(options);
  }
  // One entry per graph: the main graph, then subgraphs, keyed by the graph
  // (a node map: entries stay put while subgraphs are added).
  absl::node_hash_map<const onnx::GraphProto*, GraphTypes> graphs;
  // Ops inference has no rule for, with how often they occur, e.g.
  // "ai.onnx.TfIdfVectorizer-9": their outputs get element types from the
  // type constraints only.
  std::map<std::string, int> ops_without_rules;
  // Constant values inference computed (ValueFacts::constant views them).
  std::deque<onnx::TensorProto> constants;
  // Arenas and constants of later re-inferences (NodeReinferencer::Commit)
  // whose types and constants the tables above view.
  std::vector<std::shared_ptr<google::protobuf::Arena>> kept_arenas;
  std::vector<std::deque<onnx::TensorProto>> kept_constants;
  // Inconsistencies noted outside strict mode.
  std::vector<std::string> notes;
  int nodes_inferred = 0;
};

// Infers the types and shapes of every value of `model` from its graph
// inputs, initializers and constants, through subgraphs, without changing
// the model.
absl::StatusOr<InferenceResult> InferModel(const onnx::ModelProto& model,
                                           const InferenceOptions& options = {});

// Re-infers single nodes of the main graph of a model, one by one, against
// the strict inference of the model before those nodes changed, so that a
// change to a few nodes is validated without inferring the whole model
// again. What it infers is kept aside until Commit writes it into the
// result: several reinferencers of one result may Infer at once on
// separate threads (each only reads the result), then Commit one at a time.
class NodeReinferencer {
 public:
  using Imports = google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>;

  // Re-infers nodes of `graph` (the main graph of `model`, or a subgraph
  // within the graphs `enclosing` it, innermost first), at the opsets
  // `model` imports now (or `imports`, when given: those a step converts
  // to), into `result`; `added` are initializers added to `graph` since
  // `result` was inferred. FailedPrecondition if `result` has no types for
  // one of the graphs.
  static absl::StatusOr<std::unique_ptr<NodeReinferencer>> Create(
      const onnx::ModelProto& model, const onnx::GraphProto& graph,
      absl::Span<const onnx::TensorProto* const> added, InferenceResult& result,
      const Imports* imports = nullptr,
      absl::Span<const onnx::GraphProto* const> enclosing = {});
  // Infers nodes new to `result` (the main graph's next nodes, in order)
  // straight into it, with no overlay: their outputs must be values it
  // has no type for (the caller sees to that). Commit then only keeps what
  // the inferred types view.
  static absl::StatusOr<std::unique_ptr<NodeReinferencer>> CreateInPlace(
      const onnx::ModelProto& model, const onnx::GraphProto& graph, InferenceResult& result,
      const Imports* imports = nullptr);
  ~NodeReinferencer();

  // Infers `node` strictly: new values get their types, and a value that
  // had a type must come out with the same one. An error means that the
  // change reaches further than the node (or is invalid): infer the whole
  // model again to know which. Constants are known from initializers only.
  absl::Status Infer(const onnx::NodeProto& node);

  // Whether the node Infer last inferred repeats one that NoteChecked
  // marked: the same op version, arity, attributes and input types, and
  // the same output types. A check of the node (NodeChecker::Check, which
  // reads no more than these) finds what the check of that one found.
  bool RepeatsCheckedNode() const;

  // Whether the types Infer last gave the node's outputs follow from its op
  // version, arity, attributes, which outputs it names, its input types
  // and the input values in `facts` alone (no declared type, no fresh
  // symbol, no value given an output): a node alike in these, its inputs'
  // values found the same, gets the same. `facts` are what the rule asked
  // for, as it found them (valid until the next node is inferred).
  bool LastInferredPurely(absl::Span<const InputFact>& facts) const;

  // Notes that the node Infer last inferred passed the check with the
  // types inferred for it (see RepeatsCheckedNode).
  void NoteChecked();

  // Stores the type of initializer `tensor`, added since.
  void AddInitializer(const onnx::TensorProto& tensor);

  // The first named input of the node Infer last inferred that no type was
  // known for (a value not defined before the node), or -1.
  int UntypedInput() const;

  // The type of value `name`: as inferred here so far, else as before.
  const onnx::TypeProto* TypeOf(absl::string_view name) const;

  // Writes what Infer inferred into the result. Not while another
  // reinferencer of the result is inferring.
  void Commit();

 private:
  struct State;
  explicit NodeReinferencer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Keeps the strict inference of a model's main graph current while its
// nodes are edited, without inferring the whole model again: what it knew
// of the outputs of removed nodes is forgotten (before the strings its keys
// view go), then the nodes the edit touched are inferred again, in graph
// order, each telling whether an output came out with another type or
// other facts (its consumers must then be inferred again too). For models
// whose main graph has no subgraphs and keeps its value_info; strict only.
class MainGraphRefresher {
 public:
  // Refreshes `result`, the strict inference of `model`, which it must not
  // outlive.
  MainGraphRefresher(const onnx::ModelProto& model, InferenceResult& result);
  ~MainGraphRefresher();

  // Forgets the outputs of `node`, removed from the main graph (its
  // strings still alive), remembering them to compare with what Infer
  // finds next for a node defining the same name.
  void ForgetOutputs(const onnx::NodeProto& node);
  // Whether a type is known for value `name`.
  bool Known(absl::string_view name) const;
  // Stores the type and value of initializer `tensor`, new since (or
  // defining a forgotten name).
  void AddInitializer(const onnx::TensorProto& tensor);
  // Infers node `index` of the main graph again, strictly (errors as
  // InferModel's); whether an output's type or facts changed.
  absl::StatusOr<bool> Infer(int index);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether two types are equal, field by field.
bool SameType(const onnx::TypeProto& a, const onnx::TypeProto& b);

// Whether every node that validates (check and strict inference) bound to
// `from` validates bound to `to`, with the same output types: the two
// versions have the same inputs, outputs, attributes and inference rule,
// and `to` allows every type `from` does.
bool NodeValidationUnchanged(const OpSchema& from, const OpSchema& to);

// Writes `result` into `model` (the same model it was inferred from):
// value_info for every intermediate value with an inferred type, and types
// for graph outputs that lack them. Declared types are refined, never
// replaced.
void ApplyInferredTypes(const InferenceResult& result, onnx::ModelProto& model);

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_INFERENCE_H_
