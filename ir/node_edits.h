#ifndef ONNX_CONVERT_IR_NODE_EDITS_H_
#define ONNX_CONVERT_IR_NODE_EDITS_H_

// A batch of structural edits to the node lists of a model: nodes inserted
// before and after anchor nodes, nodes removed or given another op, uses
// of a value moved to another, subgraphs built, output names retired. What every ir::Rewriter edit goes
// through (ir/node_rewriter.h). The batch is applied at once (Apply): each
// edited node list is rebuilt in one linear pass, every node keeping its
// address, and an OpIndex is brought up to date. A GraphIndex takes the
// batch of one rewrite instead (GraphIndexRewriter::Finish).
//
// Until Apply, the node lists are as they were; the batch can be read back
// (Around, EditedAround, ...) to see what it will make of a node.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/op_index.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir {

// What edits took out of the model that may still be viewed (value names of
// detached outputs, removed nodes), kept as long as the caller needs.
struct Retired {
  std::vector<std::unique_ptr<std::string>> names;
  std::vector<std::unique_ptr<onnx::NodeProto>> nodes;
};

// One batch of edits; see the file comment.
class NodeEdits {
 public:
  NodeEdits() = default;
  NodeEdits(const NodeEdits&) = delete;
  NodeEdits& operator=(const NodeEdits&) = delete;
  // Frees the nodes inserted by a batch never applied (an arena frees its
  // own).
  ~NodeEdits();

  // ---- Edits ----

  // Places `node` just before `anchor`'s node, after the nodes inserted
  // before it so far; returns the node as stored (on the list's arena, if
  // any), which may be edited further until Apply.
  onnx::NodeProto* InsertBefore(const NodeSite& anchor, onnx::NodeProto node) {
    return Insert(anchor, std::move(node), edits_[anchor.list].before[anchor.node]);
  }
  // Places `node` just after `anchor`'s node, after the nodes inserted after
  // it so far; as InsertBefore.
  onnx::NodeProto* InsertAfter(const NodeSite& anchor, onnx::NodeProto node) {
    return Insert(anchor, std::move(node), edits_[anchor.list].after[anchor.node]);
  }
  // Drops `anchor`'s node; the nodes inserted around it stay.
  void Remove(const NodeSite& anchor);
  // Makes every use of `from` in `site`'s graph read `to` at Apply: node
  // inputs (nodes inserted by the batch included), and the uses in graphs
  // nested in it that refer to this graph's `from`, their outputs included;
  // the graph's own outputs keep their names. See Rewriter::ReplaceAllUses.
  void RenameUses(const NodeSite& site, std::string from, std::string to);
  // Records that `site`'s node has a new op type; `old_key` was its OpKeyOf.
  void Retyped(const NodeSite& site, const std::string& old_key);
  // Records `graph`, a subgraph built inside `parent` around existing nodes,
  // at `path`, so that Apply indexes its nodes.
  void TrackSubgraph(onnx::GraphProto& graph, std::string path, const onnx::GraphProto* parent);
  // Keeps `name`, a value name taken out of a node, alive until Apply hands
  // it to Retired: views of it (inferred types) stay valid.
  void Retire(std::string* name);
  // Adds `tensor` to `graph`'s initializers now; returns it as stored.
  const onnx::TensorProto* AddInitializer(onnx::GraphProto& graph, onnx::TensorProto tensor);

  // ---- The batch read back ----

  // How many edits (insertions, removals, retypings, subgraphs,
  // initializers, retired names) the batch holds so far.
  int64_t edits_made() const { return edits_made_; }
  // The nodes that will stand where `site`'s node stands: those inserted
  // before it, the node itself unless removed, those inserted after it.
  std::vector<const onnx::NodeProto*> Around(const NodeSite& site) const;
  // Appends Around(site) to `nodes`; returns how many of the two sides
  // (before, after) have nodes inserted.
  int AppendAround(const NodeSite& site, std::vector<const onnx::NodeProto*>& nodes) const;
  // Whether nodes are inserted around `site`'s node or it is removed.
  bool EditedAround(const NodeSite& site) const;
  // Whether `site`'s node is removed.
  bool IsRemoved(const NodeSite& site) const;
  // How many sides of anchors (before, after) have nodes inserted.
  size_t sides_inserted() const;
  // Every node removed, in the order removed.
  const std::vector<const onnx::NodeProto*>& Removed() const { return removed_; }
  // Whether some node was given another op type.
  bool retyped() const { return !retyped_.empty(); }
  // Whether some subgraph was built.
  bool built_subgraphs() const { return !subgraphs_.empty(); }
  // Moves the nodes inserted before (or, when `after`, after) `anchor`'s
  // node out of the batch.
  std::vector<onnx::NodeProto> TakeInserted(const NodeSite& anchor, bool after);
  // Moves the renames (from, to) recorded by RenameUses out of the batch,
  // in the order recorded.
  std::vector<std::pair<std::string, std::string>> TakeRenames();

  // ---- Applying ----

  // Rebuilds the edited node lists and brings `index` up to date; removed
  // nodes (off an arena) and retired names go to `retired`. The batch is
  // then empty, ready for more edits.
  void Apply(OpIndex& index, Retired& retired);

 private:
  using Slots = absl::flat_hash_map<const onnx::NodeProto*, std::vector<onnx::NodeProto*>>;
  // The edits of one node list.
  struct ListEdits {
    Slots before;
    Slots after;
    absl::flat_hash_set<const onnx::NodeProto*> removed;
  };
  // A RenameUses to make at Apply.
  struct Rename {
    NodeList* list;
    std::string from;
    std::string to;
  };
  // A subgraph built, to index at Apply.
  struct Subgraph {
    onnx::GraphProto* graph;
    std::string path;
    const onnx::GraphProto* parent;
  };

  onnx::NodeProto* Insert(const NodeSite& anchor, onnx::NodeProto node,
                          std::vector<onnx::NodeProto*>& slot);
  // The edits of `site`'s list, or null.
  const ListEdits* EditsOf(const NodeSite& site) const;
  // Rebuilds `list` with `edits`, every node keeping its address; removed
  // nodes go to `retired` (on an arena, the arena keeps them).
  static void Rebuild(NodeList& list, ListEdits& edits, Retired& retired);
  // Makes the inputs of `nodes` (and the uses in their subgraphs) named
  // `from` read `to`; replaced names go to `retired`.
  static void RenameIn(NodeList& nodes, const std::string& from, const std::string& to,
                       Retired& retired);
  // Same in `graph`, a subgraph, unless it defines `from` itself; its
  // outputs included.
  static void RenameInSubgraph(onnx::GraphProto& graph, const std::string& from,
                               const std::string& to, Retired& retired);

  absl::flat_hash_map<NodeList*, ListEdits> edits_;
  std::map<std::string, absl::flat_hash_set<const onnx::NodeProto*>> forgotten_;
  std::vector<const onnx::NodeProto*> removed_;  // in the order removed
  std::vector<std::string> removed_keys_;        // OpKeyOf each, when removed
  std::vector<Rename> renames_;
  std::vector<NodeSite> added_;    // inserted nodes
  std::vector<NodeSite> retyped_;  // nodes whose op type changed
  std::vector<Subgraph> subgraphs_;
  std::vector<std::unique_ptr<std::string>> retired_;
  int64_t edits_made_ = 0;
};

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_NODE_EDITS_H_
