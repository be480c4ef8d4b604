#ifndef ONNX_CONVERT_CONVERTER_STEP_RUNNER_H_
#define ONNX_CONVERT_CONVERTER_STEP_RUNNER_H_

// Internal to the converter: one opset step over the nodes an ir::OpIndex
// holds (RunStep), what it works with (StepContext), and how its edits are
// applied (ApplyStep) and reported (AddStep). ConvertModel runs the steps
// over a whole model; ConvertBytes over windows of a large graph's nodes.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "adapters/adapter_helpers.h"
#include "converter/constant_table.h"
#include "converter/converter.h"
#include "converter/incremental_validation.h"
#include "converter/step_tables.h"
#include "converter/step_touches.h"
#include "ir/graph_index.h"
#include "ir/node_edits.h"
#include "ir/op_index.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

// Nodes of one op of the main graph the index does not hold (see
// StepContext::unindexed_nodes).
struct UnindexedNodes {
  int64_t count = 0;
  // Whether the first of them comes before the first node of the op within
  // a subgraph, in the order the index holds nodes: the main graph's bump
  // is then listed first.
  bool before_subgraphs = true;
};

// What one step works with.
struct StepContext {
  ir::OpIndex& index;
  const TypeTable& types;
  NameGenerator& names;
  // The step's edits, applied when it ends, and what it touched.
  ir::NodeEdits& edits;
  StepTouches& touches;
  ConstantTable& constants;
  AddedConstants& added;
  absl::string_view domain;  // canonical: "" for ai.onnx
  int64_t from;
  int64_t to;
  bool dry_run;
  bool expand;
  bool allow_casts;
  const std::function<bool()>& should_stop;
  // Whether the graphs hold all their nodes (false for the windows of a
  // large model): else a rewrite that asks whether a value is used fails
  // (StepScope::Unanswered), and the model is converted whole.
  bool whole_graphs = true;
  int64_t polled = 0;  // nodes seen since the last poll of should_stop
  // The step's rank in the conversion, from 0.
  int64_t step_rank = 0;
  // Where the work RunStep is doing comes in a whole conversion: step_rank
  // times kOpRanks plus the rank of the op it is converting among those
  // that change at the step.
  int64_t order = 0;
  // The node's fields as read from the model while it is unchanged (a
  // window's node no step touched yet), else empty; unset: always empty.
  // Spares RunStep writing the node out to keep it as it was.
  std::function<absl::string_view(const onnx::NodeProto&)> node_as_read = nullptr;
  // Whether the step's report already holds kRestructuredTexts texts of
  // the op of this rank (among those that change at the step) from earlier
  // work, so that RunStep keeps no more of its nodes' texts (unset: none).
  std::function<bool(int64_t op_rank)> texts_full = nullptr;
  // The main graph's nodes of ai.onnx op `op` the index does not hold
  // because no step but rebinds them (a window's unparsed nodes): counted
  // among the step's bumps with the main graph's (unset: none).
  std::function<UnindexedNodes(absl::string_view op)> unindexed_nodes = nullptr;
};

// Whether ai.onnx op `op` is valid at opset `from` and the step to `to`
// leaves its nodes as they are: the same version, or one RunStep only
// counts among the bumps (rebinds every node, never looks at one).
bool StepOnlyRebinds(absl::string_view op, int64_t from, int64_t to);

// The path OpIndex gives the main graph's nodes.
inline constexpr absl::string_view kMainGraphPath = "main";

// How many ops a step orders its work by at most.
inline constexpr int64_t kOpRanks = 4096;

// How many nodes a step converts between polls of should_stop.
constexpr int64_t kStopPollNodes = 256;
// The error of a conversion stopped at a step.
absl::Status Stopped(absl::string_view domain, int64_t from, int64_t to);

// Whether `change`, of a node of `op` in `graph`, is exactly what `kept`
// records (so that `kept` lists the node among those changed alike).
bool SameChange(const NodeChange& kept, const NodeChange& change, absl::string_view graph,
                absl::string_view op);

// Runs one step: every node whose op binds to another version at the
// step's target is rebound or rewritten (edits applied by the caller).
absl::StatusOr<StepReport> RunStep(StepContext& step);

// Applies the edits of `step` to the node lists and `index`, and brings the
// constants of `main` up to date; returns what the step changed.
StepChanges ApplyStep(const StepReport& step, StepTouches& touches, ir::NodeEdits& edits,
                      ir::OpIndex& index, ir::Retired& retired, ConstantTable& constants,
                      const onnx::GraphProto* main);

// Adds `step` to `report`, counting the nodes it converted (or, in dry
// runs, refused).
void AddStep(StepReport step, ConversionReport& report);

// Whether a step may have changed what the constant table knows beyond the
// initializers it added: Constant nodes changed, inserted or retyped, or a
// change outside what the step can list node by node.
bool ChangesConstants(const StepReport& step, const StepChanges& changes);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_RUNNER_H_
