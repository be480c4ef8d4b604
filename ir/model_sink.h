#ifndef ONNX_CONVERT_IR_MODEL_SINK_H_
#define ONNX_CONVERT_IR_MODEL_SINK_H_

// Where a serialized model is written while it is produced: the main
// graph's node fields first, as they come, then the rest around them.

#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// Receives a serialized ModelProto in two parts: the node fields of its main
// graph, appended in order, then the fields around them.
class ModelSink {
 public:
  virtual ~ModelSink() = default;

  // Tells the sink the model will take about `bytes`, before anything is
  // appended (a sink in memory reserves that much once).
  virtual void Expect(size_t /*bytes*/) {}
  // Appends `bytes`: node fields (tag, length, NodeProto) of the main graph.
  virtual absl::Status AppendNodes(absl::string_view bytes) = 0;
  // Completes the model: `head` (the model's fields before its graph), the
  // graph field, whose payload is the node bytes appended and then
  // `graph_rest` (the graph's other fields, in pieces), and `tail` (the
  // model's fields after its graph).
  virtual absl::Status Finish(absl::string_view head,
                              absl::Span<const absl::string_view> graph_rest,
                              absl::string_view tail) = 0;
  // Writes `model` whole instead, dropping what was appended.
  virtual absl::Status WriteWhole(const onnx::ModelProto& model) = 0;
};

// Collects the model in memory.
class StringModelSink : public ModelSink {
 public:
  void Expect(size_t bytes) override;
  absl::Status AppendNodes(absl::string_view bytes) override;
  absl::Status Finish(absl::string_view head, absl::Span<const absl::string_view> graph_rest,
                      absl::string_view tail) override;
  absl::Status WriteWhole(const onnx::ModelProto& model) override;

  // The model's bytes, once finished.
  const std::string& bytes() const { return model_; }
  // The model's bytes, taken (the sink is left empty).
  std::string TakeBytes() { return std::move(model_); }

 private:
  // The node bytes; once finished, the whole model, built in place when
  // Expect reserved room enough.
  std::string nodes_;
  std::string model_;
};

// Copies `length` bytes of the file open as `from`, from `offset`, to the
// file open as `to` at its position: in the kernel (copy_file_range, else
// sendfile between file systems), else through memory. False on an I/O
// error or where `from` ends first.
bool CopyBetweenFiles(int from, int64_t offset, int to, size_t length);

// A file's bytes mapped read-only into memory: pages are read as they are
// touched, and the system may drop them again (they are the file's).
class MappedFile {
 public:
  // Maps the file at `path`; an error names it.
  static absl::StatusOr<MappedFile> Open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept
      : data_(other.data_), size_(other.size_), fd_(other.fd_) {
    other.data_ = nullptr;
    other.size_ = 0;
    other.fd_ = -1;
  }
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile();

  absl::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  // The file, open for reading.
  int fd() const { return fd_; }
  // Where `piece` starts in the file when it lies wholly within bytes(),
  // else -1.
  int64_t OffsetOf(absl::string_view piece) const;
  // Drops the whole pages within `piece` (a piece of bytes()) from this
  // process's memory; they are read from the file again if touched.
  void Release(absl::string_view piece) const;

 private:
  MappedFile(void* data, size_t size, int fd) : data_(data), size_(size), fd_(fd) {}
  void* data_;
  size_t size_;
  int fd_;
};

// Writes the model to a file: the node bytes go to "<path>.nodes.partial"
// as they come (so that they are not held in memory), the model to
// "<path>.partial", which is synced and renamed to `path` once complete.
// Nothing is left at `path` unless the model is complete. A model over
// protobuf's 2 GiB is refused (ResourceExhausted). Not `durable`: the file
// is not synced (scratch space, such as the service's work folder). With a
// `source`, large pieces of the model that lie in it (the fields a
// conversion passes through as they came, such as weights) are copied file
// to file by the kernel, never read into this process.
class FileModelSink : public ModelSink {
 public:
  explicit FileModelSink(std::string path, bool durable = true,
                         const MappedFile* source = nullptr)
      : path_(std::move(path)), durable_(durable), source_(source) {}
  ~FileModelSink() override;
  FileModelSink(const FileModelSink&) = delete;
  FileModelSink& operator=(const FileModelSink&) = delete;

  absl::Status AppendNodes(absl::string_view bytes) override;
  absl::Status Finish(absl::string_view head, absl::Span<const absl::string_view> graph_rest,
                      absl::string_view tail) override;
  absl::Status WriteWhole(const onnx::ModelProto& model) override;

  // A piece of the written model that was copied from the source file.
  struct CopiedPiece {
    int64_t offset;         // in the written model
    int64_t source_offset;  // in the source
    int64_t length;
  };
  // The pieces of the model written last that were copied from the
  // source, in order.
  const std::vector<CopiedPiece>& copied() const { return copied_; }

 private:
  absl::Status Error(absl::string_view what, const std::string& file) const;
  void DropNodes();
  // Renames "<path>.partial" to `path` if it was `written` whole, else
  // removes it; the error names the file.
  absl::Status Commit(bool written);

  // Writes `bytes` to `out`, copying them from source_ when they lie there
  // (noted in copied_).
  bool Write(std::FILE* out, absl::string_view bytes);

  std::string path_;
  bool durable_;
  const MappedFile* source_;
  std::vector<CopiedPiece> copied_;
  std::FILE* nodes_ = nullptr;
  int64_t node_bytes_ = 0;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_MODEL_SINK_H_
