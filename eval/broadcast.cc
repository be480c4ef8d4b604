#include "eval/broadcast.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnxconvert::eval {

absl::StatusOr<std::vector<int64_t>> BroadcastDims(
    absl::Span<const std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const std::vector<int64_t>& dims : shapes) rank = std::max(rank, dims.size());
  std::vector<int64_t> out(rank, 1);
  for (const std::vector<int64_t>& dims : shapes) {
    size_t shift = rank - dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t& o = out[shift + i];
      if (dims[i] == o || dims[i] == 1) continue;
      if (o != 1) {
        std::vector<std::string> listed;
        for (const std::vector<int64_t>& d : shapes) {
          listed.push_back(absl::StrCat("[", absl::StrJoin(d, ","), "]"));
        }
        return absl::InvalidArgumentError(
            absl::StrCat("shapes ", absl::StrJoin(listed, ", "), " do not broadcast"));
      }
      o = dims[i];
    }
  }
  return out;
}

BroadcastCursor::BroadcastCursor(absl::Span<const int64_t> out_dims,
                                 absl::Span<const int64_t> in_dims)
    : dims_(out_dims.begin(), out_dims.end()),
      strides_(out_dims.size(), 0),
      index_(out_dims.size(), 0) {
  size_t shift = out_dims.size() - in_dims.size();
  int64_t stride = 1;
  for (size_t i = in_dims.size(); i-- > 0;) {
    strides_[shift + i] = in_dims[i] == 1 ? 0 : stride;
    stride *= in_dims[i];
  }
}

void BroadcastCursor::Next() { NextIndex(dims_, strides_, index_, offset_); }

}  // namespace onnxconvert::eval
