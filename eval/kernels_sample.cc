// GridSample (16: 2-D, modes bilinear/nearest/bicubic; 20 and 22: N-D,
// modes linear/nearest/cubic): X [N, C, D1..Dk] sampled at grid [N,
// O1..Ok, k] (coordinates in [-1, 1], the last spatial axis first) into
// [N, C, O1..Ok], as the reference implementation does:
//
// - a coordinate maps to (c + 1) / 2 * (d - 1) with align_corners, else
//   ((c + 1) * d - 1) / 2, in float (the reference's coordinate type);
// - nearest rounds it half to even, for any number of spatial axes (the
//   corpus's volumetric cases do so too);
// - a coordinate past the borders ([0, d - 1] with align_corners, else
//   [-0.5, d - 0.5]) is clamped to [0, d - 1] (border) or reflected into
//   them (reflection); zeros leaves it;
// - each tap (one for nearest, 2 linear, 4 cubic with Keys' a = -0.75 per
//   axis) reads 0 past the data (zeros), the clamped index (border) or the
//   reflected one (reflection).
//
// Interpolation sums in double. X must be floating point.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::sample_ops {

enum class SampleMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// The most taps a GridSample reads.
constexpr double kMaxTaps = static_cast<double>(int64_t{1} << 32);

// `x` reflected by the borders [lo, hi] until within them (the remainder
// exact, the result kept within the borders).
double Reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return lo;
  double result = x;
  if (x < lo || x > hi) {
    double dx = x < lo ? lo - x : x - hi;
    double r = std::fmod(dx, range);
    bool even = std::fmod(std::floor((dx - r) / range + 0.5), 2.0) == 0;
    bool from_lo = (x < lo) == even;
    result = from_lo ? lo + r : hi - r;
  }
  return std::clamp(result, lo, hi);
}

// Keys' cubic weights (a = -0.75) of the taps at -1, 0, 1, 2 from a point
// `t` in [0, 1) past tap 0.
void CubicWeights(double t, double w[4]) {
  constexpr double a = -0.75;
  double x = std::abs(t);
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

struct Tap {
  int64_t index;  // -1: reads 0
  double weight;
};

Outputs GridSampleKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  const Tensor* grid = call.input(1);
  if (x == nullptr || grid == nullptr) return call.Error("X or grid is absent");
  if (!IsFloatElement(x->elem_type())) return call.Error(NoKernel(x->elem_type()));
  if (!IsFloatElement(grid->elem_type())) return call.Error(NoKernel(grid->elem_type()));
  bool v16 = call.since_version() < 20;
  const onnx::AttributeProto* mode_attr = call.attribute("mode");
  std::string mode_name = mode_attr != nullptr ? mode_attr->s() : (v16 ? "bilinear" : "linear");
  SampleMode mode;
  if (mode_name == "nearest") {
    mode = SampleMode::kNearest;
  } else if (mode_name == (v16 ? "bilinear" : "linear")) {
    mode = SampleMode::kLinear;
  } else if (mode_name == (v16 ? "bicubic" : "cubic")) {
    mode = SampleMode::kCubic;
  } else {
    return call.Error(absl::StrCat("mode \"", mode_name, "\" is unknown"));
  }
  const onnx::AttributeProto* padding_attr = call.attribute("padding_mode");
  std::string padding_name = padding_attr != nullptr ? padding_attr->s() : "zeros";
  Padding padding;
  if (padding_name == "zeros") {
    padding = Padding::kZeros;
  } else if (padding_name == "border") {
    padding = Padding::kBorder;
  } else if (padding_name == "reflection") {
    padding = Padding::kReflection;
  } else {
    return call.Error(absl::StrCat("padding_mode \"", padding_name, "\" is unknown"));
  }
  bool align_corners = call.Int("align_corners", 0) != 0;

  int64_t k = x->rank() - 2;
  if (k < 1) return call.Error("X has rank below 3");
  if (v16 && k != 2) return call.Error("X must have rank 4 before version 20");
  if (grid->rank() != k + 2 || grid->dims()[0] != x->dims()[0] || grid->dims().back() != k) {
    return call.Error(absl::StrCat("grid must have shape [N, O1..O", k, ", ", k, "]"));
  }
  int64_t batch = x->dims()[0], channels = x->dims()[1];
  std::vector<int64_t> dims(x->dims().begin() + 2, x->dims().end());
  std::vector<int64_t> out_dims = {batch, channels};
  out_dims.insert(out_dims.end(), grid->dims().begin() + 1, grid->dims().end() - 1);
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, out_dims));
  if (count == 0) return One(Tensor(x->elem_type(), out_dims));
  for (int64_t d : dims) {
    if (d == 0) return call.Error("X has a spatial dim of 0");
  }
  int taps_per_axis = mode == SampleMode::kNearest ? 1 : mode == SampleMode::kLinear ? 2 : 4;
  if (static_cast<double>(count) * std::pow(taps_per_axis, static_cast<double>(k)) > kMaxTaps) {
    return call.Error("the sampling is too large");
  }
  int64_t positions = 1;  // per batch
  for (size_t i = 2; i < out_dims.size(); ++i) positions *= out_dims[i];
  int64_t plane = 1;  // elements per channel of X
  for (int64_t d : dims) plane *= d;

  OC_ASSIGN_OR_RETURN(std::vector<double> data, Doubles(call, *x));
  OC_ASSIGN_OR_RETURN(std::vector<double> coords, Doubles(call, *grid));
  std::vector<double> out(static_cast<size_t>(count));
  std::vector<int64_t> strides = Strides(dims);

  // The tap reading index `i` of axis `a` under the padding mode (-1 reads 0).
  auto padded = [&](int64_t i, int64_t a) -> int64_t {
    int64_t d = dims[a];
    if (i >= 0 && i < d) return i;
    switch (padding) {
      case Padding::kZeros: return -1;
      case Padding::kBorder: return std::clamp<int64_t>(i, 0, d - 1);
      case Padding::kReflection: {
        double lo = align_corners ? 0.0 : -0.5;
        double hi = align_corners ? static_cast<double>(d) - 1 : static_cast<double>(d) - 0.5;
        double r = std::trunc(Reflect(static_cast<double>(i), lo, hi));
        return std::clamp<int64_t>(static_cast<int64_t>(r), 0, d - 1);
      }
    }
    return -1;
  };

  std::vector<std::vector<Tap>> taps(static_cast<size_t>(k));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t a = 0; a < k; ++a) {
        double g = coords[(n * positions + p) * k + (k - 1 - a)];
        if (!(std::abs(g) <= std::numeric_limits<float>::max())) {
          return call.Error("a grid coordinate is not finite");
        }
        float d = static_cast<float>(dims[a]);
        float gf = static_cast<float>(g);
        float cf = align_corners ? (gf + 1) / 2.0f * (d - 1) : ((gf + 1) * d - 1) / 2.0f;
        double c = cf;
        if (!std::isfinite(c)) return call.Error("a grid coordinate is not finite");
        if (mode == SampleMode::kNearest) {
          c = std::nearbyint(c);
        }
        double lo = align_corners ? 0.0 : -0.5;
        double hi = align_corners ? static_cast<double>(dims[a]) - 1
                                  : static_cast<double>(dims[a]) - 0.5;
        if (c < lo || c > hi) {
          if (padding == Padding::kBorder) {
            c = std::clamp(c, 0.0, static_cast<double>(dims[a]) - 1);
          } else if (padding == Padding::kReflection) {
            c = Reflect(c, lo, hi);
          } else {
            // Every tap lies past the data well before these bounds.
            c = std::clamp(c, -8.0, static_cast<double>(dims[a]) + 8);
          }
        }
        std::vector<Tap>& t = taps[a];
        t.clear();
        if (mode == SampleMode::kNearest) {
          t.push_back({padded(static_cast<int64_t>(std::trunc(c)), a), 1.0});
        } else {
          double base = std::floor(c);
          int64_t i0 = static_cast<int64_t>(base);
          double frac = c - base;
          if (mode == SampleMode::kLinear) {
            t.push_back({padded(i0, a), 1 - frac});
            t.push_back({padded(i0 + 1, a), frac});
          } else {
            double w[4];
            CubicWeights(frac, w);
            for (int j = 0; j < 4; ++j) t.push_back({padded(i0 - 1 + j, a), w[j]});
          }
        }
      }
      // Every combination of one tap per axis.
      std::vector<size_t> pick(static_cast<size_t>(k), 0);
      std::vector<double> sums(static_cast<size_t>(channels), 0.0);
      while (true) {
        double weight = 1;
        int64_t offset = 0;
        bool zero = false;
        for (int64_t a = 0; a < k; ++a) {
          const Tap& tap = taps[a][pick[a]];
          if (tap.index < 0) {
            zero = true;
            break;
          }
          weight *= tap.weight;
          offset += tap.index * strides[a];
        }
        if (!zero) {
          for (int64_t ch = 0; ch < channels; ++ch) {
            sums[ch] += weight * data[(n * channels + ch) * plane + offset];
          }
        }
        int64_t a = k - 1;
        for (; a >= 0; --a) {
          if (++pick[a] < taps[a].size()) break;
          pick[a] = 0;
        }
        if (a < 0) break;
      }
      for (int64_t ch = 0; ch < channels; ++ch) {
        out[(n * channels + ch) * positions + p] = sums[ch];
      }
    }
  }
  return One(FloatTensor(x->elem_type(), out_dims, out));
}

}  // namespace onnxconvert::eval::sample_ops
