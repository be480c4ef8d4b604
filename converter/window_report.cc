#include "converter/window_report.h"

#include <algorithm>
#include <string>
#include <utility>

#include "converter/step_runner.h"

namespace onnxconvert::converter {

void StepParts::Merge(StepReport& window) {
  report.milliseconds += window.milliseconds;
  report.nodes_validated += window.nodes_validated;
  for (NodeChange& change : window.nodes) {
    int rank = rank_of[change.op];
    std::vector<NodeChange>& list = nodes[rank];
    if (!list.empty() && SameChange(list.back(), change, change.graph, change.op)) {
      list.back().alike.push_back(change.node);
      list.back().alike.Append(change.alike);
      continue;
    }
    // Done keeps the first texts of the step, in rank order: those of a
    // rank past that many go now (in a graph of many subgraphs, entries
    // are many).
    if (!change.before_text.empty() && ++texts_of_rank[rank] > kRestructuredTexts) {
      std::string().swap(change.before_text);
      std::string().swap(change.after_text);
    }
    list.push_back(std::move(change));
  }
  for (VersionBump& bump : window.bumps) {
    std::vector<VersionBump>& list = bumps[rank_of[bump.op]];
    auto same = std::find_if(list.begin(), list.end(), [&bump](const VersionBump& b) {
      return b.graph == bump.graph;
    });
    if (same == list.end()) {
      list.push_back(std::move(bump));
    } else {
      same->nodes += bump.nodes;
    }
  }
}

StepReport StepParts::Done() && {
  int texts = 0;  // each window kept its own; the step keeps the first
  for (auto& [rank, list] : nodes) {
    for (NodeChange& change : list) {
      if (!change.before_text.empty() && ++texts > kRestructuredTexts) {
        change.before_text.clear();
        change.after_text.clear();
      }
      report.nodes.push_back(std::move(change));
    }
  }
  for (auto& [rank, list] : bumps) {
    for (VersionBump& bump : list) report.bumps.push_back(std::move(bump));
  }
  report.validation = report.nodes.empty() && report.bumps.empty()
                          ? StepValidation::kUnchanged
                          : StepValidation::kIncremental;
  if (full) {
    report.validation = StepValidation::kOk;
    report.nodes_validated = nodes_after;
  }
  return std::move(report);
}

}  // namespace onnxconvert::converter
