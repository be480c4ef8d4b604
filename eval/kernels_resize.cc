// Resize (10-19) and Upsample (1-9): nearest, linear and cubic sampling
// under every coordinate transformation mode, with antialias,
// exclude_outside, extrapolation, axes and keep_aspect_ratio_policy.
// Resize-10 and Upsample sample asymmetrically and round nearest down, as
// the converter's Resize adapters take them to.
//
// Each axis gets, per output position, its source neighbours and their
// weights. Nearest picks one neighbour per axis and copies elements (exact
// for every type); linear and cubic interpolate one axis after another in
// double, then round integers to nearest even and saturate.

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::resize_ops {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coordinates {
  kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric,
  kTfCropAndResize, kTfHalfPixelForNn,
};
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

// A name an attribute may take, the value it means and the versions that
// accept it.
template <typename E>
struct Named {
  const char* name;
  E value;
  int first;
  int last;
};

constexpr Named<Mode> kModes[] = {
    {"nearest", Mode::kNearest, 1, kLast},
    {"linear", Mode::kLinear, 7, kLast},
    {"bilinear", Mode::kLinear, 1, 6},  // Upsample-1
    {"cubic", Mode::kCubic, 11, kLast},
};
constexpr Named<Coordinates> kCoordinates[] = {
    {"half_pixel", Coordinates::kHalfPixel, 11, kLast},
    {"half_pixel_symmetric", Coordinates::kHalfPixelSymmetric, 19, kLast},
    {"pytorch_half_pixel", Coordinates::kPytorchHalfPixel, 11, kLast},
    {"align_corners", Coordinates::kAlignCorners, 11, kLast},
    {"asymmetric", Coordinates::kAsymmetric, 11, kLast},
    {"tf_crop_and_resize", Coordinates::kTfCropAndResize, 11, kLast},
    {"tf_half_pixel_for_nn", Coordinates::kTfHalfPixelForNn, 11, 12},
};
constexpr Named<Nearest> kNearestModes[] = {
    {"round_prefer_floor", Nearest::kRoundPreferFloor, 11, kLast},
    {"round_prefer_ceil", Nearest::kRoundPreferCeil, 11, kLast},
    {"floor", Nearest::kFloor, 11, kLast},
    {"ceil", Nearest::kCeil, 11, kLast},
};

// The value the STRING attribute `name` (or `fallback`) names in `table`
// for this version, or an error.
template <typename E, size_t N>
absl::StatusOr<E> Lookup(const KernelCall& call, const char* name, const char* fallback,
                         const Named<E> (&table)[N]) {
  const onnx::AttributeProto* a = call.attribute(name);
  std::string value = a == nullptr ? fallback : a->s();
  for (const Named<E>& row : table) {
    if (value == row.name && row.first <= call.since_version() && call.since_version() <= row.last) {
      return row.value;
    }
  }
  return call.Error(absl::StrCat(name, " \"", value, "\" is unknown"));
}

// Everything a resize of one tensor needs, per axis of the input.
struct Plan {
  Mode mode = Mode::kNearest;
  Coordinates coordinates = Coordinates::kAsymmetric;
  Nearest nearest = Nearest::kFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
  std::vector<double> scales;
  std::vector<int64_t> out_dims;
  std::vector<double> roi_start, roi_end;
};

// The elements of a floating-point tensor (scales, roi) as double.
absl::StatusOr<std::vector<double>> Floats(const KernelCall& call, const Tensor& tensor) {
  if (!IsFloatElement(tensor.elem_type())) {
    return call.Error(absl::StrCat("expected floats, got ", ElementTypeName(tensor.elem_type())));
  }
  return Doubles(call, tensor);
}

// The output dims and scales from `scales` or `sizes` (over `axes`),
// keeping the aspect ratio as the policy says (sizes only).
absl::Status PlanSizes(const KernelCall& call, const Tensor& x, const std::vector<int64_t>& axes,
                       const std::vector<double>* scales, const std::vector<int64_t>* sizes,
                       Plan& plan) {
  int64_t rank = x.rank();
  plan.scales.assign(rank, 1.0);
  plan.out_dims = x.dims();
  size_t n = axes.size();
  if (scales != nullptr) {
    if (scales->size() != n) return call.Error("scales do not fit the axes");
    for (size_t i = 0; i < n; ++i) {
      double s = (*scales)[i];
      if (!(s > 0)) return call.Error(absl::StrCat("scale ", s, " is not positive"));
      double dim = std::floor(s * static_cast<double>(x.dims()[axes[i]]));
      if (!(dim < static_cast<double>(kMaxElements))) return call.Error("the output is too large");
      plan.scales[axes[i]] = s;
      plan.out_dims[axes[i]] = static_cast<int64_t>(dim);
    }
    return absl::OkStatus();
  }
  if (sizes == nullptr || sizes->size() != n) return call.Error("sizes do not fit the axes");
  for (size_t i = 0; i < n; ++i) {
    int64_t dim = x.dims()[axes[i]];
    if ((*sizes)[i] < 0 || (*sizes)[i] > kMaxElements || dim == 0) {
      return call.Error("a size is negative, too large or its axis empty");
    }
    plan.scales[axes[i]] = static_cast<double>((*sizes)[i]) / static_cast<double>(dim);
    plan.out_dims[axes[i]] = (*sizes)[i];
  }
  const onnx::AttributeProto* policy = call.attribute("keep_aspect_ratio_policy");
  std::string name = policy == nullptr || call.since_version() < 18 ? "stretch" : policy->s();
  if (name == "stretch") return absl::OkStatus();
  if (name != "not_larger" && name != "not_smaller") {
    return call.Error(absl::StrCat("keep_aspect_ratio_policy \"", name, "\" is unknown"));
  }
  double scale = plan.scales[axes[0]];
  for (int64_t a : axes) {
    scale = name == "not_larger" ? std::min(scale, plan.scales[a]) : std::max(scale, plan.scales[a]);
  }
  for (int64_t a : axes) {
    plan.scales[a] = scale;
    double dim = std::floor(scale * static_cast<double>(x.dims()[a]) + 0.5);
    if (!(dim < static_cast<double>(kMaxElements))) return call.Error("the output is too large");
    plan.out_dims[a] = static_cast<int64_t>(dim);
  }
  return absl::OkStatus();
}

// The plan of Resize-11 and later.
absl::StatusOr<Plan> PlanResize11(const KernelCall& call, const Tensor& x) {
  Plan plan;
  int64_t rank = x.rank();
  OC_ASSIGN_OR_RETURN(plan.mode, Lookup(call, "mode", "nearest", kModes));
  OC_ASSIGN_OR_RETURN(plan.coordinates,
                      Lookup(call, "coordinate_transformation_mode", "half_pixel", kCoordinates));
  OC_ASSIGN_OR_RETURN(plan.nearest,
                      Lookup(call, "nearest_mode", "round_prefer_floor", kNearestModes));
  plan.cubic_a = call.Float("cubic_coeff_a", -0.75f);
  plan.exclude_outside = call.Int("exclude_outside", 0) != 0;
  plan.extrapolation = call.Float("extrapolation_value", 0);
  plan.antialias = call.since_version() >= 18 && call.Int("antialias", 0) != 0;
  if (plan.antialias && plan.mode == Mode::kNearest) {
    return call.Error("antialias applies to linear and cubic modes only");
  }
  std::vector<int64_t> axes(rank);
  for (int64_t i = 0; i < rank; ++i) axes[i] = i;
  if (std::optional<std::vector<int64_t>> given = call.since_version() >= 18
                                                      ? call.Ints("axes")
                                                      : std::nullopt) {
    std::vector<bool> seen(rank, false);
    axes.clear();
    for (int64_t axis : *given) {
      OC_ASSIGN_OR_RETURN(int64_t a, Axis(call, axis, rank));
      if (seen[a]) return call.Error("axes repeat");
      seen[a] = true;
      axes.push_back(a);
    }
  }
  const Tensor* scales_input = call.input(2);
  const Tensor* sizes_input = call.input(3);
  bool has_scales = scales_input != nullptr && scales_input->size() > 0;
  bool has_sizes = sizes_input != nullptr && sizes_input->size() > 0;
  if (has_scales == has_sizes) return call.Error("give exactly one of scales and sizes");
  if (has_scales) {
    OC_ASSIGN_OR_RETURN(std::vector<double> scales, Floats(call, *scales_input));
    OC_RETURN_IF_ERROR(PlanSizes(call, x, axes, &scales, nullptr, plan));
  } else {
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Int64s(call, *sizes_input));
    OC_RETURN_IF_ERROR(PlanSizes(call, x, axes, nullptr, &sizes, plan));
  }
  plan.roi_start.assign(rank, 0.0);
  plan.roi_end.assign(rank, 1.0);
  if (plan.coordinates == Coordinates::kTfCropAndResize) {
    const Tensor* roi = call.input(1);
    if (roi == nullptr) return call.Error("tf_crop_and_resize needs roi");
    OC_ASSIGN_OR_RETURN(std::vector<double> values, Floats(call, *roi));
    if (values.size() != 2 * axes.size()) return call.Error("roi does not fit the axes");
    for (size_t i = 0; i < axes.size(); ++i) {
      plan.roi_start[axes[i]] = values[i];
      plan.roi_end[axes[i]] = values[axes.size() + i];
    }
  }
  return plan;
}

// The plan of Resize-10 and Upsample: scales (input, or attributes before
// 9), asymmetric sampling, nearest rounding down.
absl::StatusOr<Plan> PlanLegacy(const KernelCall& call, const Tensor& x, bool upsample) {
  Plan plan;
  OC_ASSIGN_OR_RETURN(plan.mode, Lookup(call, "mode", "nearest", kModes));
  if (plan.mode == Mode::kCubic) return call.Error("mode \"cubic\" is unknown");
  std::vector<double> scales;
  if (upsample && call.since_version() < 7) {
    if (x.rank() != 4) return call.Error("the input is not 4-D");
    scales = {1.0, 1.0, call.Float("height_scale", 0), call.Float("width_scale", 0)};
  } else if (upsample && call.since_version() < 9) {
    std::vector<double> given;
    if (const onnx::AttributeProto* a = call.attribute("scales")) {
      given.assign(a->floats().begin(), a->floats().end());
    }
    scales = given;
  } else {
    const Tensor* input = call.input(1);
    if (input == nullptr) return call.Error("scales is absent");
    OC_ASSIGN_OR_RETURN(scales, Floats(call, *input));
  }
  std::vector<int64_t> axes(x.rank());
  for (int64_t i = 0; i < x.rank(); ++i) axes[i] = i;
  OC_RETURN_IF_ERROR(PlanSizes(call, x, axes, &scales, nullptr, plan));
  plan.roi_start.assign(x.rank(), 0.0);
  plan.roi_end.assign(x.rank(), 1.0);
  return plan;
}

// The source coordinate of output position `y` along an axis of `in`
// input and `out` output elements at `scale`; nullopt where
// tf_crop_and_resize extrapolates.
std::optional<double> SourceCoordinate(const Plan& plan, int64_t axis, double y, int64_t in,
                                       int64_t out) {
  double scale = plan.scales[axis];
  double length = scale * static_cast<double>(in);  // the unrounded output length
  double w = static_cast<double>(in);
  switch (plan.coordinates) {
    case Coordinates::kHalfPixel: return (y + 0.5) / scale - 0.5;
    case Coordinates::kHalfPixelSymmetric: {
      double adjustment = static_cast<double>(out) / length;
      return w / 2 * (1 - adjustment) + (y + 0.5) / scale - 0.5;
    }
    case Coordinates::kPytorchHalfPixel: return length == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    case Coordinates::kAlignCorners: return length == 1 ? 0.0 : y * (w - 1) / (length - 1);
    case Coordinates::kAsymmetric: return y / scale;
    case Coordinates::kTfHalfPixelForNn: return (y + 0.5) / scale;
    case Coordinates::kTfCropAndResize: {
      double start = plan.roi_start[axis], end = plan.roi_end[axis];
      double x = length == 1 ? (end - start) * (w - 1) / 2 : y * (end - start) * (w - 1) / (length - 1);
      x += start * (w - 1);
      if (x < 0 || x > w - 1) return std::nullopt;
      return x;
    }
  }
  return y;
}

// The cubic convolution kernel with coefficient `a`.
double CubicKernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// One output position of one axis: its neighbours (clamped into the axis)
// and their weights, or extrapolated.
struct Taps {
  bool extrapolated = false;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

absl::StatusOr<std::vector<Taps>> AxisTaps(const KernelCall& call, const Plan& plan, int64_t axis,
                                           int64_t in, int64_t out) {
  std::vector<Taps> taps(out);
  double s = plan.antialias ? std::min(plan.scales[axis], 1.0) : 1.0;
  for (int64_t y = 0; y < out; ++y) {
    std::optional<double> x = SourceCoordinate(plan, axis, static_cast<double>(y), in, out);
    if (!x) {
      taps[y].extrapolated = true;
      continue;
    }
    if (!std::isfinite(*x)) return call.Error("a source coordinate is not finite");
    // The neighbour left of x (x itself counts as right of it) and x's
    // distance from it, in (0, 1].
    double left_d = std::ceil(*x) - 1;
    double ratio = *x - left_d;
    int64_t left = static_cast<int64_t>(std::clamp(left_d, -4.0 * in - 8, 4.0 * in + 8));
    std::vector<int64_t> offsets;
    std::vector<double> weights;
    switch (plan.mode) {
      case Mode::kNearest: {
        bool right = false;
        switch (plan.nearest) {
          case Nearest::kRoundPreferFloor: right = ratio > 0.5; break;
          case Nearest::kRoundPreferCeil: right = ratio >= 0.5; break;
          case Nearest::kFloor: right = ratio == 1; break;
          case Nearest::kCeil: right = true; break;
        }
        offsets = {right ? 1 : 0};
        weights = {1};
        break;
      }
      case Mode::kLinear:
      case Mode::kCubic: {
        bool cubic = plan.mode == Mode::kCubic;
        int64_t start = static_cast<int64_t>(std::floor((cubic ? -2 : -1) / s)) + 1;
        for (int64_t i = start; i < 2 - start; ++i) {
          double d = (static_cast<double>(i) - ratio) * s;
          offsets.push_back(i);
          weights.push_back(cubic ? CubicKernel(d, plan.cubic_a)
                                  : std::clamp(1 - std::fabs(d), 0.0, 1.0));
        }
        break;
      }
    }
    double sum = 0;
    for (size_t k = 0; k < offsets.size(); ++k) {
      int64_t i = left + offsets[k];
      if (plan.exclude_outside && (i < 0 || i >= in)) weights[k] = 0;
      sum += weights[k];
    }
    bool normalize = plan.antialias || plan.exclude_outside;
    for (size_t k = 0; k < offsets.size(); ++k) {
      taps[y].index.push_back(std::clamp<int64_t>(left + offsets[k], 0, in - 1));
      taps[y].weight.push_back(normalize && sum != 0 ? weights[k] / sum : weights[k]);
    }
    if (plan.mode == Mode::kNearest && taps[y].weight[0] == 0) taps[y].extrapolated = true;
  }
  return taps;
}

// Whether the plan leaves `axis` as it is.
bool Identity(const Plan& plan, const Tensor& x, int64_t axis) {
  auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); };
  return close(plan.scales[axis], 1.0) && plan.out_dims[axis] == x.dims()[axis] &&
         close(plan.roi_start[axis], 0.0) && close(plan.roi_end[axis], 1.0);
}

// The extrapolation value as one element of `type`.
absl::StatusOr<Tensor> FillValue(const KernelCall& call, int32_t type, double value) {
  Tensor fill(type, {});
  absl::Status status;
  bool held = VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsFloat<T>) {
      fill.data<T>()[0] = Store<T>(static_cast<Compute<T>>(value));
    } else if constexpr (kIsNumber<T>) {
      fill.data<T>()[0] = TruncateTo<T>(value, status);
    } else {
      status = absl::InvalidArgumentError("no extrapolation value for bool");
    }
  });
  if (!held) return call.Error(absl::StrCat("no extrapolation value for ", ElementTypeName(type)));
  if (!status.ok()) return call.Error(status.message());
  return fill;
}

// Nearest: each output element copies the input element its per-axis picks
// name, or the extrapolation value.
absl::StatusOr<Tensor> ResizeNearest(const KernelCall& call, const Tensor& x, const Plan& plan) {
  int64_t rank = x.rank();
  std::vector<std::vector<Taps>> taps(rank);
  for (int64_t a = 0; a < rank; ++a) {
    if (Identity(plan, x, a)) {
      taps[a].resize(x.dims()[a]);
      for (int64_t i = 0; i < x.dims()[a]; ++i) taps[a][i].index = {i};
    } else {
      if (x.dims()[a] == 0 && plan.out_dims[a] > 0) return call.Error("resizes an empty axis");
      OC_ASSIGN_OR_RETURN(taps[a], AxisTaps(call, plan, a, x.dims()[a], plan.out_dims[a]));
    }
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, plan.out_dims));
  Tensor out(x.elem_type(), plan.out_dims);
  std::vector<int64_t> strides = Strides(x.dims());
  std::optional<Tensor> fill;
  int size = x.elem_type() == onnx::TensorProto::STRING ? 0 : ElementSize(x.elem_type());
  if (rank >= 1 && (size == 1 || size == 2 || size == 4 || size == 8)) {
    // Rows of the last axis at a time: per axis, each output position's
    // input offset (-1 when extrapolated), then typed copies along the row.
    std::vector<std::vector<int64_t>> offsets(rank);
    bool extrapolates = false;
    for (int64_t a = 0; a < rank; ++a) {
      offsets[a].resize(plan.out_dims[a]);
      for (int64_t i = 0; i < plan.out_dims[a]; ++i) {
        const Taps& t = taps[a][i];
        offsets[a][i] = t.extrapolated ? -1 : t.index[0] * strides[a];
        extrapolates = extrapolates || t.extrapolated;
      }
    }
    if (extrapolates && count > 0) {
      OC_ASSIGN_OR_RETURN(fill, FillValue(call, x.elem_type(), plan.extrapolation));
    }
    auto copy_rows = [&](auto v) {
      using U = decltype(v);
      const U* in = reinterpret_cast<const U*>(x.data<uint8_t>().data());
      U* o = reinterpret_cast<U*>(out.data<uint8_t>().data());
      U f{};
      if (fill) std::memcpy(&f, fill->data<uint8_t>().data(), sizeof(U));
      const int64_t width = plan.out_dims[rank - 1];
      const int64_t* last = offsets[rank - 1].data();
      std::vector<int64_t> index(rank, 0);
      for (int64_t e = 0; e < count; e += width) {
        int64_t base = 0;
        for (int64_t a = 0; a + 1 < rank && base >= 0; ++a) {
          int64_t off = offsets[a][index[a]];
          base = off < 0 ? -1 : base + off;
        }
        U* row = o + e;
        if (base < 0) {
          std::fill(row, row + width, f);
        } else {
          const U* src = in + base;
          for (int64_t i = 0; i < width; ++i) row[i] = last[i] < 0 ? f : src[last[i]];
        }
        for (int64_t a = rank - 1; a-- > 0;) {
          if (++index[a] < plan.out_dims[a]) break;
          index[a] = 0;
        }
      }
    };
    switch (size) {
      case 1: copy_rows(uint8_t{}); break;
      case 2: copy_rows(uint16_t{}); break;
      case 4: copy_rows(uint32_t{}); break;
      default: copy_rows(uint64_t{}); break;
    }
    return out;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t offset = 0;
    for (int64_t a = 0; a < rank && offset >= 0; ++a) {
      const Taps& t = taps[a][index[a]];
      offset = t.extrapolated ? -1 : offset + t.index[0] * strides[a];
    }
    if (offset >= 0) {
      CopyElement(x, offset, out, e);
    } else {
      if (!fill) {
        OC_ASSIGN_OR_RETURN(fill, FillValue(call, x.elem_type(), plan.extrapolation));
      }
      CopyElement(*fill, 0, out, e);
    }
    for (int64_t a = rank; a-- > 0;) {
      if (++index[a] < plan.out_dims[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

// Linear and cubic: interpolates in double one axis after another.
absl::StatusOr<Tensor> ResizeInterpolated(const KernelCall& call, const Tensor& x,
                                          const Plan& plan) {
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, plan.out_dims));
  (void)count;
  std::vector<double> values;
  bool numeric = VisitElementType(x.elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      for (const T& e : x.data<T>()) values.push_back(static_cast<double>(Load(e)));
    }
  });
  if (!numeric || static_cast<int64_t>(values.size()) != x.size()) {
    return call.Error(absl::StrCat("no interpolation of ", ElementTypeName(x.elem_type())));
  }
  std::vector<int64_t> dims = x.dims();
  for (int64_t a = 0; a < x.rank(); ++a) {
    if (Identity(plan, x, a)) continue;
    if (dims[a] == 0 && plan.out_dims[a] > 0) return call.Error("resizes an empty axis");
    OC_ASSIGN_OR_RETURN(std::vector<Taps> taps, AxisTaps(call, plan, a, dims[a], plan.out_dims[a]));
    AxisSplit s = SplitAt(dims, a);
    int64_t out = plan.out_dims[a];
    std::vector<double> next(s.outer * out * s.inner);
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t y = 0; y < out; ++y) {
        const Taps& t = taps[y];
        for (int64_t i = 0; i < s.inner; ++i) {
          double r = plan.extrapolation;
          if (!t.extrapolated) {
            r = 0;
            for (size_t k = 0; k < t.index.size(); ++k) {
              r += t.weight[k] * values[(o * s.dim + t.index[k]) * s.inner + i];
            }
          }
          next[(o * out + y) * s.inner + i] = r;
        }
      }
    }
    values = std::move(next);
    dims[a] = out;
  }
  Tensor result(x.elem_type(), plan.out_dims);
  absl::Status status;
  VisitElementType(x.elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      absl::Span<T> o = result.data<T>();
      for (size_t i = 0; i < values.size() && status.ok(); ++i) {
        if constexpr (kIsFloat<T>) {
          o[i] = Store<T>(static_cast<Compute<T>>(values[i]));
        } else {
          // Round to nearest even, then saturate, as the reference does.
          double r = std::nearbyint(values[i]);
          if (std::isnan(r)) {
            status = absl::InvalidArgumentError("an interpolated integer is NaN");
            break;
          }
          r = std::clamp(r, static_cast<double>(std::numeric_limits<T>::lowest()),
                         static_cast<double>(std::numeric_limits<T>::max()));
          o[i] = r >= static_cast<double>(std::numeric_limits<T>::max())
                     ? std::numeric_limits<T>::max()
                     : static_cast<T>(r);
        }
      }
    }
  });
  if (!status.ok()) return call.Error(status.message());
  return result;
}

Outputs Run(const KernelCall& call, const Tensor& x, const Plan& plan) {
  if (plan.mode == Mode::kNearest) {
    OC_ASSIGN_OR_RETURN(Tensor out, ResizeNearest(call, x, plan));
    return One(std::move(out));
  }
  OC_ASSIGN_OR_RETURN(Tensor out, ResizeInterpolated(call, x, plan));
  return One(std::move(out));
}

Outputs ResizeKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  absl::StatusOr<Plan> plan = call.since_version() >= 11 ? PlanResize11(call, *x)
                                                       : PlanLegacy(call, *x, false);
  if (!plan.ok()) return plan.status();
  return Run(call, *x, *plan);
}

Outputs UpsampleKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  OC_ASSIGN_OR_RETURN(Plan plan, PlanLegacy(call, *x, true));
  return Run(call, *x, plan);
}

}  // namespace onnxconvert::eval::resize_ops
