#include "ir/tensor_util.h"

#include <limits>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"

namespace onnxconvert {

std::optional<int> ElementBitWidth(int32_t data_type) {
  // Indexed by TensorProto.DataType; 0 where the width is not fixed.
  static constexpr int kBits[] = {
      0,    // UNDEFINED
      32,   // FLOAT
      8,    // UINT8
      8,    // INT8
      16,   // UINT16
      16,   // INT16
      32,   // INT32
      64,   // INT64
      0,    // STRING
      8,    // BOOL
      16,   // FLOAT16
      64,   // DOUBLE
      32,   // UINT32
      64,   // UINT64
      64,   // COMPLEX64
      128,  // COMPLEX128
      16,   // BFLOAT16
      8,    // FLOAT8E4M3FN
      8,    // FLOAT8E4M3FNUZ
      8,    // FLOAT8E5M2
      8,    // FLOAT8E5M2FNUZ
      4,    // UINT4
      4,    // INT4
      4,    // FLOAT4E2M1
      8,    // FLOAT8E8M0
      2,    // UINT2
      2,    // INT2
  };
  if (data_type < 0 || data_type >= static_cast<int32_t>(std::size(kBits)) ||
      kBits[data_type] == 0) {
    return std::nullopt;
  }
  return kBits[data_type];
}

bool IsIntegerElementType(int32_t data_type) {
  static constexpr int32_t kIntegerTypes[] = {
      onnx::TensorProto::INT8,  onnx::TensorProto::INT16,  onnx::TensorProto::INT32,
      onnx::TensorProto::INT64, onnx::TensorProto::UINT8,  onnx::TensorProto::UINT16,
      onnx::TensorProto::UINT32, onnx::TensorProto::UINT64,
  };
  return absl::c_linear_search(kIntegerTypes, data_type);
}

std::optional<int64_t> ElementCount(const onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) {
      return std::nullopt;
    }
    count *= dim;
  }
  return count;
}

bool IsExternal(const onnx::TensorProto& tensor) {
  return tensor.data_location() == onnx::TensorProto::EXTERNAL;
}

namespace {

std::optional<int64_t> ExternalLength(const onnx::TensorProto& tensor) {
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    int64_t length = 0;
    if (entry.key() == "length" && absl::SimpleAtoi(entry.value(), &length)) {
      return length;
    }
  }
  return std::nullopt;
}

int64_t TypedDataBytes(const onnx::TensorProto& tensor) {
  int64_t strings = 0;
  for (const std::string& s : tensor.string_data()) strings += s.size();
  return strings + 4 * (tensor.float_data_size() + tensor.int32_data_size()) +
         8 * (tensor.int64_data_size() + tensor.double_data_size() +
              tensor.uint64_data_size());
}

}  // namespace

int64_t TensorDataBytes(const onnx::TensorProto& tensor) {
  if (IsExternal(tensor)) {
    if (std::optional<int64_t> length = ExternalLength(tensor)) return *length;
    std::optional<int> bits = ElementBitWidth(tensor.data_type());
    std::optional<int64_t> count = ElementCount(tensor);
    if (!bits || !count || *count > std::numeric_limits<int64_t>::max() / 128) {
      return 0;
    }
    return (*count * *bits + 7) / 8;
  }
  if (tensor.has_raw_data()) return tensor.raw_data().size();
  return TypedDataBytes(tensor);
}

}  // namespace onnxconvert
