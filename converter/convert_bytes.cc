// ConvertBytes: the one way to convert a model held as bytes, window by
// window (windowed.cc) or, where the windows cannot, whole on an arena.

#include <optional>
#include <string>
#include <utility>

#include "base/status_macros.h"
#include "converter/converter.h"
#include "converter/windowed.h"
#include "google/protobuf/arena.h"
#include "ir/model_io.h"
#include "ir/model_scan.h"

namespace onnxconvert::converter {
namespace {

// `bytes` parsed onto `arena`, or null when they do not parse. On an arena
// the parse and the conversion allocate from its blocks and the model is
// freed at once, rather than message by message.
onnx::ModelProto* ParseOnArena(absl::string_view bytes, google::protobuf::Arena& arena) {
  auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return nullptr;
  return model;
}

}  // namespace

absl::StatusOr<std::optional<ConversionReport>> ConvertBytes(absl::string_view bytes,
                                                             const ConvertOptions& options,
                                                             ModelSink& out,
                                                             const WindowOptions& windows,
                                                             std::string* whole_reason) {
  if (whole_reason != nullptr) whole_reason->clear();
  // Verification evaluates whole models: ConvertModel does it.
  if (VerifyRequested(options)) return std::nullopt;
  absl::StatusOr<ConversionReport> windowed = ConvertWindowed(bytes, options, out, windows);
  if (windowed.ok()) return *std::move(windowed);
  if (windowed.status().code() != absl::StatusCode::kUnimplemented) return windowed.status();
  if (whole_reason != nullptr) *whole_reason = std::string(windowed.status().message());
  if (options.dry_run) return std::nullopt;
  google::protobuf::Arena arena(ModelArenaOptions());
  onnx::ModelProto* model = ParseOnArena(bytes, arena);
  if (model == nullptr) return std::nullopt;
  ModelScan scan = ScanModel(*model);
  if (scan.external_tensors || KeepsWireError(*model, scan)) return std::nullopt;
  absl::StatusOr<ConversionReport> report = ConvertModelInPlace(*model, options);
  if (!report.ok()) {
    if (report.status().code() == absl::StatusCode::kCancelled) return report.status();
    return std::nullopt;
  }
  OC_RETURN_IF_ERROR(out.WriteWhole(*model));
  return *std::move(report);
}

}  // namespace onnxconvert::converter
