// Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (the latter's log-softmax over the class axis, then the former), with
// class weights, ignore_index and the none/sum/mean reductions. Computed
// in double.

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::loss_ops {

enum class LossReduction { kNone, kSum, kMean };

absl::StatusOr<LossReduction> ReadReduction(const KernelCall& call) {
  const onnx::AttributeProto* a = call.attribute("reduction");
  std::string name = a == nullptr ? "mean" : a->s();
  if (name == "none") return LossReduction::kNone;
  if (name == "sum") return LossReduction::kSum;
  if (name == "mean") return LossReduction::kMean;
  return call.Error(absl::StrCat("reduction \"", name, "\" is unknown"));
}

// The loss of `log_prob` ([N, C, d1, ...], log-probabilities) against
// `target` ([N, d1, ...]): -log_prob[n, target, d] times the target's
// weight, 0 where the target is ignore_index; reduced by `reduction`, the
// mean dividing by the weights summed (by the count when neither weights
// nor ignore_index are given).
absl::StatusOr<Tensor> NegativeLogLikelihood(const KernelCall& call,
                                             const std::vector<double>& log_prob,
                                             const std::vector<int64_t>& dims,
                                             const Tensor& target, const Tensor* weight,
                                             int32_t out_type) {
  if (!IsFloatElement(out_type)) return call.Error(NoKernel(out_type));
  if (dims.size() < 2) return call.Error("the input has rank below 2");
  int64_t n = dims[0], classes = dims[1];
  std::vector<int64_t> target_dims = {n};
  target_dims.insert(target_dims.end(), dims.begin() + 2, dims.end());
  if (target.dims() != target_dims) return call.Error("target's shape does not fit the input");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> labels, Int64s(call, target));
  std::vector<double> weights;
  if (weight != nullptr) {
    OC_ASSIGN_OR_RETURN(weights, Doubles(call, *weight));
    if (static_cast<int64_t>(weights.size()) != classes) {
      return call.Error("weight does not have one element per class");
    }
  }
  OC_ASSIGN_OR_RETURN(LossReduction reduction, ReadReduction(call));
  const onnx::AttributeProto* ignore = call.attribute("ignore_index");
  int64_t positions = target.size() / std::max<int64_t>(n, 1);  // d1 * d2 * ...
  std::vector<double> loss(labels.size());
  double total = 0, total_weight = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    int64_t label = labels[i];
    if (ignore != nullptr && label == ignore->i()) continue;  // loss and weight 0
    if (label < 0 || label >= classes) {
      return call.Error(absl::StrCat("target ", label, " is not a class"));
    }
    double w = weights.empty() ? 1.0 : weights[label];
    int64_t sample = static_cast<int64_t>(i) / std::max<int64_t>(positions, 1);
    int64_t position = static_cast<int64_t>(i) % std::max<int64_t>(positions, 1);
    loss[i] = -log_prob[(sample * classes + label) * positions + position] * w;
    total += loss[i];
    total_weight += w;
  }
  std::vector<double> out_values = loss;
  std::vector<int64_t> out_dims = target_dims;
  if (reduction != LossReduction::kNone) {
    out_dims.clear();
    out_values = {reduction == LossReduction::kSum ? total : total / total_weight};
  }
  return FloatTensor(out_type, out_dims, out_values);
}

Outputs NegativeLogLikelihoodLossKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [input, target] = inputs;
  OC_ASSIGN_OR_RETURN(std::vector<double> values, Doubles(call, *input));
  OC_ASSIGN_OR_RETURN(Tensor loss, NegativeLogLikelihood(call, values, input->dims(), *target,
                                                         call.input(2), input->elem_type()));
  return One(std::move(loss));
}

// SoftmaxCrossEntropyLoss: the loss of the scores' log-softmax over the
// class axis, and that log-softmax as the second output.
Outputs SoftmaxCrossEntropyLossKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [scores, labels] = inputs;
  if (scores->rank() < 2) return call.Error("scores have rank below 2");
  OC_ASSIGN_OR_RETURN(std::vector<double> values, Doubles(call, *scores));
  AxisSplit s = SplitAt(scores->dims(), 1);
  for (int64_t outer = 0; outer < s.outer; ++outer) {
    for (int64_t inner = 0; inner < s.inner; ++inner) {
      auto at = [&](int64_t k) -> double& { return values[(outer * s.dim + k) * s.inner + inner]; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < s.dim; ++k) max = std::max(max, at(k));
      double sum = 0;
      for (int64_t k = 0; k < s.dim; ++k) sum += std::exp(at(k) - max);
      double log_sum = std::log(sum);
      for (int64_t k = 0; k < s.dim; ++k) at(k) = at(k) - max - log_sum;
    }
  }
  OC_ASSIGN_OR_RETURN(Tensor loss, NegativeLogLikelihood(call, values, scores->dims(), *labels,
                                                         call.input(2), scores->elem_type()));
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(loss));
  outputs.push_back(FloatTensor(scores->elem_type(), scores->dims(), values));
  return outputs;
}

}  // namespace onnxconvert::eval::loss_ops
