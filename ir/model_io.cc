#include "ir/model_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/wire_format.h"
#include "google/protobuf/wire_format_lite.h"
#include "ir/external_data.h"
#include "ir/model_scan.h"
#include "ir/tensor_util.h"
#include "ir/wire_diagnostics.h"

namespace onnxconvert {
namespace fs = std::filesystem;
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::internal::WireFormat;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

// "<what>: <step> failed: <strerror(errno)>", or without "<what>: " when
// `what` is empty.
absl::Status ErrnoError(std::string_view what, std::string_view step) {
  int error = errno;
  return absl::Status(
      absl::ErrnoToStatusCode(error),
      absl::StrCat(AsAbsl(what), what.empty() ? "" : ": ", AsAbsl(step),
                   " failed: ", std::strerror(error)));
}

// The directory external data of the model at `path` is relative to.
std::string DirectoryOf(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

int64_t EffectiveLimit(int64_t requested) {
  return std::min(requested, kMaxProtobufBytes);
}

absl::Status CheckModelSize(std::string_view source, uint64_t size,
                            int64_t max_bytes) {
  int64_t limit = EffectiveLimit(max_bytes);
  if (size <= static_cast<uint64_t>(std::max<int64_t>(limit, 0))) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      AsAbsl(source), ": the model is ", size, " bytes, over the limit of ",
      limit, " bytes",
      limit == kMaxProtobufBytes
          ? " (protobuf cannot hold 2 GiB; large tensors belong in external "
            "data)"
          : ""));
}

// ---------------------------------------------------------------------------
// Reading.

// A model file opened for reading; closed on destruction.
class ModelFile {
 public:
  // Opens `path`, refusing anything but a regular file of at most
  // `max_bytes` (checked before reading).
  static absl::StatusOr<ModelFile> Open(const std::string& path,
                                        int64_t max_bytes) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return ErrnoError(path, "open");
    ModelFile file(fd);
    struct stat info;
    if (fstat(fd, &info) != 0) return ErrnoError(path, "stat");
    if (!S_ISREG(info.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": not a regular file"));
    }
    OC_RETURN_IF_ERROR(
        CheckModelSize(path, static_cast<uint64_t>(info.st_size), max_bytes));
    file.size_ = static_cast<int64_t>(info.st_size);
    return file;
  }

  ModelFile(ModelFile&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}
  ModelFile& operator=(ModelFile&&) = delete;
  ~ModelFile() {
    if (fd_ >= 0) close(fd_);
  }

  int64_t size() const { return size_; }

  // Parses the file's size() bytes, streaming them (no copy of the file is
  // held); false when protobuf rejects them or the file shrank.
  bool Parse(onnx::ModelProto& model) const {
    constexpr int kBlockBytes = 1 << 20;
    google::protobuf::io::FileInputStream file_stream(fd_, kBlockBytes);
    google::protobuf::io::LimitingInputStream limited(&file_stream, size_);
    google::protobuf::io::CodedInputStream coded(&limited);
    coded.SetTotalBytesLimit(static_cast<int>(kMaxProtobufBytes));
    google::protobuf::LogSilencer silence_utf8_warnings;  // see ParseModel
    return model.ParseFromCodedStream(&coded) &&
           coded.CurrentPosition() == size_;
  }

  // The file's size() bytes.
  absl::StatusOr<std::string> ReadAll(const std::string& path) const {
    std::string bytes(static_cast<size_t>(size_), '\0');
    for (size_t done = 0; done < bytes.size();) {
      ssize_t got = pread(fd_, bytes.data() + done, bytes.size() - done,
                          static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return ErrnoError(path, "read");
      if (got == 0) {
        return absl::DataLossError(
            absl::StrCat(path, ": the file shrank while being read"));
      }
      done += static_cast<size_t>(got);
    }
    return bytes;
  }

 private:
  explicit ModelFile(int fd) : fd_(fd) {}

  int fd_;
  int64_t size_ = 0;
};

absl::Status Malformed(std::string_view source, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(
      AsAbsl(source), ": not a valid ONNX model: ", AsAbsl(problem)));
}

// The error for bytes protobuf rejected (or accepted only by keeping a
// misencoded field as unknown): their first wire-format problem.
absl::Status Diagnose(std::string_view source, std::string_view bytes) {
  if (std::optional<WireError> error =
          FindWireError(bytes, *onnx::ModelProto::descriptor())) {
    return Malformed(source, error->ToString());
  }
  return Malformed(source,
                   "protobuf rejected it, though its wire format is sound");
}

// ---------------------------------------------------------------------------
// Temp files committed by rename.

// A new file beside `target`, removed on destruction unless committed.
// Errors begin with `label` (nothing when empty).
class TempFile {
 public:
  static absl::StatusOr<TempFile> CreateBeside(const std::string& target,
                                               std::string label) {
    static std::atomic<uint64_t> counter{0};
    fs::path target_path(target);
    std::string stem = absl::StrCat(".", target_path.filename().string(),
                                    ".tmp.", getpid(), ".");
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string temp =
          (target_path.parent_path() / absl::StrCat(stem, counter++)).string();
      int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) return TempFile(fd, std::move(temp), target, label);
      if (errno != EEXIST) return ErrnoError(label, "creating a temp file");
    }
    return absl::AlreadyExistsError("no free temp file name");
  }

  TempFile(TempFile&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        temp_path_(std::exchange(other.temp_path_, "")),
        target_(std::move(other.target_)),
        label_(std::move(other.label_)) {}
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile() {
    if (fd_ >= 0) close(fd_);
    if (!temp_path_.empty()) unlink(temp_path_.c_str());
  }

  int fd() const { return fd_; }
  const std::string& label() const { return label_; }

  absl::Status Write(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t written = write(fd_, bytes.data(), bytes.size());
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) return ErrnoError(label_, "write");
      bytes.remove_prefix(static_cast<size_t>(written));
    }
    return absl::OkStatus();
  }

  // Flushes to disk (unless `durable` is false) and closes; the file is
  // still a temp file.
  absl::Status SyncAndClose(bool durable = true) {
    if (durable && fsync(fd_) != 0) return ErrnoError(label_, "fsync");
    int fd = std::exchange(fd_, -1);
    if (close(fd) != 0) return ErrnoError(label_, "close");
    return absl::OkStatus();
  }

  // Replaces the (still empty) temp file by the file `source`, moved
  // (renamed) here; false, an empty temp file left in place, when that
  // fails. The temp file is removed first: ext4 starts writing back a
  // file renamed over another, which would cost the move its speed.
  bool MoveFrom(const std::string& source) {
    close(std::exchange(fd_, -1));
    unlink(temp_path_.c_str());
    bool moved = rename(source.c_str(), temp_path_.c_str()) == 0;
    fd_ = moved ? open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC)
                : open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    return moved;
  }

  // Renames the synced file over the target.
  absl::Status Commit() {
    if (rename(temp_path_.c_str(), target_.c_str()) != 0) {
      return ErrnoError(label_, "rename");
    }
    temp_path_.clear();
    return absl::OkStatus();
  }

 private:
  TempFile(int fd, std::string temp_path, std::string target,
           std::string label)
      : fd_(fd),
        temp_path_(std::move(temp_path)),
        target_(std::move(target)),
        label_(std::move(label)) {}

  int fd_;
  std::string temp_path_;
  std::string target_;
  std::string label_;
};

// Makes renames in `dir` durable; best effort.
void SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

// ---------------------------------------------------------------------------
// Tensor data as raw little-endian bytes.

enum class TypedField { kFloat, kDouble, kInt32, kInt64, kUint64 };

// How a data type's typed field maps to raw bytes (ONNX IR, TensorProto).
struct TypedLayout {
  int32_t data_type;
  TypedField field;
  int bytes_per_value;  // low bytes of each value, little-endian
};

constexpr TypedLayout kTypedLayouts[] = {
    {onnx::TensorProto::FLOAT, TypedField::kFloat, 4},
    {onnx::TensorProto::COMPLEX64, TypedField::kFloat, 4},
    {onnx::TensorProto::DOUBLE, TypedField::kDouble, 8},
    {onnx::TensorProto::COMPLEX128, TypedField::kDouble, 8},
    {onnx::TensorProto::INT32, TypedField::kInt32, 4},
    {onnx::TensorProto::INT16, TypedField::kInt32, 2},
    {onnx::TensorProto::UINT16, TypedField::kInt32, 2},
    {onnx::TensorProto::FLOAT16, TypedField::kInt32, 2},
    {onnx::TensorProto::BFLOAT16, TypedField::kInt32, 2},
    {onnx::TensorProto::INT8, TypedField::kInt32, 1},
    {onnx::TensorProto::UINT8, TypedField::kInt32, 1},
    {onnx::TensorProto::BOOL, TypedField::kInt32, 1},
    {onnx::TensorProto::FLOAT8E4M3FN, TypedField::kInt32, 1},
    {onnx::TensorProto::FLOAT8E4M3FNUZ, TypedField::kInt32, 1},
    {onnx::TensorProto::FLOAT8E5M2, TypedField::kInt32, 1},
    {onnx::TensorProto::FLOAT8E5M2FNUZ, TypedField::kInt32, 1},
    {onnx::TensorProto::FLOAT8E8M0, TypedField::kInt32, 1},
    {onnx::TensorProto::INT64, TypedField::kInt64, 8},
    {onnx::TensorProto::UINT32, TypedField::kUint64, 4},
    {onnx::TensorProto::UINT64, TypedField::kUint64, 8},
};

const TypedLayout* FindLayout(int32_t data_type) {
  for (const TypedLayout& layout : kTypedLayouts) {
    if (layout.data_type == data_type) return &layout;
  }
  return nullptr;
}

int64_t TypedValueCount(const onnx::TensorProto& tensor, TypedField field) {
  switch (field) {
    case TypedField::kFloat: return tensor.float_data_size();
    case TypedField::kDouble: return tensor.double_data_size();
    case TypedField::kInt32: return tensor.int32_data_size();
    case TypedField::kInt64: return tensor.int64_data_size();
    case TypedField::kUint64: return tensor.uint64_data_size();
  }
  return 0;
}

int64_t AllTypedValueCount(const onnx::TensorProto& tensor) {
  return int64_t{tensor.float_data_size()} + tensor.double_data_size() +
         tensor.int32_data_size() + tensor.int64_data_size() +
         tensor.uint64_data_size() + tensor.string_data_size();
}

// Bytes `tensor`'s inline data takes as raw little-endian bytes; nullopt
// when it cannot move to external data (external already, STRING, sub-byte
// or unknown types in typed fields, or data in more than one field).
std::optional<int64_t> ExternalizableBytes(const onnx::TensorProto& tensor) {
  if (IsExternal(tensor)) return std::nullopt;
  int64_t typed = AllTypedValueCount(tensor);
  if (tensor.has_raw_data()) {
    if (typed != 0) return std::nullopt;
    return static_cast<int64_t>(tensor.raw_data().size());
  }
  const TypedLayout* layout = FindLayout(tensor.data_type());
  if (layout == nullptr) return std::nullopt;
  int64_t count = TypedValueCount(tensor, layout->field);
  if (count != typed) return std::nullopt;
  return count * layout->bytes_per_value;
}

using ChunkSink = absl::FunctionRef<absl::Status(std::string_view)>;

// Writes the low `width` bytes of each value's bits, little-endian, in
// bounded chunks.
template <typename Values, typename ToBits>
absl::Status WriteLittleEndian(const Values& values, int width, ToBits to_bits,
                               ChunkSink sink) {
  constexpr size_t kChunkBytes = size_t{1} << 16;
  std::string chunk;
  chunk.reserve(kChunkBytes + 8);
  for (const auto& value : values) {
    uint64_t bits = to_bits(value);
    for (int b = 0; b < width; ++b) {
      chunk.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
    }
    if (chunk.size() >= kChunkBytes) {
      OC_RETURN_IF_ERROR(sink(chunk));
      chunk.clear();
    }
  }
  return chunk.empty() ? absl::OkStatus() : sink(chunk);
}

// Streams an inline tensor's data, converted to raw bytes, to `sink`.
absl::Status WriteInlineData(const onnx::TensorProto& tensor, ChunkSink sink) {
  if (tensor.has_raw_data()) return sink(tensor.raw_data());
  const TypedLayout& layout = *FindLayout(tensor.data_type());
  auto integer = [](auto v) { return static_cast<uint64_t>(v); };
  switch (layout.field) {
    case TypedField::kFloat:
      return WriteLittleEndian(
          tensor.float_data(), layout.bytes_per_value,
          [](float v) { return uint64_t{std::bit_cast<uint32_t>(v)}; }, sink);
    case TypedField::kDouble:
      return WriteLittleEndian(
          tensor.double_data(), layout.bytes_per_value,
          [](double v) { return std::bit_cast<uint64_t>(v); }, sink);
    case TypedField::kInt32:
      return WriteLittleEndian(tensor.int32_data(), layout.bytes_per_value,
                               integer, sink);
    case TypedField::kInt64:
      return WriteLittleEndian(tensor.int64_data(), layout.bytes_per_value,
                               integer, sink);
    case TypedField::kUint64:
      return WriteLittleEndian(tensor.uint64_data(), layout.bytes_per_value,
                               integer, sink);
  }
  return absl::InternalError("unhandled typed field");
}

// `tensor` without its data: every field but raw_data, the typed fields,
// external_data and data_location (kept in step with the schema by a test).
onnx::TensorProto WithoutData(const onnx::TensorProto& tensor) {
  onnx::TensorProto copy;
  *copy.mutable_dims() = tensor.dims();
  if (tensor.has_data_type()) copy.set_data_type(tensor.data_type());
  if (tensor.has_segment()) *copy.mutable_segment() = tensor.segment();
  if (tensor.has_name()) copy.set_name(tensor.name());
  if (tensor.has_doc_string()) copy.set_doc_string(tensor.doc_string());
  *copy.mutable_metadata_props() = tensor.metadata_props();
  copy.mutable_unknown_fields()->MergeFrom(tensor.unknown_fields());
  return copy;
}

// ---------------------------------------------------------------------------
// Serializing with some tensors replaced, without copying the model.

using TensorReplacements =
    absl::flat_hash_map<const onnx::TensorProto*, onnx::TensorProto>;

// Serializes a model exactly as SerializeToString would (fields in number
// order, unknown fields last), except that tensors found in `replacements`
// are written in place of the model's own. Only tensors and the messages
// that hold them are walked here; every other field is serialized by
// protobuf's reflection.
class ModelSerializer {
 public:
  explicit ModelSerializer(const TensorReplacements& replacements)
      : replacements_(replacements) {}

  // The serialized size of `model`; call before Write.
  size_t ComputeSize(const Message& model) {
    sizes_.clear();
    return HolderSize(model);
  }

  // Writes `model`; ComputeSize must have been called on it just before.
  void Write(const Message& model, CodedOutputStream& out) {
    next_size_ = 1;  // the root's own size is not written
    WriteHolderFields(model, out);
  }

 private:
  static bool HoldsTensors(const FieldDescriptor& field) {
    return field.message_type() != nullptr &&
           CanHoldTensors(*field.message_type());
  }

  static std::vector<const FieldDescriptor*> PresentFields(const Message& m) {
    std::vector<const FieldDescriptor*> fields;
    m.GetReflection()->ListFields(m, &fields);  // sorted by number
    return fields;
  }

  template <typename Fn>
  static void ForEachElement(const Message& m, const FieldDescriptor* field,
                             Fn fn) {
    const Reflection& reflection = *m.GetReflection();
    if (!field->is_repeated()) {
      fn(reflection.GetMessage(m, field));
      return;
    }
    for (int i = 0, n = reflection.FieldSize(m, field); i < n; ++i) {
      fn(reflection.GetRepeatedMessage(m, field, i));
    }
  }

  // The tensor to write for `m` when it is a TensorProto, else null.
  const onnx::TensorProto* TensorToWrite(const Message& m) const {
    if (m.GetDescriptor() != onnx::TensorProto::descriptor()) return nullptr;
    const auto* tensor = static_cast<const onnx::TensorProto*>(&m);
    auto it = replacements_.find(tensor);
    return it == replacements_.end() ? tensor : &it->second;
  }

  size_t ElementSize(const Message& m) {
    if (const onnx::TensorProto* tensor = TensorToWrite(m)) {
      return tensor->ByteSizeLong();  // caches sizes for Write
    }
    return HolderSize(m);
  }

  // Size of a tensor-holding message; records it (pre-order) for Write.
  size_t HolderSize(const Message& m) {
    size_t slot = sizes_.size();
    sizes_.push_back(0);
    size_t total = 0;
    for (const FieldDescriptor* field : PresentFields(m)) {
      if (!HoldsTensors(*field)) {
        total += WireFormat::FieldByteSize(field, m);  // caches sizes
        continue;
      }
      size_t tag_size =
          WireFormatLite::TagSize(field->number(), WireFormatLite::TYPE_MESSAGE);
      ForEachElement(m, field, [&](const Message& element) {
        size_t size = ElementSize(element);
        total += tag_size + CodedOutputStream::VarintSize64(size) + size;
      });
    }
    total += WireFormat::ComputeUnknownFieldsSize(
        m.GetReflection()->GetUnknownFields(m));
    sizes_[slot] = total;
    return total;
  }

  void WriteElement(const Message& m, CodedOutputStream& out) {
    if (const onnx::TensorProto* tensor = TensorToWrite(m)) {
      out.WriteVarint32(static_cast<uint32_t>(tensor->GetCachedSize()));
      tensor->SerializeWithCachedSizes(&out);
      return;
    }
    out.WriteVarint64(sizes_[next_size_++]);
    WriteHolderFields(m, out);
  }

  void WriteHolderFields(const Message& m, CodedOutputStream& out) {
    for (const FieldDescriptor* field : PresentFields(m)) {
      if (!HoldsTensors(*field)) {
        WireFormat::SerializeFieldWithCachedSizes(field, m, &out);
        continue;
      }
      ForEachElement(m, field, [&](const Message& element) {
        WireFormatLite::WriteTag(field->number(),
                                 WireFormatLite::WIRETYPE_LENGTH_DELIMITED,
                                 &out);
        WriteElement(element, out);
      });
    }
    WireFormat::SerializeUnknownFields(m.GetReflection()->GetUnknownFields(m),
                                       &out);
  }

  const TensorReplacements& replacements_;
  std::vector<size_t> sizes_;  // of tensor-holding messages, in pre-order
  size_t next_size_ = 0;
};

// Serializes `model` (with `serializer`'s replacements) into `file`.
absl::Status WriteModelFile(const Message& model, ModelSerializer& serializer,
                            TempFile& file) {
  google::protobuf::io::FileOutputStream stream(file.fd());
  {
    CodedOutputStream out(&stream);
    serializer.Write(model, out);
    out.Trim();
    if (out.HadError()) {
      errno = stream.GetErrno();
      return ErrnoError(file.label(), "write");
    }
  }
  if (!stream.Flush()) {
    errno = stream.GetErrno();
    return ErrnoError(file.label(), "write");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Planning what goes to the external data file.

// Where the files of one save go.
struct SaveTargets {
  std::string out_dir;        // canonical directory of the model
  std::string data_location;  // relative to out_dir, as written in references
  std::string data_path;      // canonical path of the data file
  std::string source_dir;     // canonical directory of existing references
  bool carry_all = false;     // existing references move to the data file
};

// One tensor's bytes in the data file.
struct DataBlock {
  const onnx::TensorProto* tensor;
  std::optional<FileRange> source;  // set: carried from an external file
  int64_t offset = 0;
  int64_t length = 0;
};

struct SavePlan {
  std::vector<DataBlock> blocks;  // in file order
  TensorReplacements replacements;
};

absl::StatusOr<std::string> CanonicalDirectory(const std::string& dir) {
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(canonical, ec)) {
    return absl::NotFoundError(
        absl::StrCat("directory '", dir, "' does not exist"));
  }
  return canonical.string();
}

absl::StatusOr<SaveTargets> ResolveTargets(const std::string& path,
                                           const SaveOptions& options) {
  SaveTargets targets;
  fs::path file_name = fs::path(path).filename();
  if (file_name.empty() || file_name == "." || file_name == "..") {
    return absl::InvalidArgumentError("not a file path");
  }
  OC_ASSIGN_OR_RETURN(targets.out_dir, CanonicalDirectory(DirectoryOf(path)));
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return absl::FailedPreconditionError("is a directory");
  }
  targets.data_location =
      options.external_data_file.empty()
          ? absl::StrCat(file_name.string(), ".data")
          : options.external_data_file;
  OC_ASSIGN_OR_RETURN(targets.data_path,
                      ConfineLocation(targets.out_dir, targets.data_location));
  if (targets.data_path ==
      fs::weakly_canonical(fs::path(targets.out_dir) / file_name, ec)
          .string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "external data file '", targets.data_location, "' is the model file"));
  }
  targets.source_dir = targets.out_dir;
  if (!options.source_base_dir.empty()) {
    OC_ASSIGN_OR_RETURN(targets.source_dir,
                        CanonicalDirectory(options.source_base_dir));
  }
  targets.carry_all = targets.source_dir != targets.out_dir;
  return targets;
}

// Whether an existing reference must be copied into the data file: always
// when the model moves to another directory, and when it points at the data
// file about to be replaced.
bool MustCarry(const onnx::TensorProto& tensor, const SaveTargets& targets) {
  if (targets.carry_all) return true;
  absl::StatusOr<ExternalDataInfo> info = ParseExternalDataInfo(tensor);
  if (!info.ok()) return false;
  absl::StatusOr<std::string> resolved =
      ConfineLocation(targets.source_dir, info->location);
  return resolved.ok() && *resolved == targets.data_path;
}

int64_t AlignUp(int64_t offset, int64_t length) {
  int64_t alignment = length >= 4096 ? 4096 : 64;
  return (offset + alignment - 1) / alignment * alignment;
}

// Decides which tensors go to the data file and builds their replacements.
absl::StatusOr<SavePlan> PlanSave(const onnx::ModelProto& model,
                                  const SaveTargets& targets,
                                  const SaveOptions& options) {
  SavePlan plan;
  int64_t end = 0;
  auto place = [&](const onnx::TensorProto& tensor,
                   std::optional<FileRange> source, int64_t length,
                   onnx::TensorProto replacement) {
    int64_t offset = AlignUp(end, length);
    end = offset + length;
    SetExternalDataInfo({targets.data_location, offset, length, ""},
                        replacement);
    plan.blocks.push_back({&tensor, std::move(source), offset, length});
    plan.replacements.emplace(&tensor, std::move(replacement));
  };
  OC_RETURN_IF_ERROR(ForEachTensor(
      model,
      [&](const onnx::TensorProto& tensor,
          const TensorPath& path) -> absl::Status {
        if (IsExternal(tensor)) {
          if (!MustCarry(tensor, targets)) return absl::OkStatus();
          OC_ASSIGN_OR_RETURN(
              FileRange range,
              LocateExternalData(tensor, targets.source_dir, &path));
          int64_t length = range.length;
          place(tensor, std::move(range), length, tensor);
          return absl::OkStatus();
        }
        if (options.external_data_threshold < 0) return absl::OkStatus();
        std::optional<int64_t> bytes = ExternalizableBytes(tensor);
        if (!bytes || *bytes == 0 || *bytes < options.external_data_threshold) {
          return absl::OkStatus();
        }
        place(tensor, std::nullopt, *bytes, WithoutData(tensor));
        return absl::OkStatus();
      }));
  return plan;
}

// The one source file whose bytes are the data file `plan` writes: every
// block carried from it at its own offset, in order, the gaps between them
// alignment padding only (under 4 KiB), and nothing after the last; else
// nullopt.
std::optional<std::string> IdenticalSource(const SavePlan& plan) {
  if (plan.blocks.empty() || !plan.blocks.front().source) return std::nullopt;
  const std::string& path = plan.blocks.front().source->path;
  int64_t end = 0;
  for (const DataBlock& block : plan.blocks) {
    if (!block.source || block.source->path != path || block.source->offset != block.offset ||
        block.offset < end || block.offset - end >= 4096) {
      return std::nullopt;
    }
    end = block.offset + block.length;
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || info.st_size != end) return std::nullopt;
  return path;
}

// Writes every block of `plan` at its offset, zero-padding between them.
absl::Status WriteDataFile(const SavePlan& plan, TempFile& file) {
  static const std::string kZeros(4096, '\0');
  int64_t written = 0;
  auto sink = [&](std::string_view chunk) {
    written += static_cast<int64_t>(chunk.size());
    return file.Write(chunk);
  };
  for (const DataBlock& block : plan.blocks) {
    OC_RETURN_IF_ERROR(
        sink(std::string_view(kZeros).substr(0, block.offset - written)));
    int64_t start = written;
    OC_RETURN_IF_ERROR(block.source ? StreamFileRange(*block.source, sink)
                                    : WriteInlineData(*block.tensor, sink));
    if (written - start != block.length) {
      return absl::InternalError(absl::StrCat(
          file.label(), ": tensor '", block.tensor->name(), "' wrote ",
          written - start, " bytes, planned ", block.length));
    }
  }
  return absl::OkStatus();
}

absl::Status TooLarge(size_t size, int64_t limit, const SaveOptions& options) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the serialized model would be ", size,
      " bytes, over the limit of ", limit, " bytes",
      limit == kMaxProtobufBytes ? " (protobuf cannot hold 2 GiB)" : "",
      options.external_data_threshold < 0
          ? "; save with an external data threshold (e.g. 1024 bytes) to "
            "move large tensors to a separate file"
          : "; lower the external data threshold"));
}

absl::Status SaveModelImpl(const onnx::ModelProto& model,
                           const std::string& path,
                           const SaveOptions& options) {
  OC_ASSIGN_OR_RETURN(SaveTargets targets, ResolveTargets(path, options));
  OC_ASSIGN_OR_RETURN(SavePlan plan, PlanSave(model, targets, options));
  ModelSerializer serializer(plan.replacements);
  size_t size = serializer.ComputeSize(model);
  int64_t limit = EffectiveLimit(options.max_model_bytes);
  if (size > static_cast<uint64_t>(std::max<int64_t>(limit, 0))) {
    return TooLarge(size, limit, options);
  }
  std::optional<TempFile> data;
  if (!plan.blocks.empty()) {
    OC_ASSIGN_OR_RETURN(
        TempFile created,
        TempFile::CreateBeside(
            targets.data_path,
            absl::StrCat("external data file '", targets.data_location, "'")));
    data.emplace(std::move(created));
    std::optional<std::string> same =
        options.move_identical_data ? IdenticalSource(plan) : std::nullopt;
    if (!same || !data->MoveFrom(*same)) OC_RETURN_IF_ERROR(WriteDataFile(plan, *data));
    OC_RETURN_IF_ERROR(data->SyncAndClose(options.durable));
  }
  OC_ASSIGN_OR_RETURN(TempFile file, TempFile::CreateBeside(path, ""));
  OC_RETURN_IF_ERROR(WriteModelFile(model, serializer, file));
  OC_RETURN_IF_ERROR(file.SyncAndClose(options.durable));
  if (data) {
    OC_RETURN_IF_ERROR(data->Commit());
    if (options.durable) SyncDirectory(fs::path(targets.data_path).parent_path().string());
  }
  OC_RETURN_IF_ERROR(file.Commit());
  if (options.durable) SyncDirectory(DirectoryOf(path));
  return absl::OkStatus();
}

}  // namespace

void QuietProtobufUtf8Logs() {
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char* filename,
                                     int line, const std::string& message) {
    if (absl::StrContains(message, "invalid UTF-8")) return;
    static constexpr const char* kLevels[] = {"INFO", "WARNING", "ERROR", "FATAL"};
    std::fprintf(stderr, "[libprotobuf %s %s:%d] %s\n",
                 kLevels[std::clamp(static_cast<int>(level), 0, 3)], filename, line,
                 message.c_str());
  });
}

absl::StatusOr<onnx::ModelProto> ParseModel(std::string_view bytes,
                                            std::string_view source_name,
                                            const LoadOptions& options) {
  onnx::ModelProto model;
  OC_RETURN_IF_ERROR(ParseModelInto(bytes, source_name, model, options));
  return model;
}

google::protobuf::ArenaOptions ModelArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = size_t{64} << 10;
  options.max_block_size = size_t{1} << 20;
  return options;
}

absl::Status ParseModelInto(std::string_view bytes, std::string_view source_name,
                            onnx::ModelProto& model, const LoadOptions& options) {
  OC_RETURN_IF_ERROR(
      CheckModelSize(source_name, bytes.size(), options.max_model_bytes));
  if (bytes.empty()) return Malformed(source_name, "the input is empty");
  bool parsed;
  {
    // Debug builds of protobuf log every string field that is not UTF-8;
    // proto2 keeps such bytes as they are, and so does this loader.
    google::protobuf::LogSilencer silence_utf8_warnings;
    parsed = model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }
  if (!parsed || KeepsWireError(model, ScanModel(model))) return Diagnose(source_name, bytes);
  return absl::OkStatus();
}

absl::StatusOr<LoadedModel> LoadModel(const std::string& path,
                                      const LoadOptions& options) {
  LoadedModel loaded;
  OC_ASSIGN_OR_RETURN(LoadedModel where, LoadModelInto(path, loaded.model, options));
  loaded.path = std::move(where.path);
  loaded.base_dir = std::move(where.base_dir);
  return loaded;
}

absl::StatusOr<LoadedModel> LoadModelInto(const std::string& path, onnx::ModelProto& model,
                                          const LoadOptions& options) {
  LoadedModel loaded;
  ModelScan scan;
  {
    OC_ASSIGN_OR_RETURN(ModelFile file,
                        ModelFile::Open(path, options.max_model_bytes));
    if (file.size() == 0) return Malformed(path, "the input is empty");
    bool parsed = file.Parse(model);
    if (parsed) scan = ScanModel(model);
    if (!parsed || KeepsWireError(model, scan)) {
      model = onnx::ModelProto();  // free it before reading the bytes
      OC_ASSIGN_OR_RETURN(std::string bytes, file.ReadAll(path));
      return Diagnose(path, bytes);
    }
  }
  loaded.path = path;
  loaded.base_dir = DirectoryOf(path);
  if (!scan.external_tensors) return loaded;  // nothing to check or load
  if (options.load_external_data) {
    OC_RETURN_IF_ERROR(WithPrefix(
        path, LoadExternalData(model, loaded.base_dir,
                               options.max_external_data_bytes)));
  } else if (options.verify_external_data) {
    OC_RETURN_IF_ERROR(WithPrefix(
        path, CheckExternalReferences(model, loaded.base_dir,
                                      options.max_external_data_bytes)));
  }
  return loaded;
}

absl::Status SaveModel(const onnx::ModelProto& model, const std::string& path,
                       const SaveOptions& options) {
  return WithPrefix(path, SaveModelImpl(model, path, options));
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes) {
  absl::Status status = [&]() -> absl::Status {
    OC_ASSIGN_OR_RETURN(TempFile file, TempFile::CreateBeside(path, ""));
    OC_RETURN_IF_ERROR(file.Write(bytes));
    OC_RETURN_IF_ERROR(file.SyncAndClose());
    return file.Commit();
  }();
  if (status.ok()) SyncDirectory(DirectoryOf(path));
  return WithPrefix(path, status);
}

}  // namespace onnxconvert
