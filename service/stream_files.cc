#include "service/stream_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "ir/external_data.h"
#include "service/error_text.h"

namespace onnxconvert::service {
namespace fs = std::filesystem;

namespace {

bool IsSafeFileName(absl::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
           c == '-';
  });
}

std::string_view AsStd(absl::string_view s) { return {s.data(), s.size()}; }

std::string Label(absl::string_view name) {
  return name.empty() ? "the model" : absl::StrCat("external data file '", Abbreviate(name), "'");
}

// Longest external-data location accepted, and longest component of one
// (what file systems allow).
constexpr size_t kMaxLocationBytes = 1024;
constexpr size_t kMaxComponentBytes = 255;

// InvalidArgument, naming the file, when `name` is longer than a file
// system allows.
absl::Status CheckLocationLength(absl::string_view name) {
  if (name.size() > kMaxLocationBytes) {
    return absl::InvalidArgumentError(absl::StrCat(Label(name), ": the location is longer than ",
                                                   kMaxLocationBytes, " bytes"));
  }
  for (absl::string_view component : absl::StrSplit(name, '/')) {
    if (component.size() > kMaxComponentBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          Label(name), ": a component of the location is longer than ", kMaxComponentBytes,
          " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<StreamWorkspace::FileIdentity> StreamWorkspace::IdentityOf(
    const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino),
                      static_cast<int64_t>(info.st_size),
                      static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 +
                          info.st_mtim.tv_nsec};
}

std::string ModelFileName(absl::string_view model_name) {
  size_t slash = model_name.find_last_of('/');
  absl::string_view base =
      slash == absl::string_view::npos ? model_name : model_name.substr(slash + 1);
  return IsSafeFileName(base) ? std::string(base) : "model.onnx";
}

StreamWorkspace::StreamWorkspace(std::string root, std::string model_file, UploadLimits limits,
                                 bool owned)
    : root_(std::move(root)),
      in_dir_(root_ + "/in"),
      out_dir_(root_ + "/out"),
      model_file_(std::move(model_file)),
      limits_(limits),
      owned_(owned) {}

StreamWorkspace::~StreamWorkspace() {
  files_.clear();
  if (!owned_) return;
  std::error_code ec;
  fs::remove_all(root_, ec);
}

absl::StatusOr<std::unique_ptr<StreamWorkspace>> StreamWorkspace::Attach(
    const std::string& root, const std::string& model_file) {
  if (!IsSafeFileName(model_file)) {
    return absl::InvalidArgumentError(absl::StrCat("model file name '", Abbreviate(model_file),
                                                   "' is not a plain file name"));
  }
  auto workspace = std::unique_ptr<StreamWorkspace>(
      new StreamWorkspace(root, model_file, UploadLimits(), /*owned=*/false));
  std::error_code ec;
  if (!fs::is_directory(workspace->in_dir_, ec) || !fs::is_directory(workspace->out_dir_, ec)) {
    return absl::NotFoundError(
        absl::StrCat("work directory ", root, ": has no in/ and out/ directories"));
  }
  return workspace;
}

absl::StatusOr<std::unique_ptr<StreamWorkspace>> StreamWorkspace::Create(
    const std::string& parent, const std::string& model_file, const UploadLimits& limits) {
  if (!IsSafeFileName(model_file)) {
    return absl::InvalidArgumentError(absl::StrCat("model file name '", model_file,
                                                   "' is not a plain file name"));
  }
  std::string pattern = absl::StrCat(parent, "/onnx-convert-stream-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("work directory ", parent, ": cannot create a directory in it"));
  }
  std::error_code ec;
  std::string root = fs::canonical(pattern, ec).string();
  auto workspace = std::unique_ptr<StreamWorkspace>(
      new StreamWorkspace(ec ? pattern : root, model_file, limits, /*owned=*/true));
  if (!fs::create_directory(workspace->in_dir_, ec) ||
      !fs::create_directory(workspace->out_dir_, ec)) {
    return absl::InternalError(absl::StrCat("work directory ", workspace->root_,
                                            ": cannot create in/ and out/"));
  }
  return workspace;
}

std::string StreamWorkspace::input_model_path() const {
  return absl::StrCat(in_dir_, "/", model_file_);
}

std::string StreamWorkspace::output_model_path() const {
  return absl::StrCat(out_dir_, "/", model_file_);
}

absl::StatusOr<std::ofstream*> StreamWorkspace::OpenForAppend(absl::string_view name) {
  auto it = files_.find(name);
  if (it != files_.end()) return &it->second;
  if (static_cast<int64_t>(files_.size()) >= limits_.max_files) {
    return absl::ResourceExhaustedError(absl::StrCat(
        Label(name), ": the upload holds more than ", limits_.max_files, " files"));
  }
  std::string path = input_model_path();
  if (!name.empty()) {
    OC_RETURN_IF_ERROR(CheckLocationLength(name));
    OC_RETURN_IF_ERROR(WithPrefix(Label(name), CheckRelativeLocation(AsStd(name))));
    if (name == model_file_) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(name), ": has the model file's own name"));
    }
    absl::StatusOr<std::string> confined = ConfineLocation(in_dir_, AsStd(name));
    if (!confined.ok()) return WithPrefix(Label(name), confined.status());
    path = *confined;
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
  }
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) {
    return absl::InternalError(absl::StrCat(Label(name), ": cannot be written on the server"));
  }
  return &files_.emplace(std::string(name), std::move(stream)).first->second;
}

absl::Status StreamWorkspace::Append(absl::string_view name, absl::string_view data) {
  OC_ASSIGN_OR_RETURN(std::ofstream * stream, OpenForAppend(name));
  int64_t& size = sizes_[std::string(name)];
  int64_t bytes = static_cast<int64_t>(data.size());
  if (name.empty() && size + bytes > limits_.max_model_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the model is over the limit of ", limits_.max_model_bytes, " bytes"));
  }
  if (total_bytes_ + bytes > limits_.max_total_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        Label(name), ": the upload is over the limit of ", limits_.max_total_bytes, " bytes"));
  }
  stream->write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!*stream) {
    return absl::InternalError(absl::StrCat(Label(name), ": write failed on the server"));
  }
  size += bytes;
  total_bytes_ += bytes;
  return absl::OkStatus();
}

absl::Status StreamWorkspace::FinishUpload() {
  for (auto& [name, stream] : files_) {
    stream.close();
    if (!stream) {
      return absl::InternalError(absl::StrCat(Label(name), ": write failed on the server"));
    }
  }
  auto model = sizes_.find("");
  if (model == sizes_.end() || model->second == 0) {
    return absl::InvalidArgumentError("the upload holds no model bytes (chunks named \"\")");
  }
  for (const auto& [name, size] : sizes_) {
    if (name.empty()) continue;
    std::optional<FileIdentity> identity = IdentityOf(absl::StrCat(in_dir_, "/", name));
    if (identity) uploads_.emplace_back(name, *identity);
  }
  return absl::OkStatus();
}

std::optional<std::string> StreamWorkspace::UploadSameAs(const std::string& name) const {
  if (name.empty()) return std::nullopt;
  std::optional<FileIdentity> output = IdentityOf(absl::StrCat(out_dir_, "/", name));
  if (!output) return std::nullopt;
  for (const auto& [upload, identity] : uploads_) {
    if (identity == *output) return upload;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> StreamWorkspace::OutputFiles()
    const {
  std::vector<std::pair<std::string, int64_t>> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(out_dir_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string relative = fs::relative(it->path(), out_dir_).string();
    std::string name = relative == model_file_ ? "" : relative;
    files.emplace_back(name, static_cast<int64_t>(it->file_size()));
  }
  if (ec) return absl::InternalError(absl::StrCat("output directory: ", ec.message()));
  std::sort(files.begin(), files.end());  // "" (the model) sorts first
  if (files.empty() || !files.front().first.empty()) {
    return absl::InternalError("the output model was not written");
  }
  return files;
}

absl::Status StreamWorkspace::ReadOutput(const std::string& name, int64_t chunk_bytes,
                                         absl::FunctionRef<absl::Status(std::string&)> sink,
                                         absl::Span<const ByteRange> skip) const {
  std::string path = absl::StrCat(out_dir_, "/", name.empty() ? model_file_ : name);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat(Label(name), ": output cannot be read"));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  struct stat info;
  int64_t size = fstat(fd, &info) == 0 ? static_cast<int64_t>(info.st_size) : 0;
  absl::Status status;
  std::string piece;
  int64_t at = 0;
  size_t next_skip = 0;
  while (status.ok()) {
    int64_t end = at + chunk_bytes;  // of this chunk, unless a range or the file ends first
    if (next_skip < skip.size()) {
      const ByteRange& range = skip[next_skip];
      if (range.offset < at || range.length < 0 || range.length > size - range.offset) {
        status = absl::InternalError(
            absl::StrCat(Label(name), ": ranges to skip out of order or past the end"));
        break;
      }
      if (range.offset == at) {
        at += range.length;
        ++next_skip;
        continue;
      }
      end = std::min(end, range.offset);
    }
    piece.resize(static_cast<size_t>(end - at));
    size_t got = 0;
    while (got < piece.size()) {  // the whole chunk unless the file ends
      ssize_t read_now = pread(fd, piece.data() + got, piece.size() - got,
                               static_cast<off_t>(at + static_cast<int64_t>(got)));
      if (read_now < 0 && errno == EINTR) continue;
      if (read_now < 0) {
        status = absl::InternalError(absl::StrCat(Label(name), ": output read failed"));
      }
      if (read_now <= 0) break;
      got += static_cast<size_t>(read_now);
    }
    if (!status.ok() || got == 0) break;
    piece.resize(got);
    at += static_cast<int64_t>(got);
    status = sink(piece);
  }
  close(fd);
  return status;
}

absl::Status StreamWorkspace::Relabel(const absl::Status& status,
                                      absl::string_view model_name) const {
  if (status.ok()) return status;
  std::string message = absl::StrReplaceAll(
      status.message(),
      {{input_model_path(), model_name},
       {output_model_path(), model_name},
       {absl::StrCat(in_dir_, "/"), ""},
       {absl::StrCat(out_dir_, "/"), ""},
       {in_dir_, "."},
       {out_dir_, "."}});
  return absl::Status(status.code(), message);
}

}  // namespace onnxconvert::service
