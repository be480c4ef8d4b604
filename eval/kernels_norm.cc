// Normalization: BatchNormalization (inference; training outputs from 14),
// InstanceNormalization, LayerNormalization, GroupNormalization (18: scale
// and bias per group; 21: per channel), LRN, MeanVarianceNormalization,
// RMSNormalization and LpNormalization. Statistics accumulate in double;
// results are stored in the input's type.

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/broadcast.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::norm_ops {

using nn::Outputs;
using nn::RealView;

// The elements of a float tensor as double, or an error naming the op.
absl::StatusOr<RealView<double>> Doubles(const KernelCall& call, const Tensor& t) {
  bool floating = false;
  nn::VisitFloatType(t.elem_type(), [&](auto) { floating = true; });
  if (!floating) return nn::UnsupportedType(call, t.elem_type());
  return RealView<double>::Of(t);
}

// `values` stored as `type` (a float type) with `dims`.
Tensor Store(int32_t type, std::vector<int64_t> dims, absl::Span<const double> values) {
  Tensor out;
  nn::VisitFloatType(type, [&](auto v) {
    using T = decltype(v);
    out = nn::StoreTensor<T, double>(type, std::move(dims), values);
  });
  return out;
}

// Mean and population variance of each of `rows` rows of `inner` values.
struct Moments {
  std::vector<double> mean, variance;
};
Moments RowMoments(const double* x, int64_t rows, int64_t inner) {
  Moments m;
  m.mean.resize(rows);
  m.variance.resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x + r * inner;
    double sum = 0;
    for (int64_t i = 0; i < inner; ++i) sum += row[i];
    double mean = inner == 0 ? 0 : sum / static_cast<double>(inner);
    double squares = 0;
    for (int64_t i = 0; i < inner; ++i) squares += (row[i] - mean) * (row[i] - mean);
    m.mean[r] = mean;
    m.variance[r] = inner == 0 ? 0 : squares / static_cast<double>(inner);
  }
  return m;
}

// Per-channel parameters (scale, bias, mean, var) of BatchNormalization:
// each must hold C values (or, for spatial = 0 before 9, C x spatial).
absl::Status CheckChannelParameter(const KernelCall& call, const Tensor& t, int64_t channels,
                                   int64_t per_channel, const char* name) {
  if (t.size() != channels && t.size() != channels * per_channel) {
    return call.Error(absl::StrCat(name, " holds ", t.size(), " values for ", channels,
                                   " channels"));
  }
  return absl::OkStatus();
}

Outputs BatchNormKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  const char* names[] = {"scale", "B", "mean", "var"};
  std::vector<RealView<double>> p;
  if (x->rank() < 1) return call.Error("X must have rank 1 or more");
  int64_t n = x->dims()[0];
  int64_t channels = x->rank() > 1 ? x->dims()[1] : 1;
  int64_t spatial = nn::Product(x->dims(), 2, x->dims().size());
  for (int i = 0; i < 4; ++i) {
    OC_ASSIGN_OR_RETURN(const Tensor* t, nn::Required(call, i + 1, names[i]));
    OC_RETURN_IF_ERROR(CheckChannelParameter(call, *t, channels, spatial, names[i]));
    OC_ASSIGN_OR_RETURN(RealView<double> v, Doubles(call, *t));
    p.push_back(std::move(v));
  }
  bool training = call.since_version() >= 14 ? call.Int("training_mode", 0) != 0
                                           : call.Int("is_test", 1) == 0 ||
                                                 (call.since_version() >= 7 &&
                                                  call.node.output_size() > 1);
  if (training && call.since_version() < 14) {
    return call.Error("training outputs before version 14 are not supported");
  }
  double epsilon = call.Float("epsilon", 1e-5f);
  bool per_channel = true;
  for (const RealView<double>& v : p) {
    per_channel = per_channel && v.size() == static_cast<size_t>(channels);
  }
  if (!training && per_channel) {
    // Inference with per-channel parameters: the channel's mean, scale,
    // sqrt(var + epsilon) and bias taken once, then a loop over each
    // [n, c] plane of X's own storage computing the same expression in
    // double as below.
    bool floating = false;
    nn::VisitFloatType(x->elem_type(), [&](auto) { floating = true; });
    if (!floating) return nn::UnsupportedType(call, x->elem_type());
    Tensor out(x->elem_type(), x->dims());
    nn::VisitFloatType(x->elem_type(), [&](auto v) {
      using T = decltype(v);
      const T* in = x->data<T>().data();
      T* o = out.data<T>().data();
      for (int64_t c = 0; c < channels; ++c) {
        const double scale = p[0][c], bias = p[1][c], m = p[2][c];
        const double d = std::sqrt(p[3][c] + epsilon);
        for (int64_t b = 0; b < n; ++b) {
          const int64_t base = (b * channels + c) * spatial;
          const T* xi = in + base;
          T* yi = o + base;
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            nn::MapAsDouble(xi, yi, spatial,
                            [=](auto e) { return scale * (e - m) / d + bias; });
          } else {
            for (int64_t s = 0; s < spatial; ++s) {
              yi[s] = nn::StoreAs<T>(scale * (nn::LoadAs<double>(xi[s]) - m) / d + bias);
            }
          }
        }
      }
    });
    return nn::One(std::move(out));
  }
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  double momentum = call.Float("momentum", 0.9f);
  // Per-element parameters (spatial = 0) index by channel and position.
  auto at = [&](const RealView<double>& v, int64_t c, int64_t s) {
    return v.size() == static_cast<size_t>(channels) ? v[c] : v[c * spatial + s];
  };
  std::vector<double> mean(channels), variance(channels);
  if (training) {
    if (p[2].size() != static_cast<size_t>(channels)) {
      return call.Error("training needs per-channel mean and var");
    }
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0, squares = 0;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t s = 0; s < spatial; ++s) sum += vx[(b * channels + c) * spatial + s];
      }
      double count = static_cast<double>(n * spatial);
      mean[c] = count == 0 ? 0 : sum / count;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t s = 0; s < spatial; ++s) {
          double d = vx[(b * channels + c) * spatial + s] - mean[c];
          squares += d * d;
        }
      }
      variance[c] = count == 0 ? 0 : squares / count;
    }
  }
  std::vector<double> y(x->size());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t s = 0; s < spatial; ++s) {
        int64_t i = (b * channels + c) * spatial + s;
        double m = training ? mean[c] : at(p[2], c, s);
        double v = training ? variance[c] : at(p[3], c, s);
        y[i] = at(p[0], c, s) * (vx[i] - m) / std::sqrt(v + epsilon) + at(p[1], c, s);
      }
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(Store(x->elem_type(), x->dims(), y));
  if (training) {
    std::vector<double> running_mean(channels), running_var(channels);
    for (int64_t c = 0; c < channels; ++c) {
      running_mean[c] = p[2][c] * momentum + mean[c] * (1 - momentum);
      running_var[c] = p[3][c] * momentum + variance[c] * (1 - momentum);
    }
    outputs.push_back(Store(call.input(3)->elem_type(), {channels}, running_mean));
    outputs.push_back(Store(call.input(4)->elem_type(), {channels}, running_var));
  }
  return outputs;
}

// Inputs 0 to 2 of a normalization (its input, scale and bias, named
// `names`), the input of rank `min_rank` or more.
absl::StatusOr<std::array<const Tensor*, 3>> AffineInputs(const KernelCall& call,
                                                          std::array<const char*, 3> names,
                                                          int min_rank) {
  std::array<const Tensor*, 3> inputs;
  for (int i = 0; i < 3; ++i) {
    OC_ASSIGN_OR_RETURN(inputs[i], nn::Required(call, i, names[i]));
  }
  if (inputs[0]->rank() < min_rank) {
    return call.Error(absl::StrCat(names[0], " must have rank ", min_rank, " or more"));
  }
  return inputs;
}

// InstanceNormalization: each [n, c] plane normalized by its own moments,
// then scale[c] and B[c].
Outputs InstanceNormKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, AffineInputs(call, {"input", "scale", "B"}, 3));
  auto [x, scale, bias] = inputs;
  int64_t channels = x->dims()[1];
  if (scale->size() != channels || bias->size() != channels) {
    return call.Error("scale and B must hold one value per channel");
  }
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  OC_ASSIGN_OR_RETURN(RealView<double> vs, Doubles(call, *scale));
  OC_ASSIGN_OR_RETURN(RealView<double> vb, Doubles(call, *bias));
  double epsilon = call.Float("epsilon", 1e-5f);
  int64_t inner = nn::Product(x->dims(), 2, x->dims().size());
  int64_t rows = x->dims()[0] * channels;
  Moments m = RowMoments(vx.data(), rows, inner);
  std::vector<double> y(x->size());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = r % channels;
    double denominator = std::sqrt(m.variance[r] + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      y[r * inner + i] = vs[c] * (vx[r * inner + i] - m.mean[r]) / denominator + vb[c];
    }
  }
  return nn::One(Store(x->elem_type(), x->dims(), y));
}

// LayerNormalization (and RMSNormalization when `kRms`): rows of the dims
// from `axis` on, normalized by their mean and variance (RMS: by their
// root mean square), then times Scale and plus B (each broadcast to those
// dims). LayerNormalization's optional Mean and InvStdDev outputs keep X's
// leading dims with ones after.
template <bool kRms>
Outputs LayerNormKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  OC_ASSIGN_OR_RETURN(const Tensor* scale, nn::Required(call, 1, "Scale"));
  const Tensor* bias = kRms ? nullptr : call.input(2);
  OC_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(call, call.Int("axis", -1), x->rank()));
  std::vector<int64_t> inner_dims(x->dims().begin() + axis, x->dims().end());
  int64_t inner = nn::Product(inner_dims, 0, inner_dims.size());
  int64_t rows = nn::Product(x->dims(), 0, axis);
  for (const Tensor* t : {scale, bias}) {
    if (t == nullptr) continue;
    absl::StatusOr<std::vector<int64_t>> to = BroadcastDims({inner_dims, t->dims()});
    if (!to.ok() || *to != inner_dims) {
      return call.Error("Scale and B must broadcast to the normalized dims");
    }
  }
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  OC_ASSIGN_OR_RETURN(RealView<double> vs, Doubles(call, *scale));
  std::optional<RealView<double>> vb;
  if (bias != nullptr) {
    OC_ASSIGN_OR_RETURN(vb, Doubles(call, *bias));
  }
  std::vector<int64_t> scale_at(inner), bias_at(inner);
  BroadcastCursor cs(inner_dims, scale->dims());
  BroadcastCursor cb(inner_dims, bias != nullptr ? bias->dims() : inner_dims);
  for (int64_t i = 0; i < inner; ++i, cs.Next(), cb.Next()) {
    scale_at[i] = cs.offset();
    bias_at[i] = cb.offset();
  }
  double epsilon = call.Float("epsilon", 1e-5f);
  std::vector<double> y(x->size()), means(rows), inv_std(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = vx.data() + r * inner;
    double mean = 0, spread = 0;
    if constexpr (kRms) {
      for (int64_t i = 0; i < inner; ++i) spread += row[i] * row[i];
    } else {
      for (int64_t i = 0; i < inner; ++i) mean += row[i];
      mean = inner == 0 ? 0 : mean / static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) spread += (row[i] - mean) * (row[i] - mean);
    }
    spread = inner == 0 ? 0 : spread / static_cast<double>(inner);
    double inverse = 1 / std::sqrt(spread + epsilon);
    means[r] = mean;
    inv_std[r] = inverse;
    for (int64_t i = 0; i < inner; ++i) {
      double v = (row[i] - mean) * inverse * vs[scale_at[i]];
      if (vb) v += (*vb)[bias_at[i]];
      y[r * inner + i] = v;
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(Store(x->elem_type(), x->dims(), y));
  if constexpr (!kRms) {
    std::vector<int64_t> stat_dims(x->dims().begin(), x->dims().begin() + axis);
    stat_dims.resize(x->rank(), 1);
    int32_t stat_type = call.Int("stash_type", 1) == 1 ? onnx::TensorProto::FLOAT
                                                       : x->elem_type();
    outputs.push_back(Store(stat_type, stat_dims, means));
    outputs.push_back(Store(stat_type, stat_dims, inv_std));
  }
  return outputs;
}

// GroupNormalization: the channels split into num_groups groups, each
// [n, group] block normalized by its moments, then scale and bias per group
// (18) or per channel (21).
Outputs GroupNormKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, AffineInputs(call, {"X", "scale", "bias"}, 2));
  auto [x, scale, bias] = inputs;
  int64_t groups = call.Int("num_groups", 0);
  int64_t channels = x->dims()[1];
  if (groups < 1 || channels % groups != 0) {
    return call.Error(absl::StrCat("num_groups ", groups, " does not divide ", channels,
                                   " channels"));
  }
  int64_t per = call.since_version() >= 21 ? channels : groups;
  if (scale->size() != per || bias->size() != per) {
    return call.Error(absl::StrCat("scale and bias must hold ", per, " values"));
  }
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  OC_ASSIGN_OR_RETURN(RealView<double> vs, Doubles(call, *scale));
  OC_ASSIGN_OR_RETURN(RealView<double> vb, Doubles(call, *bias));
  double epsilon = call.Float("epsilon", 1e-5f);
  int64_t spatial = nn::Product(x->dims(), 2, x->dims().size());
  int64_t inner = channels / groups * spatial;
  int64_t rows = x->dims()[0] * groups;
  Moments m = RowMoments(vx.data(), rows, inner);
  std::vector<double> y(x->size());
  for (int64_t r = 0; r < rows; ++r) {
    double denominator = std::sqrt(m.variance[r] + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      int64_t c = (r % groups) * (channels / groups) + i / std::max<int64_t>(spatial, 1);
      int64_t k = call.since_version() >= 21 ? c : r % groups;
      y[r * inner + i] = (vx[r * inner + i] - m.mean[r]) / denominator * vs[k] + vb[k];
    }
  }
  return nn::One(Store(x->elem_type(), x->dims(), y));
}

// LRN across channels: x / (bias + alpha / size * sum of squares over the
// channels [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.
Outputs LrnKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  if (x->rank() < 3) return call.Error("X must have rank 3 or more");
  int64_t size = call.Int("size", 0);
  if (size < 1) return call.Error("size must be positive");
  double alpha = call.Float("alpha", 1e-4f), beta = call.Float("beta", 0.75f);
  double bias = call.Float("bias", 1.0f);
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  int64_t channels = x->dims()[1];
  int64_t spatial = nn::Product(x->dims(), 2, x->dims().size());
  int64_t before = (size - 1) / 2, after = size / 2;  // floor and ceil of (size-1)/2
  std::vector<double> y(x->size());
  for (int64_t n = 0; n < x->dims()[0]; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      int64_t from = std::max<int64_t>(0, c - before);
      int64_t to = std::min<int64_t>(channels - 1, c + after);
      for (int64_t s = 0; s < spatial; ++s) {
        double squares = 0;
        for (int64_t k = from; k <= to; ++k) {
          double e = vx[(n * channels + k) * spatial + s];
          squares += e * e;
        }
        int64_t i = (n * channels + c) * spatial + s;
        y[i] = vx[i] / std::pow(bias + alpha / static_cast<double>(size) * squares, beta);
      }
    }
  }
  return nn::One(Store(x->elem_type(), x->dims(), y));
}

// Groups the elements of dims into rows over `axes` (reduced) and the
// rest: for each element, the index of its row of statistics.
std::vector<int64_t> StatisticRow(absl::Span<const int64_t> dims,
                                  const std::vector<bool>& reduced, int64_t& rows) {
  std::vector<int64_t> kept_strides(dims.size(), 0);
  rows = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (!reduced[d]) {
      kept_strides[d] = rows;
      rows *= dims[d];
    }
  }
  int64_t count = nn::Product(dims, 0, dims.size());
  std::vector<int64_t> row(count);
  ForEachIndex(dims, kept_strides, 0, [&](int64_t i, int64_t offset) { row[i] = offset; });
  return row;
}

// MeanVarianceNormalization over `axes`: (x - E[x]) / (sqrt(E[x^2] -
// E[x]^2) + 1e-9), as the op's function computes it.
Outputs MvnKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  std::vector<int64_t> axes = call.Ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<bool> reduced(x->rank(), false);
  for (int64_t axis : axes) {
    OC_ASSIGN_OR_RETURN(int64_t a, nn::NormalizeAxis(call, axis, x->rank()));
    reduced[a] = true;
  }
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  int64_t rows = 0;
  std::vector<int64_t> row = StatisticRow(x->dims(), reduced, rows);
  std::vector<double> sum(rows, 0), squares(rows, 0), count(rows, 0);
  for (int64_t i = 0; i < x->size(); ++i) {
    sum[row[i]] += vx[i];
    squares[row[i]] += vx[i] * vx[i];
    count[row[i]] += 1;
  }
  std::vector<double> y(x->size());
  for (int64_t i = 0; i < x->size(); ++i) {
    double mean = sum[row[i]] / count[row[i]];
    double variance = squares[row[i]] / count[row[i]] - mean * mean;
    y[i] = (vx[i] - mean) / (std::sqrt(variance) + 1e-9);
  }
  return nn::One(Store(x->elem_type(), x->dims(), y));
}

// LpNormalization: x divided by its p-norm (p 1 or 2) along `axis`; a zero
// norm gives zeros.
Outputs LpNormKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "input"));
  int64_t p = call.Int("p", 2);
  if (p != 1 && p != 2) return call.Error("p must be 1 or 2");
  OC_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(call, call.Int("axis", -1), x->rank()));
  OC_ASSIGN_OR_RETURN(RealView<double> vx, Doubles(call, *x));
  int64_t extent = x->dims()[axis];
  int64_t inner = nn::Product(x->dims(), axis + 1, x->dims().size());
  int64_t outer = nn::Product(x->dims(), 0, axis);
  std::vector<double> y(x->size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double norm = 0;
      for (int64_t k = 0; k < extent; ++k) {
        double e = vx[(o * extent + k) * inner + i];
        norm += p == 1 ? std::fabs(e) : e * e;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < extent; ++k) {
        int64_t at = (o * extent + k) * inner + i;
        y[at] = norm == 0 ? 0 : vx[at] / norm;
      }
    }
  }
  return nn::One(Store(x->elem_type(), x->dims(), y));
}

template KernelResult LayerNormKernel<false>(const KernelCall& call);
template KernelResult LayerNormKernel<true>(const KernelCall& call);

}  // namespace onnxconvert::eval::norm_ops
