#include "converter/name_walk.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/op_key.h"
#include "base/radix_sort.h"
#include "base/status_macros.h"
#include "converter/bytes_behind.h"
#include "converter/side_by_side.h"
#include "converter/wire_scan.h"
#include "ir/wire.h"

namespace onnxconvert::converter {
namespace {

absl::Status Refused(absl::string_view why) { return absl::UnimplementedError(why); }

// Reserves every name the nodes use; the fingerprint of every value they
// define (an error where one is a graph input or initializer).
absl::StatusOr<std::vector<uint64_t>> ReserveNames(const WalkedGraph& graph,
                                                   NameGenerator& names) {
  std::vector<uint64_t> fingerprints;
  fingerprints.reserve(graph.node_count);
  NodeNames node;
  wire::FieldReader reader(graph.payload);
  wire::Field field;
  bool found;
  BytesBehind behind(graph.release, graph.payload.data());
  while (true) {
    OC_RETURN_IF_ERROR(reader.Next(field, found));
    if (!found) break;
    behind.Forwards(field.whole.data());
    if (field.number != kGraphNode || field.wire_type != wire::kLengthDelimited) continue;
    if (!ScanNode(field.payload, node, /*all=*/true).ok()) return Refused("a node does not parse");
    names.Reserve(node.name);
    for (absl::string_view name : node.inner_names) names.Reserve(name);
    for (absl::string_view output : node.outputs) {
      if (output.empty()) continue;
      names.Reserve(output);
      fingerprints.push_back(wire::Fingerprint(output));
      if (graph.graph_level->contains(output)) return Refused("a value is defined twice");
    }
    for (absl::string_view input : node.inputs) names.Reserve(input);
  }
  return fingerprints;
}

// Reserves every name the nodes use; an error where a value is defined
// twice.
absl::Status CheckNamesOnce(const WalkedGraph& graph, NameGenerator& names) {
  OC_ASSIGN_OR_RETURN(std::vector<uint64_t> fingerprints, ReserveNames(graph, names));
  RadixSort(fingerprints);
  if (std::adjacent_find(fingerprints.begin(), fingerprints.end()) != fingerprints.end()) {
    return Refused("two values have one name (or names that hash alike)");
  }
  return absl::OkStatus();
}

// Whether a node of `domain` and `op_type` is of ai.onnx or calls one of
// the model's functions.
bool OfTakenDomain(const WalkedGraph& graph, absl::string_view domain,
                   absl::string_view op_type) {
  if (domain.empty() || domain == "ai.onnx") return true;
  return graph.functions != nullptr && !graph.functions->empty() &&
         graph.functions->contains(OpKey(domain, op_type));
}

// Why the windows cannot take `node` ("" when they can).
std::string Refusal(const WalkedGraph& graph, const NodeNames& node) {
  if (!OfTakenDomain(graph, node.domain, node.op_type)) {
    return absl::StrCat("a node of domain '", node.domain, "'");
  }
  if (!node.refusal.empty()) return node.refusal;
  for (const auto& [domain, op_type] : node.inner_other_ops) {
    if (!OfTakenDomain(graph, domain, op_type)) {
      return absl::StrCat("a node of domain '", domain, "' in a subgraph");
    }
  }
  return "";
}

// The last uses and unused outputs, from the last node to the first, into
// `uses`.
absl::Status WalkBackwards(const WalkedGraph& graph, std::vector<bool>& uses) {
  absl::flat_hash_set<absl::string_view> live(graph.outputs.begin(), graph.outputs.end());
  NodeNames node;
  wire::Field field;
  bool found;
  // The nodes of one checkpoint's stretch, read forwards, walked backwards.
  std::vector<absl::string_view> stretch;
  BytesBehind behind(graph.release, graph.payload.data() + graph.payload.size());
  for (auto checkpoint = graph.checkpoints.rbegin(); checkpoint != graph.checkpoints.rend();
       ++checkpoint) {
    stretch.clear();
    wire::FieldReader reader(graph.payload.substr(*checkpoint));
    while (stretch.size() < kCheckpointNodes) {
      OC_RETURN_IF_ERROR(reader.Next(field, found));
      if (!found) break;
      if (field.number == kGraphNode && field.wire_type == wire::kLengthDelimited) {
        stretch.push_back(field.payload);
      }
    }
    for (auto payload = stretch.rbegin(); payload != stretch.rend(); ++payload) {
      if (!ScanNode(*payload, node).ok()) return Refused("a node does not parse");
      if (std::string why = Refusal(graph, node); !why.empty()) return Refused(why);
      for (absl::string_view output : node.outputs) {
        uses.push_back(output.empty() || !live.erase(output));
      }
      for (auto input = node.inputs.rbegin(); input != node.inputs.rend(); ++input) {
        uses.push_back(!input->empty() && live.insert(*input).second);
      }
    }
    behind.Backwards(graph.payload.data() + *checkpoint);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<bool>> WalkNames(const WalkedGraph& graph, NameGenerator& names) {
  absl::Status forwards, backwards;
  std::vector<bool> uses;
  // Room for the bits of most graphs (an input or two and an output per
  // node), taken here rather than grown by the second thread.
  uses.reserve(static_cast<size_t>(4 * graph.node_count));
  RunSideBySide([&] { backwards = WalkBackwards(graph, uses); },
                [&] { forwards = CheckNamesOnce(graph, names); },
                graph.node_count >= static_cast<int64_t>(kSideBySideNodes));
  OC_RETURN_IF_ERROR(forwards);
  OC_RETURN_IF_ERROR(backwards);
  return uses;
}

}  // namespace onnxconvert::converter
