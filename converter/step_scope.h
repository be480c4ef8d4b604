#ifndef ONNX_CONVERT_CONVERTER_STEP_SCOPE_H_
#define ONNX_CONVERT_CONVERTER_STEP_SCOPE_H_

// Internal to the converter: what an adapter rewriting one node during an
// opset step knows around it (the step's types and constants), and where
// its fresh names and constants come from. Its edits go through an
// ir::NodeRewriter over the step's ir::NodeEdits.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/step_runner.h"
#include "ir/node_rewriter.h"
#include "ir/op_index.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// The scope of `site`'s node during `step`: types, constants and fresh
// names come from the step's tables, constants it adds are shared with
// those of equal value. `step` must outlive it.
class StepScope final : public ir::RewriteScope {
 public:
  StepScope(StepContext& step, const ir::NodeSite& site) : step_(step), site_(site) {}

  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;

  const onnx::TypeProto* TypeOf(absl::string_view value) const override;
  const onnx::TensorProto* ConstantOf(absl::string_view name) const override;
  // Nullopt in a function body, and in a window of a large graph (which
  // Unanswered then reports).
  std::optional<bool> ValueUsed(absl::string_view value) const override;
  // From the step's inference of the graphs (nullopt in a function body, and
  // in a window of a large graph, which Unanswered then reports).
  std::optional<std::vector<int64_t>> StaticInts(absl::string_view name) const override;
  std::string FreshName(absl::string_view hint) override;
  // Shares the constant with those of equal value the step added to the
  // graph; FailedPrecondition in a function body.
  absl::StatusOr<std::string> AddConstant(onnx::TensorProto&& value) override;
  // Adds the constant to the step's graph as it is named (not shared);
  // FailedPrecondition in a function body.
  absl::Status AddNamedConstant(onnx::TensorProto value) override;

  // Unimplemented, naming the value, when ValueUsed was asked
  // about a value that only the whole graph could tell about (the step runs
  // over a window of a large graph: the model must then be converted
  // whole); OK otherwise.
  absl::Status Unanswered() const;

 private:
  // The graph, the anchor's or an enclosing one, whose types know `value`,
  // and its type there; nulls when none does.
  struct Typed {
    const onnx::GraphProto* graph = nullptr;
    const onnx::TypeProto* type = nullptr;
  };
  Typed TypedIn(absl::string_view value) const;

  StepContext& step_;
  const ir::NodeSite site_;
  // The first value ValueUsed could not tell about for want of the whole
  // graph, or empty.
  mutable std::optional<std::string> unanswered_;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_SCOPE_H_
