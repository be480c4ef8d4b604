#include "ir/model_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "ir/external_data.h"
#include "ir/status_macros.h"
#include "ir/tensor_util.h"
#include "ir/wire_diagnostics.h"

namespace onnxconvert {
namespace fs = std::filesystem;
namespace {

absl::Status WithSource(absl::string_view source, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(source, ": ", status.message()));
}

absl::Status Malformed(absl::string_view source, absl::string_view detail) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": not a valid ONNX model: ", detail));
}

absl::Status CheckExternalReferences(onnx::ModelProto& model, absl::string_view base_dir) {
  absl::Status status;
  ForEachTensor(model, [&](onnx::TensorProto& tensor, const std::string& where) {
    if (!status.ok() || !IsExternal(tensor)) return;
    absl::Status checked = CheckExternalReference(tensor, base_dir);
    if (!checked.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat(where, ": ", checked.message()));
    }
  });
  return status;
}

// Closes a file descriptor and removes a temp file unless released.
class TempFile {
 public:
  static absl::StatusOr<TempFile> Create(const fs::path& target) {
    std::string pattern = (target.parent_path().empty() ? fs::path(".") : target.parent_path()) /
                          absl::StrCat(".", target.filename().string(), ".tmp.XXXXXX");
    int fd = mkstemp(pattern.data());
    if (fd < 0) {
      return absl::PermissionDeniedError(absl::StrCat(
          target.string(), ": cannot create a temporary file: ", std::strerror(errno)));
    }
    return TempFile(fd, pattern);
  }
  TempFile(TempFile&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
    other.fd_ = -1;
    other.path_.clear();
  }
  ~TempFile() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
  }

  absl::Status Write(absl::string_view bytes, const std::string& target) {
    while (!bytes.empty()) {
      ssize_t written = write(fd_, bytes.data(), bytes.size());
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return IoError(target, "write");
      bytes.remove_prefix(static_cast<size_t>(written));
    }
    return absl::OkStatus();
  }

  // Flushes to disk and renames over `target`.
  absl::Status CommitTo(const std::string& target) {
    if (fsync(fd_) != 0) return IoError(target, "fsync");
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) return IoError(target, "close");
    if (rename(path_.c_str(), target.c_str()) != 0) return IoError(target, "rename");
    path_.clear();
    return absl::OkStatus();
  }

 private:
  TempFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  static absl::Status IoError(const std::string& target, absl::string_view step) {
    return absl::UnavailableError(
        absl::StrCat(target, ": ", step, " failed: ", std::strerror(errno)));
  }
  int fd_;
  std::string path_;
};

// Converts a tensor's inline data to raw little-endian bytes, the form
// external data takes. Returns false for STRING tensors (never externalized).
bool TakeRawBytes(onnx::TensorProto& tensor, std::string& out) {
  if (tensor.data_type() == onnx::TensorProto::STRING) return false;
  if (tensor.has_raw_data()) {
    out = std::move(*tensor.mutable_raw_data());
    tensor.clear_raw_data();
    return true;
  }
  auto append = [&out](const auto& values, auto narrowed) {
    for (auto value : values) {
      auto v = static_cast<decltype(narrowed)>(value);
      out.append(reinterpret_cast<const char*>(&v), sizeof(v));
    }
  };
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT: append(tensor.float_data(), float{}); break;
    case onnx::TensorProto::COMPLEX64: append(tensor.float_data(), float{}); break;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX128: append(tensor.double_data(), double{}); break;
    case onnx::TensorProto::INT64: append(tensor.int64_data(), int64_t{}); break;
    case onnx::TensorProto::UINT32: append(tensor.uint64_data(), uint32_t{}); break;
    case onnx::TensorProto::UINT64: append(tensor.uint64_data(), uint64_t{}); break;
    case onnx::TensorProto::INT32: append(tensor.int32_data(), int32_t{}); break;
    case onnx::TensorProto::INT16: append(tensor.int32_data(), int16_t{}); break;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: append(tensor.int32_data(), uint16_t{}); break;
    case onnx::TensorProto::INT8: append(tensor.int32_data(), int8_t{}); break;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::FLOAT8E4M3FN:
    case onnx::TensorProto::FLOAT8E4M3FNUZ:
    case onnx::TensorProto::FLOAT8E5M2:
    case onnx::TensorProto::FLOAT8E5M2FNUZ:
    case onnx::TensorProto::FLOAT8E8M0: append(tensor.int32_data(), uint8_t{}); break;
    default:
      return false;  // packed sub-byte types stay inline
  }
  tensor.clear_float_data();
  tensor.clear_double_data();
  tensor.clear_int32_data();
  tensor.clear_int64_data();
  tensor.clear_uint64_data();
  return true;
}

void SetExternalRef(onnx::TensorProto& tensor, const std::string& location,
                    int64_t offset, int64_t length) {
  tensor.clear_external_data();
  for (auto [key, value] : {std::pair{"location", location},
                            std::pair{"offset", absl::StrCat(offset)},
                            std::pair{"length", absl::StrCat(length)}}) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
}

bool SameDirectory(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a.empty() ? "." : a, b.empty() ? "." : b, ec);
}

// Moves large tensors (and, when the directory changes, existing external
// tensors) into one data file written through `data`.
absl::Status ExternalizeTensors(onnx::ModelProto& model, const std::string& path,
                                const SaveOptions& options, TempFile& data,
                                const std::string& data_location, bool& wrote_any) {
  constexpr int64_t kAlignment = 4096;
  fs::path out_dir = fs::path(path).parent_path();
  bool carry_existing = !options.source_base_dir.empty() &&
                        !SameDirectory(options.source_base_dir, out_dir);
  int64_t offset = 0;
  absl::Status status;
  ForEachTensor(model, [&](onnx::TensorProto& tensor, const std::string& where) {
    if (!status.ok()) return;
    std::string bytes;
    if (IsExternal(tensor)) {
      if (!carry_existing) return;
      absl::StatusOr<std::string> read = ReadExternalData(tensor, options.source_base_dir);
      if (!read.ok()) {
        status = absl::Status(read.status().code(),
                              absl::StrCat(path, ": ", where, ": ", read.status().message()));
        return;
      }
      bytes = std::move(*read);
    } else if (options.external_data_threshold < 0 ||
               TensorDataBytes(tensor) < options.external_data_threshold ||
               !TakeRawBytes(tensor, bytes)) {
      return;
    }
    int64_t padding = (kAlignment - offset % kAlignment) % kAlignment;
    status = data.Write(std::string(static_cast<size_t>(padding), '\0'), path);
    if (status.ok()) status = data.Write(bytes, path);
    SetExternalRef(tensor, data_location, offset + padding,
                   static_cast<int64_t>(bytes.size()));
    offset += padding + static_cast<int64_t>(bytes.size());
    wrote_any = true;
  });
  return status;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseModel(absl::string_view bytes,
                                            absl::string_view source_name,
                                            const LoadOptions& options) {
  if (static_cast<int64_t>(bytes.size()) > options.max_model_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(source_name, ": model is ", bytes.size(), " bytes, over the limit of ",
                     options.max_model_bytes));
  }
  if (bytes.empty()) return Malformed(source_name, "the file is empty");
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  bool parsed = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  // A declared field with the wrong wire type parses as an unknown field;
  // the walk catches that as well as what the parser rejects.
  if (std::optional<std::string> problem =
          FindWireError(bytes, onnx::ModelProto::descriptor())) {
    return Malformed(source_name, *problem);
  }
  if (!parsed) return Malformed(source_name, "protobuf parsing failed");
  return model;
}

absl::StatusOr<LoadedModel> LoadModel(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path, ": ", ec.message()));
  if (static_cast<int64_t>(size) > options.max_model_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": model is ", size, " bytes, over the limit of ",
                     options.max_model_bytes, " (store large tensors as external data)"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return absl::UnavailableError(absl::StrCat(path, ": read failed"));
  }
  LoadedModel loaded;
  loaded.path = path;
  fs::path parent = fs::path(path).parent_path();
  loaded.base_dir = (parent.empty() ? fs::path(".") : parent).string();
  OC_ASSIGN_OR_RETURN(loaded.model, ParseModel(bytes, path, options));
  bytes = std::string();
  if (options.load_external_data) {
    absl::Status status =
        LoadExternalData(loaded.model, loaded.base_dir, options.max_external_data_bytes);
    if (!status.ok()) return WithSource(path, status);
  } else if (options.verify_external_data) {
    absl::Status status = CheckExternalReferences(loaded.model, loaded.base_dir);
    if (!status.ok()) return WithSource(path, status);
  }
  return loaded;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes) {
  OC_ASSIGN_OR_RETURN(TempFile file, TempFile::Create(path));
  OC_RETURN_IF_ERROR(file.Write(bytes, path));
  return file.CommitTo(path);
}

absl::Status SaveModel(const onnx::ModelProto& model, const std::string& path,
                       const SaveOptions& options) {
  bool needs_rewrite = options.external_data_threshold >= 0 || !options.source_base_dir.empty();
  if (!needs_rewrite) {
    if (model.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return absl::ResourceExhaustedError(absl::StrCat(
          path, ": the model is over 2 GiB; save it with an external data threshold"));
    }
    return WriteFileAtomically(path, model.SerializeAsString());
  }
  onnx::ModelProto copy = model;
  return SaveModel(std::move(copy), path, options);
}

absl::Status SaveModel(onnx::ModelProto&& model, const std::string& path,
                       const SaveOptions& options) {
  std::string data_location = options.external_data_file.empty()
                                  ? absl::StrCat(fs::path(path).filename().string(), ".data")
                                  : options.external_data_file;
  fs::path data_path = fs::path(path).parent_path() / data_location;
  std::optional<TempFile> data;
  bool wrote_any = false;
  if (options.external_data_threshold >= 0 || !options.source_base_dir.empty()) {
    OC_ASSIGN_OR_RETURN(TempFile created, TempFile::Create(data_path));
    data.emplace(std::move(created));
    OC_RETURN_IF_ERROR(
        ExternalizeTensors(model, path, options, *data, data_location, wrote_any));
  }
  if (model.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": the model is over 2 GiB; save it with an external data threshold"));
  }
  OC_ASSIGN_OR_RETURN(TempFile file, TempFile::Create(path));
  OC_RETURN_IF_ERROR(file.Write(model.SerializeAsString(), path));
  if (wrote_any) OC_RETURN_IF_ERROR(data->CommitTo(data_path.string()));
  return file.CommitTo(path);
}

}  // namespace onnxconvert
