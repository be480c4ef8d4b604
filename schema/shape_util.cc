#include "schema/shape_util.h"

#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/tensor_util.h"

namespace onnxconvert::schema {

int32_t ElemType(const onnx::TypeProto* type) {
  if (type == nullptr) return 0;
  if (type->has_tensor_type()) return type->tensor_type().elem_type();
  if (type->has_sparse_tensor_type()) return type->sparse_tensor_type().elem_type();
  return 0;
}

const onnx::TensorShapeProto* ShapeOf(const onnx::TypeProto* type) {
  if (type == nullptr) return nullptr;
  if (type->has_tensor_type() && type->tensor_type().has_shape()) {
    return &type->tensor_type().shape();
  }
  if (type->has_sparse_tensor_type() && type->sparse_tensor_type().has_shape()) {
    return &type->sparse_tensor_type().shape();
  }
  return nullptr;
}

std::optional<int> RankOf(const onnx::TypeProto* type) {
  const onnx::TensorShapeProto* shape = ShapeOf(type);
  if (shape == nullptr) return std::nullopt;
  return shape->dim_size();
}

void SetElemType(onnx::TypeProto* type, int32_t elem_type) {
  type->mutable_tensor_type()->set_elem_type(elem_type);
}

onnx::TensorShapeProto* MutableShape(onnx::TypeProto* type) {
  return type->mutable_tensor_type()->mutable_shape();
}

void AddDim(onnx::TensorShapeProto* shape, int64_t value) {
  shape->add_dim()->set_dim_value(value);
}

void AddDim(onnx::TensorShapeProto* shape, std::optional<int64_t> value) {
  auto* dim = shape->add_dim();
  if (value) dim->set_dim_value(*value);
}

void SetDim(onnx::TensorShapeProto::Dimension* dim, std::optional<int64_t> value) {
  if (value) {
    dim->set_dim_value(*value);
  } else {
    dim->Clear();
  }
}

absl::Status CheckSize(int64_t value, absl::string_view what) {
  if (value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " is ", value, ", a negative size"));
}

int32_t ElemTypeFromAttr(int64_t value) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return 0;
  }
  return static_cast<int32_t>(value);
}

void AddSymbolicDim(onnx::TensorShapeProto* shape, absl::string_view symbol) {
  shape->add_dim()->set_dim_param(std::string(symbol));
}

void AddUnknownDim(onnx::TensorShapeProto* shape) { shape->add_dim(); }

void PropagateElemType(InferenceContext& ctx, size_t in, size_t out) {
  int32_t elem = ElemType(ctx.InputType(in));
  if (elem != 0 && ctx.HasOutput(out)) SetElemType(ctx.MutableOutputType(out), elem);
}

void PropagateShape(InferenceContext& ctx, size_t in, size_t out) {
  const onnx::TensorShapeProto* shape = ShapeOf(ctx.InputType(in));
  if (shape != nullptr && ctx.HasOutput(out)) *MutableShape(ctx.MutableOutputType(out)) = *shape;
}

void PropagateType(InferenceContext& ctx, size_t in, size_t out) {
  const onnx::TypeProto* type = ctx.InputType(in);
  if (type != nullptr && ctx.HasOutput(out)) *ctx.MutableOutputType(out) = *type;
}

absl::Status BroadcastDims(absl::Span<const DimRange> ranges, onnx::TensorShapeProto* out) {
  int rank = 0;
  for (const DimRange& range : ranges) rank = std::max(rank, range.size());
  out->clear_dim();
  for (int axis = 0; axis < rank; ++axis) {
    // The candidate dim: a known value > 1 wins; equal symbols stay.
    std::optional<int64_t> value;
    std::optional<absl::string_view> symbol;
    bool unknown = false;
    bool all_one = true;
    for (const DimRange& range : ranges) {
      int offset = rank - range.size();
      if (axis < offset) continue;
      const auto& dim = range.dim(axis - offset);
      if (dim.has_dim_value()) {
        if (dim.dim_value() == 1) continue;
        all_one = false;
        if (value && *value != dim.dim_value()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "cannot broadcast dimension ", *value, " with ", dim.dim_value(), " (axis ",
              axis, " of the result)"));
        }
        value = dim.dim_value();
      } else {
        all_one = false;
        if (dim.has_dim_param()) {
          if (symbol && *symbol != dim.dim_param()) unknown = true;
          symbol = dim.dim_param();
        } else {
          unknown = true;
        }
      }
    }
    auto* dim = out->add_dim();
    if (value) {
      dim->set_dim_value(*value);
    } else if (all_one) {
      dim->set_dim_value(1);
    } else if (symbol && !unknown) {
      dim->set_dim_param(std::string(*symbol));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<onnx::TensorShapeProto> BroadcastShapes(
    absl::Span<const onnx::TensorShapeProto* const> shapes) {
  absl::InlinedVector<DimRange, 4> ranges;
  for (const onnx::TensorShapeProto* shape : shapes) ranges.push_back(DimRange(*shape));
  onnx::TensorShapeProto result;
  OC_RETURN_IF_ERROR(BroadcastDims(ranges, &result));
  return result;
}

absl::Status InferLikeInputTypedByDtype(InferenceContext& ctx) {
  PropagateShape(ctx, 0, 0);
  int64_t dtype = ctx.AttrInt("dtype", 0);
  if (dtype != 0) {
    SetElemType(ctx.MutableOutputType(0), ElemTypeFromAttr(dtype));
  } else {
    PropagateElemType(ctx, 0, 0);
  }
  return absl::OkStatus();
}

absl::Status InferBroadcastShape(InferenceContext& ctx) {
  if (ctx.op().FindAttr("broadcast") != nullptr) {
    // Before opset 7: B is broadcast onto A (from `axis`, or as a suffix),
    // so the result has A's shape.
    PropagateShape(ctx, 0, 0);
    return absl::OkStatus();
  }
  absl::InlinedVector<DimRange, 4> ranges;
  bool all_equal = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.HasInput(i)) continue;
    const onnx::TensorShapeProto* shape = ShapeOf(ctx.InputType(i));
    if (shape == nullptr) return absl::OkStatus();
    all_equal = all_equal && (ranges.empty() || SameDims(*ranges[0].shape, *shape));
    ranges.push_back(DimRange(*shape));
  }
  if (ranges.empty() || !ctx.HasOutput(0)) return absl::OkStatus();
  if (all_equal && ctx.SameTypeParam(0, 0)) {
    // The common case (same-shape operands) needs no broadcasting.
    ctx.ShareInputType(0, 0);
    return absl::OkStatus();
  }
  onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
  if (all_equal) {
    out->CopyFrom(*ranges[0].shape);
    return absl::OkStatus();
  }
  absl::Status status = BroadcastDims(ranges, out);
  if (!status.ok()) return ctx.Error(status.message());
  return absl::OkStatus();
}

bool SameDims(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b) {
  if (a.dim_size() != b.dim_size()) return false;
  for (int i = 0; i < a.dim_size(); ++i) {
    const auto& x = a.dim(i);
    const auto& y = b.dim(i);
    if (x.value_case() != y.value_case()) return false;
    if (x.has_dim_value() && x.dim_value() != y.dim_value()) return false;
    if (x.has_dim_param() && x.dim_param() != y.dim_param()) return false;
  }
  return true;
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

namespace {

// The little-endian elements of type T in `raw`, as V.
template <typename T, typename V = int64_t>
std::vector<V> RawValues(const std::string& raw) {
  std::vector<V> values(raw.size() / sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
    values[i] = static_cast<V>(value);
  }
  return values;
}

// Makes the cleared `tensor` one of element type `type` (1-D, or a scalar
// when `scalar`) holding `values`, each added with `add`.
template <typename T>
void SetTensor(int32_t type, absl::Span<const T> values, bool scalar,
               void (onnx::TensorProto::*add)(T), onnx::TensorProto& tensor) {
  tensor.set_data_type(type);
  if (!scalar) tensor.add_dims(static_cast<int64_t>(values.size()));
  for (T v : values) (tensor.*add)(v);
}

}  // namespace

bool HoldsIntValues(int32_t data_type) {
  return data_type == onnx::TensorProto::BOOL || IsIntegerElementType(data_type);
}

void SetInt64Tensor(absl::Span<const int64_t> values, bool scalar, onnx::TensorProto& tensor) {
  SetTensor(onnx::TensorProto::INT64, values, scalar, &onnx::TensorProto::add_int64_data, tensor);
}

void SetFloatTensor(absl::Span<const float> values, bool scalar, onnx::TensorProto& tensor) {
  SetTensor(onnx::TensorProto::FLOAT, values, scalar, &onnx::TensorProto::add_float_data, tensor);
}

onnx::TensorProto Int64Tensor(absl::Span<const int64_t> values, bool scalar) {
  onnx::TensorProto tensor;
  SetInt64Tensor(values, scalar, tensor);
  return tensor;
}

onnx::TensorProto FloatTensor(absl::Span<const float> values, bool scalar) {
  onnx::TensorProto tensor;
  SetFloatTensor(values, scalar, tensor);
  return tensor;
}

std::optional<onnx::TensorProto> ShorthandTensor(const onnx::AttributeProto& attribute) {
  using onnx::TensorProto;
  const std::string& name = attribute.name();
  if (name == "value_int") return Int64Tensor({attribute.i()}, /*scalar=*/true);
  if (name == "value_ints") return Int64Tensor(attribute.ints());
  if (name == "value_float") return FloatTensor({attribute.f()}, /*scalar=*/true);
  if (name == "value_floats") return FloatTensor(attribute.floats());
  TensorProto tensor;
  if (name == "value_string") {
    tensor.set_data_type(TensorProto::STRING);
    tensor.add_string_data(attribute.s());
  } else if (name == "value_strings") {
    tensor.set_data_type(TensorProto::STRING);
    tensor.add_dims(attribute.strings_size());
    for (const std::string& v : attribute.strings()) tensor.add_string_data(v);
  } else {
    return std::nullopt;
  }
  return tensor;
}

absl::StatusOr<std::vector<int64_t>> IntValues(const onnx::TensorProto& tensor) {
  if (IsExternal(tensor)) return absl::FailedPreconditionError("tensor data is external");
  std::optional<int64_t> count = ElementCount(tensor);
  if (!count || *count > (int64_t{1} << 24)) {
    return absl::FailedPreconditionError("tensor too large to read as constant");
  }
  std::vector<int64_t> values;
  bool raw = tensor.has_raw_data();
  switch (tensor.data_type()) {
    case onnx::TensorProto::INT64:
      values = raw ? RawValues<int64_t>(tensor.raw_data())
                   : std::vector<int64_t>(tensor.int64_data().begin(), tensor.int64_data().end());
      break;
    case onnx::TensorProto::INT32:
      values = raw ? RawValues<int32_t>(tensor.raw_data())
                   : std::vector<int64_t>(tensor.int32_data().begin(), tensor.int32_data().end());
      break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      if (raw) {
        values = tensor.data_type() == onnx::TensorProto::INT16    ? RawValues<int16_t>(tensor.raw_data())
                 : tensor.data_type() == onnx::TensorProto::INT8   ? RawValues<int8_t>(tensor.raw_data())
                 : tensor.data_type() == onnx::TensorProto::UINT16 ? RawValues<uint16_t>(tensor.raw_data())
                                                                    : RawValues<uint8_t>(tensor.raw_data());
      } else {
        values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      }
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      values = raw ? (tensor.data_type() == onnx::TensorProto::UINT32
                          ? RawValues<uint32_t>(tensor.raw_data())
                          : RawValues<uint64_t>(tensor.raw_data()))
                   : std::vector<int64_t>(tensor.uint64_data().begin(), tensor.uint64_data().end());
      break;
    default:
      return absl::InvalidArgumentError("not an integer tensor");
  }
  if (static_cast<int64_t>(values.size()) != *count) {
    return absl::InvalidArgumentError("tensor data does not match its dims");
  }
  return values;
}

absl::StatusOr<std::vector<double>> FloatValues(const onnx::TensorProto& tensor) {
  if (IsExternal(tensor)) return absl::FailedPreconditionError("tensor data is external");
  std::vector<double> values;
  bool raw = tensor.has_raw_data();
  if (tensor.data_type() == onnx::TensorProto::FLOAT) {
    values = raw ? RawValues<float, double>(tensor.raw_data())
                 : std::vector<double>(tensor.float_data().begin(), tensor.float_data().end());
  } else if (tensor.data_type() == onnx::TensorProto::DOUBLE) {
    values = raw ? RawValues<double, double>(tensor.raw_data())
                 : std::vector<double>(tensor.double_data().begin(), tensor.double_data().end());
  } else {
    absl::StatusOr<std::vector<int64_t>> ints = IntValues(tensor);
    if (!ints.ok()) return ints.status();
    values.assign(ints->begin(), ints->end());
  }
  return values;
}

std::optional<std::vector<int64_t>> KnownInts(InferenceContext& ctx, size_t i) {
  if (!ctx.HasInput(i)) return std::nullopt;
  return KnownInts(ctx.InputConstant(i), ctx.InputShapeData(i));
}

std::optional<std::vector<int64_t>> KnownInts(const onnx::TensorProto* constant,
                                              const onnx::TensorShapeProto* data) {
  if (constant != nullptr && HoldsIntValues(constant->data_type())) {
    absl::StatusOr<std::vector<int64_t>> values = IntValues(*constant);
    if (values.ok()) return *std::move(values);
  }
  if (data != nullptr) {
    std::vector<int64_t> values;
    for (const auto& dim : data->dim()) {
      if (!dim.has_dim_value()) return std::nullopt;
      values.push_back(dim.dim_value());
    }
    return values;
  }
  return std::nullopt;
}

absl::Status MergeShape(const onnx::TensorShapeProto& inferred,
                        onnx::TensorShapeProto* existing) {
  if (inferred.dim_size() != existing->dim_size()) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", inferred.dim_size(),
                                                   " inferred, but rank ",
                                                   existing->dim_size(), " declared"));
  }
  for (int i = 0; i < inferred.dim_size(); ++i) {
    const auto& from = inferred.dim(i);
    auto* to = existing->mutable_dim(i);
    if (from.has_dim_value()) {
      if (to->has_dim_value() && to->dim_value() != from.dim_value()) {
        return absl::InvalidArgumentError(absl::StrCat("dimension ", i, " is ", from.dim_value(),
                                                       " inferred, but ", to->dim_value(),
                                                       " declared"));
      }
      if (!to->has_dim_value()) to->set_dim_value(from.dim_value());
    } else if (from.has_dim_param() && !to->has_dim_value() && !to->has_dim_param()) {
      to->set_dim_param(from.dim_param());
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::schema
