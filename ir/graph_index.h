#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// Where a value of a graph is defined.
struct ValueSource {
  enum Kind { kGraphInput, kInitializer, kSparseInitializer, kNodeOutput };
  Kind kind;
  int index;  // graph input / initializer / node index
  int slot;   // output slot for kNodeOutput, else 0
};

// One use of a value: input `slot` of node `node`, or graph output `slot`
// when `node` is kGraphOutput.
struct ValueUse {
  static constexpr int kGraphOutput = -1;
  int node;
  int slot;
};

// An index over one GraphProto: producers and consumers of every value,
// nodes by operator, the names each node's subgraphs take from outer
// scopes, and topological order. Built in one linear pass; holds pointers
// into the graph, never copies of tensors. The graph must outlive the index
// and must not change while it is in use (rebuild after editing).
class GraphIndex {
 public:
  // Indexes `graph`. `parent` is the index of the enclosing graph for a
  // subgraph (names fall through to it), null for a top-level graph.
  // Fails, naming both producers, when a value is defined twice.
  static absl::StatusOr<std::unique_ptr<GraphIndex>> Build(const onnx::GraphProto& graph,
                                                           const GraphIndex* parent = nullptr);

  // The graph indexed.
  const onnx::GraphProto& graph() const { return *graph_; }
  // The enclosing graph's index, or null.
  const GraphIndex* parent() const { return parent_; }

  // Where `name` is defined in this graph, or null.
  const ValueSource* Producer(absl::string_view name) const;
  // True if `name` is defined here or in an enclosing graph.
  bool IsVisible(absl::string_view name) const;
  // Every use of `name` in this graph (node inputs and graph outputs), plus
  // nodes whose subgraphs use it from this scope (slot -1).
  absl::Span<const ValueUse> Consumers(absl::string_view name) const;
  // Indices of the nodes running (domain, op_type); "" and "ai.onnx" are one
  // domain.
  absl::Span<const int> NodesOf(absl::string_view domain, absl::string_view op_type) const;
  // Names the subgraphs of node `node` (at any depth) use without defining.
  absl::Span<const std::string> OuterReferences(int node) const;

  // Node indices in an order where every input is defined before use.
  // Errors name an input that nothing defines (or that is defined only by a
  // later node inside a cycle) and the nodes of a cycle.
  absl::StatusOr<std::vector<int>> TopologicalOrder() const;

 private:
  GraphIndex(const onnx::GraphProto& graph, const GraphIndex* parent)
      : graph_(&graph), parent_(parent) {}
  absl::Status Define(const std::string& name, ValueSource source);
  void ComputeOuterReferences(int node_index);
  std::string Describe(const ValueSource& source) const;

  const onnx::GraphProto* graph_;
  const GraphIndex* parent_;
  absl::flat_hash_map<std::string, ValueSource> producers_;
  absl::flat_hash_map<std::string, std::vector<ValueUse>> consumers_;
  absl::flat_hash_map<std::string, std::vector<int>> nodes_by_op_;
  absl::flat_hash_map<int, std::vector<std::string>> outer_references_;
};

// The names a graph uses (at any depth) that it does not define itself.
std::vector<std::string> FreeNames(const onnx::GraphProto& graph);

// Hands out value and node names unique across a whole model: every graph,
// subgraph and function. O(1) amortized per name.
class NameGenerator {
 public:
  // Collects the names already used in `model`.
  explicit NameGenerator(const onnx::ModelProto& model);
  // A name starting with `prefix` not used anywhere before; reserved.
  std::string FreshName(absl::string_view prefix);
  // Marks `name` as used.
  void Reserve(absl::string_view name) { used_.insert(std::string(name)); }

 private:
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
};

// A graph of a model with where it sits, e.g. "main/body of 'loop_1' (Loop)".
struct GraphSite {
  onnx::GraphProto* graph;
  std::string path;
  int depth;  // 0 for the main graph and training graphs
};

// Calls `fn` for the main graph, every subgraph at any depth (parents
// before children), and the training_info graphs.
void ForEachGraph(onnx::ModelProto& model, const std::function<void(const GraphSite&)>& fn);

// Edits to one graph, batched and applied in one linear pass by Commit():
// nodes replaced by sequences of nodes, removed, or inserted before a node;
// initializers added. Node indices refer to the graph as it was when the
// editor was made; the relative order of untouched nodes is kept.
class GraphEditor {
 public:
  explicit GraphEditor(onnx::GraphProto& graph) : graph_(&graph) {}

  // Replaces node `index` by `nodes` (an empty list removes it).
  void Replace(int index, std::vector<onnx::NodeProto> nodes);
  // Removes node `index`.
  void Remove(int index) { Replace(index, {}); }
  // Inserts `node` before node `index` (before any earlier insertions there).
  void InsertBefore(int index, onnx::NodeProto node);
  // Appends an initializer.
  void AddInitializer(onnx::TensorProto tensor);
  // Renames every use of `from` by nodes of this graph and graph outputs to
  // `to` (applied at Commit, after replacements).
  void RenameUses(absl::string_view from, absl::string_view to);
  // True if any edit is pending.
  bool HasEdits() const;
  // Applies the edits; the editor is empty afterwards.
  void Commit();

 private:
  onnx::GraphProto* graph_;
  absl::flat_hash_map<int, std::vector<onnx::NodeProto>> replacements_;
  absl::flat_hash_map<int, std::vector<onnx::NodeProto>> insertions_;
  std::vector<onnx::TensorProto> initializers_;
  absl::flat_hash_map<std::string, std::string> renames_;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_H_
