#ifndef ONNX_CONVERT_IR_OP_INDEX_H_
#define ONNX_CONVERT_IR_OP_INDEX_H_

// Where the nodes of each operator are, across a model: the main graph, its
// subgraphs (with their paths and enclosing graphs) and function bodies.
// Cheap to build (one pass reading op types, no value names); kept up to
// date by NodeEdits (ir/node_edits.h). What the converter walks a step's
// nodes by; GraphIndex (ir/graph_index.h) is the index that also knows
// producers and consumers.

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/limits.h"
#include "base/op_key.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir {

// How many nodes ahead a walk over a large graph fetches.
inline constexpr int kIndexLookahead = 8;

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// A node of the model and where it is held.
struct NodeSite {
  onnx::NodeProto* node;
  onnx::GraphProto* graph;  // null inside functions
  NodeList* list;           // the node list that holds the node
  absl::string_view path;   // of the graph; OpIndex keeps the string
};

// Every node of the model's indexed domains by op type, collected once and
// kept up to date as NodeEdits insert, retype and remove nodes.
class OpIndex {
 public:
  // Indexes the nodes of `domains` (canonical names); the others are only
  // counted. The nodes of the model's function bodies too, unless not
  // `with_functions`. Only reads `model` while it is built.
  OpIndex(onnx::ModelProto& model, absl::flat_hash_set<std::string> domains,
          bool with_functions = true)
      : domains_(std::move(domains)) {
    if (model.has_graph()) AddGraph(*Mutable(model.graph()), "main", 0);
    if (!with_functions) return;
    for (const onnx::FunctionProto& function : model.functions()) {
      absl::string_view path =
          Intern(absl::StrCat("function '", function.domain(), ".", function.name(), "'"));
      for (const onnx::NodeProto& node : function.node()) {
        Add({Mutable(node), nullptr, Mutable(function.node()), path}, 0, true);
      }
    }
  }

  // The nodes of op `op` of `domain` (canonical), in the order indexed.
  absl::Span<const NodeSite> NodesOf(absl::string_view domain, absl::string_view op) const {
    auto it = by_op_.find(OpKey(domain, op));
    if (it == by_op_.end()) return {};
    return it->second;
  }
  // How many nodes of each op of the domains not indexed ("domain.op").
  const std::map<std::string, int>& others() const { return others_; }

  // Adds `site` (and, when `recurse`, the nodes of its subgraphs).
  void Add(const NodeSite& site, int depth, bool recurse) {
    onnx::NodeProto& node = *site.node;
    absl::string_view domain = CanonicalDomain(node.domain());
    if (domain != last_domain_) {
      last_domain_ = std::string(domain);
      last_indexed_ = domains_.contains(domain);
    }
    if (last_indexed_) {
      // (No op has an empty name: such a node stands for one kept
      // elsewhere, as a window's unparsed nodes are.)
      if (!node.op_type().empty()) SitesOf(domain, node.op_type()).push_back(site);
    } else {
      ++others_[absl::StrCat(domain.empty() ? "ai.onnx" : domain, ".", node.op_type())];
    }
    if (!recurse || depth >= kMaxGraphDepth) return;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.has_g() && attribute.graphs_size() == 0) continue;
      std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
      if (attribute.has_g()) {
        parents_[&attribute.g()] = site.graph;
        AddGraph(*Mutable(attribute.g()), absl::StrCat(site.path, "/", attribute.name(), owner),
                 depth + 1);
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        parents_[&attribute.graphs(i)] = site.graph;
        AddGraph(*Mutable(attribute.graphs(i)),
                 absl::StrCat(site.path, "/", attribute.name(), "[", i, "]", owner), depth + 1);
      }
    }
  }

  // The graph enclosing subgraph `graph`, or null (a top-level graph or a
  // function).
  const onnx::GraphProto* ParentOf(const onnx::GraphProto* graph) const {
    auto it = parents_.find(graph);
    return it == parents_.end() ? nullptr : it->second;
  }

  // Adds the nodes of `graph`, not those of its subgraphs; `parent`
  // encloses it.
  void AddShallow(onnx::GraphProto& graph, std::string path, const onnx::GraphProto* parent) {
    parents_[&graph] = parent;
    absl::string_view interned = Intern(std::move(path));
    for (onnx::NodeProto& node : *graph.mutable_node()) {
      Add({&node, &graph, graph.mutable_node(), interned}, 0, false);
    }
  }

  // Forgets `nodes`, listed under `key` (KeyOf their domain and op).
  void Forget(absl::string_view key, const absl::flat_hash_set<const onnx::NodeProto*>& nodes) {
    auto it = by_op_.find(key);
    if (it == by_op_.end()) return;
    std::erase_if(it->second, [&](const NodeSite& site) { return nodes.contains(site.node); });
  }

 private:
  // The mutable object behind `message`, reached without a mutable accessor
  // (which would write has-bits while other threads read the model).
  template <typename T>
  static T* Mutable(const T& message) {
    return const_cast<T*>(&message);
  }

  void AddGraph(onnx::GraphProto& graph, std::string path, int depth) {
    absl::string_view interned = Intern(std::move(path));
    const NodeList& nodes = graph.node();
    for (int i = 0; i < nodes.size(); ++i) {
      // Large graphs miss the cache on every node: fetch the nodes ahead,
      // then their op types.
      if (i + 2 * kIndexLookahead < nodes.size()) __builtin_prefetch(&nodes[i + 2 * kIndexLookahead]);
      if (i + kIndexLookahead < nodes.size()) {
        __builtin_prefetch(nodes[i + kIndexLookahead].op_type().data());
        __builtin_prefetch(&nodes[i + kIndexLookahead].attribute());
      }
      Add({Mutable(nodes[i]), &graph, Mutable(graph.node()), interned}, depth, true);
    }
  }

  // A view of `path` that lives as long as the index.
  absl::string_view Intern(std::string path) {
    paths_.push_back(std::move(path));
    return paths_.back();
  }

  std::deque<std::string> paths_;

  // The sites of op `op` of `domain`, found without building a key string.
  std::vector<NodeSite>& SitesOf(absl::string_view domain, absl::string_view op) {
    char buffer[96];
    std::string long_key;
    absl::string_view key = OpKeyIn(domain, op, absl::MakeSpan(buffer), long_key);
    auto it = by_op_.find(key);
    if (it == by_op_.end()) it = by_op_.emplace(std::string(key), std::vector<NodeSite>()).first;
    return it->second;
  }

  absl::flat_hash_set<std::string> domains_;
  // Whether the domain of the last node added was indexed: most nodes share
  // one domain.
  std::string last_domain_ = "\x01";
  bool last_indexed_ = false;
  absl::flat_hash_map<std::string, std::vector<NodeSite>> by_op_;
  std::map<std::string, int> others_;
  absl::flat_hash_map<const onnx::GraphProto*, const onnx::GraphProto*> parents_;
};

// The index key of `node` (domain and op type).
inline std::string OpKeyOf(const onnx::NodeProto& node) {
  return OpKey(CanonicalDomain(node.domain()), node.op_type());
}

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_OP_INDEX_H_
