#ifndef ONNX_CONVERT_IR_EXTERNAL_DATA_H_
#define ONNX_CONVERT_IR_EXTERNAL_DATA_H_

// Tensors whose data lives outside the model file (ONNX external data):
// reading and writing their external_data entries, confining their
// locations to the model's directory, and reading or streaming the data.
// Used when loading and saving models and by the service's streamed calls.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// A tensor's external_data entries (see ONNX docs/ExternalData.md).
struct ExternalDataInfo {
  std::string location;           // file path relative to the model's directory
  int64_t offset = 0;             // where the data starts in the file
  std::optional<int64_t> length;  // bytes of data; absent: to the end of file
  std::string checksum;           // SHA-1 of the file, as written; not checked
};

// Parses `tensor`'s external_data entries. Fails, naming the tensor, when
// `location` is missing or empty, a key repeats, or offset/length are not
// non-negative decimal integers. Unknown keys are ignored.
absl::StatusOr<ExternalDataInfo> ParseExternalDataInfo(
    const onnx::TensorProto& tensor);

// Replaces `tensor`'s external_data entries by `info` (location, offset,
// length when known, checksum when set) and marks it EXTERNAL.
void SetExternalDataInfo(const ExternalDataInfo& info,
                         onnx::TensorProto& tensor);

// Checks that `location` is a relative path without `..` components, NUL
// characters or backslashes; it says nothing about the file system.
absl::Status CheckRelativeLocation(std::string_view location);

// The canonical path `location` names under `base_dir`, whether or not the
// file exists. Refuses locations CheckRelativeLocation refuses and those that
// resolve, through symlinks anywhere on the path, outside `base_dir`.
absl::StatusOr<std::string> ConfineLocation(std::string_view base_dir,
                                            std::string_view location);

// The canonical path of the regular file `location` names under `base_dir`.
// Refuses locations CheckRelativeLocation refuses and those that resolve,
// through symlinks anywhere on the path, outside `base_dir`; NotFound when
// the file does not exist.
absl::StatusOr<std::string> ResolveExternalLocation(std::string_view base_dir,
                                                    std::string_view location);

// A byte range of a file.
struct FileRange {
  std::string path;  // canonical
  int64_t offset = 0;
  int64_t length = 0;
};

class TensorPath;

// Where an external tensor's bytes are: its location resolved under
// `base_dir` and confined to it, with offset and length checked against the
// file's size. Errors name the tensor (with `path` when given) and the
// location.
absl::StatusOr<FileRange> LocateExternalData(const onnx::TensorProto& tensor,
                                             std::string_view base_dir,
                                             const TensorPath* path = nullptr);

// LocateExternalData, keeping only the verdict.
absl::Status CheckExternalReference(const onnx::TensorProto& tensor,
                                    std::string_view base_dir);

// Feeds the bytes of `range` to `sink` in chunks of bounded size, reading
// exactly range.length bytes; stops at the first error.
absl::Status StreamFileRange(
    const FileRange& range,
    absl::FunctionRef<absl::Status(std::string_view chunk)> sink);

// An external tensor's bytes (exactly its declared length).
absl::StatusOr<std::string> ReadExternalData(const onnx::TensorProto& tensor,
                                             std::string_view base_dir);

// True for message types that are or may contain a TensorProto (ModelProto,
// GraphProto, NodeProto, AttributeProto, SparseTensorProto, FunctionProto,
// TrainingInfoProto and TensorProto itself), as derived from the schema.
bool CanHoldTensors(const google::protobuf::Descriptor& type);

// The chain of fields leading from a ModelProto to a tensor.
class TensorPath {
 public:
  // e.g. "graph.node[2].attribute[0].t".
  std::string ToString() const;

  // Used by the walk: enters element `index` (-1: singular) of `field`.
  void Push(const google::protobuf::FieldDescriptor* field, int index) {
    steps_.push_back({field, index});
  }
  // Used by the walk: leaves the innermost field.
  void Pop() { steps_.pop_back(); }
  // Number of fields entered.
  int depth() const { return static_cast<int>(steps_.size()); }

 private:
  struct Step {
    const google::protobuf::FieldDescriptor* field;
    int index;
  };
  std::vector<Step> steps_;
};

// Calls `fn` with every tensor of `model`, wherever it sits: graph
// initializers, sparse initializers, node attributes (t, tensors,
// sparse_tensor(s)), subgraphs at any depth, functions (nodes and attribute
// defaults) and training_info graphs. Stops at and returns the first error of
// `fn`; fails when nesting exceeds `max_depth` fields.
absl::Status ForEachTensor(
    const onnx::ModelProto& model,
    absl::FunctionRef<absl::Status(const onnx::TensorProto& tensor,
                                   const TensorPath& path)>
        fn,
    int max_depth = 1000);

// ForEachTensor with tensors that `fn` may change.
absl::Status ForEachMutableTensor(
    onnx::ModelProto& model,
    absl::FunctionRef<absl::Status(onnx::TensorProto& tensor,
                                   const TensorPath& path)>
        fn,
    int max_depth = 1000);

// "tensor 'name' (graph.initializer[3])", for messages.
std::string DescribeTensor(const onnx::TensorProto& tensor,
                           const TensorPath& path);

// Checks every external reference of `model` against `base_dir` and that
// their lengths add up to at most `max_total_bytes`.
absl::Status CheckExternalReferences(const onnx::ModelProto& model,
                                     std::string_view base_dir,
                                     int64_t max_total_bytes);

// Reads every external tensor of `model` into its raw_data and drops its
// reference; fails before reading past `max_total_bytes` in all.
absl::Status LoadExternalData(onnx::ModelProto& model,
                              std::string_view base_dir,
                              int64_t max_total_bytes);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_EXTERNAL_DATA_H_
