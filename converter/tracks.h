#ifndef ONNX_CONVERT_CONVERTER_TRACKS_H_
#define ONNX_CONVERT_CONVERTER_TRACKS_H_

// Internal to the converter: the opset imports of a model and the tracks a
// conversion takes (one per domain, from its imported opset to the target),
// and the IR version the target needs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/converter.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

using Imports = google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>;

// The version `imports` gives `domain` (canonical), if any.
std::optional<int64_t> ImportedOpset(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    absl::string_view domain);

// Sets the version `imports` gives `domain` (canonical) to `opset`.
void SetImportedOpset(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                      absl::string_view domain, int64_t opset);

// The IR version a conversion to `target_opset` gives a model of IR
// `source_ir`: the one pinned by the options, else raised as needed.
int64_t TargetIrVersion(const ConvertOptions& options, int64_t source_ir, int64_t target_opset);

// One domain's way from its source opset to its target.
struct Track {
  std::string domain;  // canonical
  int64_t source;
  int64_t target;
};

// The domains to convert: ai.onnx always, ai.onnx.ml when asked for.
absl::StatusOr<std::vector<Track>> PlanTracks(const onnx::ModelProto& model,
                                              const ConvertOptions& options);

// The domains `tracks` convert, for the index.
absl::flat_hash_set<std::string> DomainsOf(const std::vector<Track>& tracks);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_TRACKS_H_
