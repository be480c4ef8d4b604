#ifndef ONNX_CONVERT_CONVERTER_NAME_WALK_H_
#define ONNX_CONVERT_CONVERTER_NAME_WALK_H_

// The walk over a large graph's serialized nodes that comes before its
// windows (windowed.cc): every name reserved, a value defined twice found,
// and where each value is used for the last time. Internal to the
// converter.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/graph_index.h"

namespace onnxconvert::converter {

// How many nodes apart the walk from the last node finds its way back in.
inline constexpr size_t kCheckpointNodes = 256;

// A graph as the walk reads it.
struct WalkedGraph {
  // The GraphProto's serialized fields.
  absl::string_view payload;
  // Where every kCheckpointNodes-th node field starts in `payload`, from
  // the first node on.
  absl::Span<const uint32_t> checkpoints;
  int64_t node_count = 0;
  // The names of its inputs and initializers, and of its outputs.
  const absl::flat_hash_set<std::string>* graph_level = nullptr;
  std::vector<absl::string_view> outputs;
  // OpKey(domain, name) of the model's functions: their calls are nodes
  // like any other; a node of another domain is refused.
  const absl::flat_hash_set<std::string>* functions = nullptr;
  // What each walk leaves behind goes here (WindowOptions::release), if set.
  const std::function<void(absl::string_view)>* release = nullptr;
};

// Walks the nodes of `graph` from the first, reserving in `names` every
// name they hold (subgraphs' too) and looking for a value defined twice,
// and, on a second thread for large graphs, from the last to the first.
// Returns a bit per name, to be read from the back (the first node's
// first): per node, a bit per input (whether the value is used for the
// last time there), then per output from the last (whether it is never
// used).
// Unimplemented, saying why, for what the windows cannot take: a value
// defined twice (or two names that hash alike), a node that does not parse,
// a node of a domain other than ai.onnx and the functions', a node whose
// subgraphs the windows refuse (NodeNames::refusal, or a node of another
// domain within them).
absl::StatusOr<std::vector<bool>> WalkNames(const WalkedGraph& graph, NameGenerator& names);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_NAME_WALK_H_
