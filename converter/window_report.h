#ifndef ONNX_CONVERT_CONVERTER_WINDOW_REPORT_H_
#define ONNX_CONVERT_CONVERTER_WINDOW_REPORT_H_

// A step's report gathered from the windows that convert a large graph
// (windowed.cc), ordered as a whole conversion orders it. Internal to the
// converter.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "converter/converter.h"

namespace onnxconvert::converter {

// The changed-node entries of one rank, in order: all but the last packed
// into bytes (a graph of many subgraphs has an entry or more per subgraph,
// and a NodeChange with its strings costs several times its text), the
// last whole but for the names of the nodes changed alike, which later
// windows' nodes may join. Names changed alike are coded against the name
// before them (what they share at the front and at the back is counted,
// not copied: "b124_relu" after "b123_relu" costs 4 bytes).
class PackedChanges {
 public:
  // Whether `change` is changed exactly as the last entry (SameChange).
  bool Joins(const NodeChange& change) const;
  // Adds `change`'s nodes to the last entry's (Joins is true).
  void Join(const NodeChange& change);
  // Appends `change` as an entry of its own.
  void Add(NodeChange change);
  // Appends the entries in order to `out` (the storage is freed).
  void TakeAll(std::vector<NodeChange>& out) &&;

 private:
  void AddAlike(absl::string_view name);
  void PackLast();

  std::string packed_;
  std::optional<NodeChange> last_;  // its `alike` empty: see below
  uint64_t last_alike_count_ = 0;
  std::string last_alike_;  // coded
  std::string previous_;    // the name the next one is coded against
};

// The version bumps of one rank, a record per graph in the order the graphs
// come; their graph paths and ops kept back to back in one string.
struct PackedBumps {
  struct Record {
    size_t graph_end;  // where the graph's path ends in `names`
    size_t op_end;     // where the op ends (it starts at graph_end)
    int from_version;
    int to_version;
    int nodes;
  };
  std::string names;
  std::vector<Record> records;
  // A graph path's fingerprint: the first record that may be its.
  absl::flat_hash_map<uint64_t, uint32_t> first_of;

  // Adds `bump`'s nodes to the record of its graph, or a record for it.
  void Add(const VersionBump& bump);
  // The bumps in order.
  std::vector<VersionBump> Take() &&;

 private:
  absl::string_view GraphOf(size_t i) const;
};

// One step's report, gathered window by window: entries by the rank of
// their op among those that change at the step, as a whole conversion
// orders them.
struct StepParts {
  StepReport report;
  absl::flat_hash_map<std::string, int> rank_of;
  std::map<int, PackedChanges> nodes;
  // Per rank, a bump per graph, in the order the graphs come.
  std::map<int, PackedBumps> bumps;
  // The entries with texts so far, per rank.
  absl::flat_hash_map<int, int> texts_of_rank;

  // Adds one window's report of the step.
  void Merge(StepReport& window);

  // Whether the op of `rank` has kRestructuredTexts entries with texts:
  // later windows' texts of it would be dropped.
  bool TextsFull(int64_t rank) const {
    auto it = texts_of_rank.find(static_cast<int>(rank));
    return it != texts_of_rank.end() && it->second >= kRestructuredTexts;
  }

  // The step's report, as a whole conversion orders it.
  StepReport Done() &&;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_WINDOW_REPORT_H_
