// Dropout and the random ops: RandomNormal, RandomUniform (and their *Like
// forms), Multinomial and Bernoulli. Dropout in inference (or with ratio
// 0) passes its input through with a mask of all true; in training, and
// the random ops always, draw from a generator seeded by the `seed`
// attribute (else a fixed seed): their values are not the reference's, and
// IsDeterministic reports these ops so that nothing folds them.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::random_ops {

using nn::Outputs;
using nn::RealView;

// A generator seeded by the float `seed` attribute's bits (or a fixed
// seed).
std::mt19937_64 Generator(const KernelCall& call) {
  const onnx::AttributeProto* seed = call.attribute("seed");
  uint64_t bits = 0x5eed;
  if (seed != nullptr) {
    float f = seed->f();
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    bits = u;
  }
  return std::mt19937_64(bits);
}

// `values` stored as the float type `type`.
absl::StatusOr<Tensor> StoreFloats(const KernelCall& call, int32_t type,
                                   std::vector<int64_t> dims, absl::Span<const double> values) {
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, type);
  nn::VisitFloatType(type, [&](auto v) {
    out = nn::StoreTensor<decltype(v), double>(type, std::move(dims), values);
  });
  return out;
}

// Dropout of every version: ratio and training from attributes (is_test
// before 7, ratio before 12) or inputs (12 on).
Outputs DropoutKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "data"));
  double ratio = call.Float("ratio", 0.5f);
  bool training = call.since_version() < 7 && call.Int("is_test", 0) == 0;
  if (call.since_version() >= 12) {
    ratio = 0.5;
    if (const Tensor* r = call.input(1)) {
      OC_ASSIGN_OR_RETURN(RealView<double> v, RealView<double>::Of(*r));
      if (v.size() != 1) return call.Error("ratio must be a scalar");
      ratio = v[0];
    }
    training = false;
    if (const Tensor* t = call.input(2)) {
      if (t->elem_type() != onnx::TensorProto::BOOL || t->size() != 1) {
        return call.Error("training_mode must be a bool scalar");
      }
      training = t->data<bool>()[0];
    }
  }
  if (!(ratio >= 0 && ratio < 1)) return call.Error("ratio must be in [0, 1)");
  bool drops = training && ratio > 0;
  Tensor mask(call.since_version() >= 10 ? onnx::TensorProto::BOOL : x->elem_type(), x->dims());
  Tensor y = *x;
  if (!drops) {
    if (mask.elem_type() == onnx::TensorProto::BOOL) {
      for (bool& m : mask.data<bool>()) m = true;
    } else {
      std::vector<double> ones(x->size(), 1.0);
      OC_ASSIGN_OR_RETURN(mask, StoreFloats(call, x->elem_type(), x->dims(), ones));
    }
  } else {
    OC_ASSIGN_OR_RETURN(RealView<double> vx, RealView<double>::Of(*x));
    std::mt19937_64 gen = Generator(call);
    std::bernoulli_distribution keep(1 - ratio);
    std::vector<double> out(x->size()), kept(x->size());
    for (int64_t i = 0; i < x->size(); ++i) {
      kept[i] = keep(gen) ? 1 : 0;
      out[i] = vx[i] * kept[i] / (1 - ratio);
    }
    OC_ASSIGN_OR_RETURN(y, StoreFloats(call, x->elem_type(), x->dims(), out));
    if (mask.elem_type() == onnx::TensorProto::BOOL) {
      for (int64_t i = 0; i < x->size(); ++i) mask.data<bool>()[i] = kept[i] != 0;
    } else {
      OC_ASSIGN_OR_RETURN(mask, StoreFloats(call, x->elem_type(), x->dims(), kept));
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  outputs.push_back(std::move(mask));
  return outputs;
}

// RandomNormal/RandomUniform (shape attribute) and their *Like forms (the
// input's shape; dtype defaulting to the input's type).
template <Distribution kDist, bool kLike>
Outputs RandomKernel(const KernelCall& call) {
  std::vector<int64_t> dims;
  int32_t type = onnx::TensorProto::FLOAT;
  if constexpr (kLike) {
    OC_ASSIGN_OR_RETURN(const Tensor* input, nn::Required(call, 0, "input"));
    dims = input->dims();
    type = input->elem_type();
  } else {
    std::optional<std::vector<int64_t>> shape = call.Ints("shape");
    if (!shape) return call.Error("attribute 'shape' is unset");
    dims = *shape;
  }
  type = static_cast<int32_t>(call.Int("dtype", type));
  OC_ASSIGN_OR_RETURN(int64_t count, nn::CheckedCount(call, dims));
  std::mt19937_64 gen = Generator(call);
  std::vector<double> values(count);
  if constexpr (kDist == Distribution::kNormal) {
    std::normal_distribution<double> dist(call.Float("mean", 0), call.Float("scale", 1));
    for (double& v : values) v = dist(gen);
  } else {
    double low = call.Float("low", 0), high = call.Float("high", 1);
    if (!(low <= high)) return call.Error("low must not exceed high");
    std::uniform_real_distribution<double> dist(low, high);
    for (double& v : values) v = dist(gen);
  }
  OC_ASSIGN_OR_RETURN(Tensor out, StoreFloats(call, type, dims, values));
  return nn::One(std::move(out));
}

// Bernoulli: 1 with each input's probability, as dtype (default the
// input's type).
Outputs BernoulliKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "input"));
  OC_ASSIGN_OR_RETURN(RealView<double> p, RealView<double>::Of(*x));
  int32_t type = static_cast<int32_t>(call.Int("dtype", x->elem_type()));
  std::mt19937_64 gen = Generator(call);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> values(x->size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!(p[i] >= 0 && p[i] <= 1)) return call.Error("a probability is outside [0, 1]");
    values[i] = unit(gen) < p[i] ? 1 : 0;
  }
  Tensor out(type, x->dims());
  bool held = VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    for (size_t i = 0; i < values.size(); ++i) out.data<T>()[i] = nn::StoreAs<T>(values[i]);
  });
  if (!held || IsNarrow(type)) return nn::UnsupportedType(call, type);
  return nn::One(std::move(out));
}

// Multinomial: sample_size class indices per batch row, drawn from the
// softmax of the row's unnormalized log-probabilities.
Outputs MultinomialKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "input"));
  if (x->rank() != 2) return call.Error("input must be [batch, classes]");
  OC_ASSIGN_OR_RETURN(RealView<double> logits, RealView<double>::Of(*x));
  int64_t samples = call.Int("sample_size", 1);
  int32_t type = static_cast<int32_t>(call.Int("dtype", onnx::TensorProto::INT32));
  if (type != onnx::TensorProto::INT32 && type != onnx::TensorProto::INT64) {
    return call.Error("dtype must be int32 or int64");
  }
  int64_t batch = x->dims()[0], classes = x->dims()[1];
  OC_ASSIGN_OR_RETURN(int64_t count, nn::CheckedCount(call, {batch, samples}));
  if (classes < 1) return call.Error("there are no classes to draw");
  std::mt19937_64 gen = Generator(call);
  Tensor out(type, {batch, samples});
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> weights(classes);
    double top = -INFINITY;
    for (int64_t k = 0; k < classes; ++k) top = std::max(top, logits[b * classes + k]);
    for (int64_t k = 0; k < classes; ++k) weights[k] = std::exp(logits[b * classes + k] - top);
    std::discrete_distribution<int64_t> dist(weights.begin(), weights.end());
    for (int64_t s = 0; s < samples; ++s) {
      int64_t drawn = dist(gen);
      if (type == onnx::TensorProto::INT32) {
        out.data<int32_t>()[b * samples + s] = static_cast<int32_t>(drawn);
      } else {
        out.data<int64_t>()[b * samples + s] = drawn;
      }
    }
  }
  (void)count;
  return nn::One(std::move(out));
}

constinit const FlagInstances<Distribution, 2> kRandom =
    FlagInstancesOf<Distribution, 2>([](auto dist, auto like) -> KernelFn {
      return RandomKernel<decltype(dist)::value, decltype(like)::value>;
    });

}  // namespace onnxconvert::eval::random_ops
