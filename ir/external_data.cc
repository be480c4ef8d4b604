#include "ir/external_data.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ir/tensor_util.h"

namespace onnxconvert {
namespace fs = std::filesystem;
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int64_t kReadChunkBytes = int64_t{1} << 20;

std::string TensorName(const onnx::TensorProto& tensor) {
  return tensor.name().empty() ? std::string("unnamed tensor")
                               : absl::StrCat("tensor '", tensor.name(), "'");
}

// A non-negative decimal integer, digits only.
std::optional<int64_t> ParseNonNegative(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    // Past int64 (20 digits are refused above; 19 may still overflow).
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value)) {
      return std::nullopt;
    }
  }
  return value;
}

absl::Status SetOnce(std::string_view key, bool& seen) {
  if (seen) {
    return absl::InvalidArgumentError(
        absl::StrCat("external data key '", AsAbsl(key), "' appears twice"));
  }
  seen = true;
  return absl::OkStatus();
}

absl::Status ParseSize(std::string_view key, std::string_view value,
                       int64_t& out) {
  std::optional<int64_t> parsed = ParseNonNegative(value);
  if (!parsed) {
    return absl::InvalidArgumentError(
        absl::StrCat("external data ", AsAbsl(key), " '", AsAbsl(value),
                     "' is not a non-negative decimal integer"));
  }
  out = *parsed;
  return absl::OkStatus();
}

// ParseExternalDataInfo without the tensor's name in errors.
absl::StatusOr<ExternalDataInfo> ParseInfo(const onnx::TensorProto& tensor) {
  ExternalDataInfo info;
  bool seen_location = false, seen_offset = false, seen_length = false,
       seen_checksum = false;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      OC_RETURN_IF_ERROR(SetOnce(key, seen_location));
      info.location = entry.value();
    } else if (key == "offset") {
      OC_RETURN_IF_ERROR(SetOnce(key, seen_offset));
      OC_RETURN_IF_ERROR(ParseSize(key, entry.value(), info.offset));
    } else if (key == "length") {
      OC_RETURN_IF_ERROR(SetOnce(key, seen_length));
      int64_t length = 0;
      OC_RETURN_IF_ERROR(ParseSize(key, entry.value(), length));
      info.length = length;
    } else if (key == "checksum") {
      OC_RETURN_IF_ERROR(SetOnce(key, seen_checksum));
      info.checksum = entry.value();
    }
  }
  if (info.location.empty()) {
    return absl::InvalidArgumentError("external data has no location");
  }
  return info;
}

// True when `path` lies strictly below `dir`; both canonical.
bool IsStrictlyInside(const fs::path& path, const fs::path& dir) {
  auto [dir_it, path_it] =
      std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return dir_it == dir.end() && path_it != path.end();
}

absl::Status LocationError(std::string_view location, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "external data location '", AsAbsl(location), "' ", AsAbsl(why)));
}

// LocateExternalData without the tensor's name in errors.
absl::StatusOr<FileRange> Locate(const onnx::TensorProto& tensor,
                                 std::string_view base_dir) {
  OC_ASSIGN_OR_RETURN(ExternalDataInfo info, ParseInfo(tensor));
  FileRange range;
  OC_ASSIGN_OR_RETURN(range.path,
                      ResolveExternalLocation(base_dir, info.location));
  std::error_code ec;
  uintmax_t file_size = fs::file_size(range.path, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "external data file '", info.location, "': ", ec.message()));
  }
  int64_t size = static_cast<int64_t>(file_size);
  range.offset = info.offset;
  range.length = info.length.value_or(size - std::min(size, info.offset));
  if (range.offset > size || range.length > size - range.offset) {
    return absl::OutOfRangeError(absl::StrCat(
        "external data '", info.location, "': offset ", range.offset,
        " + length ", range.length, " is past the end of the file (", size,
        " bytes)"));
  }
  return range;
}

absl::Status CheckBudget(int64_t length, int64_t& total, int64_t max_total) {
  if (length > max_total - total) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "external data adds up to more than the limit of ", max_total,
        " bytes"));
  }
  total += length;
  return absl::OkStatus();
}

// Message types reachable from ModelProto that are or contain a TensorProto.
absl::flat_hash_set<const Descriptor*> ComputeTensorHolders() {
  std::vector<const Descriptor*> reachable = {onnx::ModelProto::descriptor()};
  absl::flat_hash_set<const Descriptor*> seen(reachable.begin(),
                                              reachable.end());
  for (size_t i = 0; i < reachable.size(); ++i) {
    for (int f = 0; f < reachable[i]->field_count(); ++f) {
      const Descriptor* type = reachable[i]->field(f)->message_type();
      if (type != nullptr && seen.insert(type).second) {
        reachable.push_back(type);
      }
    }
  }
  absl::flat_hash_set<const Descriptor*> holders = {
      onnx::TensorProto::descriptor()};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Descriptor* type : reachable) {
      if (holders.contains(type)) continue;
      for (int f = 0; f < type->field_count(); ++f) {
        const Descriptor* field_type = type->field(f)->message_type();
        if (field_type != nullptr && holders.contains(field_type)) {
          holders.insert(type);
          grew = true;
          break;
        }
      }
    }
  }
  return holders;
}

// Element `index` (-1: the singular value) of a message field.
const Message& Element(const Reflection& reflection, const Message& message,
                       const FieldDescriptor* field, int index) {
  return index < 0 ? reflection.GetMessage(message, field)
                   : reflection.GetRepeatedMessage(message, field, index);
}
Message& Element(const Reflection& reflection, Message& message,
                 const FieldDescriptor* field, int index) {
  return index < 0 ? *reflection.MutableMessage(&message, field)
                   : *reflection.MutableRepeatedMessage(&message, field, index);
}

// Walks the tensor-holding fields of `message` (const or not) and calls `fn`
// with each TensorProto.
template <typename MessageT, typename Fn>
absl::Status WalkTensors(MessageT& message, TensorPath& path, int max_depth,
                         Fn& fn) {
  using Tensor = std::conditional_t<std::is_const_v<MessageT>,
                                    const onnx::TensorProto, onnx::TensorProto>;
  if (message.GetDescriptor() == onnx::TensorProto::descriptor()) {
    return fn(static_cast<Tensor&>(message), path);
  }
  const Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->message_type() == nullptr ||
        !CanHoldTensors(*field->message_type())) {
      continue;
    }
    if (path.depth() >= max_depth) {
      return absl::InvalidArgumentError(
          absl::StrCat("messages nested deeper than ", max_depth,
                       " fields at ", path.ToString()));
    }
    int count = field->is_repeated() ? reflection.FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      int index = field->is_repeated() ? i : -1;
      path.Push(field, index);
      absl::Status status = WalkTensors(
          Element(reflection, message, field, index), path, max_depth, fn);
      path.Pop();
      OC_RETURN_IF_ERROR(status);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExternalDataInfo> ParseExternalDataInfo(
    const onnx::TensorProto& tensor) {
  absl::StatusOr<ExternalDataInfo> info = ParseInfo(tensor);
  if (!info.ok()) return WithPrefix(TensorName(tensor), info.status());
  return info;
}

void SetExternalDataInfo(const ExternalDataInfo& info,
                         onnx::TensorProto& tensor) {
  tensor.clear_external_data();
  auto add = [&tensor](const char* key, std::string value) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(std::move(value));
  };
  add("location", info.location);
  add("offset", absl::StrCat(info.offset));
  if (info.length) add("length", absl::StrCat(*info.length));
  if (!info.checksum.empty()) add("checksum", info.checksum);
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
}

absl::Status CheckRelativeLocation(std::string_view location) {
  if (location.empty()) return LocationError(location, "is empty");
  if (location.find('\0') != std::string_view::npos) {
    return LocationError(location, "contains a NUL character");
  }
  if (location.find('\\') != std::string_view::npos) {
    return LocationError(location,
                         "contains a backslash; use '/' between components");
  }
  if (location.front() == '/') {
    return LocationError(
        location, "is absolute; it must be relative to the model's directory");
  }
  for (std::string_view rest = location; !rest.empty();) {
    size_t slash = rest.find('/');
    if (rest.substr(0, slash) == "..") {
      return LocationError(location, "has a '..' component");
    }
    rest = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ConfineLocation(std::string_view base_dir,
                                            std::string_view location) {
  OC_RETURN_IF_ERROR(CheckRelativeLocation(location));
  std::error_code ec;
  fs::path base = fs::canonical(
      base_dir.empty() ? fs::path(".") : fs::path(base_dir), ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat(
        "model directory '", AsAbsl(base_dir), "': ", ec.message()));
  }
  fs::path resolved = fs::weakly_canonical(base / fs::path(location), ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "external data location '", AsAbsl(location), "': ", ec.message()));
  }
  if (!IsStrictlyInside(resolved, base)) {
    return LocationError(location,
                         absl::StrCat("resolves outside the model's directory ",
                                      base.string(), " (to ",
                                      resolved.string(), ")"));
  }
  return resolved.string();
}

absl::StatusOr<std::string> ResolveExternalLocation(std::string_view base_dir,
                                                    std::string_view location) {
  OC_ASSIGN_OR_RETURN(std::string resolved,
                      ConfineLocation(base_dir, location));
  std::error_code ec;
  fs::file_status status = fs::status(resolved, ec);
  if (!fs::exists(status)) {
    return absl::NotFoundError(
        absl::StrCat("external data file '", AsAbsl(location),
                     "' does not exist in the model's directory"));
  }
  if (!fs::is_regular_file(status)) {
    return LocationError(location, "is not a regular file");
  }
  // A second name of a file may be anywhere: its data cannot be shown to
  // belong to the model's directory.
  uintmax_t links = fs::hard_link_count(resolved, ec);
  if (!ec && links > 1) {
    return LocationError(location, absl::StrCat("is a hard link (the file has ", links,
                                                " names), which may lead outside the "
                                                "model's directory"));
  }
  return resolved;
}

absl::StatusOr<FileRange> LocateExternalData(const onnx::TensorProto& tensor,
                                             std::string_view base_dir,
                                             const TensorPath* path) {
  absl::StatusOr<FileRange> range = Locate(tensor, base_dir);
  if (range.ok()) return range;
  return WithPrefix(path ? DescribeTensor(tensor, *path) : TensorName(tensor),
                  range.status());
}

absl::Status CheckExternalReference(const onnx::TensorProto& tensor,
                                    std::string_view base_dir) {
  return LocateExternalData(tensor, base_dir).status();
}

absl::Status StreamFileRange(
    const FileRange& range,
    absl::FunctionRef<absl::Status(std::string_view chunk)> sink) {
  int fd = open(range.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat(range.path, ": cannot open: ", std::strerror(errno)));
  }
  std::string buffer(
      static_cast<size_t>(std::min(range.length, kReadChunkBytes)), '\0');
  absl::Status status;
  for (int64_t done = 0; status.ok() && done < range.length;) {
    size_t want = static_cast<size_t>(
        std::min<int64_t>(range.length - done, buffer.size()));
    ssize_t got = pread(fd, buffer.data(), want, range.offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      status = absl::DataLossError(absl::StrCat(
          range.path, ": read failed at byte ", range.offset + done, ": ",
          got < 0 ? std::strerror(errno) : "the file ended early"));
      break;
    }
    status = sink(std::string_view(buffer.data(), static_cast<size_t>(got)));
    done += got;
  }
  close(fd);
  return status;
}

namespace {

// The bytes of `range`, read in one buffer of exactly its length.
absl::StatusOr<std::string> ReadRange(const FileRange& range) {
  std::string bytes;
  bytes.reserve(static_cast<size_t>(range.length));
  OC_RETURN_IF_ERROR(StreamFileRange(range, [&](std::string_view chunk) {
    bytes.append(chunk);
    return absl::OkStatus();
  }));
  return bytes;
}

}  // namespace

absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             std::string_view base_dir) {
  OC_ASSIGN_OR_RETURN(FileRange range, LocateExternalData(tensor, base_dir));
  absl::StatusOr<std::string> bytes = ReadRange(range);
  if (!bytes.ok()) return WithPrefix(TensorName(tensor), bytes.status());
  return bytes;
}

bool CanHoldTensors(const Descriptor& type) {
  static const auto* const kHolders =
      new absl::flat_hash_set<const Descriptor*>(ComputeTensorHolders());
  return kHolders->contains(&type);
}

std::string TensorPath::ToString() const {
  return absl::StrJoin(steps_, ".", [](std::string* out, const Step& step) {
    absl::StrAppend(out, step.field->name());
    if (step.index >= 0) absl::StrAppend(out, "[", step.index, "]");
  });
}

absl::Status ForEachTensor(
    const onnx::ModelProto& model,
    absl::FunctionRef<absl::Status(const onnx::TensorProto&, const TensorPath&)>
        fn,
    int max_depth) {
  TensorPath path;
  return WalkTensors(static_cast<const Message&>(model), path, max_depth, fn);
}

absl::Status ForEachMutableTensor(
    onnx::ModelProto& model,
    absl::FunctionRef<absl::Status(onnx::TensorProto&, const TensorPath&)> fn,
    int max_depth) {
  TensorPath path;
  return WalkTensors(static_cast<Message&>(model), path, max_depth, fn);
}

std::string DescribeTensor(const onnx::TensorProto& tensor,
                           const TensorPath& path) {
  return absl::StrCat(TensorName(tensor), " (", path.ToString(), ")");
}

absl::Status CheckExternalReferences(const onnx::ModelProto& model,
                                     std::string_view base_dir,
                                     int64_t max_total_bytes) {
  int64_t total = 0;
  return ForEachTensor(model, [&](const onnx::TensorProto& tensor,
                                  const TensorPath& path) -> absl::Status {
    if (!IsExternal(tensor)) return absl::OkStatus();
    absl::StatusOr<FileRange> range = Locate(tensor, base_dir);
    absl::Status status = range.ok()
                              ? CheckBudget(range->length, total, max_total_bytes)
                              : range.status();
    return WithPrefix(DescribeTensor(tensor, path), status);
  });
}

absl::Status LoadExternalData(onnx::ModelProto& model,
                              std::string_view base_dir,
                              int64_t max_total_bytes) {
  int64_t total = 0;
  auto load = [&](onnx::TensorProto& tensor) -> absl::Status {
    OC_ASSIGN_OR_RETURN(FileRange range, Locate(tensor, base_dir));
    OC_RETURN_IF_ERROR(CheckBudget(range.length, total, max_total_bytes));
    OC_ASSIGN_OR_RETURN(std::string bytes, ReadRange(range));
    tensor.set_raw_data(std::move(bytes));
    tensor.clear_external_data();
    tensor.clear_data_location();
    return absl::OkStatus();
  };
  return ForEachMutableTensor(
      model, [&](onnx::TensorProto& tensor, const TensorPath& path) {
        if (!IsExternal(tensor)) return absl::OkStatus();
        absl::Status status = load(tensor);
        return WithPrefix(DescribeTensor(tensor, path), status);
      });
}

}  // namespace onnxconvert
