#ifndef ONNX_CONVERT_IR_EXTERNAL_DATA_H_
#define ONNX_CONVERT_IR_EXTERNAL_DATA_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// A tensor's external_data entries, parsed.
struct ExternalDataRef {
  std::string location;           // relative to the model's directory
  int64_t offset = 0;             // byte offset in the file
  std::optional<int64_t> length;  // bytes; absent means "to the end"
  std::string checksum;           // SHA-1 as written by the exporter, if any
};

// Parses the external_data entries of `tensor`; an InvalidArgument error
// names the tensor when `location` is missing or offset/length are not
// non-negative integers.
absl::StatusOr<ExternalDataRef> ParseExternalDataRef(const onnx::TensorProto& tensor);

// The absolute path of `location` under `base_dir`, refusing locations that
// are absolute, contain a `..` component, or resolve (through symlinks)
// outside `base_dir`; an error also when the file does not exist.
absl::StatusOr<std::string> ResolveExternalLocation(absl::string_view base_dir,
                                                    absl::string_view location);

// Checks that an external tensor's file is confined to `base_dir`, exists,
// and holds offset + length bytes. Errors name the tensor and location.
absl::Status CheckExternalReference(const onnx::TensorProto& tensor,
                                    absl::string_view base_dir);

// Reads an external tensor's bytes (at most its declared length).
absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             absl::string_view base_dir);

// Calls `fn` with every tensor of `model`, wherever it is: initializers,
// sparse initializers (values and indices), tensor attributes of nodes, in
// subgraphs at any depth, in functions and in training_info graphs. `where`
// names the place, e.g. "graph 'main' initializer 'W'".
void ForEachTensor(onnx::ModelProto& model,
                   const std::function<void(onnx::TensorProto& tensor,
                                            const std::string& where)>& fn);

// Replaces every external tensor's reference by its bytes in raw_data,
// reading at most `max_total_bytes` in all.
absl::Status LoadExternalData(onnx::ModelProto& model, absl::string_view base_dir,
                              int64_t max_total_bytes);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_EXTERNAL_DATA_H_
