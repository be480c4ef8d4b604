#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_H_

// Indexes over the graphs of an ONNX model, for analysis and for the small
// rewrites an opset step makes.
//
// A GraphIndex covers one graph (or function body): who produces each value,
// who uses it, which nodes run each operator, what each node's subgraphs take
// from outer scopes, and the order of the nodes. Subgraphs get their own
// GraphIndex, owned by the index of the graph holding them, whose lookups fall
// through to the enclosing scopes. A ModelIndex holds the indexes of every
// graph of a model: main graph, training graphs, functions.
//
// The ModelProto stays the source of truth; an index holds names (copied once
// into its own storage), node ids and positions, never copies of tensors or
// nodes. Building costs one linear pass; queries are O(1) hash lookups; each
// edit costs in proportion to what it touches (nodes, their inputs and
// outputs, and the subgraphs they hold or reach by name).
//
// Editing invariants (between Build and Commit, and after each Commit):
//  * NodeId n is position n of the graph's node list, always. Removed nodes
//    stay in the list ("dead") and new nodes are appended at its end until
//    Commit(), which writes the live nodes in a valid order, drops the dead
//    ones, and renumbers: afterwards ids are 0..live-1 in graph order again,
//    exactly as a fresh Build would give them.
//  * Between edits and Commit the node list is not in a valid order and holds
//    dead nodes: read it through the index (IsLive, LiveNodes) or Commit first.
//    LiveNodes() is the order Commit starts from: the existing order, with new
//    nodes where they were inserted.
//  * Producer() and Consumers() always describe the live nodes exactly: a
//    removed node uses and produces nothing; a new node is indexed at once.
//    A value keeps its uses when its producer goes away (it becomes undefined
//    until something produces it again).
//  * A subgraph's free names (used, not defined there) are always recorded as
//    uses by the node that holds it in the enclosing graph, whatever edit
//    (here or in the subgraph) changed them.
//  * Values are in SSA form in each graph: an edit that would produce a value
//    twice fails and changes nothing. A graph input may share its name with an
//    initializer (its default); the value then counts as the graph input.
//  * Nodes' inputs, outputs, op_type, domain and subgraph attributes change
//    only through the edit API (ir::GraphIndexRewriter, which hands out the
//    ir::Rewriter); other attributes may be edited in place.

#include <cstdint>
#include <map>
#include <functional>
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
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/limits.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// Identifies a node of one graph: its position in the graph's node list.
using NodeId = int32_t;

// No node: the end of the graph for insertions, the owner of a root graph.
inline constexpr NodeId kNoNode = -1;

// Where a value seen from a graph is defined.
struct ValueSource {
  // What defines the value.
  enum class Kind : uint8_t {
    kUndefined,          // nothing, here or in an enclosing graph
    kGraphInput,         // graph input (or function input) `index`
    kInitializer,        // initializer `index`
    kSparseInitializer,  // sparse initializer `index`
    kNodeOutput,         // output `slot` of node `index`
    kOuterScope,         // an enclosing graph (see GraphIndex::DefiningScope)
  };

  Kind kind = Kind::kUndefined;
  int32_t index = -1;
  int32_t slot = -1;

  // True unless kind is kUndefined.
  bool is_defined() const { return kind != Kind::kUndefined; }
  // Field-wise equality.
  friend bool operator==(const ValueSource&, const ValueSource&) = default;
};

// One use of a value in a graph: a node input, a node whose subgraphs refer
// to the value from this scope, or a graph output.
struct ValueUse {
  NodeId node = kNoNode;  // kNoNode for a graph output
  int32_t slot = 0;       // input slot, graph output position, or -1 for a subgraph use

  // Input `slot` of `node`.
  static ValueUse Input(NodeId node, int32_t slot) { return {node, slot}; }
  // A use by the subgraphs of `node`.
  static ValueUse Subgraph(NodeId node) { return {node, -1}; }
  // Graph output number `position`.
  static ValueUse GraphOutput(int32_t position) { return {kNoNode, position}; }

  // True for a node input.
  bool is_input() const { return node != kNoNode && slot >= 0; }
  // True for a use by a node's subgraphs.
  bool is_subgraph() const { return node != kNoNode && slot < 0; }
  // True for a graph output.
  bool is_graph_output() const { return node == kNoNode; }
  // Field-wise equality.
  friend bool operator==(const ValueUse&, const ValueUse&) = default;
};

class NamePool;
class NameArena;
class GraphIndexEditor;
namespace ir {
class GraphIndexRewriter;
}  // namespace ir

// The index of one graph or function body; see the file comment.
class GraphIndex {
 public:
  // Indexes `graph` and its subgraphs for reading and editing. Fails, naming
  // both producers, when a value is produced twice, and when subgraphs nest
  // deeper than kMaxGraphDepth. `graph` must outlive the index.
  static absl::StatusOr<std::unique_ptr<GraphIndex>> Build(onnx::GraphProto* graph);
  // Same, for reading only.
  static absl::StatusOr<std::unique_ptr<const GraphIndex>> Build(const onnx::GraphProto& graph);

  GraphIndex(const GraphIndex&) = delete;
  GraphIndex& operator=(const GraphIndex&) = delete;
  ~GraphIndex();

  // ---- Where the graph sits ----

  // Where the graph sits in its model, e.g. "main/body of 'loop_1'".
  std::string path() const;
  // The enclosing graph, whose values this one can use; null for the main
  // graph, functions and initialization graphs.
  const GraphIndex* parent() const { return parent_; }
  // The node of parent() holding this graph; kNoNode for a root graph.
  NodeId owner() const { return owner_; }
  // The graph indexed; null for a function.
  const onnx::GraphProto* graph() const { return graph_; }
  // The function indexed; null for a graph.
  const onnx::FunctionProto* function() const { return function_; }

  // ---- Nodes ----

  // Number of node ids (live and dead): the size of the graph's node list.
  int node_count() const { return static_cast<int>(node_flags_.size()); }
  // Number of live nodes.
  int live_node_count() const { return live_count_; }
  // True if `node` is an id of a node that has not been removed.
  bool IsLive(NodeId node) const;
  // The node `node` (live or dead).
  const onnx::NodeProto& node(NodeId node) const;
  // node(id).output_size() as indexed, without reading the node.
  int OutputCount(NodeId id) const { return output_count(id); }
  // The node `node`, to edit attributes other than subgraphs; see the file
  // comment for what must go through the edit API.
  onnx::NodeProto* mutable_node(NodeId node);
  // The live nodes in the order Commit() starts from.
  std::vector<NodeId> LiveNodes() const;
  // Live nodes running `op_type` of `domain` ("" and "ai.onnx" are the same
  // domain), by increasing id. (ir::OpIndex is the converter's view of the
  // same across a whole model, by node site, without producers and uses.)
  std::vector<NodeId> NodesOf(absl::string_view domain, absl::string_view op_type) const;
  // Indexes of the subgraphs of `node`, in attribute order.
  std::vector<const GraphIndex*> Subgraphs(NodeId node) const;
  // Same, for editing.
  std::vector<GraphIndex*> Subgraphs(NodeId node);
  // Names the subgraphs of `node` (at any depth) use from this graph or its
  // enclosing ones, sorted.
  std::vector<absl::string_view> OuterReferences(NodeId node) const;
  // This graph and every subgraph under it, parents before children.
  std::vector<GraphIndex*> GraphsInTree();
  // Same, read-only.
  std::vector<const GraphIndex*> GraphsInTree() const;

  // ---- Values ----

  // A name's number in this index, kept for the index's life (edits and
  // Commit keep it); what the edit logs hold.
  using ValueId = int32_t;
  // No value (an omitted input or output).
  static constexpr ValueId kNoValue = -1;

  // Where `name` is defined, as seen from this graph; kOuterScope when an
  // enclosing graph defines it.
  ValueSource Producer(absl::string_view name) const;
  // Producer(ValueName(value)), without a lookup by name when this graph
  // defines it.
  ValueSource ProducerOf(ValueId value) const;
  // Consumers(ValueName(value)), without a lookup by name.
  absl::Span<const ValueUse> ConsumersOf(ValueId value) const;
  // The name of `value` ("" for kNoValue); valid for the index's life.
  absl::string_view ValueName(ValueId value) const {
    return value == kNoValue ? absl::string_view() : values_[value].name;
  }
  // The innermost graph (this one or an enclosing one) defining `name`, or
  // null.
  const GraphIndex* DefiningScope(absl::string_view name) const;
  // Every use of `name` in this graph, in graph order after Build and Commit,
  // in no particular order after other edits. Invalidated by edits.
  absl::Span<const ValueUse> Consumers(absl::string_view name) const;
  // Producer(node(id).input(slot)), without a lookup by name; undefined for
  // an omitted input or a slot past the node's inputs.
  ValueSource InputProducer(NodeId id, int slot) const;
  // Consumers(node(id).output(slot)), without a lookup by name; empty for an
  // omitted output or a slot past the node's outputs.
  absl::Span<const ValueUse> OutputConsumers(NodeId id, int slot) const;
  // True if some output of this graph reads node `id`'s output `slot`.
  bool IsGraphOutputOf(NodeId id, int slot) const;
  // The initializer holding `name` when it is constant (an initializer not
  // overridden by a graph input, here or in an enclosing graph), else null.
  const onnx::TensorProto* FindInitializer(absl::string_view name) const;
  // Names used here but not defined here, sorted: for a subgraph, what it
  // takes from outer scopes; for a root graph, what nothing defines.
  std::vector<absl::string_view> FreeNames() const;
  // Every name this graph defines or uses, sorted.
  std::vector<absl::string_view> ValueNames() const;

  // ---- Order ----

  // The live nodes in an order where each node comes after the producers of
  // its inputs and of the names its subgraphs use. Keeps the current order
  // (LiveNodes()) when it is already valid; otherwise nodes waiting for a
  // later producer move just after it. Errors name a node using a value that
  // nothing defines, or the nodes and values of a cycle. Linear time.
  absl::StatusOr<std::vector<NodeId>> TopologicalOrder() const;
  // Checks the current order is valid. Errors tell an undefined input from
  // one defined later (naming the later producer).
  absl::Status CheckOrder() const;

  // ---- Names ----

  // A name "<prefix>__<n>" used nowhere in the model (every graph, subgraph
  // and function known to this index's ModelIndex, or this graph tree when
  // built alone), reserved from now on. O(1) amortised; the first call
  // collects the names in use.
  std::string FreshName(absl::string_view prefix);

  // ---- Edits ----
  //
  // Nodes, inputs and initializers change through ir::GraphIndexRewriter
  // (ir/graph_index_rewriter.h): the one graph-editing API (ir::Rewriter).
  // What follows lets a rewrite be revisited and committed.

  // From now on, appends to `log` (null: stops) the values every edit
  // touches: the inputs and outputs of nodes removed or inserted, the
  // values SetInput and RenameUses move uses between, initializers added.
  // For revisiting only what changed (rewrites/pass_manager.cc).
  void set_edit_log(std::vector<ValueId>* log) { edit_log_ = log; }
  // From now on, appends to `log` (null: stops) a (from, to) pair for every
  // use an edit moves from one value to another: each SetInput (the input
  // before, after; kNoValue for an omitted one) and each RenameUses. For
  // telling edits that only forwarded values from others
  // (rewrites/pass_manager.cc).
  void set_move_log(std::vector<std::pair<ValueId, ValueId>>* log) { move_log_ = log; }
  // True if an edit since the last Commit() may have changed the node order.
  bool HasPendingEdits() const { return order_may_change_; }
  // Rewrites the node list in one pass: the live nodes in TopologicalOrder(),
  // without the dead ones; then renumbers. When `new_ids` is given it
  // receives, for every id before Commit, its id after (kNoNode if removed).
  // Fails, changing nothing, when the live nodes have no valid order.
  // Commits this graph only, not its subgraphs.
  absl::Status Commit(std::vector<NodeId>* new_ids = nullptr);

  // ---- Self-check ----

  // Checks the index against the graph and its own bookkeeping (every use
  // and producer, the node order, subgraph links and uses); an error names
  // the first discrepancy. Linear time; for tests and debugging.
  absl::Status CheckConsistency() const;

 private:
  friend class ModelIndex;
  friend class NamePool;
  friend class GraphIndexEditor;
  friend class ir::GraphIndexRewriter;

  // A value named in this graph.
  struct ValueRecord {
    absl::string_view name;  // in arena_
    ValueSource source;      // kUndefined when not defined in this graph
    absl::InlinedVector<ValueUse, 2> uses;
  };
  // How many subgraphs of one node use a name, and where the node's use is.
  struct SubgraphUse {
    int32_t graphs = 0;
    int32_t use_position = -1;
  };
  // A batch of nodes appended to the node list, not yet indexed.
  struct PreparedNodes {
    NodeId first = 0;
    std::vector<std::vector<std::unique_ptr<GraphIndex>>> subgraphs;
  };
  // An operator: domain ("" for ai.onnx) and op_type; owned or viewed.
  struct OpKey {
    std::string domain;
    std::string op_type;
  };
  struct OpKeyView {
    absl::string_view domain;
    absl::string_view op_type;
  };
  struct OpKeyHash {
    using is_transparent = void;
    template <typename Key>
    size_t operator()(const Key& key) const {
      return absl::HashOf(absl::string_view(key.domain), absl::string_view(key.op_type));
    }
  };
  struct OpKeyEq {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return absl::string_view(a.domain) == absl::string_view(b.domain) &&
             absl::string_view(a.op_type) == absl::string_view(b.op_type);
    }
  };

  GraphIndex(onnx::GraphProto* graph, onnx::FunctionProto* function, GraphIndex* parent,
             NodeId owner, int depth, NamePool* names);

  static absl::StatusOr<std::unique_ptr<GraphIndex>> BuildRoot(onnx::GraphProto* graph,
                                                               onnx::FunctionProto* function,
                                                               std::string path,
                                                               GraphIndex* lookup_parent,
                                                               NamePool* names);

  // Building.
  absl::Status IndexInterface();
  absl::Status IndexNodes();
  void IndexGraphOutputs();
  absl::Status DefineInterfaceValue(absl::string_view name, ValueSource source);
  absl::Status CheckNewOutputs(absl::Span<const onnx::NodeProto> nodes, NodeId replaced) const;
  absl::StatusOr<std::vector<std::unique_ptr<GraphIndex>>> BuildSubgraphs(NodeId id);
  absl::Status RegisterNode(NodeId id, std::vector<std::unique_ptr<GraphIndex>> subgraphs);
  absl::Status IndexNodeOutputs(NodeId id, const onnx::NodeProto& node);
  void IndexNodeInputs(NodeId id, const onnx::NodeProto& node);
  void AttachSubgraphs(NodeId id, std::vector<std::unique_ptr<GraphIndex>> subgraphs);
  int32_t OpIdFor(absl::string_view domain, absl::string_view op_type);

  // Values and uses.
  ValueId Intern(absl::string_view name);
  ValueId Find(absl::string_view name) const;
  ValueId RecentOutput(NodeId id, absl::string_view name) const;
  int32_t AddUse(ValueId value, ValueUse use);
  void RemoveUse(ValueId value, int32_t position);
  void SetUsePosition(ValueId value, ValueUse use, int32_t position);
  void SetSource(ValueId value, ValueSource source);
  void ReportFreeChange(ValueId value, bool free);
  void OnSubgraphUse(NodeId node, absl::string_view name, bool used);
  static bool IsFree(const ValueRecord& record);
  bool IsVisibleOutside(ValueId value) const;

  // ---- Node edits: for ir::GraphIndexRewriter (and, through
  // GraphIndexEditor, the index's own tests) ----

  // Adds `nodes` before node `before` (kNoNode: at the end; a removed node
  // keeps its place until Commit) in LiveNodes() order and returns their
  // ids. Fails, changing nothing, when one of them
  // produces a value already defined in this graph (or by another of them),
  // or when their subgraphs do not index.
  absl::StatusOr<std::vector<NodeId>> InsertNodes(std::vector<onnx::NodeProto> nodes,
                                                  NodeId before = kNoNode);
  // Adds `nodes` just after node `after` (live or removed) in LiveNodes()
  // order, after the nodes inserted after it before, and returns their
  // ids. Fails as InsertNodes does.
  absl::StatusOr<std::vector<NodeId>> InsertNodesAfter(NodeId after,
                                                       std::vector<onnx::NodeProto> nodes);
  // Replaces live node `node` by `nodes`, where it was, and returns their ids.
  // They may produce the values `node` produced.
  absl::StatusOr<std::vector<NodeId>> ReplaceNode(NodeId node, std::vector<onnx::NodeProto> nodes);
  // Removes live node `node` (and the indexes of its subgraphs).
  absl::Status RemoveNode(NodeId node);
  // Makes input `slot` of live node `node` name `value` ("": omitted).
  absl::Status SetInput(NodeId node, int slot, absl::string_view value);
  // Makes every use of `from` here use `to` instead: node inputs, and the
  // uses inside subgraphs (at any depth) that refer to this scope's `from`,
  // subgraph outputs included. This graph's own outputs keep their names.
  // Fails, changing nothing, when a subgraph defines `to` itself.
  absl::Status RenameUses(absl::string_view from, absl::string_view to);
  // Appends initializer `tensor`. Fails when its name is empty or already
  // defined here, and for a function.
  absl::Status AddInitializer(onnx::TensorProto tensor);

  // Whether the index holds node `id`'s inputs and outputs under the names
  // `node` gives them (for a rewriter telling an anchor edited in place).
  bool IndexedWith(NodeId id, const onnx::NodeProto& node) const;

  // Editing.
  absl::Status CheckKnown(NodeId node) const;
  absl::Status CheckLive(NodeId node) const;
  absl::StatusOr<PreparedNodes> PrepareNodes(std::vector<onnx::NodeProto> nodes, NodeId replaced);
  // Registers prepared nodes, placed before `before` unless `place` is
  // false (the caller places them).
  absl::StatusOr<std::vector<NodeId>> RegisterPrepared(PreparedNodes prepared, NodeId before,
                                                       bool place = true);
  void Unindex(NodeId node);
  void SetInputValue(NodeId node, int slot, absl::string_view value);
  void SetInputValue(NodeId node, int slot, ValueId value);
  void SetGraphOutput(int position, absl::string_view value);
  absl::Status CheckRenameInSubgraphs(absl::string_view from, absl::string_view to) const;
  // Moves the uses of `value` (named `from`, kNoValue excluded) to `to`.
  void RenameUsesOf(ValueId value, absl::string_view from, absl::string_view to,
                    bool graph_outputs);
  void InsertBefore(NodeId node, NodeId anchor);
  // The nodes inserted before (or after) `anchor`, or null.
  const std::vector<NodeId>* InsertedAround(NodeId anchor, bool after) const;
  // Appends `root` (when live; kNoNode: the end of the graph) to `order`
  // with the nodes inserted around it, theirs around them, and so on.
  void AppendWithInsertions(NodeId root, std::vector<NodeId>& order) const;

  // Order.
  absl::Status CheckInputsDefined(NodeId node) const;
  template <typename Fn>
  void ForEachDependency(NodeId node, Fn&& fn) const;
  absl::StatusOr<std::vector<NodeId>> StableOrder(absl::Span<const NodeId> sequence) const;
  absl::Status CycleError(absl::Span<const NodeId> sequence,
                          const std::vector<uint8_t>& emitted) const;
  absl::Status CheckGraphOutputsDefined() const;
  void Renumber(absl::Span<const NodeId> order, std::vector<NodeId>* new_ids);
  void ReorderNodeList(absl::Span<const NodeId> order, const std::vector<NodeId>& new_id);
  void RenumberNodeArrays(absl::Span<const NodeId> order);
  void RenumberOwners(const std::vector<NodeId>& new_id);
  void RebuildUses();

  // Self-check.
  absl::Status OutOfStep(absl::string_view what) const;
  bool HasUseAt(ValueId value, int32_t position, ValueUse use) const;
  absl::Status CheckLiveOrder() const;
  absl::Status CheckNode(NodeId node) const;
  absl::Status CheckSubgraphsOf(NodeId node) const;
  absl::Status CheckValue(ValueId value) const;
  bool SourceMatches(ValueId value) const;
  bool UsePointsBack(ValueId value, int32_t position) const;

  // Messages.
  std::string NodeLabel(NodeId node) const;
  std::string Describe(const ValueSource& source) const;
  absl::Status Error(absl::StatusCode code, absl::string_view message) const;

  // Access to the indexed body.
  google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes() const;
  int graph_output_count() const;
  const std::string& graph_output_name(int position) const;
  int input_count(NodeId node) const { return input_begin_[node + 1] - input_begin_[node]; }
  int output_count(NodeId node) const { return output_begin_[node + 1] - output_begin_[node]; }

  onnx::GraphProto* graph_;
  onnx::FunctionProto* function_;
  GraphIndex* parent_;
  NodeId owner_;
  int depth_;
  std::string root_path_;          // path of a root graph
  std::string owner_attribute_;    // attribute of owner_ holding this graph
  int owner_graph_position_ = -1;  // position in a GRAPHS attribute, else -1
  bool reports_to_parent_ = false;
  NamePool* names_;
  std::unique_ptr<NamePool> owned_names_;
  std::unique_ptr<NameArena> arena_;

  // Values by name (a set of ids hashed by their names: 4 bytes a slot),
  // and what defines and uses each.
  struct ValueNameHash {
    using is_transparent = void;
    const std::vector<ValueRecord>* values;
    size_t operator()(absl::string_view name) const { return absl::HashOf(name); }
    size_t operator()(ValueId id) const { return absl::HashOf((*values)[id].name); }
  };
  struct ValueNameEq {
    using is_transparent = void;
    const std::vector<ValueRecord>* values;
    absl::string_view NameOf(absl::string_view name) const { return name; }
    absl::string_view NameOf(ValueId id) const { return (*values)[id].name; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return NameOf(a) == NameOf(b);
    }
  };
  std::vector<ValueRecord> values_;
  absl::flat_hash_set<ValueId, ValueNameHash, ValueNameEq> value_ids_;

  // Per node id.
  std::vector<uint8_t> node_flags_;
  std::vector<int32_t> node_op_;
  std::vector<int32_t> input_begin_{0};   // node n's inputs: [begin[n], begin[n+1])
  std::vector<ValueId> input_values_;
  std::vector<int32_t> input_use_positions_;
  std::vector<int32_t> output_begin_{0};  // node n's outputs: [begin[n], begin[n+1])
  std::vector<ValueId> output_values_;
  std::vector<int32_t> graph_output_use_positions_;
  int live_count_ = 0;

  // Nodes by operator: op id -> node ids, increasing; dead ids are skipped
  // on reading and dropped at Commit.
  absl::flat_hash_map<OpKey, int32_t, OpKeyHash, OpKeyEq> op_ids_;
  std::vector<std::vector<NodeId>> op_nodes_;

  // Subgraph indexes by node, and the names each node's subgraphs use here.
  std::map<NodeId, std::vector<std::unique_ptr<GraphIndex>>> subgraphs_;
  absl::flat_hash_map<NodeId, std::map<ValueId, SubgraphUse>> subgraph_uses_;

  // LiveNodes() order: ids below committed_count_ in id order, each preceded
  // by the nodes inserted before it and followed by those inserted after it
  // (each of those likewise), then those inserted at the end (anchor
  // kNoNode). Dead nodes keep their place as anchors. Costs nothing until a
  // node is inserted.
  NodeId committed_count_ = 0;
  absl::flat_hash_map<NodeId, std::vector<NodeId>> inserted_before_;
  absl::flat_hash_map<NodeId, std::vector<NodeId>> inserted_after_;
  bool order_may_change_ = false;
  // See set_edit_log.
  std::vector<ValueId>* edit_log_ = nullptr;
  // See set_move_log.
  std::vector<std::pair<ValueId, ValueId>>* move_log_ = nullptr;
  void LogNode(NodeId node);
  void LogValue(ValueId value) {
    if (edit_log_ != nullptr && value != kNoValue) edit_log_->push_back(value);
  }
};

// The indexes of every graph of a model: the main graph and its subgraphs,
// training graphs, and functions, sharing one pool of fresh names. A
// training algorithm graph looks names up in the main graph (they run
// together) but does not count as their user there.
class ModelIndex {
 public:
  // Indexes every graph of `model` for reading and editing. Errors name the
  // graph path at fault. `model` must outlive the index.
  static absl::StatusOr<std::unique_ptr<ModelIndex>> Build(onnx::ModelProto* model);
  // Same, for reading only.
  static absl::StatusOr<std::unique_ptr<const ModelIndex>> Build(const onnx::ModelProto& model);

  ModelIndex(const ModelIndex&) = delete;
  ModelIndex& operator=(const ModelIndex&) = delete;
  ~ModelIndex();

  // The main graph's index; null when the model has no graph.
  GraphIndex* main_graph() { return main_.get(); }
  // Same, read-only.
  const GraphIndex* main_graph() const { return main_.get(); }
  // The index of model.functions(i).
  GraphIndex* function(int i) { return functions_[i].get(); }
  // Same, read-only.
  const GraphIndex* function(int i) const { return functions_[i].get(); }
  // Every graph: main graph and subgraphs, training graphs (initialization
  // then algorithm) and their subgraphs, functions and their subgraphs;
  // parents before children.
  std::vector<GraphIndex*> Graphs();
  // Same, read-only.
  std::vector<const GraphIndex*> Graphs() const;
  // The graph at `path` (as GraphIndex::path() spells it), or null.
  const GraphIndex* FindGraph(absl::string_view path) const;
  // A name used nowhere in the model; see GraphIndex::FreshName.
  std::string FreshName(absl::string_view prefix);
  // Commits every graph with pending edits (see GraphIndex::Commit). On
  // failure, graphs committed before the one named stay committed.
  absl::Status Commit();

 private:
  ModelIndex();
  static absl::StatusOr<std::unique_ptr<ModelIndex>> BuildMutable(onnx::ModelProto* model);

  std::unique_ptr<NamePool> names_;
  std::unique_ptr<GraphIndex> main_;
  std::vector<std::unique_ptr<GraphIndex>> training_;  // null where a graph is absent
  std::vector<std::unique_ptr<GraphIndex>> functions_;
};

// Hands out names unique across a whole model (every graph, subgraph and
// function), without indexing it: for code that adds names but needs no
// index. Names are "<prefix>__<n>", as GraphIndex::FreshName gives them;
// use one source of fresh names per model.
class NameGenerator {
 public:
  // Collects the names already used in `model` (linear, iterative).
  explicit NameGenerator(const onnx::ModelProto& model);
  ~NameGenerator();
  NameGenerator(const NameGenerator&) = delete;
  NameGenerator& operator=(const NameGenerator&) = delete;

  // A name "<prefix>__<n>" not used anywhere before; reserved. O(1) amortised.
  std::string FreshName(absl::string_view prefix);
  // Calls `observer` with the prefix of every FreshName from now on (null:
  // none).
  void Observe(std::function<void(absl::string_view prefix)> observer) {
    observer_ = std::move(observer);
  }
  // Marks `name` as used.
  void Reserve(absl::string_view name);

 private:
  std::unique_ptr<NamePool> pool_;
  std::function<void(absl::string_view)> observer_;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_H_
