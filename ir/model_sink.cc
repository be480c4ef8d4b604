#include "ir/model_sink.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/wire.h"

namespace onnxconvert {
namespace {

// The ModelProto field number of the graph.
constexpr uint32_t kGraphField = 7;

// Pieces at least this large are copied from a source file by the kernel.
constexpr size_t kKernelCopyMinBytes = 64 << 10;

// The largest message protobuf parses.
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;

}  // namespace

void StringModelSink::Expect(size_t bytes) {
  // Room for the fields around the nodes and a model that grew a little.
  nodes_.reserve(bytes + bytes / 8 + 4096);
}

absl::Status StringModelSink::AppendNodes(absl::string_view bytes) {
  nodes_.append(bytes.data(), bytes.size());
  return absl::OkStatus();
}

namespace {

size_t TotalSize(absl::Span<const absl::string_view> pieces) {
  size_t total = 0;
  for (absl::string_view piece : pieces) total += piece.size();
  return total;
}

}  // namespace

absl::Status StringModelSink::Finish(absl::string_view head,
                                     absl::Span<const absl::string_view> graph_rest,
                                     absl::string_view tail) {
  size_t graph_bytes = nodes_.size() + TotalSize(graph_rest);
  std::string front(head.data(), head.size());
  wire::AppendLengthDelimitedHeader(kGraphField, graph_bytes, front);
  size_t total = front.size() + graph_bytes + tail.size();
  if (nodes_.capacity() >= total) {
    // In place: the nodes move up within the room reserved, and the model
    // takes over the buffer.
    nodes_.insert(0, front);
    model_ = std::move(nodes_);
  } else {
    model_.clear();
    model_.reserve(total);
    model_.append(front);
    model_.append(nodes_);
  }
  for (absl::string_view piece : graph_rest) model_.append(piece.data(), piece.size());
  model_.append(tail.data(), tail.size());
  std::string().swap(nodes_);
  return absl::OkStatus();
}

absl::Status StringModelSink::WriteWhole(const onnx::ModelProto& model) {
  std::string().swap(nodes_);
  if (!model.SerializeToString(&model_)) {
    return absl::InvalidArgumentError("the converted model does not serialize");
  }
  return absl::OkStatus();
}

FileModelSink::~FileModelSink() {
  DropNodes();
  std::remove((path_ + ".partial").c_str());
}

void FileModelSink::DropNodes() {
  if (nodes_ != nullptr) std::fclose(nodes_);
  nodes_ = nullptr;
  node_bytes_ = 0;
  std::remove((path_ + ".nodes.partial").c_str());
}

absl::Status FileModelSink::Error(absl::string_view what, const std::string& file) const {
  return absl::UnavailableError(absl::StrCat("cannot ", what, " '", file, "': ",
                                             std::strerror(errno)));
}

absl::Status FileModelSink::AppendNodes(absl::string_view bytes) {
  std::string file = path_ + ".nodes.partial";
  if (nodes_ == nullptr) {
    nodes_ = std::fopen(file.c_str(), "w+b");
    if (nodes_ == nullptr) return Error("create", file);
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), nodes_) != bytes.size()) {
    return Error("write", file);
  }
  node_bytes_ += bytes.size();
  return absl::OkStatus();
}

absl::Status FileModelSink::Finish(absl::string_view head,
                                   absl::Span<const absl::string_view> graph_rest,
                                   absl::string_view tail) {
  std::string partial = path_ + ".partial";
  std::string header(head);
  size_t rest = TotalSize(graph_rest);
  wire::AppendLengthDelimitedHeader(kGraphField, node_bytes_ + rest, header);
  uint64_t total = header.size() + node_bytes_ + rest + tail.size();
  if (total > kMaxModelBytes) {
    DropNodes();
    return absl::ResourceExhaustedError(absl::StrCat(
        "the converted model would take ", total,
        " bytes, over protobuf's 2 GiB: keep its tensors in external data"));
  }
  std::FILE* out = std::fopen(partial.c_str(), "wb");
  if (out == nullptr) return Error("create", partial);
  copied_.clear();
  auto write = [&](absl::string_view bytes) { return Write(out, bytes); };
  bool ok = write(header);
  if (ok && nodes_ != nullptr) {
    // The node bytes are copied file to file by the kernel.
    ok = std::fflush(nodes_) == 0 && std::fflush(out) == 0;
    off_t offset = 0;
    int from = fileno(nodes_);
    int to = fileno(out);
    while (ok && offset < node_bytes_) {
      ssize_t sent = sendfile(to, from, &offset, node_bytes_ - offset);
      if (sent <= 0) ok = false;
    }
  }
  for (absl::string_view piece : graph_rest) ok = ok && write(piece);
  ok = ok && write(tail);
  ok = ok && std::fflush(out) == 0 && (!durable_ || ::fsync(fileno(out)) == 0);
  ok = (std::fclose(out) == 0) && ok;
  DropNodes();
  return Commit(ok);
}

bool CopyBetweenFiles(int from, int64_t offset, int to, size_t length) {
  loff_t at = offset;
  size_t left = length;
  while (left > 0) {
    ssize_t copied = copy_file_range(from, &at, to, nullptr, left, 0);
    if (copied <= 0) break;
    left -= static_cast<size_t>(copied);
  }
  // Between file systems (copy_file_range's EXDEV) sendfile still copies in
  // the kernel.
  off_t sent_from = at;
  while (left > 0) {
    ssize_t sent = sendfile(to, from, &sent_from, left);
    if (sent <= 0) break;
    left -= static_cast<size_t>(sent);
  }
  // Neither can: through memory.
  std::string buffer;
  while (left > 0) {
    buffer.resize(std::min<size_t>(left, 1 << 20));
    ssize_t got = ::pread(from, buffer.data(), buffer.size(), sent_from);
    if (got <= 0) return false;
    for (ssize_t put = 0; put < got;) {
      ssize_t wrote = ::write(to, buffer.data() + put, static_cast<size_t>(got - put));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return false;
      put += wrote;
    }
    sent_from += got;
    left -= static_cast<size_t>(got);
  }
  return true;
}

bool FileModelSink::Write(std::FILE* out, absl::string_view bytes) {
  int64_t offset = source_ == nullptr || bytes.size() < kKernelCopyMinBytes
                       ? -1
                       : source_->OffsetOf(bytes);
  if (offset < 0) return std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  off_t at = std::fflush(out) == 0 ? ::lseek(fileno(out), 0, SEEK_CUR) : -1;
  if (at < 0 || !CopyBetweenFiles(source_->fd(), offset, fileno(out), bytes.size())) {
    return false;
  }
  copied_.push_back({at, offset, static_cast<int64_t>(bytes.size())});
  return true;
}

absl::Status FileModelSink::WriteWhole(const onnx::ModelProto& model) {
  DropNodes();
  copied_.clear();
  std::string partial = path_ + ".partial";
  int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Error("create", partial);
  bool ok = model.SerializeToFileDescriptor(fd) && (!durable_ || ::fsync(fd) == 0);
  ok = (::close(fd) == 0) && ok;
  return Commit(ok);
}

absl::Status FileModelSink::Commit(bool written) {
  std::string partial = path_ + ".partial";
  if (!written) {
    absl::Status error = Error("write", partial);
    std::remove(partial.c_str());
    return error;
  }
  if (std::rename(partial.c_str(), path_.c_str()) != 0) return Error("rename to", path_);
  return absl::OkStatus();
}

absl::StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  }
  size_t size = static_cast<size_t>(info.st_size);
  void* data = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    int error = errno;
    ::close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map '", path, "': ", std::strerror(error)));
  }
  return MappedFile(data, size, fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::Release(absl::string_view piece) const {
  if (OffsetOf(piece) < 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(piece.data());
  const uintptr_t begin = (at + page - 1) / page * page;
  const uintptr_t end = (at + piece.size()) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

int64_t MappedFile::OffsetOf(absl::string_view piece) const {
  auto begin = reinterpret_cast<uintptr_t>(data_);
  auto at = reinterpret_cast<uintptr_t>(piece.data());
  if (data_ == nullptr || at < begin || at - begin > size_ || piece.size() > size_ - (at - begin)) {
    return -1;
  }
  return static_cast<int64_t>(at - begin);
}

}  // namespace onnxconvert
