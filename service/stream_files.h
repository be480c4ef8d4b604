#ifndef ONNX_CONVERT_SERVICE_STREAM_FILES_H_
#define ONNX_CONVERT_SERVICE_STREAM_FILES_H_

// The files of one streamed conversion: uploaded chunks are appended to
// files under a private directory (the model under its file name, external
// data under its location), and the output is written to a sibling
// directory, then sent back in chunks. Nothing is held in memory beyond one
// chunk.

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace onnxconvert::service {

// The HTTP/2 frame size and per-stream window that clients and the server
// announce (gRPC's defaults, 16 KiB and 64 KiB, cost streamed chunks of
// MiBs many frames and window updates each).
inline constexpr int kStreamFrameBytes = 4 << 20;
inline constexpr int kStreamWindowBytes = 8 << 20;

// Limits on what one upload may hold.
struct UploadLimits {
  int64_t max_model_bytes = int64_t{2} << 30;
  int64_t max_total_bytes = int64_t{64} << 30;  // model and external data
  int64_t max_files = 4096;
};

// A private directory with `in/` (the upload) and `out/` (the output);
// removed with everything in it when destroyed.
class StreamWorkspace {
 public:
  // A fresh workspace under `parent`. The model is stored as `model_file`
  // (a plain file name).
  static absl::StatusOr<std::unique_ptr<StreamWorkspace>> Create(const std::string& parent,
                                                                 const std::string& model_file,
                                                                 const UploadLimits& limits);
  // The workspace another process created at `root` (its root()), its model
  // stored as `model_file`: for a worker process to read the upload and
  // write the output. It is left in place when this object is destroyed.
  // A `root` without in/ and out/ is NotFound, naming it.
  static absl::StatusOr<std::unique_ptr<StreamWorkspace>> Attach(const std::string& root,
                                                                 const std::string& model_file);
  ~StreamWorkspace();
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;

  // Appends `data` to the file `name` ("" is the model; anything else an
  // external-data location relative to it). Errors name the file: a
  // location that is absolute, climbs out with "..", or is the model's own
  // name is InvalidArgument; a size or count past the limits is
  // ResourceExhausted; a location longer than 1,024 bytes or with a component
  // longer than 255 is InvalidArgument.
  absl::Status Append(absl::string_view name, absl::string_view data);
  // Closes every uploaded file; an I/O error names the file. At least one
  // model byte must have arrived. Notes which file each external-data
  // upload is (device, inode, size, modification time) for UploadSameAs.
  absl::Status FinishUpload();
  // The name of the external-data upload that the output file `name` (as
  // OutputFiles names it) is, unchanged: moved to out/ (renamed, not
  // rewritten) since FinishUpload, whichever process moved it; nullopt for
  // the model, a file written anew, or a workspace that was Attached.
  std::optional<std::string> UploadSameAs(const std::string& name) const;

  // The workspace's directory.
  const std::string& root() const { return root_; }
  // The model's file name.
  const std::string& model_file() const { return model_file_; }
  // The uploaded model's path (`in/<model_file>`).
  std::string input_model_path() const;
  // The directory uploads are stored in.
  const std::string& input_dir() const { return in_dir_; }
  // Where the output model goes (`out/<model_file>`).
  std::string output_model_path() const;
  // Bytes uploaded so far, all files together.
  int64_t uploaded_bytes() const { return total_bytes_; }

  // The output files, model first (named ""), then every other file of
  // `out/` by its path relative to it, sorted, with their sizes.
  absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> OutputFiles() const;
  // A byte range of a file: `length` bytes from `offset`.
  struct ByteRange {
    int64_t offset;
    int64_t length;
  };
  // Feeds the output file `name` (as OutputFiles names it) to `sink` in
  // chunks of at most `chunk_bytes`, each read straight into the string
  // passed; the sink may take that string's contents (swap it into a
  // message) and leave any string in its place. The ranges of `skip`
  // (in order, not overlapping) are left out; no chunk spans the start of
  // one. A range past the file's end is Internal.
  absl::Status ReadOutput(const std::string& name, int64_t chunk_bytes,
                          absl::FunctionRef<absl::Status(std::string&)> sink,
                          absl::Span<const ByteRange> skip = {}) const;

  // Replaces this workspace's paths in `status`'s message: the model's by
  // `model_name`, other files' by their names relative to the model, so
  // that errors name what the client sent.
  absl::Status Relabel(const absl::Status& status, absl::string_view model_name) const;

 private:
  // What tells one file from another, and whether it was written to.
  struct FileIdentity {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t size = 0;
    int64_t modified_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  // The identity of the regular file at `path`; nullopt if there is none.
  static std::optional<FileIdentity> IdentityOf(const std::string& path);

  StreamWorkspace(std::string root, std::string model_file, UploadLimits limits, bool owned);
  absl::StatusOr<std::ofstream*> OpenForAppend(absl::string_view name);

  const std::string root_;
  const std::string in_dir_;
  const std::string out_dir_;
  const std::string model_file_;
  const UploadLimits limits_;
  const bool owned_;  // removed when destroyed
  std::map<std::string, std::ofstream, std::less<>> files_;
  std::map<std::string, int64_t, std::less<>> sizes_;
  int64_t total_bytes_ = 0;
  // The external-data uploads as FinishUpload found them.
  std::vector<std::pair<std::string, FileIdentity>> uploads_;
};

// A plain file name for the model called `model_name` (a path or a label):
// its last path component when that is a safe name, else "model.onnx".
std::string ModelFileName(absl::string_view model_name);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_STREAM_FILES_H_
