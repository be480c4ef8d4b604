#include "eval/kernel_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace onnxconvert::eval {

Outputs One(Tensor tensor) {
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(tensor));
  return outputs;
}

Outputs One(absl::StatusOr<Tensor> tensor) {
  if (!tensor.ok()) return tensor.status();
  return One(*std::move(tensor));
}

Tensor Pick(const Tensor& src, std::vector<int64_t> dims, absl::Span<const int64_t> offsets) {
  Tensor out(src.elem_type(), std::move(dims));
  if (src.elem_type() == onnx::TensorProto::STRING) {
    for (size_t i = 0; i < offsets.size(); ++i) out.strings()[i] = src.strings()[offsets[i]];
    return out;
  }
  int size = ElementSize(src.elem_type());
  const uint8_t* from = src.data<uint8_t>().data();
  uint8_t* to = out.data<uint8_t>().data();
  for (size_t i = 0; i < offsets.size(); ++i) {
    std::memcpy(to + i * size, from + offsets[i] * size, size);
  }
  return out;
}

Tensor PickStrided(const Tensor& src, std::vector<int64_t> dims,
                   absl::Span<const int64_t> strides, int64_t base) {
  Tensor out(src.elem_type(), dims);
  if (out.size() == 0) return out;
  if (src.elem_type() == onnx::TensorProto::STRING) {
    ForEachIndex(dims, strides, base,
                 [&](int64_t i, int64_t offset) { out.strings()[i] = src.strings()[offset]; });
    return out;
  }
  // Merge axes that walk on contiguously (an axis whose stride is the
  // whole extent of the next) into one, from the innermost out.
  std::vector<int64_t> d, st;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;  // contributes no offset
    if (!d.empty() && st.back() == strides[i] * dims[i]) {
      d.back() *= dims[i];
      st.back() = strides[i];
    } else {
      d.push_back(dims[i]);
      st.push_back(strides[i]);
    }
  }
  const int size = ElementSize(src.elem_type());
  const uint8_t* from = src.data<uint8_t>().data();
  uint8_t* to = out.data<uint8_t>().data();
  if (d.empty()) {
    std::memcpy(to, from + base * size, size);
    return out;
  }
  const size_t rank = d.size();
  const int64_t inner = d.back();
  const int64_t inner_stride = st.back();
  const size_t row_bytes = static_cast<size_t>(inner) * size;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= d[i];
  std::vector<int64_t> index(rank - 1, 0);
  int64_t offset = base;
  for (int64_t r = 0; r < rows; ++r) {
    if (inner_stride == 1) {
      std::memcpy(to, from + offset * size, row_bytes);
    } else {
      const uint8_t* p = from + offset * size;
      const int64_t step = inner_stride * size;
      switch (size) {
        case 1: for (int64_t k = 0; k < inner; ++k) to[k] = p[k * step]; break;
        case 2:
          for (int64_t k = 0; k < inner; ++k) std::memcpy(to + k * 2, p + k * step, 2);
          break;
        case 4:
          for (int64_t k = 0; k < inner; ++k) std::memcpy(to + k * 4, p + k * step, 4);
          break;
        case 8:
          for (int64_t k = 0; k < inner; ++k) std::memcpy(to + k * 8, p + k * step, 8);
          break;
        default:
          for (int64_t k = 0; k < inner; ++k) std::memcpy(to + k * size, p + k * step, size);
      }
    }
    to += row_bytes;
    for (size_t a = rank - 1; a-- > 0;) {
      offset += st[a];
      if (++index[a] < d[a]) break;
      offset -= st[a] * d[a];
      index[a] = 0;
    }
  }
  return out;
}

void CopyElement(const Tensor& src, int64_t from, Tensor& dst, int64_t to) {
  if (src.elem_type() == onnx::TensorProto::STRING) {
    dst.strings()[to] = src.strings()[from];
    return;
  }
  int size = ElementSize(src.elem_type());
  std::memcpy(dst.data<uint8_t>().data() + to * size, src.data<uint8_t>().data() + from * size,
              size);
}

std::vector<int64_t> Strides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

absl::StatusOr<int64_t> Count(const KernelCall& call, absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) return call.Error(absl::StrCat("dim ", dim, " is negative"));
  }
  for (int64_t dim : dims) {
    if (dim != 0 && count > kMaxElements / dim) {
      return call.Error(absl::StrCat("the output would hold more than ", kMaxElements,
                                     " elements"));
    }
    count *= dim;
  }
  return count;
}

absl::StatusOr<int64_t> Axis(const KernelCall& call, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return call.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<std::optional<std::vector<int64_t>>> IntsOf(const KernelCall& call,
                                                           absl::string_view name, int input) {
  if (std::optional<std::vector<int64_t>> ints = call.Ints(name)) return ints;
  if (const Tensor* tensor = call.input(input)) {
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> values, Int64s(call, *tensor));
    return std::optional<std::vector<int64_t>>(std::move(values));
  }
  return std::optional<std::vector<int64_t>>();
}

bool IsFloatElement(int32_t elem_type) {
  bool floating = false;
  VisitElementType(elem_type, [&](auto v) { floating = kIsFloat<decltype(v)>; });
  return floating;
}

bool IsNarrowInteger(int32_t elem_type) {
  auto [lowest, highest] = NarrowIntRange(elem_type);
  return lowest != highest;
}

double NarrowValue(const Tensor& tensor, int64_t index) {
  int32_t type = tensor.elem_type();
  uint8_t held = tensor.data<uint8_t>()[index];
  if (IsNarrowInteger(type)) {
    return NarrowIntRange(type).first < 0 ? static_cast<int8_t>(held) : held;
  }
  return NarrowFloatToFloat(type, held);
}

std::string NoKernel(int32_t elem_type) {
  return absl::StrCat("no kernel for elements of ", ElementTypeName(elem_type));
}

absl::StatusOr<std::vector<int64_t>> Int64s(const KernelCall& call, const Tensor& tensor) {
  absl::StatusOr<std::vector<int64_t>> values = ToInt64s(tensor);
  if (!values.ok()) return call.Error(values.status().message());
  return values;
}

absl::StatusOr<std::vector<double>> Doubles(const KernelCall& call, const Tensor& tensor) {
  std::vector<double> values;
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      for (const T& x : tensor.data<T>()) values.push_back(static_cast<double>(Load(x)));
    }
  });
  if (static_cast<int64_t>(values.size()) != tensor.size()) {
    return call.Error(absl::StrCat("expected numbers, got ", ElementTypeName(tensor.elem_type())));
  }
  return values;
}

AxisSplit SplitAt(absl::Span<const int64_t> dims, int64_t axis) {
  AxisSplit split{1, dims[axis], 1};
  for (int64_t i = 0; i < axis; ++i) split.outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) split.inner *= dims[i];
  return split;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> AlignedDims(const KernelCall& call,
                                                              bool legacy) {
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor* input : call.inputs) {
    if (input == nullptr) return call.Error("an input is absent");
    dims.push_back(input->dims());
  }
  if (!legacy) return dims;
  if (dims.size() != 2) return dims;
  if (call.Int("broadcast", 0) == 0) {
    if (dims[0] != dims[1]) return call.Error("the inputs' shapes differ and broadcast is 0");
    return dims;
  }
  int64_t rank_a = dims[0].size();
  int64_t rank_b = dims[1].size();
  int64_t axis = call.Int("axis", rank_a - rank_b);
  if (axis < 0 || axis + rank_b > rank_a) return call.Error("axis is out of range");
  std::vector<int64_t> b(rank_a, 1);
  for (int64_t i = 0; i < rank_b; ++i) b[axis + i] = dims[1][i];
  dims[1] = b;
  return dims;
}

Tensor FloatTensor(int32_t type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Tensor out(type, std::move(dims));
  VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsFloat<T>) {
      for (size_t i = 0; i < values.size(); ++i) {
        out.data<T>()[i] = Store<T>(static_cast<Compute<T>>(values[i]));
      }
    }
  });
  return out;
}

}  // namespace onnxconvert::eval
