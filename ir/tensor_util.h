#ifndef ONNX_CONVERT_IR_TENSOR_UTIL_H_
#define ONNX_CONVERT_IR_TENSOR_UTIL_H_

// Small facts about TensorProtos: element widths and kinds, element counts, whether the
// data is external, and the bytes the data takes.

#include <cstdint>
#include <optional>

#include "proto/onnx.pb.h"

namespace onnxconvert {

// Bits per element of a TensorProto.DataType (4 for INT4, 2 for INT2, ...);
// nullopt for STRING, UNDEFINED and values this IR version does not define.
std::optional<int> ElementBitWidth(int32_t data_type);

// True for the 8- to 64-bit integer element types, signed and unsigned
// (not BOOL, not the 2- and 4-bit ones).
bool IsIntegerElementType(int32_t data_type);

// Number of elements a tensor's dims describe (1 for a scalar); nullopt if a
// dim is negative or the product overflows int64.
std::optional<int64_t> ElementCount(const onnx::TensorProto& tensor);

// True if the tensor's data lives in an external file.
bool IsExternal(const onnx::TensorProto& tensor);

// Bytes of data the tensor holds, wherever it is stored: raw_data, the typed
// repeated fields, string_data, or the `length` of its external data entry
// (the element count times the element size when `length` is absent).
int64_t TensorDataBytes(const onnx::TensorProto& tensor);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_TENSOR_UTIL_H_
