// Detection kernels: NonMaxSuppression (10, 11). Per batch and class, the
// boxes whose score passes score_threshold (strictly greater; all when the
// input is absent) are taken by score, highest first and ties by lower box
// index, each kept unless its IoU with a box kept before exceeds
// iou_threshold, until max_output_boxes_per_class are kept. Computed in
// float, as the boxes' type (float) computes, so boundary IoUs compare as
// the reference's do.

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::detection_ops {

// A box as its extents on each axis.
struct Box {
  float x_min, x_max, y_min, y_max;
};

// Box `b` of `data` ([y1, x1, y2, x2] with either corner first, or
// [x_center, y_center, width, height] when `center`).
Box ReadBox(const float* data, bool center) {
  if (center) {
    float half_w = data[2] / 2, half_h = data[3] / 2;
    return {data[0] - half_w, data[0] + half_w, data[1] - half_h, data[1] + half_h};
  }
  return {std::min(data[1], data[3]), std::max(data[1], data[3]), std::min(data[0], data[2]),
          std::max(data[0], data[2])};
}

// Whether `a` and `b` overlap by more than `threshold` (IoU); boxes of no
// area never do.
bool Suppresses(const Box& a, const Box& b, float threshold) {
  float x_min = std::max(a.x_min, b.x_min), x_max = std::min(a.x_max, b.x_max);
  if (!(x_max > x_min)) return false;
  float y_min = std::max(a.y_min, b.y_min), y_max = std::min(a.y_max, b.y_max);
  if (!(y_max > y_min)) return false;
  float intersection = (x_max - x_min) * (y_max - y_min);
  if (!(intersection > 0)) return false;
  float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  float union_area = area_a + area_b - intersection;
  if (!(area_a > 0) || !(area_b > 0) || !(union_area > 0)) return false;
  return intersection / union_area > threshold;
}

// The one element of an optional scalar input, or `fallback` when absent
// or empty.
template <typename T>
absl::StatusOr<T> ScalarOr(const KernelCall& call, int index, T fallback) {
  const Tensor* t = call.input(index);
  if (t == nullptr || t->size() == 0) return fallback;
  if (t->size() != 1) return call.Error(absl::StrCat("input ", index, " must hold one element"));
  if constexpr (std::is_same_v<T, int64_t>) {
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> v, Int64s(call, *t));
    return v[0];
  } else {
    if (t->elem_type() != onnx::TensorProto::FLOAT) return call.Error(NoKernel(t->elem_type()));
    return t->data<float>()[0];
  }
}

Outputs NonMaxSuppressionKernel(const KernelCall& call) {
  const Tensor* boxes = call.input(0);
  const Tensor* scores = call.input(1);
  if (boxes == nullptr || scores == nullptr) return call.Error("boxes or scores are absent");
  if (boxes->elem_type() != onnx::TensorProto::FLOAT ||
      scores->elem_type() != onnx::TensorProto::FLOAT) {
    return call.Error(NoKernel(boxes->elem_type() != onnx::TensorProto::FLOAT
                                   ? boxes->elem_type()
                                   : scores->elem_type()));
  }
  if (boxes->rank() != 3 || boxes->dims()[2] != 4) {
    return call.Error("boxes must have shape [batches, boxes, 4]");
  }
  if (scores->rank() != 3 || scores->dims()[0] != boxes->dims()[0] ||
      scores->dims()[2] != boxes->dims()[1]) {
    return call.Error("scores must have shape [batches, classes, boxes]");
  }
  int64_t center_point_box = call.Int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    return call.Error("center_point_box must be 0 or 1");
  }
  OC_ASSIGN_OR_RETURN(int64_t max_per_class, ScalarOr<int64_t>(call, 2, 0));
  OC_ASSIGN_OR_RETURN(float iou_threshold, ScalarOr<float>(call, 3, 0.0f));
  const Tensor* score_input = call.input(4);
  bool filter = score_input != nullptr && score_input->size() != 0;
  OC_ASSIGN_OR_RETURN(float score_threshold, ScalarOr<float>(call, 4, 0.0f));
  max_per_class = std::max<int64_t>(max_per_class, 0);

  int64_t batches = boxes->dims()[0], classes = scores->dims()[1], count = boxes->dims()[1];
  absl::Span<const float> box_data = boxes->data<float>();
  absl::Span<const float> score_data = scores->data<float>();
  std::vector<int64_t> selected;  // batch, class, box triples
  for (int64_t batch = 0; batch < batches; ++batch) {
    std::vector<Box> batch_boxes(count);
    for (int64_t b = 0; b < count; ++b) {
      batch_boxes[b] = ReadBox(&box_data[(batch * count + b) * 4], center_point_box == 1);
    }
    for (int64_t cls = 0; cls < classes; ++cls) {
      const float* s = &score_data[(batch * classes + cls) * count];
      std::vector<int64_t> candidates;
      for (int64_t b = 0; b < count; ++b) {
        if (std::isnan(s[b])) return call.Error("a score is NaN");
        if (!filter || s[b] > score_threshold) candidates.push_back(b);
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [&](int64_t a, int64_t b) { return s[a] > s[b]; });
      std::vector<int64_t> kept;
      for (int64_t b : candidates) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        bool keep = true;
        for (int64_t k : kept) {
          if (Suppresses(batch_boxes[b], batch_boxes[k], iou_threshold)) {
            keep = false;
            break;
          }
        }
        if (!keep) continue;
        kept.push_back(b);
        selected.insert(selected.end(), {batch, cls, b});
      }
    }
  }
  Tensor out(onnx::TensorProto::INT64, {static_cast<int64_t>(selected.size() / 3), 3});
  std::copy(selected.begin(), selected.end(), out.data<int64_t>().begin());
  return One(std::move(out));
}

}  // namespace onnxconvert::eval::detection_ops
