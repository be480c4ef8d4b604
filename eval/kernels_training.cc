// The ai.onnx.preview.training optimizer kernels: Adagrad, Adam and
// Momentum (standard and Nesterov). Each takes the learning rate R and the
// update count T, then groups of equally many tensors (X..., G..., and the
// optimizer's state), and gives the updated X... followed by the updated
// state. Computed in double, stored in each tensor's type.

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::training_ops {

// R and T as numbers, and the tensors as `groups` groups of n each (n =
// their count / groups), every tensor of one index the same shape and
// floating point.
struct OptimizerInputs {
  double rate;
  int64_t count;
  int64_t n;
  // values[g][i]: tensor i of group g, as double.
  std::vector<std::vector<std::vector<double>>> values;
};

absl::StatusOr<OptimizerInputs> ReadOptimizerInputs(const KernelCall& call, int groups) {
  const Tensor* r = call.input(0);
  const Tensor* t = call.input(1);
  if (r == nullptr || t == nullptr) return call.Error("R or T is absent");
  if (r->size() != 1 || t->size() != 1) return call.Error("R and T must hold one element");
  if (!IsFloatElement(r->elem_type())) return call.Error(NoKernel(r->elem_type()));
  OptimizerInputs in;
  OC_ASSIGN_OR_RETURN(std::vector<double> rate, Doubles(call, *r));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> count, Int64s(call, *t));
  in.rate = rate[0];
  in.count = count[0];
  int64_t tensors = static_cast<int64_t>(call.inputs.size()) - 2;
  if (tensors <= 0 || tensors % groups != 0) {
    return call.Error(absl::StrCat("expects ", groups, " groups of equally many tensors after R and T"));
  }
  in.n = tensors / groups;
  if (call.node.output_size() > in.n * (groups - 1)) {
    return call.Error("has more outputs than updated tensors");
  }
  in.values.resize(groups);
  for (int g = 0; g < groups; ++g) {
    for (int64_t i = 0; i < in.n; ++i) {
      const Tensor* x = call.input(static_cast<int>(2 + g * in.n + i));
      const Tensor* first = call.input(static_cast<int>(2 + i));
      if (x == nullptr) return call.Error("an input is absent");
      if (!IsFloatElement(x->elem_type())) return call.Error(NoKernel(x->elem_type()));
      if (x->dims() != first->dims()) {
        return call.Error(absl::StrCat("input ", 2 + g * in.n + i, " differs in shape from input ",
                                       2 + i));
      }
      OC_ASSIGN_OR_RETURN(std::vector<double> v, Doubles(call, *x));
      in.values[g].push_back(std::move(v));
    }
  }
  return in;
}

// A tensor of `like`'s type and dims holding `values` (rounded).
Tensor Like(const Tensor& like, const std::vector<double>& values) {
  return FloatTensor(like.elem_type(), like.dims(), values);
}

// The outputs: group `g`'s new values (results[g - 1] ... in order: X
// first, then the state groups), each shaped as input 2 + g * n + i.
std::vector<Tensor> Gather(const KernelCall& call, const OptimizerInputs& in,
                           const std::vector<std::vector<std::vector<double>>>& results) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < results.size(); ++k) {
    int g = k == 0 ? 0 : static_cast<int>(k + 1);  // X, then the state groups after G
    for (int64_t i = 0; i < in.n; ++i) {
      out.push_back(Like(*call.input(static_cast<int>(2 + g * in.n + i)), results[k][i]));
    }
  }
  return out;
}

// The updated X and states of an optimizer of kGroups input groups (X, G,
// then the states): `step(values, out)` for every element of every tensor
// index, `values` the element in each input group and `out` its new value
// in X and in each state group, in that order.
template <int kGroups, typename Step>
Outputs Update(const KernelCall& call, const OptimizerInputs& in, Step step) {
  std::vector<std::vector<std::vector<double>>> results(kGroups - 1);
  for (int64_t i = 0; i < in.n; ++i) {
    size_t size = in.values[0][i].size();
    for (std::vector<std::vector<double>>& result : results) result.emplace_back(size);
    for (size_t e = 0; e < size; ++e) {
      std::array<double, kGroups> values;
      for (int g = 0; g < kGroups; ++g) values[g] = in.values[g][i][e];
      std::array<double, kGroups - 1> out;
      step(values, out);
      for (int k = 0; k < kGroups - 1; ++k) results[k][i][e] = out[k];
    }
  }
  return Gather(call, in, results);
}

// Adagrad: r = R / (1 + T * decay_factor); g = norm_coefficient * X + G;
// H' = H + g^2; X' = X - r * g / (sqrt(H') + epsilon).
Outputs AdagradKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(OptimizerInputs in, ReadOptimizerInputs(call, 3));
  double decay = call.Float("decay_factor", 0.0f);
  double epsilon = call.Float("epsilon", 1e-6f);
  double norm = call.Float("norm_coefficient", 0.0f);
  double r = in.rate / (1 + static_cast<double>(in.count) * decay);
  return Update<3>(call, in, [&](const auto& values, auto& out) {
    auto [x, grad, h] = values;
    auto& [x_new, h_new] = out;
    double g = norm * x + grad;
    h_new = h + g * g;
    x_new = x - r * g / (std::sqrt(h_new) + epsilon);
  });
}

// Adam: g = norm_coefficient * X + G; V' = alpha V + (1 - alpha) g;
// H' = beta H + (1 - beta) g^2; r = R sqrt(1 - beta^T) / (1 - alpha^T)
// when T > 0, else R; X' = (1 - norm_coefficient_post) (X - r V' /
// (sqrt(H') + epsilon)).
Outputs AdamKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(OptimizerInputs in, ReadOptimizerInputs(call, 4));
  double alpha = call.Float("alpha", 0.9f);
  double beta = call.Float("beta", 0.999f);
  double epsilon = call.Float("epsilon", 1e-6f);
  double norm = call.Float("norm_coefficient", 0.0f);
  double norm_post = call.Float("norm_coefficient_post", 0.0f);
  double r = in.rate;
  if (in.count > 0) {
    double t = static_cast<double>(in.count);
    r = in.rate * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t));
  }
  return Update<4>(call, in, [&](const auto& values, auto& out) {
    auto [x, grad, v, h] = values;
    auto& [x_new, v_new, h_new] = out;
    double g = norm * x + grad;
    v_new = alpha * v + (1 - alpha) * g;
    h_new = beta * h + (1 - beta) * g * g;
    x_new = (1 - norm_post) * (x - r * (v_new / (std::sqrt(h_new) + epsilon)));
  });
}

// Momentum: g = norm_coefficient * X + G; V' = alpha V + b g with b = beta
// when T > 0, else 1; X' = X - R V' ("standard") or X - R (g + alpha V')
// ("nesterov"). alpha, beta, mode and norm_coefficient are required.
Outputs MomentumKernel(const KernelCall& call) {
  for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
    if (call.attribute(name) == nullptr) {
      return call.Error(absl::StrCat("the attribute ", name, " is required"));
    }
  }
  std::string mode = call.attribute("mode")->s();
  if (mode != "standard" && mode != "nesterov") {
    return call.Error(absl::StrCat("mode \"", mode, "\" is unknown"));
  }
  OC_ASSIGN_OR_RETURN(OptimizerInputs in, ReadOptimizerInputs(call, 3));
  double alpha = call.Float("alpha", 0.0f);
  double beta = in.count > 0 ? call.Float("beta", 0.0f) : 1.0;
  double norm = call.Float("norm_coefficient", 0.0f);
  bool standard = mode == "standard";
  return Update<3>(call, in, [&](const auto& values, auto& out) {
    auto [x, grad, v] = values;
    auto& [x_new, v_new] = out;
    double g = norm * x + grad;
    v_new = alpha * v + beta * g;
    x_new = standard ? x - in.rate * v_new : x - in.rate * (g + alpha * v_new);
  });
}

}  // namespace onnxconvert::eval::training_ops
