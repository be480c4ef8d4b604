#include "service/ipc.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace onnxconvert::service {
namespace {

// "<call>: <strerror(errno)>".
std::string ErrnoText(absl::string_view call) { return absl::StrCat(call, ": ", strerror(errno)); }

// A section's size as the file stores it.
using StoredSize = uint64_t;

// Bytes before the first section: the count and every size.
size_t HeaderBytes(size_t count) { return sizeof(StoredSize) * (count + 1); }

// Files up to this size are written and read with write() and pread()
// rather than mapped: for small files a mapping costs more than a copy.
constexpr size_t kCopiedFileBytes = size_t{256} << 10;

// Lays `sections` out at `out` (HeaderBytes, then their bytes).
void Lay(absl::Span<const Section> sections, char* out) {
  StoredSize count = sections.size();
  std::memcpy(out, &count, sizeof(count));
  size_t at = HeaderBytes(sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    StoredSize size = sections[i].size;
    std::memcpy(out + sizeof(StoredSize) * (i + 1), &size, sizeof(size));
    if (size > 0) sections[i].write(out + at);
    at += size;
  }
}

// Writes all of `bytes` to `fd`.
bool WriteAll(int fd, const char* bytes, size_t size) {
  while (size > 0) {
    ssize_t written = write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

// Reads `size` bytes of `fd` from offset 0 into `out`.
bool ReadAll(int fd, char* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t got = pread(fd, out + done, size - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

absl::StatusOr<std::pair<UniqueFd, UniqueFd>> SocketPair() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(ErrnoText("socketpair"));
  }
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

absl::Status SendPacket(int socket, absl::string_view bytes, int fd) {
  iovec data{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  }
  ssize_t sent;
  do {
    sent = sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent >= 0) return absl::OkStatus();
  if (errno == EPIPE || errno == ECONNRESET) {
    return absl::UnavailableError("the other process has closed its socket");
  }
  return absl::InternalError(ErrnoText("sendmsg"));
}

absl::StatusOr<std::optional<Packet>> ReceivePacket(int socket, size_t max_bytes) {
  Packet packet;
  packet.bytes.resize(max_bytes);
  iovec data{packet.bytes.data(), packet.bytes.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ssize_t received;
  do {
    received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) {
    if (errno == ECONNRESET) return std::nullopt;
    return absl::InternalError(ErrnoText("recvmsg"));
  }
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(header), sizeof(int));
      packet.fd.Reset(fd);
    }
  }
  if (received == 0 && !packet.fd.valid()) return std::nullopt;
  if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    return absl::InternalError(
        absl::StrCat("a packet of more than ", max_bytes, " bytes (or descriptors) arrived"));
  }
  packet.bytes.resize(static_cast<size_t>(received));
  return packet;
}

Section BytesSection(absl::string_view bytes) {
  return {bytes.size(), [bytes](char* out) { std::memcpy(out, bytes.data(), bytes.size()); }};
}

Section MessageSection(const google::protobuf::MessageLite& message) {
  size_t size = message.ByteSizeLong();
  return {size, [&message](char* out) {
            message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out));
          }};
}

absl::StatusOr<UniqueFd> WriteSections(const char* name, absl::Span<const Section> sections) {
  size_t total = HeaderBytes(sections.size());
  for (const Section& section : sections) total += section.size;
  UniqueFd file(memfd_create(name, MFD_CLOEXEC));
  if (!file.valid())
    return absl::InternalError(absl::StrCat(name, ": ", ErrnoText("memfd_create")));
  if (total <= kCopiedFileBytes) {
    auto buffer = std::make_unique<char[]>(total);
    Lay(sections, buffer.get());
    if (!WriteAll(file.get(), buffer.get(), total)) {
      return absl::ResourceExhaustedError(
          absl::StrCat(name, ": ", total, " bytes: ", ErrnoText("write")));
    }
    return file;
  }
  if (ftruncate(file.get(), static_cast<off_t>(total)) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": ", total, " bytes: ", ErrnoText("ftruncate")));
  }
  void* data =
      mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, file.get(), 0);
  if (data == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": ", total, " bytes: ", ErrnoText("mmap")));
  }
  Lay(sections, static_cast<char*>(data));
  munmap(data, total);
  return file;
}

absl::StatusOr<MappedSections> MappedSections::Map(int fd, absl::string_view name) {
  struct stat info;
  if (fstat(fd, &info) != 0)
    return absl::InternalError(absl::StrCat(name, ": ", ErrnoText("fstat")));
  auto size = static_cast<size_t>(info.st_size);
  if (size < HeaderBytes(0)) {
    return absl::InternalError(absl::StrCat(name, ": ", size, " bytes hold no sections"));
  }
  MappedSections mapped;
  if (size <= kCopiedFileBytes) {
    mapped.copy_ = std::make_unique<char[]>(size);
    if (!ReadAll(fd, mapped.copy_.get(), size)) {
      return absl::InternalError(absl::StrCat(name, ": ", ErrnoText("pread")));
    }
  } else {
    mapped.data_ = mmap(nullptr, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (mapped.data_ == MAP_FAILED) {
      mapped.data_ = nullptr;
      return absl::ResourceExhaustedError(
          absl::StrCat(name, ": ", size, " bytes: ", ErrnoText("mmap")));
    }
    mapped.size_ = size;
  }
  const char* bytes =
      mapped.copy_ != nullptr ? mapped.copy_.get() : static_cast<const char*>(mapped.data_);
  StoredSize count;
  std::memcpy(&count, bytes, sizeof(count));
  if (count > (size - sizeof(StoredSize)) / sizeof(StoredSize)) {
    return absl::InternalError(absl::StrCat(name, ": claims ", count, " sections"));
  }
  size_t at = HeaderBytes(count);
  for (size_t i = 0; i < count; ++i) {
    StoredSize length;
    std::memcpy(&length, bytes + sizeof(StoredSize) * (i + 1), sizeof(length));
    if (length > size - at) {
      return absl::InternalError(absl::StrCat(name, ": section ", i, " runs past the end"));
    }
    mapped.sections_.emplace_back(bytes + at, length);
    at += length;
  }
  return mapped;
}

MappedSections::MappedSections(MappedSections&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      copy_(std::move(other.copy_)),
      sections_(std::move(other.sections_)) {}

MappedSections& MappedSections::operator=(MappedSections&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    copy_ = std::move(other.copy_);
    sections_ = std::move(other.sections_);
  }
  return *this;
}

MappedSections::~MappedSections() { Unmap(); }

void MappedSections::Unmap() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  copy_.reset();
  sections_.clear();
}

}  // namespace onnxconvert::service
