#ifndef ONNX_CONVERT_IR_MODEL_IO_H_
#define ONNX_CONVERT_IR_MODEL_IO_H_

// Reading and writing model files: parsing with limits and checks of the
// bytes (LoadModel, ParseModel), saving with external data (SaveModel), and
// atomic file writes.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/arena.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// Largest serialized model protobuf can parse or write: 2 GiB - 1 bytes.
inline constexpr int64_t kMaxProtobufBytes = (int64_t{2} << 30) - 1;

// Limits and choices for reading a model.
struct LoadOptions {
  // Largest model file accepted, in bytes (never more than kMaxProtobufBytes).
  int64_t max_model_bytes = kMaxProtobufBytes;
  // Check every external reference at load: confined path, file exists,
  // offset + length inside the file.
  bool verify_external_data = true;
  // Read external tensors into raw_data at load.
  bool load_external_data = false;
  // Total external bytes accepted (checked or loaded).
  int64_t max_external_data_bytes = int64_t{64} << 30;
};

// A model read from a file, with where its external data lives.
struct LoadedModel {
  onnx::ModelProto model;
  std::string path;      // file it was read from ("" when parsed from bytes)
  std::string base_dir;  // directory that external data locations are relative to
};

// Parses a serialized ModelProto, keeping every field (unknown ones too) so
// that serializing it again gives the same bytes. Errors begin with
// "<source_name>: "; malformed input gives the byte offset and field path of
// its first problem. External references are not checked (no directory).
absl::StatusOr<onnx::ModelProto> ParseModel(std::string_view bytes,
                                            std::string_view source_name,
                                            const LoadOptions& options = {});

// Options for the arena of a whole model parsed onto one (ParseModelInto,
// LoadModelInto, the converter's whole conversion): blocks from 64 KiB up to
// 1 MiB rather than protobuf's default of up to 8 KiB, as a model is many
// small messages; nodes a rewrite removes and the model at the end are then
// not freed one by one.
google::protobuf::ArenaOptions ModelArenaOptions();

// As ParseModel, into `model` (which may live on an arena: a model rewritten
// in place then frees no node one by one).
absl::Status ParseModelInto(std::string_view bytes, std::string_view source_name,
                            onnx::ModelProto& model, const LoadOptions& options = {});

// Reads and parses the model file at `path` (refused by size before
// reading), then checks or loads its external data relative to its
// directory as `options` say. Errors begin with "<path>: ".
absl::StatusOr<LoadedModel> LoadModel(const std::string& path,
                                      const LoadOptions& options = {});

// As LoadModel, the model read into `model` (which may live on an arena);
// the result's own model is left empty.
absl::StatusOr<LoadedModel> LoadModelInto(const std::string& path, onnx::ModelProto& model,
                                          const LoadOptions& options = {});

// Makes protobuf's log drop its complaints about string fields that are not
// UTF-8 (proto2 keeps such bytes as they are, and so does this tool), which
// it prints on serializing them; other messages still go to stderr. For a
// program's main, before any model is read.
void QuietProtobufUtf8Logs();

// Choices for writing a model.
struct SaveOptions {
  // Tensors with data of at least this many bytes go to an external file;
  // -1 never.
  int64_t external_data_threshold = -1;
  // File name relative to the model's dir; default "<model file name>.data".
  std::string external_data_file;
  // Where the model's existing external references live, so they can be
  // carried over when saving elsewhere. Empty: the output's directory.
  std::string source_base_dir;
  // Largest model file written (never more than kMaxProtobufBytes).
  int64_t max_model_bytes = kMaxProtobufBytes;
  // Whether the files are fsynced before they are renamed into place; false
  // for scratch files that need not survive a crash (a streamed call's
  // work folder), where fsync would only wait for the disk.
  bool durable = true;
  // When the data file would hold every tensor at the offset it has in one
  // source file that holds nothing else (the gaps between tensors at most
  // alignment padding), that file is moved (renamed) into its place instead
  // of copied, and is gone from the source directory: for scratch inputs
  // only (a streamed call's upload). Where the rename fails (another file
  // system), the file is copied.
  bool move_identical_data = false;
};

// Writes `model` to `path` atomically: temp files in the target directory,
// fsync, then rename; on failure no new file is left behind. `model` is not
// modified and not copied: tensors moved to external data are streamed from
// it into the data file, and the model file is serialized straight to disk.
//
// With external_data_threshold >= 0, every non-empty tensor (anywhere in the
// model; STRING and sub-byte typed data excepted) whose data takes at least
// that many bytes is written as raw little-endian bytes to one data file
// beside the model, at offsets aligned to 64 bytes (4096 for tensors of 4 KiB
// or more), and replaced by a reference. Existing external references are
// copied into that file when source_base_dir is another directory, or when
// they point at the file being written; otherwise they are kept as they are.
absl::Status SaveModel(const onnx::ModelProto& model, const std::string& path,
                       const SaveOptions& options = {});

// Writes `bytes` to `path` atomically (temp file in the same directory,
// fsync, rename).
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_MODEL_IO_H_
