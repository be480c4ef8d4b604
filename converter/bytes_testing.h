#ifndef ONNX_CONVERT_CONVERTER_BYTES_TESTING_H_
#define ONNX_CONVERT_CONVERTER_BYTES_TESTING_H_

// For tests that compare ConvertBytes with ConvertModel: ConvertBytes's
// outcome read as ConvertModel's would be.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/converter.h"
#include "converter/windowed.h"
#include "ir/model_sink.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// ConvertBytes's report; its own error; or, where it left the model to its
// caller, InvalidArgument when the bytes do not parse and else ConvertModel's
// error on the parsed model (Internal if that conversion succeeds: nothing
// that converts may be left to the caller).
inline absl::StatusOr<ConversionReport> ConvertBytesOrError(absl::string_view bytes,
                                                            const ConvertOptions& options,
                                                            ModelSink& out,
                                                            const WindowOptions& windows = {},
                                                            std::string* whole_reason = nullptr) {
  absl::StatusOr<std::optional<ConversionReport>> got =
      ConvertBytes(bytes, options, out, windows, whole_reason);
  if (!got.ok()) return got.status();
  if (got->has_value()) return **std::move(got);
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("the model does not parse as an ONNX ModelProto");
  }
  absl::StatusOr<ConversionResult> whole = ConvertModel(model, options);
  if (!whole.ok()) return whole.status();
  return absl::InternalError("ConvertBytes left a model that converts to its caller");
}

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_BYTES_TESTING_H_
