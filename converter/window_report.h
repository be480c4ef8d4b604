#ifndef ONNX_CONVERT_CONVERTER_WINDOW_REPORT_H_
#define ONNX_CONVERT_CONVERTER_WINDOW_REPORT_H_

// A step's report gathered from the windows that convert a large graph
// (windowed.cc), ordered as a whole conversion orders it. Internal to the
// converter.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "converter/converter.h"

namespace onnxconvert::converter {

// One step's report, gathered window by window: entries by the rank of
// their op among those that change at the step, as a whole conversion
// orders them.
struct StepParts {
  StepReport report;
  absl::flat_hash_map<std::string, int> rank_of;
  std::map<int, std::vector<NodeChange>> nodes;
  // Per rank, a bump per graph, in the order the graphs come.
  std::map<int, std::vector<VersionBump>> bumps;
  // Whether some window was validated whole (as a whole conversion then
  // validates the whole model), and the nodes of every window after the
  // step, subgraphs' included.
  bool full = false;
  int64_t nodes_after = 0;
  // The entries with texts so far, per rank.
  absl::flat_hash_map<int, int> texts_of_rank;

  // Adds one window's report of the step.
  void Merge(StepReport& window);

  // The step's report, as a whole conversion orders it.
  StepReport Done() &&;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_WINDOW_REPORT_H_
