#ifndef ONNX_CONVERT_SERVICE_IPC_H_
#define ONNX_CONVERT_SERVICE_IPC_H_

// How the server and its worker processes talk (worker_pool.h): packets on
// Unix sockets (SOCK_SEQPACKET: each send arrives whole and alone) that may
// carry a file descriptor, and memory files (memfd) holding the bulk of a
// task or a reply in sections, written once by the sender and mapped by the
// receiver (small files are copied in and out, which costs less than a
// mapping), so that a model is never copied through a socket.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/message_lite.h"

namespace onnxconvert::service {

// An owned file descriptor, closed when destroyed.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  ~UniqueFd() { Reset(); }

  // The descriptor (-1 for none).
  int get() const { return fd_; }
  // True when it holds a descriptor.
  bool valid() const { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  int Release() { return std::exchange(fd_, -1); }
  // Closes the descriptor held, if any, and holds `fd`.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Two connected SOCK_SEQPACKET Unix sockets, close-on-exec.
absl::StatusOr<std::pair<UniqueFd, UniqueFd>> SocketPair();

// Sends `bytes` as one packet on `socket`, with `fd` attached when it is
// >= 0. A peer that has closed its end is Unavailable (never SIGPIPE);
// other failures are Internal, naming the call.
absl::Status SendPacket(int socket, absl::string_view bytes, int fd = -1);

// A packet received: its bytes and the descriptor it carried, if any.
struct Packet {
  std::string bytes;
  UniqueFd fd;
};

// Waits for one packet of at most `max_bytes` on `socket`; nullopt when the
// peer has closed its end. A longer packet is Internal.
absl::StatusOr<std::optional<Packet>> ReceivePacket(int socket, size_t max_bytes);

// One section of a memory file: its size and how to write it.
struct Section {
  size_t size = 0;
  std::function<void(char*)> write;  // writes exactly `size` bytes
};

// A section holding `bytes`, which must live until the file is written.
Section BytesSection(absl::string_view bytes);
// A section holding `message` serialized; the message must live, unchanged,
// until the file is written.
Section MessageSection(const google::protobuf::MessageLite& message);

// A new memory file holding `sections` (their count and sizes, then their
// bytes). Errors name the file as `name` and the call that failed.
absl::StatusOr<UniqueFd> WriteSections(const char* name, absl::Span<const Section> sections);

// The sections of a memory file written by WriteSections, mapped read-only
// (a small file is read instead).
class MappedSections {
 public:
  // Maps the file `fd`; one that is not laid out as WriteSections lays
  // files out is Internal, naming it as `name`.
  static absl::StatusOr<MappedSections> Map(int fd, absl::string_view name);
  MappedSections(MappedSections&& other) noexcept;
  MappedSections& operator=(MappedSections&& other) noexcept;
  ~MappedSections();

  // How many sections the file holds.
  size_t count() const { return sections_.size(); }
  // The bytes of section `i` (< count()), valid while this object lives.
  absl::string_view section(size_t i) const { return sections_[i]; }

 private:
  MappedSections() = default;
  void Unmap();

  void* data_ = nullptr;  // the mapping, if mapped
  size_t size_ = 0;
  std::unique_ptr<char[]> copy_;  // the bytes, if read
  std::vector<absl::string_view> sections_;
};

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_IPC_H_
