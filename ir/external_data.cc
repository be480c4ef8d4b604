#include "ir/external_data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/status_macros.h"
#include "ir/tensor_util.h"

namespace onnxconvert {
namespace fs = std::filesystem;
namespace {

// Nesting deeper than this is not descended into.
constexpr int kMaxGraphDepth = 64;

std::string TensorLabel(const onnx::TensorProto& tensor) {
  return absl::StrCat("tensor '", tensor.name(), "'");
}

absl::Status ParseOffset(const onnx::TensorProto& tensor, absl::string_view key,
                         absl::string_view value, int64_t& out) {
  if (!absl::SimpleAtoi(value, &out) || out < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorLabel(tensor), ": external data ", key, " '", value,
                     "' is not a non-negative integer"));
  }
  return absl::OkStatus();
}

bool IsInside(const fs::path& path, const fs::path& dir) {
  auto [dir_end, path_it] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return dir_end == dir.end() && path_it != path.end();
}

using TensorFn = std::function<void(onnx::TensorProto&, const std::string&)>;

void VisitGraph(onnx::GraphProto& graph, const std::string& where, int depth,
                const TensorFn& fn);

void VisitAttribute(onnx::AttributeProto& attribute, const std::string& where,
                    int depth, const TensorFn& fn) {
  std::string here = absl::StrCat(where, " attribute '", attribute.name(), "'");
  if (attribute.has_t()) fn(*attribute.mutable_t(), here);
  for (onnx::TensorProto& tensor : *attribute.mutable_tensors()) fn(tensor, here);
  if (attribute.has_sparse_tensor()) {
    fn(*attribute.mutable_sparse_tensor()->mutable_values(), here);
    fn(*attribute.mutable_sparse_tensor()->mutable_indices(), here);
  }
  if (depth >= kMaxGraphDepth) return;
  if (attribute.has_g()) VisitGraph(*attribute.mutable_g(), here, depth + 1, fn);
  for (onnx::GraphProto& graph : *attribute.mutable_graphs()) {
    VisitGraph(graph, here, depth + 1, fn);
  }
}

void VisitNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                const std::string& where, int depth, const TensorFn& fn) {
  for (onnx::NodeProto& node : nodes) {
    std::string here = absl::StrCat(where, " node '", node.name(), "' (", node.op_type(), ")");
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      VisitAttribute(attribute, here, depth, fn);
    }
  }
}

void VisitGraph(onnx::GraphProto& graph, const std::string& where, int depth,
                const TensorFn& fn) {
  std::string here = absl::StrCat(where, " graph '", graph.name(), "'");
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
    fn(tensor, absl::StrCat(here, " initializer '", tensor.name(), "'"));
  }
  for (onnx::SparseTensorProto& sparse : *graph.mutable_sparse_initializer()) {
    fn(*sparse.mutable_values(), absl::StrCat(here, " sparse initializer"));
    fn(*sparse.mutable_indices(), absl::StrCat(here, " sparse initializer"));
  }
  VisitNodes(*graph.mutable_node(), here, depth, fn);
}

}  // namespace

absl::StatusOr<ExternalDataRef> ParseExternalDataRef(const onnx::TensorProto& tensor) {
  ExternalDataRef ref;
  bool has_location = false;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      ref.location = entry.value();
      has_location = true;
    } else if (entry.key() == "offset") {
      OC_RETURN_IF_ERROR(ParseOffset(tensor, "offset", entry.value(), ref.offset));
    } else if (entry.key() == "length") {
      int64_t length = 0;
      OC_RETURN_IF_ERROR(ParseOffset(tensor, "length", entry.value(), length));
      ref.length = length;
    } else if (entry.key() == "checksum") {
      ref.checksum = entry.value();
    }
  }
  if (!has_location || ref.location.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorLabel(tensor), ": external data has no location"));
  }
  return ref;
}

absl::StatusOr<std::string> ResolveExternalLocation(absl::string_view base_dir,
                                                    absl::string_view location) {
  fs::path relative{std::string(location)};
  if (relative.is_absolute() || location.find('\\') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "external data location '", location, "' must be a relative path"));
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          "external data location '", location, "' must not contain '..'"));
    }
  }
  std::error_code ec;
  fs::path base = fs::canonical(base_dir.empty() ? fs::path(".") : fs::path(std::string(base_dir)), ec);
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("model directory '", base_dir, "': ", ec.message()));
  }
  fs::path resolved = fs::canonical(base / relative, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat("external data file '", location,
                                            "' not found in ", base.string()));
  }
  if (!IsInside(resolved, base)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "external data location '", location, "' resolves outside the model's directory (to ",
        resolved.string(), ")"));
  }
  if (!fs::is_regular_file(resolved, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("external data location '", location, "' is not a regular file"));
  }
  return resolved.string();
}

namespace {

struct ResolvedRef {
  std::string path;
  int64_t offset;
  int64_t length;
};

absl::StatusOr<ResolvedRef> Resolve(const onnx::TensorProto& tensor,
                                    absl::string_view base_dir) {
  OC_ASSIGN_OR_RETURN(ExternalDataRef ref, ParseExternalDataRef(tensor));
  absl::StatusOr<std::string> path = ResolveExternalLocation(base_dir, ref.location);
  if (!path.ok()) {
    return absl::Status(absl::StatusCode::kInvalidArgument,
                        absl::StrCat(TensorLabel(tensor), ": ", path.status().message()));
  }
  std::error_code ec;
  int64_t size = static_cast<int64_t>(fs::file_size(*path, ec));
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(TensorLabel(tensor), ": cannot stat '",
                                                   ref.location, "': ", ec.message()));
  }
  int64_t length = ref.length.value_or(size - std::min(size, ref.offset));
  if (ref.offset > size || length > size - ref.offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorLabel(tensor), ": external data '", ref.location, "' offset ", ref.offset,
        " + length ", length, " exceeds the file's ", size, " bytes"));
  }
  return ResolvedRef{*path, ref.offset, length};
}

}  // namespace

absl::Status CheckExternalReference(const onnx::TensorProto& tensor,
                                    absl::string_view base_dir) {
  return Resolve(tensor, base_dir).status();
}

absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             absl::string_view base_dir) {
  OC_ASSIGN_OR_RETURN(ResolvedRef ref, Resolve(tensor, base_dir));
  std::ifstream in(ref.path, std::ios::binary);
  std::string bytes(static_cast<size_t>(ref.length), '\0');
  in.seekg(ref.offset);
  in.read(bytes.data(), ref.length);
  if (!in) {
    return absl::DataLossError(absl::StrCat(TensorLabel(tensor), ": failed reading ",
                                            ref.length, " bytes from ", ref.path));
  }
  return bytes;
}

void ForEachTensor(onnx::ModelProto& model, const TensorFn& fn) {
  VisitGraph(*model.mutable_graph(), "main", 0, fn);
  for (onnx::FunctionProto& function : *model.mutable_functions()) {
    VisitNodes(*function.mutable_node(),
               absl::StrCat("function '", function.name(), "'"), 0, fn);
  }
  for (onnx::TrainingInfoProto& info : *model.mutable_training_info()) {
    if (info.has_initialization()) {
      VisitGraph(*info.mutable_initialization(), "training initialization", 0, fn);
    }
    if (info.has_algorithm()) {
      VisitGraph(*info.mutable_algorithm(), "training algorithm", 0, fn);
    }
  }
}

absl::Status LoadExternalData(onnx::ModelProto& model, absl::string_view base_dir,
                              int64_t max_total_bytes) {
  absl::Status status;
  int64_t total = 0;
  ForEachTensor(model, [&](onnx::TensorProto& tensor, const std::string& where) {
    if (!status.ok() || !IsExternal(tensor)) return;
    absl::StatusOr<ResolvedRef> ref = Resolve(tensor, base_dir);
    if (ref.ok() && ref->length > max_total_bytes - total) {
      ref = absl::ResourceExhaustedError(absl::StrCat(
          "external data exceeds the limit of ", max_total_bytes, " bytes"));
    }
    absl::StatusOr<std::string> bytes =
        ref.ok() ? ReadExternalData(tensor, base_dir) : ref.status();
    if (!bytes.ok()) {
      status = absl::Status(bytes.status().code(),
                            absl::StrCat(where, ": ", bytes.status().message()));
      return;
    }
    total += ref->length;
    tensor.set_raw_data(std::move(*bytes));
    tensor.clear_external_data();
    tensor.clear_data_location();
  });
  return status;
}

}  // namespace onnxconvert
