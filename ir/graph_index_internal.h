#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_INTERNAL_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_INTERNAL_H_

// Internal to ir/graph_index*.cc and ir/model_index.cc: the node flags and
// helpers the pieces of GraphIndex share, and the pool of names in use that
// graph and model indexes draw fresh names from.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/op_key.h"
#include "ir/graph_index.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {
namespace graph_index_internal {

// Bits of GraphIndex::node_flags_:

// The node is in the graph (not removed).
inline constexpr uint8_t kLive = 1;
// The node holds subgraph attributes.
inline constexpr uint8_t kHasSubgraphs = 2;
// The node is a key of inserted_before_.
inline constexpr uint8_t kHasInsertionsBefore = 4;
// The node is a key of inserted_after_.
inline constexpr uint8_t kHasInsertionsAfter = 8;
// Either of the two above.
inline constexpr uint8_t kHasInsertions = kHasInsertionsBefore | kHasInsertionsAfter;

// Capacity for the per-node arrays of `nodes` nodes, leaving room for the
// nodes of later edits: reserved pages cost nothing until used, while
// growing a full vector copies it.
inline size_t RoomFor(size_t nodes) { return nodes + nodes / 8 + 16; }

// Fresh names are "<prefix>__<n>".
inline constexpr absl::string_view kFreshSeparator = "__";

// True for names of the form "<anything>__<digits>", the only ones a fresh
// name can collide with.
inline bool EndsInNumber(absl::string_view name) {
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(name[name.size() - 1 - digits])) ++digits;
  return digits > 0 && absl::EndsWith(name.substr(0, name.size() - digits), kFreshSeparator);
}

// The graphs of `graphs`, editable: what the non-const lookups of GraphIndex
// and ModelIndex give, from their const lookups over graphs they own.
inline std::vector<GraphIndex*> Editable(const std::vector<const GraphIndex*>& graphs) {
  std::vector<GraphIndex*> editable;
  editable.reserve(graphs.size());
  for (const GraphIndex* graph : graphs) editable.push_back(const_cast<GraphIndex*>(graph));
  return editable;
}

}  // namespace graph_index_internal

// The names in use across the graphs of a model, collected on the first
// request for a fresh name and kept up to date by edits from then on. Only
// names ending in "__<digits>" are kept: no other name can equal a fresh one.
class NamePool {
 public:
  // Adds a graph tree whose names count as used.
  void AddRoot(const GraphIndex* root) {
    if (root != nullptr) roots_.push_back(root);
  }
  // Adds a model whose names count as used.
  void AddModel(const onnx::ModelProto* model) { models_.push_back(model); }
  // Records `name` as used (once the names are collected). (Looked up
  // first: a name noted again, as a shared constant's at each use, is not
  // copied.)
  void Note(absl::string_view name) {
    if (collected_ && graph_index_internal::EndsInNumber(name) && !taken_.contains(name)) {
      taken_.emplace(name);
    }
  }
  // A name "<prefix>__<n>" not used yet, reserved.
  std::string Fresh(absl::string_view prefix) {
    Collect();
    int64_t& next = next_suffix_.try_emplace(prefix, 0).first->second;
    while (true) {
      std::string candidate = absl::StrCat(prefix, graph_index_internal::kFreshSeparator, next++);
      if (taken_.insert(candidate).second) return candidate;
    }
  }

  // Collects the names in use, once.
  void Collect();

 private:
  std::vector<const GraphIndex*> roots_;
  std::vector<const onnx::ModelProto*> models_;
  bool collected_ = false;
  absl::flat_hash_set<std::string> taken_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_INTERNAL_H_
