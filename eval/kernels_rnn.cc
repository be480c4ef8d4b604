// Recurrent layers: RNN, GRU (linear_before_reset) and LSTM (peepholes,
// input_forget), every version: forward, reverse and bidirectional,
// sequence_lens, initial states, clip, the activation list with its alphas
// and betas, and layout 0/1 (from 14). The input projection of all steps
// and each step's recurrent projection are matrix products on Eigen.

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::rnn_ops {

using nn::ConstMatrixMap;
using nn::MatrixMap;
using nn::Outputs;
using nn::RealView;

// An activation function of the activations attribute, with its alpha and
// beta.
struct Activation {
  enum Kind {
    kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh,
    kHardSigmoid, kElu, kSoftsign, kSoftplus
  } kind;
  double alpha = 0, beta = 0;

  template <typename C>
  C operator()(C x) const {
    switch (kind) {
      case kRelu: return x > 0 ? x : C{0};
      case kTanh: return std::tanh(x);
      case kSigmoid: return C{1} / (C{1} + std::exp(-x));
      case kAffine: return static_cast<C>(alpha * x + beta);
      case kLeakyRelu: return x >= 0 ? x : static_cast<C>(alpha * x);
      case kThresholdedRelu: return x > alpha ? x : C{0};
      case kScaledTanh: return static_cast<C>(alpha * std::tanh(beta * x));
      case kHardSigmoid:
        return static_cast<C>(std::clamp(alpha * x + beta, 0.0, 1.0));
      case kElu: return x >= 0 ? x : static_cast<C>(alpha * (std::exp(x) - 1));
      case kSoftsign: return x / (C{1} + std::fabs(x));
      case kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Each activation's name, whether it takes alpha and beta, and their
// defaults.
struct ActivationRow {
  const char* name;
  Activation::Kind kind;
  int parameters;  // 0, 1 (alpha) or 2 (alpha and beta)
  double alpha, beta;
};
constexpr ActivationRow kActivations[] = {
    {"relu", Activation::kRelu, 0, 0, 0},
    {"tanh", Activation::kTanh, 0, 0, 0},
    {"sigmoid", Activation::kSigmoid, 0, 0, 0},
    {"affine", Activation::kAffine, 2, 1, 0},
    {"leakyrelu", Activation::kLeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", Activation::kThresholdedRelu, 1, 1, 0},
    {"scaledtanh", Activation::kScaledTanh, 2, 1, 1},
    {"hardsigmoid", Activation::kHardSigmoid, 2, 0.2, 0.5},
    {"elu", Activation::kElu, 1, 1, 0},
    {"softsign", Activation::kSoftsign, 0, 0, 0},
    {"softplus", Activation::kSoftplus, 0, 0, 0},
};

// The `per_direction` activations of each of `directions` directions: the
// attribute's (alphas and betas consumed in order by the functions that
// take them), else `defaults` for each direction.
absl::StatusOr<std::vector<Activation>> Activations(const KernelCall& call, int directions,
                                                    std::vector<std::string> defaults) {
  const onnx::AttributeProto* names = call.attribute("activations");
  std::vector<std::string> listed;
  if (names != nullptr && names->strings_size() > 0) {
    listed.assign(names->strings().begin(), names->strings().end());
  } else {
    for (int d = 0; d < directions; ++d) listed.insert(listed.end(), defaults.begin(), defaults.end());
  }
  if (listed.size() != defaults.size() * directions) {
    return call.Error(absl::StrCat("activations names ", listed.size(), " functions, not ",
                                   defaults.size() * directions));
  }
  const onnx::AttributeProto* alphas = call.attribute("activation_alpha");
  const onnx::AttributeProto* betas = call.attribute("activation_beta");
  int next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& name : listed) {
    const ActivationRow* row = nullptr;
    for (const ActivationRow& r : kActivations) {
      if (absl::AsciiStrToLower(name) == r.name) row = &r;
    }
    if (row == nullptr) return call.Error(absl::StrCat("unknown activation '", name, "'"));
    Activation a{row->kind, row->alpha, row->beta};
    if (row->parameters >= 1 && alphas != nullptr && next_alpha < alphas->floats_size()) {
      a.alpha = alphas->floats(next_alpha++);
    }
    if (row->parameters >= 2 && betas != nullptr && next_beta < betas->floats_size()) {
      a.beta = betas->floats(next_beta++);
    }
    out.push_back(a);
  }
  return out;
}

// The layer's dims and attributes.
struct Layer {
  Cell cell;
  int gates = 1;
  int64_t steps = 0, batch = 0, input = 0, hidden = 0;
  int directions = 1;
  bool reverse_only = false;
  bool batch_major = false;  // layout 1
  double clip = 0;           // 0: none
  bool linear_before_reset = false;
  bool input_forget = false;
  std::vector<Activation> activations;  // per direction, gates' functions
  std::vector<int64_t> lengths;         // per batch
};

absl::StatusOr<Layer> ReadLayer(const KernelCall& call, Cell cell, const Tensor& x,
                                const Tensor& w, const Tensor& r) {
  Layer l;
  l.cell = cell;
  l.gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  l.batch_major = call.since_version() >= 14 && call.Int("layout", 0) != 0;
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3) {
    return call.Error("X, W and R must have rank 3");
  }
  l.steps = x.dims()[l.batch_major ? 1 : 0];
  l.batch = x.dims()[l.batch_major ? 0 : 1];
  l.input = x.dims()[2];
  const onnx::AttributeProto* direction = call.attribute("direction");
  std::string dir = direction != nullptr ? direction->s() : "forward";
  if (dir == "bidirectional") {
    l.directions = 2;
  } else if (dir == "reverse") {
    l.reverse_only = true;
  } else if (dir != "forward") {
    return call.Error(absl::StrCat("direction '", dir, "' is not forward, reverse or "
                                   "bidirectional"));
  }
  l.hidden = call.Int("hidden_size", r.dims()[2]);
  if (w.dims()[0] != l.directions || w.dims()[1] != l.gates * l.hidden ||
      w.dims()[2] != l.input || r.dims()[0] != l.directions ||
      r.dims()[1] != l.gates * l.hidden || r.dims()[2] != l.hidden) {
    return call.Error("W or R's shape does not match the directions, hidden_size and input");
  }
  l.clip = call.Float("clip", 0);
  if (l.clip < 0) return call.Error("clip must be positive");
  l.linear_before_reset = call.Int("linear_before_reset", 0) != 0;
  l.input_forget = call.Int("input_forget", 0) != 0;
  std::vector<std::string> defaults = cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  OC_ASSIGN_OR_RETURN(l.activations, Activations(call, l.directions, defaults));
  l.lengths.assign(l.batch, l.steps);
  if (const Tensor* lens = call.input(4)) {
    OC_ASSIGN_OR_RETURN(l.lengths, ToInt64s(*lens));
    if (static_cast<int64_t>(l.lengths.size()) != l.batch) {
      return call.Error("sequence_lens must hold one length per batch");
    }
    for (int64_t len : l.lengths) {
      if (len < 0 || len > l.steps) return call.Error("a sequence length is out of range");
    }
  }
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, {l.steps, l.directions, l.batch, l.hidden}).status());
  return l;
}

// A [directions, batch, hidden] state input (layout 1: [batch, directions,
// hidden]) as [directions][batch * hidden], or zeros when absent.
template <typename C>
absl::StatusOr<std::vector<std::vector<C>>> State(const KernelCall& call, const Layer& l,
                                                  const Tensor* t, const char* name) {
  std::vector<std::vector<C>> out(l.directions, std::vector<C>(l.batch * l.hidden, C{0}));
  if (t == nullptr) return out;
  std::vector<int64_t> want = l.batch_major
                                  ? std::vector<int64_t>{l.batch, l.directions, l.hidden}
                                  : std::vector<int64_t>{l.directions, l.batch, l.hidden};
  if (t->dims() != want) return call.Error(absl::StrCat(name, "'s shape does not match"));
  OC_ASSIGN_OR_RETURN(RealView<C> v, RealView<C>::Of(*t));
  for (int d = 0; d < l.directions; ++d) {
    for (int64_t b = 0; b < l.batch; ++b) {
      for (int64_t k = 0; k < l.hidden; ++k) {
        out[d][b * l.hidden + k] = l.batch_major ? v[(b * l.directions + d) * l.hidden + k]
                                                 : v[(d * l.batch + b) * l.hidden + k];
      }
    }
  }
  return out;
}

template <typename T>
Outputs RunLayer(const KernelCall& call, Cell cell) {
  using C = nn::Real<T>;
  const Tensor* x = call.input(0);
  const Tensor* w = call.input(1);
  const Tensor* r = call.input(2);
  OC_ASSIGN_OR_RETURN(Layer l, ReadLayer(call, cell, *x, *w, *r));
  int64_t gh = l.gates * l.hidden;
  OC_ASSIGN_OR_RETURN(RealView<C> vx, RealView<C>::Of(*x));
  OC_ASSIGN_OR_RETURN(RealView<C> vw, RealView<C>::Of(*w));
  OC_ASSIGN_OR_RETURN(RealView<C> vr, RealView<C>::Of(*r));
  std::vector<C> bias(l.directions * 2 * gh, C{0});
  if (const Tensor* b = call.input(3)) {
    if (b->dims() != std::vector<int64_t>{l.directions, 2 * gh}) {
      return call.Error("B's shape does not match");
    }
    OC_ASSIGN_OR_RETURN(RealView<C> vb, RealView<C>::Of(*b));
    bias.assign(vb.span().begin(), vb.span().end());
  }
  std::vector<C> peep(l.directions * 3 * l.hidden, C{0});
  if (cell == Cell::kLstm && call.input(7) != nullptr) {
    const Tensor* p = call.input(7);
    if (p->dims() != std::vector<int64_t>{l.directions, 3 * l.hidden}) {
      return call.Error("P's shape does not match");
    }
    OC_ASSIGN_OR_RETURN(RealView<C> vp, RealView<C>::Of(*p));
    peep.assign(vp.span().begin(), vp.span().end());
  }
  OC_ASSIGN_OR_RETURN(auto h_state, State<C>(call, l, call.input(5), "initial_h"));
  OC_ASSIGN_OR_RETURN(auto c_state, State<C>(call, l, call.input(6), "initial_c"));
  if (cell != Cell::kLstm) c_state.assign(l.directions, {});

  // X as [steps * batch, input], time-major.
  std::vector<C> xs(l.steps * l.batch * l.input);
  for (int64_t s = 0; s < l.steps; ++s) {
    for (int64_t b = 0; b < l.batch; ++b) {
      const C* from = vx.data() + (l.batch_major ? (b * l.steps + s) : (s * l.batch + b)) * l.input;
      std::copy(from, from + l.input, xs.data() + (s * l.batch + b) * l.input);
    }
  }
  ConstMatrixMap<C> mx(xs.data(), l.steps * l.batch, l.input);
  std::vector<C> y(l.steps * l.directions * l.batch * l.hidden, C{0});  // [s, d, b, h]
  auto clip = [&](C v) {
    return l.clip > 0 ? std::clamp(v, static_cast<C>(-l.clip), static_cast<C>(l.clip)) : v;
  };
  int per_direction = static_cast<int>(l.activations.size()) / l.directions;
  for (int d = 0; d < l.directions; ++d) {
    bool reverse = l.reverse_only || d == 1;
    const Activation* act = l.activations.data() + d * per_direction;
    ConstMatrixMap<C> md_w(vw.data() + d * gh * l.input, gh, l.input);
    ConstMatrixMap<C> md_r(vr.data() + d * gh * l.hidden, gh, l.hidden);
    const C* wb = bias.data() + d * 2 * gh;
    const C* rb = wb + gh;
    const C* p = peep.data() + d * 3 * l.hidden;
    nn::Matrix<C> xw = mx * md_w.transpose();  // [steps * batch, gates * hidden]
    std::vector<C>& h = h_state[d];
    std::vector<C>& c = c_state[d];
    nn::Matrix<C> hr(l.batch, gh);
    for (int64_t s = 0; s < l.steps; ++s) {
      ConstMatrixMap<C> mh(h.data(), l.batch, l.hidden);
      if (cell == Cell::kGru && !l.linear_before_reset) {
        // z and r first; h's recurrent term needs r.
        hr.leftCols(2 * l.hidden).noalias() =
            mh * md_r.topRows(2 * l.hidden).transpose();
      } else {
        hr.noalias() = mh * md_r.transpose();
      }
      std::vector<C> next_h = h;
      for (int64_t b = 0; b < l.batch; ++b) {
        if (s >= l.lengths[b]) continue;
        int64_t t = reverse ? l.lengths[b] - 1 - s : s;
        const C* in = xw.data() + (t * l.batch + b) * gh;
        const C* rec = hr.data() + b * gh;
        auto gate = [&](int g, int64_t k) {
          return in[g * l.hidden + k] + rec[g * l.hidden + k] + wb[g * l.hidden + k] +
                 rb[g * l.hidden + k];
        };
        C* hb = next_h.data() + b * l.hidden;
        if (cell == Cell::kRnn) {
          for (int64_t k = 0; k < l.hidden; ++k) hb[k] = act[0](clip(gate(0, k)));
        } else if (cell == Cell::kLstm) {
          C* cb = c.data() + b * l.hidden;
          for (int64_t k = 0; k < l.hidden; ++k) {
            C i = act[0](clip(gate(0, k) + p[k] * cb[k]));
            C f = l.input_forget ? C{1} - i : act[0](clip(gate(2, k) + p[2 * l.hidden + k] * cb[k]));
            C g = act[1](clip(gate(3, k)));
            C cell_state = f * cb[k] + i * g;
            C o = act[0](clip(gate(1, k) + p[l.hidden + k] * cell_state));
            cb[k] = cell_state;
            hb[k] = o * act[2](cell_state);
          }
        } else {
          const C* hprev = h.data() + b * l.hidden;
          std::vector<C> z(l.hidden), rg(l.hidden);
          for (int64_t k = 0; k < l.hidden; ++k) {
            z[k] = act[0](clip(gate(0, k)));
            rg[k] = act[0](clip(gate(1, k)));
          }
          std::vector<C> candidate_rec(l.hidden);
          if (l.linear_before_reset) {
            for (int64_t k = 0; k < l.hidden; ++k) {
              candidate_rec[k] = rg[k] * (rec[2 * l.hidden + k] + rb[2 * l.hidden + k]);
            }
          } else {
            Eigen::Matrix<C, 1, Eigen::Dynamic> rh(l.hidden);
            for (int64_t k = 0; k < l.hidden; ++k) rh(k) = rg[k] * hprev[k];
            Eigen::Matrix<C, 1, Eigen::Dynamic> proj =
                rh * md_r.bottomRows(l.hidden).transpose();
            for (int64_t k = 0; k < l.hidden; ++k) {
              candidate_rec[k] = proj(k) + rb[2 * l.hidden + k];
            }
          }
          for (int64_t k = 0; k < l.hidden; ++k) {
            C cand = act[1](clip(in[2 * l.hidden + k] + wb[2 * l.hidden + k] + candidate_rec[k]));
            hb[k] = (C{1} - z[k]) * cand + z[k] * hprev[k];
          }
        }
        std::copy(hb, hb + l.hidden, y.data() + ((t * l.directions + d) * l.batch + b) * l.hidden);
      }
      h = std::move(next_h);
    }
  }
  int32_t type = x->elem_type();
  std::vector<Tensor> outputs;
  if (l.batch_major) {
    std::vector<C> yb(y.size());
    for (int64_t s = 0; s < l.steps; ++s) {
      for (int d = 0; d < l.directions; ++d) {
        for (int64_t b = 0; b < l.batch; ++b) {
          std::copy_n(y.data() + ((s * l.directions + d) * l.batch + b) * l.hidden, l.hidden,
                      yb.data() + ((b * l.steps + s) * l.directions + d) * l.hidden);
        }
      }
    }
    outputs.push_back(nn::StoreTensor<T, C>(type, {l.batch, l.steps, l.directions, l.hidden}, yb));
  } else {
    outputs.push_back(nn::StoreTensor<T, C>(type, {l.steps, l.directions, l.batch, l.hidden}, y));
  }
  for (auto* states : {&h_state, &c_state}) {
    if (states == &c_state && cell != Cell::kLstm) break;
    std::vector<C> packed(l.directions * l.batch * l.hidden);
    for (int d = 0; d < l.directions; ++d) {
      for (int64_t b = 0; b < l.batch; ++b) {
        std::copy_n((*states)[d].data() + b * l.hidden, l.hidden,
                    packed.data() + (l.batch_major ? (b * l.directions + d) : (d * l.batch + b)) *
                                        l.hidden);
      }
    }
    std::vector<int64_t> dims = l.batch_major
                                    ? std::vector<int64_t>{l.batch, l.directions, l.hidden}
                                    : std::vector<int64_t>{l.directions, l.batch, l.hidden};
    outputs.push_back(nn::StoreTensor<T, C>(type, dims, packed));
  }
  return outputs;
}

template <Cell kCell>
Outputs RecurrentKernel(const KernelCall& call) {
  OC_RETURN_IF_ERROR(nn::ThreeOfOneType(call, "X, W and R"));
  int32_t type = call.input(0)->elem_type();
  Outputs out = nn::UnsupportedType(call, type);
  nn::VisitFloatType(type, [&](auto v) { out = RunLayer<decltype(v)>(call, kCell); });
  return out;
}

constinit const Instances<Cell, 3> kRecurrent = InstancesOf<Cell, 3>(
    [](auto cell) -> KernelFn { return RecurrentKernel<decltype(cell)::value>; });

}  // namespace onnxconvert::eval::rnn_ops
