#ifndef ONNX_CONVERT_CONVERTER_STEP_REWRITER_H_
#define ONNX_CONVERT_CONVERTER_STEP_REWRITER_H_

// Internal to the converter: the ir::Rewriter adapters edit one node through
// during an opset step, over the step's batched edits.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/op_index.h"
#include "converter/step_runner.h"
#include "ir/rewriter.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// The rewriter of `site`'s node during `step`: edits are batched in
// `step.edits` and applied when the step ends; types, constants and fresh
// names come from the step's tables. `step` and `site` must outlive it.
class StepRewriter final : public ir::Rewriter {
 public:
  StepRewriter(StepContext& step, const NodeSite& site) : step_(step), site_(site) {}

  StepRewriter(const StepRewriter&) = delete;
  StepRewriter& operator=(const StepRewriter&) = delete;

  onnx::NodeProto& anchor() override { return *site_.node; }
  const onnx::TypeProto* TypeOf(absl::string_view value) const override;
  const onnx::TensorProto* ConstantOf(absl::string_view name) const override;
  // Nullopt in a function body, and in a window of a large graph (which
  // Unanswered then reports).
  std::optional<bool> ValueUsed(absl::string_view value) const override;

  std::string FreshName(absl::string_view hint) override;
  // Shares the constant with those of equal value the step added to the
  // graph; FailedPrecondition in a function body.
  absl::StatusOr<std::string> AddConstant(onnx::TensorProto value) override;
  onnx::NodeProto* InsertBefore(onnx::NodeProto node) override;
  onnx::NodeProto* InsertAfter(onnx::NodeProto node) override;
  std::string DetachOutput(int i) override;
  void RemoveAnchor() override;
  void TrackSubgraph(onnx::GraphProto& graph) override;

  // Unimplemented, naming the value, when ValueUsed was asked
  // about a value that only the whole graph could tell about (the step runs
  // over a window of a large graph: the model must then be converted
  // whole); OK otherwise.
  absl::Status Unanswered() const;

 private:
  StepContext& step_;
  const NodeSite& site_;
  // The first value ValueUsed could not tell about for want of the whole
  // graph, or empty.
  mutable std::optional<std::string> unanswered_;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_REWRITER_H_
