#include "schema/tensor_checks.h"

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ir/tensor_util.h"

namespace onnxconvert::schema {
namespace {

// Where a data type keeps its elements outside raw_data, and how many values
// of that field its elements take: `values` for each element, or one value
// for every `elements` elements (packed sub-byte types).
struct Layout {
  TensorField field;
  int8_t values;
  int8_t elements;
};

// Indexed by TensorProto.DataType (onnx.proto's comments on each field).
constexpr Layout kLayouts[] = {
    {TensorField::kRaw, 0, 0},     // UNDEFINED: refused before it is looked up
    {TensorField::kFloat, 1, 1},   // FLOAT
    {TensorField::kInt32, 1, 1},   // UINT8
    {TensorField::kInt32, 1, 1},   // INT8
    {TensorField::kInt32, 1, 1},   // UINT16
    {TensorField::kInt32, 1, 1},   // INT16
    {TensorField::kInt32, 1, 1},   // INT32
    {TensorField::kInt64, 1, 1},   // INT64
    {TensorField::kString, 1, 1},  // STRING
    {TensorField::kInt32, 1, 1},   // BOOL
    {TensorField::kInt32, 1, 1},   // FLOAT16, as its bits
    {TensorField::kDouble, 1, 1},  // DOUBLE
    {TensorField::kUint64, 1, 1},  // UINT32
    {TensorField::kUint64, 1, 1},  // UINT64
    {TensorField::kFloat, 2, 1},   // COMPLEX64: real and imaginary parts
    {TensorField::kDouble, 2, 1},  // COMPLEX128
    {TensorField::kInt32, 1, 1},   // BFLOAT16, as its bits
    {TensorField::kInt32, 1, 1},   // FLOAT8E4M3FN
    {TensorField::kInt32, 1, 1},   // FLOAT8E4M3FNUZ
    {TensorField::kInt32, 1, 1},   // FLOAT8E5M2
    {TensorField::kInt32, 1, 1},   // FLOAT8E5M2FNUZ
    {TensorField::kInt32, 1, 2},   // UINT4: two to a value
    {TensorField::kInt32, 1, 2},   // INT4
    {TensorField::kInt32, 1, 2},   // FLOAT4E2M1
    {TensorField::kInt32, 1, 1},   // FLOAT8E8M0
    {TensorField::kInt32, 1, 4},   // UINT2: four to a value
    {TensorField::kInt32, 1, 4},   // INT2
};
static_assert(std::size(kLayouts) == onnx::TensorProto::DataType_MAX + 1,
              "one layout for each data type");

constexpr const char* kFieldNames[kTensorFields] = {
    "float_data", "int32_data", "string_data", "int64_data",
    "raw_data",   "double_data", "uint64_data",
};

absl::Status Invalid(absl::string_view message) { return absl::InvalidArgumentError(message); }

std::string DimsString(const google::protobuf::RepeatedField<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// "1 value", "3 values".
std::string Count(int64_t n, absl::string_view noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// ceil(count * numerator / denominator), or nullopt when it overflows int64.
std::optional<int64_t> ScaledCeil(int64_t count, int64_t numerator, int64_t denominator) {
  int64_t product;
  if (__builtin_mul_overflow(count, numerator, &product)) return std::nullopt;
  return product / denominator + (product % denominator != 0);
}

std::string CountOrTooMany(std::optional<int64_t> n) {
  return n ? absl::StrCat(*n) : "more than 2^63-1";
}

absl::StatusOr<const Layout*> LayoutOf(int32_t data_type) {
  if (data_type == onnx::TensorProto::UNDEFINED) {
    return Invalid("data_type is UNDEFINED (or missing)");
  }
  if (!onnx::TensorProto::DataType_IsValid(data_type)) {
    return Invalid(absl::StrCat("data_type ", data_type, " is not a data type of ONNX 1.22"));
  }
  return &kLayouts[data_type];
}

// The number of elements `dims` describe.
absl::StatusOr<int64_t> ElementsOf(const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t elements = 1;
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return Invalid(absl::StrCat("dim ", i, " is ", dims[i], "; dims cannot be negative"));
    }
    if (__builtin_mul_overflow(elements, dims[i], &elements)) {
      return Invalid(absl::StrCat("dims ", DimsString(dims),
                                  " describe more than 2^63-1 elements"));
    }
  }
  return elements;
}

// The one field that holds data, nullopt if none does.
absl::StatusOr<std::optional<TensorField>> DataField(const TensorDataSizes& sizes) {
  std::optional<TensorField> used;
  for (int f = 0; f < kTensorFields; ++f) {
    if (sizes.of[f] == 0) continue;
    auto field = static_cast<TensorField>(f);
    if (used) {
      return Invalid(absl::StrCat("data in both ", TensorFieldName(*used), " and ",
                                  TensorFieldName(field), "; a tensor's data is in one field"));
    }
    used = field;
  }
  return used;
}

absl::Status CheckExternal(const onnx::TensorProto& tensor, const TensorDataSizes& sizes) {
  OC_ASSIGN_OR_RETURN(std::optional<TensorField> used, DataField(sizes));
  if (used) {
    return Invalid(absl::StrCat("stored externally (data_location EXTERNAL) but has data in ",
                                TensorFieldName(*used)));
  }
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location" && !entry.value().empty()) return absl::OkStatus();
  }
  return Invalid("stored externally (data_location EXTERNAL) but external_data has no location");
}

absl::Status CheckRawSize(const onnx::TensorProto& tensor, int64_t elements, int64_t bytes) {
  std::optional<int> bits = ElementBitWidth(tensor.data_type());
  if (!bits) return Invalid("STRING data in raw_data; it belongs in string_data");
  std::optional<int64_t> needed = ScaledCeil(elements, *bits, 8);
  if (needed == bytes) return absl::OkStatus();
  return Invalid(absl::StrCat("raw_data holds ", Count(bytes, "byte"), "; dims ",
                              DimsString(tensor.dims()), " of ",
                              onnx::TensorProto::DataType_Name(tensor.data_type()), " need ",
                              CountOrTooMany(needed)));
}

absl::Status CheckData(const onnx::TensorProto& tensor, const Layout& layout, int64_t elements,
                       const TensorDataSizes& sizes) {
  OC_ASSIGN_OR_RETURN(std::optional<TensorField> used, DataField(sizes));
  const std::string& type = onnx::TensorProto::DataType_Name(tensor.data_type());
  if (!used) {
    if (elements == 0) return absl::OkStatus();
    return Invalid(absl::StrCat("no data; dims ", DimsString(tensor.dims()), " of ", type,
                                " need ", Count(elements, "element")));
  }
  if (*used == TensorField::kRaw) return CheckRawSize(tensor, elements, sizes[*used]);
  if (*used != layout.field) {
    return Invalid(absl::StrCat(type, " data in ", TensorFieldName(*used), "; it belongs in ",
                                TensorFieldName(layout.field),
                                layout.field == TensorField::kString ? "" : " or raw_data"));
  }
  std::optional<int64_t> needed = ScaledCeil(elements, layout.values, layout.elements);
  if (needed == sizes[*used]) return absl::OkStatus();
  return Invalid(absl::StrCat(TensorFieldName(*used), " holds ", Count(sizes[*used], "value"),
                              "; dims ", DimsString(tensor.dims()), " of ", type, " need ",
                              CountOrTooMany(needed)));
}

absl::Status CheckTensorParts(const onnx::TensorProto& tensor, const TensorDataSizes& sizes) {
  OC_ASSIGN_OR_RETURN(const Layout* layout, LayoutOf(tensor.data_type()));
  OC_ASSIGN_OR_RETURN(int64_t elements, ElementsOf(tensor.dims()));
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return CheckExternal(tensor, sizes);
  return CheckData(tensor, *layout, elements, sizes);
}

// The number of elements of a sparse tensor's dense shape.
absl::StatusOr<int64_t> DenseElements(const google::protobuf::RepeatedField<int64_t>& dims) {
  if (dims.empty()) return Invalid("no dims (the dense shape)");
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) {
      return Invalid(absl::StrCat("dim ", i, " of the dense shape is ", dims[i],
                                  "; they must be positive"));
    }
  }
  return ElementsOf(dims);
}

// The values of an INT64 tensor whose size CheckTensor found right, read
// one at a time from int64_data or (little-endian) raw_data.
class Int64Values {
 public:
  explicit Int64Values(const onnx::TensorProto& tensor)
      : tensor_(tensor),
        raw_(tensor.int64_data_size() == 0
                 ? reinterpret_cast<const unsigned char*>(tensor.raw_data().data())
                 : nullptr) {}

  int64_t operator[](int64_t i) const {
    if (raw_ == nullptr) return tensor_.int64_data(static_cast<int>(i));
    uint64_t value = 0;
    for (int byte = 0; byte < 8; ++byte) value |= uint64_t{raw_[8 * i + byte]} << (8 * byte);
    return static_cast<int64_t>(value);
  }

 private:
  const onnx::TensorProto& tensor_;
  const unsigned char* raw_;
};

// The linearized position of index `i`: the value itself for rank-1
// indices, else its `rank` coordinates in the dense shape.
absl::StatusOr<int64_t> Linearized(const Int64Values& indices, int64_t i, bool coordinates,
                                   const google::protobuf::RepeatedField<int64_t>& dims,
                                   int64_t dense) {
  if (!coordinates) {
    int64_t index = indices[i];
    if (index >= 0 && index < dense) return index;
    return Invalid(absl::StrCat("index #", i, " is ", index, "; the dense shape ",
                                DimsString(dims), " has ", Count(dense, "element")));
  }
  int64_t linear = 0;
  for (int d = 0; d < dims.size(); ++d) {
    int64_t coordinate = indices[i * dims.size() + d];
    if (coordinate < 0 || coordinate >= dims[d]) {
      return Invalid(absl::StrCat("index #", i, " has coordinate ", coordinate, " in dim ", d,
                                  " of the dense shape ", DimsString(dims)));
    }
    linear = linear * dims[d] + coordinate;
  }
  return linear;
}

absl::Status CheckIndexOrder(const onnx::SparseTensorProto& sparse, int64_t nnz, bool coordinates,
                             int64_t dense) {
  Int64Values indices(sparse.indices());
  int64_t previous = -1;
  for (int64_t i = 0; i < nnz; ++i) {
    OC_ASSIGN_OR_RETURN(int64_t linear,
                        Linearized(indices, i, coordinates, sparse.dims(), dense));
    if (linear <= previous) {
      return Invalid(absl::StrCat("index #", i, " (", linear, " linearized) does not follow #",
                                  i - 1, " (", previous,
                                  "): indices must be strictly increasing"));
    }
    previous = linear;
  }
  return absl::OkStatus();
}

absl::Status CheckIndices(const onnx::SparseTensorProto& sparse, int64_t nnz, int64_t dense) {
  const onnx::TensorProto& indices = sparse.indices();
  OC_RETURN_IF_ERROR(WithPrefix("indices", CheckTensor(indices)));
  if (indices.data_type() != onnx::TensorProto::INT64) {
    return Invalid(absl::StrCat("indices are ",
                                onnx::TensorProto::DataType_Name(indices.data_type()),
                                "; they must be INT64"));
  }
  const auto& shape = indices.dims();
  bool linear = shape.size() == 1 && shape[0] == nnz;
  bool coordinates = shape.size() == 2 && shape[0] == nnz && shape[1] == sparse.dims_size();
  if (!linear && !coordinates) {
    return Invalid(absl::StrCat("indices have dims ", DimsString(shape), "; with ",
                                Count(nnz, "value"), " in a dense shape of rank ",
                                sparse.dims_size(), " they must be [", nnz, "] or [", nnz, ", ",
                                sparse.dims_size(), "]"));
  }
  if (indices.data_location() == onnx::TensorProto::EXTERNAL) return absl::OkStatus();
  return CheckIndexOrder(sparse, nnz, coordinates, dense);
}

absl::Status CheckSparseParts(const onnx::SparseTensorProto& sparse) {
  if (!sparse.has_values()) return Invalid("no values");
  const onnx::TensorProto& values = sparse.values();
  OC_RETURN_IF_ERROR(WithPrefix("values", CheckTensor(values)));
  if (values.dims_size() != 1) {
    return Invalid(absl::StrCat("values have dims ", DimsString(values.dims()),
                                "; they must be of rank 1 ([NNZ])"));
  }
  int64_t nnz = values.dims(0);
  OC_ASSIGN_OR_RETURN(int64_t dense, DenseElements(sparse.dims()));
  if (sparse.has_indices()) return CheckIndices(sparse, nnz, dense);
  if (nnz == 0) return absl::OkStatus();
  return Invalid(absl::StrCat(Count(nnz, "value"), " but no indices"));
}

}  // namespace

const char* TensorFieldName(TensorField field) { return kFieldNames[static_cast<int>(field)]; }

TensorDataSizes DataSizesOf(const onnx::TensorProto& tensor) {
  TensorDataSizes sizes;
  sizes[TensorField::kFloat] = tensor.float_data_size();
  sizes[TensorField::kInt32] = tensor.int32_data_size();
  sizes[TensorField::kString] = tensor.string_data_size();
  sizes[TensorField::kInt64] = tensor.int64_data_size();
  sizes[TensorField::kRaw] = static_cast<int64_t>(tensor.raw_data().size());
  sizes[TensorField::kDouble] = tensor.double_data_size();
  sizes[TensorField::kUint64] = tensor.uint64_data_size();
  return sizes;
}

absl::Status CheckTensor(const onnx::TensorProto& tensor) {
  return CheckTensor(tensor, DataSizesOf(tensor));
}

absl::Status CheckTensor(const onnx::TensorProto& tensor, const TensorDataSizes& sizes) {
  absl::Status status = CheckTensorParts(tensor, sizes);
  if (status.ok()) return status;
  return Invalid(tensor.name().empty()
                     ? absl::StrCat("unnamed tensor: ", status.message())
                     : absl::StrCat("tensor '", tensor.name(), "': ", status.message()));
}

absl::Status CheckSparseTensor(const onnx::SparseTensorProto& sparse) {
  absl::Status status = CheckSparseParts(sparse);
  if (status.ok()) return status;
  return Invalid(absl::StrCat("sparse tensor '", sparse.values().name(), "': ", status.message()));
}

}  // namespace onnxconvert::schema
