#ifndef ONNX_CONVERT_EVAL_BROADCAST_H_
#define ONNX_CONVERT_EVAL_BROADCAST_H_

// numpy-style broadcasting for the evaluator's kernels, and strided walks
// over row-major elements.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace onnxconvert::eval {

// The dims `shapes` broadcast to (numpy rules: aligned at the last axis,
// each dim equal or 1), or an error naming the dims that do not.
absl::StatusOr<std::vector<int64_t>> BroadcastDims(
    absl::Span<const std::vector<int64_t>> shapes);

// Walks the elements of a tensor of `out_dims` in row-major order and gives,
// for each, the offset of the element of an input of `in_dims` (which
// broadcasts to `out_dims`) that it reads.
class BroadcastCursor {
 public:
  BroadcastCursor(absl::Span<const int64_t> out_dims, absl::Span<const int64_t> in_dims);
  // The input offset of the current output element.
  int64_t offset() const { return offset_; }
  // Moves to the next output element.
  void Next();

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// Moves the row-major `index` over `dims` to the next element, and
// `offset` with it by `strides` per axis (back to its start along each axis
// that wraps).
inline void NextIndex(absl::Span<const int64_t> dims, absl::Span<const int64_t> strides,
                      std::vector<int64_t>& index, int64_t& offset) {
  for (size_t d = dims.size(); d-- > 0;) {
    offset += strides[d];
    if (++index[d] < dims[d]) return;
    offset -= strides[d] * dims[d];
    index[d] = 0;
  }
}

// Calls `f(index, offset)` for every element of a tensor of `dims`, in
// row-major order, with `offset` advancing by `strides` per axis from
// `base`.
template <typename F>
void ForEachIndex(absl::Span<const int64_t> dims, absl::Span<const int64_t> strides, int64_t base,
                  F f) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = base;
  for (int64_t i = 0; i < count; ++i) {
    f(i, offset);
    NextIndex(dims, strides, index, offset);
  }
}

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_BROADCAST_H_
