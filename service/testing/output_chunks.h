#ifndef ONNX_CONVERT_SERVICE_TESTING_OUTPUT_CHUNKS_H_
#define ONNX_CONVERT_SERVICE_TESTING_OUTPUT_CHUNKS_H_

// An output file of a stream workspace read back as the service sends it,
// chunk by chunk, for the tests.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "service/stream_files.h"

namespace onnxconvert::service::testing {

// The chunks of at most `chunk_bytes` that ReadOutput gives of the output
// file `name` of `workspace`, in order; its error if it fails.
inline absl::StatusOr<std::vector<std::string>> OutputChunks(const StreamWorkspace& workspace,
                                                             const std::string& name,
                                                             int64_t chunk_bytes) {
  std::vector<std::string> chunks;
  absl::Status read = workspace.ReadOutput(name, chunk_bytes, [&](std::string_view piece) {
    chunks.emplace_back(piece);
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return chunks;
}

}  // namespace onnxconvert::service::testing

#endif  // ONNX_CONVERT_SERVICE_TESTING_OUTPUT_CHUNKS_H_
