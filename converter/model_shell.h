#ifndef ONNX_CONVERT_CONVERTER_MODEL_SHELL_H_
#define ONNX_CONVERT_CONVERTER_MODEL_SHELL_H_

// The end of a model written window by window (windowed.cc): its fields
// around the main graph's nodes, which the sink already holds. Internal to
// the converter.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/model_sink.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// Finishes `out`, which holds the main graph's nodes, with the fields of
// `shell` (a model whose main graph holds no nodes): the graph's fields
// before and after its nodes, and the model's around its graph, as
// protobuf orders them. Initializer i of the graph is written as
// `as_read[i]` where that is not empty (a tensor read as a header: its
// field as it came, data and all), else as the tensor encodes. `shell` is
// as it was after.
absl::Status FinishAroundNodes(onnx::ModelProto& shell, absl::Span<const absl::string_view> as_read,
                               ModelSink& out);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_MODEL_SHELL_H_
