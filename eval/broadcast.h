#ifndef ONNX_CONVERT_EVAL_BROADCAST_H_
#define ONNX_CONVERT_EVAL_BROADCAST_H_

// numpy-style broadcasting for the evaluator's kernels.

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

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_BROADCAST_H_
