#ifndef ONNX_CONVERT_SCHEMA_TENSOR_CHECKS_H_
#define ONNX_CONVERT_SCHEMA_TENSOR_CHECKS_H_

// Checks of single tensors and sparse tensors against the ONNX 1.22 IR:
// data type, dims, and where and how much data they hold. Each check costs
// O(1) per tensor (O(dims) for the dims), never reading the data; the
// indices of a sparse tensor are read, O(NNZ).

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::schema {

// The fields a TensorProto keeps its data in.
enum class TensorField {
  kFloat,   // float_data
  kInt32,   // int32_data
  kString,  // string_data
  kInt64,   // int64_data
  kRaw,     // raw_data
  kDouble,  // double_data
  kUint64,  // uint64_data
};

// The number of TensorField values.
inline constexpr int kTensorFields = 7;

// The field's name in onnx.proto, e.g. "float_data".
const char* TensorFieldName(TensorField field);

// How much each data field of a tensor holds: values in the typed fields
// (strings in string_data), bytes in raw_data.
struct TensorDataSizes {
  std::array<int64_t, kTensorFields> of{};

  int64_t& operator[](TensorField field) { return of[static_cast<int>(field)]; }
  int64_t operator[](TensorField field) const { return of[static_cast<int>(field)]; }
};

// The sizes of `tensor`'s data fields, read without touching the data.
TensorDataSizes DataSizesOf(const onnx::TensorProto& tensor);

// Checks `tensor`: its data_type is a data type of ONNX 1.22 (not
// UNDEFINED); its dims are not negative and their product fits int64; and,
// unless it is stored externally (which then needs a location and no data
// of its own), its data is in one field, the one its data type allows or
// raw_data, holding exactly as much as the dims need (raw_data: the exact
// byte size, 4-bit types two to a byte, 2-bit types four). Errors begin
// "tensor 'name': " ("unnamed tensor: " for a tensor without a name).
absl::Status CheckTensor(const onnx::TensorProto& tensor);

// CheckTensor for a tensor read without its data, whose data fields are
// `sizes` (its own fields are not looked at).
absl::Status CheckTensor(const onnx::TensorProto& tensor, const TensorDataSizes& sizes);

// Checks a sparse tensor: its values, a tensor of rank 1 ([NNZ]); its dims,
// the dense shape, at least one and each positive; its indices, needed when
// NNZ > 0, an INT64 tensor of shape [NNZ] (linearized) or [NNZ, rank], every
// index within the dense shape and the linearized indices strictly
// increasing (indices stored externally are not read). Errors begin
// "sparse tensor 'name': ", the name of its values.
absl::Status CheckSparseTensor(const onnx::SparseTensorProto& sparse);

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_TENSOR_CHECKS_H_
