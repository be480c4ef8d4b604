#include "converter/tracks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

using schema::Registry;

// The version `imports` gives `domain` (canonical), if any.
std::optional<int64_t> ImportedOpset(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    absl::string_view domain) {
  for (const auto& opset : imports) {
    if (CanonicalDomain(opset.domain()) == domain) return opset.version();
  }
  return std::nullopt;
}

void SetImportedOpset(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                      absl::string_view domain, int64_t opset) {
  for (auto& entry : imports) {
    if (CanonicalDomain(entry.domain()) == domain) entry.set_version(opset);
  }
}


int64_t TargetIrVersion(const ConvertOptions& options, int64_t source_ir, int64_t target_opset) {
  return options.ir_version.value_or(std::max(source_ir, MinIrVersionForOpset(target_opset)));
}

// The domains to convert: ai.onnx always, ai.onnx.ml when asked for.
absl::StatusOr<std::vector<Track>> PlanTracks(const onnx::ModelProto& model,
                                              const ConvertOptions& options) {
  std::vector<Track> tracks;
  auto add = [&](absl::string_view domain, absl::string_view label, int64_t target,
                 bool required) -> absl::Status {
    std::optional<int64_t> source = ImportedOpset(model.opset_import(), domain);
    if (!source) {
      if (!required) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("the model imports no ", label, " opset to convert from"));
    }
    int64_t newest = Registry::Get().MaxOpset(domain);
    if (target < 1 || target > newest) {
      return absl::InvalidArgumentError(
          absl::StrCat("target opset ", target, domain.empty() ? "" : absl::StrCat(" of ", label),
                       " does not exist (1 to ", newest, ")"));
    }
    tracks.push_back({std::string(domain), *source, target});
    return absl::OkStatus();
  };
  // A model of ai.onnx.ml alone needs no ai.onnx opset when only its
  // ai.onnx.ml opset is converted.
  bool ml_only = options.ml_target_opset.has_value() &&
                 !ImportedOpset(model.opset_import(), "").has_value();
  OC_RETURN_IF_ERROR(add("", "ai.onnx", options.target_opset, /*required=*/!ml_only));
  if (options.ml_target_opset) {
    OC_RETURN_IF_ERROR(add("ai.onnx.ml", "ai.onnx.ml", *options.ml_target_opset,
                           /*required=*/true));
  }
  return tracks;
}

// The domains `tracks` convert, for the index.
absl::flat_hash_set<std::string> DomainsOf(const std::vector<Track>& tracks) {
  absl::flat_hash_set<std::string> domains;
  for (const Track& track : tracks) domains.insert(track.domain);
  return domains;
}

}  // namespace onnxconvert::converter
