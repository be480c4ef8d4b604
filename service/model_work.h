#ifndef ONNX_CONVERT_SERVICE_MODEL_WORK_H_
#define ONNX_CONVERT_SERVICE_MODEL_WORK_H_

// The work behind each model call, free of gRPC: parse the bytes, run the
// library, fill the answer. Errors begin with the model's name the way the
// CLI's begin with its path.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "converter/converter.h"
#include "converter/windowed.h"
#include "proto/onnx_convert_service.pb.h"
#include "service/stream_files.h"

namespace onnxconvert::service {

// How much of the report an answer carries.
enum class ReportForms {
  kAll,          // the message, JSON and text
  kMessageOnly,  // the message (clients rebuild JSON and text from it)
};

// How the service cuts a model it converts window by window
// (converter/windowed.h): smaller windows than the CLI's, from a smaller
// graph up, so that a call's memory stays near its model's size (a parsed
// node takes about 10 times its bytes) rather than growing with the graph.
converter::WindowOptions ServiceWindows();

// Parses `bytes` and converts the model as `options` say. The answer holds
// the converted model (none for a dry run), the report in the `forms`
// asked for, and the timings. A malformed model is InvalidArgument; a model past
// `max_model_bytes` ResourceExhausted; conversion errors keep their code.
absl::StatusOr<v1::ConvertResponse> ConvertModelBytes(std::string_view bytes,
                                                      const std::string& name,
                                                      const converter::ConvertOptions& options,
                                                      int64_t max_model_bytes,
                                                      ReportForms forms = ReportForms::kAll);

// Parses `bytes` and checks the model; an invalid model is an answer with
// valid = false, not an error.
absl::StatusOr<v1::CheckResponse> CheckModelBytes(std::string_view bytes,
                                                  const std::string& name,
                                                  int64_t max_model_bytes);

// Parses `bytes` and summarizes the model (message, text and JSON).
absl::StatusOr<v1::InspectResponse> InspectModelBytes(std::string_view bytes,
                                                      const std::string& name,
                                                      int64_t max_model_bytes);

// Parses `bytes` and rewrites the model with the passes `options` select
// (rewrites/pass_manager.h). The answer holds the rewritten model and the
// report (message, JSON and text). A malformed model or unknown pass is
// InvalidArgument; a rewrite that fails its checks keeps its code.
absl::StatusOr<v1::RewriteResponse> RewriteModelBytes(std::string_view bytes,
                                                      const std::string& name,
                                                      const v1::RewriteOptions& options,
                                                      int64_t max_model_bytes);

// The outcome of a streamed conversion.
struct StreamOutput {
  v1::StreamResult result;  // report and the files to send, model first
  // The model, when a whole conversion of a model whose external data the
  // client keeps left it in memory (model_in_memory); otherwise the files
  // are in the workspace's output directory.
  std::string model_bytes;
  bool model_in_memory = false;
};

// Converts the model uploaded to `workspace` as `header` says. With
// EXTERNAL_DATA_UPLOADED its references are checked against the uploaded
// files and the output (model and data file) is saved in the workspace;
// with EXTERNAL_DATA_KEPT_BY_CLIENT references are left unchecked and
// unchanged. Errors name the model by `header.model_name()`. The conversion
// polls `should_stop` (if set) and ends Cancelled once it is true.
absl::StatusOr<StreamOutput> ConvertUploadedModel(const StreamWorkspace& workspace,
                                                  const v1::StreamHeader& header,
                                                  int64_t max_model_bytes,
                                                  const std::function<bool()>& should_stop = {});

// Rewrites the model uploaded to `workspace` as `header.rewrite()` says
// (RewriteModelBytes' work), keeping external data as ConvertUploadedModel
// does; the report goes to `rewrite_report` and the report forms.
absl::StatusOr<StreamOutput> RewriteUploadedModel(const StreamWorkspace& workspace,
                                                  const v1::StreamHeader& header,
                                                  int64_t max_model_bytes);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_MODEL_WORK_H_
