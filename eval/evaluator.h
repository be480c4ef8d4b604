#ifndef ONNX_CONVERT_EVAL_EVALUATOR_H_
#define ONNX_CONVERT_EVAL_EVALUATOR_H_

// Entry points of the reference evaluator.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eval/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// The outputs of `node`, an ai.onnx node bound to operator version
// `since_version`, computed from `inputs` (null where an optional input is
// absent). Fails, naming the node and op, for an op, version or element type
// the evaluator lacks, nodes with subgraphs, and inputs the op refuses.
absl::StatusOr<std::vector<Tensor>> EvaluateNode(const onnx::NodeProto& node, int since_version,
                                                 absl::Span<const Tensor* const> inputs);

// Whether `op` of `domain` computes the same outputs from the same inputs
// every time (false for the Random* ops and Dropout in training).
bool IsDeterministic(absl::string_view domain, absl::string_view op);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_EVALUATOR_H_
