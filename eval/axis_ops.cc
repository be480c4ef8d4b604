#include "eval/axis_ops.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnxconvert::eval {
namespace {

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t product = 1;
  for (int64_t dim : dims) product *= dim;
  return product;
}

// Elements before `axis` (outer) and after it (inner) of `dims`.
struct Blocks {
  int64_t outer;
  int64_t inner;
};

Blocks BlocksOf(absl::Span<const int64_t> dims, int64_t axis) {
  return {Product(dims.subspan(0, axis)), Product(dims.subspan(axis + 1))};
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

}  // namespace

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

void CopyElements(const Tensor& from, int64_t from_offset, Tensor& to, int64_t to_offset,
                  int64_t count) {
  if (count <= 0) return;
  if (from.elem_type() == onnx::TensorProto::STRING) {
    std::copy_n(from.strings().begin() + from_offset, count, to.strings().begin() + to_offset);
    return;
  }
  int size = ElementSize(from.elem_type());
  std::memcpy(to.data<uint8_t>().data() + to_offset * size,
              from.data<uint8_t>().data() + from_offset * size, static_cast<size_t>(count * size));
}

Tensor SliceAxis(const Tensor& tensor, int64_t axis, int64_t start, int64_t count) {
  std::vector<int64_t> dims = tensor.dims();
  int64_t extent = dims[axis];
  dims[axis] = count;
  Tensor out(tensor.elem_type(), dims);
  Blocks blocks = BlocksOf(dims, axis);
  for (int64_t o = 0; o < blocks.outer; ++o) {
    CopyElements(tensor, (o * extent + start) * blocks.inner, out, o * count * blocks.inner,
                 count * blocks.inner);
  }
  return out;
}

Tensor TakeAxis(const Tensor& tensor, int64_t axis, int64_t index) {
  Tensor out = SliceAxis(tensor, axis, index, 1);
  std::vector<int64_t> dims = tensor.dims();
  dims.erase(dims.begin() + axis);
  out.Reshape(std::move(dims));
  return out;
}

absl::StatusOr<Tensor> ConcatAxis(absl::Span<const Tensor* const> parts, int64_t axis) {
  const Tensor& first = *parts.front();
  std::vector<int64_t> dims = first.dims();
  int64_t total = 0;
  for (const Tensor* part : parts) {
    std::vector<int64_t> same = part->dims();
    if (part->elem_type() != first.elem_type() || same.size() != dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot join ", ElementTypeName(part->elem_type()), DimsString(part->dims()), " to ",
          ElementTypeName(first.elem_type()), DimsString(first.dims())));
    }
    total += same[axis];
    same[axis] = dims[axis];
    if (same != dims) {
      return absl::InvalidArgumentError(absl::StrCat("cannot join ", DimsString(part->dims()),
                                                     " to ", DimsString(first.dims()),
                                                     " along axis ", axis));
    }
  }
  dims[axis] = total;
  Tensor out(first.elem_type(), dims);
  Blocks blocks = BlocksOf(dims, axis);
  int64_t row = total * blocks.inner;
  int64_t at = 0;
  for (const Tensor* part : parts) {
    int64_t chunk = part->dims()[axis] * blocks.inner;
    for (int64_t o = 0; o < blocks.outer; ++o) {
      CopyElements(*part, o * chunk, out, o * row + at, chunk);
    }
    at += chunk;
  }
  return out;
}

absl::StatusOr<Tensor> StackAxis(absl::Span<const Tensor* const> parts, int64_t axis) {
  const Tensor& first = *parts.front();
  for (const Tensor* part : parts) {
    if (part->elem_type() != first.elem_type() || part->dims() != first.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot stack ", ElementTypeName(part->elem_type()), DimsString(part->dims()),
          " with ", ElementTypeName(first.elem_type()), DimsString(first.dims())));
    }
  }
  std::vector<int64_t> dims = first.dims();
  int64_t outer = Product(absl::MakeConstSpan(dims).subspan(0, axis));
  int64_t inner = Product(absl::MakeConstSpan(dims).subspan(axis));
  int64_t count = static_cast<int64_t>(parts.size());
  dims.insert(dims.begin() + axis, count);
  Tensor out(first.elem_type(), std::move(dims));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < count; ++p) {
      CopyElements(*parts[p], o * inner, out, (o * count + p) * inner, inner);
    }
  }
  return out;
}

}  // namespace onnxconvert::eval
