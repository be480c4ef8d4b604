#ifndef ONNX_CONVERT_IR_REWRITER_H_
#define ONNX_CONVERT_IR_REWRITER_H_

// The one way a graph is changed: what a version adapter, a rewrite pass and
// a rewrite rule see of the graph around the node they rewrite (the
// anchor), and the edits they make there.
//
// A Rewriter is bound to one anchor node of one graph (the main graph, a
// subgraph, or a function body). Edits are batched until the driver ends
// its step or rewrite; what a method returns is valid at once (an inserted node may be edited further through the
// pointer returned), and inserted nodes keep their order relative to the
// anchor. Every method is always callable: where an implementation cannot
// do something (a function body holds no constants; a window of a large
// graph cannot tell whether a value is used) the method says so in its
// result, and the caller fails or takes another way.
//
// One implementation, NodeRewriter (ir/node_rewriter.h), over a batch of
// node edits (ir/node_edits.h): the converter binds it to a step's batch
// and applies the batch when the step ends (converter/step_scope.h); a
// rewrite pass or rule on a GraphIndex gets it from a GraphIndexRewriter,
// which hands the batch to the index at the rewrite's end
// (ir/graph_index_rewriter.h). Passes and rules change a GraphIndex only
// this way; its own edit methods are internal to ir/.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir {

class Rewriter {
 public:
  virtual ~Rewriter() = default;

  // ---- What is known around the anchor ----

  // The node being rewritten. Its attributes, inputs and op may be edited
  // in place; its outputs are renamed only through DetachOutput.
  virtual onnx::NodeProto& anchor() = 0;
  // The type of `value` as seen from the anchor's graph (its own, or an
  // enclosing graph's), or null when unknown.
  virtual const onnx::TypeProto* TypeOf(absl::string_view value) const = 0;
  // The value of `name` when it is a constant (an initializer not
  // overridden by an input) of the anchor's graph or an enclosing one, or
  // null.
  virtual const onnx::TensorProto* ConstantOf(absl::string_view name) const = 0;
  // Whether a node of the anchor's graph (or of a graph nested in it) reads
  // `value`, or the graph gives it as an output; nullopt when it cannot be
  // told (a function body, a window of a large graph).
  virtual std::optional<bool> ValueUsed(absl::string_view value) const = 0;
  // The int64 elements of `name` when inference knows them all though no
  // constant holds them: a shape computation on the graph's static dims
  // (Shape of a value of known dims, then Gather, Mul, Concat, ...);
  // nullopt otherwise, and where it cannot be told (a function body, a
  // window of a large graph).
  virtual std::optional<std::vector<int64_t>> StaticInts(
      [[maybe_unused]] absl::string_view name) const {
    return std::nullopt;
  }

  // ---- Edits ----

  // A value or node name used nowhere in the model, derived from `hint`,
  // reserved from now on.
  virtual std::string FreshName(absl::string_view hint) = 0;
  // Adds `value` as a constant of the anchor's graph under a fresh name
  // derived from its name, and returns that name; FailedPrecondition where
  // constants cannot be added (a function body). `value` is moved from
  // only when it is added (not when it is an equal constant's to share).
  virtual absl::StatusOr<std::string> AddConstant(onnx::TensorProto&& value) = 0;
  // Places `node` just before the anchor (it may compute the anchor's
  // inputs), after the nodes inserted before it so far; returns the node as
  // stored.
  virtual onnx::NodeProto* InsertBefore(onnx::NodeProto node) = 0;
  // Places `node` just after the anchor (it may consume the anchor's
  // outputs), after the nodes inserted after it so far; returns the node as
  // stored.
  virtual onnx::NodeProto* InsertAfter(onnx::NodeProto node) = 0;
  // Renames output `i` of the anchor to a fresh name and returns it, so that
  // a node inserted after can produce the original name.
  virtual std::string DetachOutput(int i) = 0;
  // Removes the anchor from its graph; the nodes inserted around it stay.
  // What it produced must then come from inserted nodes or be unused.
  virtual void RemoveAnchor() = 0;
  // Removes `node`, another node of the anchor's graph (one matched with
  // it), when the rewrite ends; what it produced must then come from
  // inserted nodes or be unused.
  virtual void EraseNode(const onnx::NodeProto& node) = 0;
  // When the rewrite ends, makes every use of `value` in the anchor's graph
  // read `replacement` instead: node inputs, and the uses in graphs nested
  // in it that refer to this graph's `value` (their outputs included). The
  // graph's own outputs keep their names and still read `value`: the caller
  // does not replace a graph output's uses, or keeps it produced (a node
  // inserted under its name, an Identity say). MLIR's replaceAllUsesWith.
  virtual void ReplaceAllUses(absl::string_view value, absl::string_view replacement) = 0;
  // Removes the anchor and makes `values[i]` a constant of its graph under
  // the name of the anchor's output i (outputs left empty are skipped; the
  // tensors' own names are ignored). InvalidArgument when the counts
  // differ; FailedPrecondition where constants cannot be added (a function
  // body).
  virtual absl::Status ReplaceByConstants(std::vector<onnx::TensorProto> values) = 0;
  // Takes note of `graph`, a subgraph of the anchor the caller built around
  // existing nodes, so that its nodes are known as the graph's are.
  virtual void TrackSubgraph(onnx::GraphProto& graph) = 0;
};

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_REWRITER_H_
