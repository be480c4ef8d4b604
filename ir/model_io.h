#ifndef ONNX_CONVERT_IR_MODEL_IO_H_
#define ONNX_CONVERT_IR_MODEL_IO_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// Limits and choices for reading a model.
struct LoadOptions {
  // Largest model file accepted, in bytes (protobuf cannot parse > 2 GiB).
  int64_t max_model_bytes = (int64_t{2} << 30) - 1;
  // Check every external reference at load: confined path, file exists,
  // offset + length inside the file.
  bool verify_external_data = true;
  // Read external tensors into raw_data at load.
  bool load_external_data = false;
  // Total external bytes accepted when loading them.
  int64_t max_external_data_bytes = int64_t{64} << 30;
};

// A model read from a file, with where its external data lives.
struct LoadedModel {
  onnx::ModelProto model;
  std::string path;      // the file it was read from ("" when parsed from bytes)
  std::string base_dir;  // directory that external data locations are relative to
};

// Parses a serialized ModelProto. Errors start with `source_name` and give
// the byte offset and field path of the first malformed field. External
// references are not checked (there is no directory).
absl::StatusOr<onnx::ModelProto> ParseModel(absl::string_view bytes,
                                            absl::string_view source_name,
                                            const LoadOptions& options = {});

// Reads and parses the model at `path`; external references are checked
// (or loaded) relative to its directory, as `options` say. Errors start with
// `path`.
absl::StatusOr<LoadedModel> LoadModel(const std::string& path,
                                      const LoadOptions& options = {});

// Choices for writing a model.
struct SaveOptions {
  // Tensors holding at least this many bytes of data go to an external file
  // beside the model; -1 never.
  int64_t external_data_threshold = -1;
  // The external file's name, relative to the model's directory; default
  // "<model file name>.data".
  std::string external_data_file;
  // Where the model's existing external references live; when that is not
  // the output's directory their bytes are copied into the new data file.
  std::string source_base_dir;
};

// Writes `model` to `path` atomically (temp file, fsync, rename): on any
// failure no partial file is left. Moves large tensors to external data as
// `options` say. The overload taking an rvalue avoids copying the model.
absl::Status SaveModel(const onnx::ModelProto& model, const std::string& path,
                       const SaveOptions& options = {});
absl::Status SaveModel(onnx::ModelProto&& model, const std::string& path,
                       const SaveOptions& options = {});

// Writes `bytes` to `path` atomically (temp file in the same directory,
// fsync, rename).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_MODEL_IO_H_
