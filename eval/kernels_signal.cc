// Signal kernels: DFT (17, 20), STFT (17) and MelWeightMatrix (17). The
// transforms are direct sums in double (twiddles from the exact phase
// k * t mod n), bounded to kMaxWork multiply-adds. A signal's last dim
// holds 1 (real) or 2 (real, imaginary) numbers; outputs are complex
// (last dim 2) but for the inverse one-sided DFT, which gives the real
// signal of a Hermitian spectrum (numpy's irfft).

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::signal_ops {

using Complex = std::complex<double>;

// The most multiply-adds one transform makes.
constexpr int64_t kMaxWork = int64_t{1} << 32;

constexpr double kPi = 3.14159265358979323846;

// e^(sign * 2 pi i * k * t / n), the phase reduced exactly first; exact at
// quarter turns.
Complex Twiddle(int64_t k, int64_t t, int64_t n, int sign) {
  int64_t m = static_cast<int64_t>((static_cast<unsigned __int128>(k) * t) % n);
  // Quarter turns exactly (no sin(pi) residue).
  if ((static_cast<unsigned __int128>(m) * 4) % n == 0) {
    switch (static_cast<int>((static_cast<unsigned __int128>(m) * 4) / n)) {
      case 0: return {1, 0};
      case 1: return {0, static_cast<double>(sign)};
      case 2: return {-1, 0};
      default: return {0, static_cast<double>(-sign)};
    }
  }
  double angle = sign * 2 * kPi * static_cast<double>(m) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// The one integer of an optional scalar input, or nullopt when absent.
absl::StatusOr<std::optional<int64_t>> OptionalInt(const KernelCall& call, int index) {
  const Tensor* t = call.input(index);
  if (t == nullptr) return std::nullopt;
  if (t->size() != 1) return call.Error(absl::StrCat("input ", index, " must hold one element"));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> v, Int64s(call, *t));
  return v[0];
}

// Checks that a transform of `lines` lines, each summing `terms` products
// for `outputs` outputs, stays within kMaxWork.
absl::Status CheckWork(const KernelCall& call, int64_t lines, int64_t outputs, int64_t terms) {
  double work = static_cast<double>(lines) * static_cast<double>(outputs) *
                static_cast<double>(std::max<int64_t>(terms, 1));
  if (work > static_cast<double>(kMaxWork)) return call.Error("the transform is too large");
  return absl::OkStatus();
}

Outputs DftKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("the input is absent");
  if (!IsFloatElement(x->elem_type())) return call.Error(NoKernel(x->elem_type()));
  int64_t rank = x->rank();
  if (rank < 2) return call.Error("the input has rank below 2");
  int64_t c = x->dims().back();
  if (c != 1 && c != 2) return call.Error("the input's last dim must be 1 (real) or 2 (complex)");
  int64_t axis = call.since_version() >= 20 ? -2 : call.Int("axis", 1);
  if (call.since_version() >= 20) {
    OC_ASSIGN_OR_RETURN(std::optional<int64_t> a, OptionalInt(call, 2));
    if (a.has_value()) axis = *a;
  }
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    return call.Error(absl::StrCat("axis ", axis, " is not a signal axis"));
  }
  if (axis < 0) axis += rank;
  bool inverse = call.Int("inverse", 0) != 0;
  bool onesided = call.Int("onesided", 0) != 0;
  int64_t n_in = x->dims()[axis];
  OC_ASSIGN_OR_RETURN(std::optional<int64_t> length, OptionalInt(call, 1));
  int64_t n = length.value_or(inverse && onesided ? 2 * (n_in - 1) : n_in);
  if (n <= 0 || n > kMaxElements) {
    return call.Error(absl::StrCat("dft_length ", n, " is not in [1, 2^31]"));
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dims()[d];
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x->dims()[d];
  // Output length on the axis, and the numbers per element.
  int64_t n_out = onesided && !inverse ? n / 2 + 1 : n;
  int64_t c_out = inverse && onesided ? 1 : 2;
  std::vector<int64_t> out_dims = x->dims();
  out_dims[axis] = n_out;
  out_dims.back() = c_out;
  OC_RETURN_IF_ERROR(Count(call, out_dims).status());
  // Terms summed per output: the input values used (irfft: the full
  // Hermitian spectrum of n).
  int64_t used = inverse && onesided ? std::min(n_in, n / 2 + 1) : std::min(n_in, n);
  OC_RETURN_IF_ERROR(CheckWork(call, outer * inner, n_out, inverse && onesided ? n : used));
  OC_ASSIGN_OR_RETURN(std::vector<double> in, Doubles(call, *x));
  std::vector<double> out(static_cast<size_t>(outer * n_out * inner * c_out));
  std::vector<Complex> line(static_cast<size_t>(used));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < used; ++t) {
        int64_t at = ((o * n_in + t) * inner + i) * c;
        line[t] = Complex(in[at], c == 2 ? in[at + 1] : 0.0);
      }
      for (int64_t k = 0; k < n_out; ++k) {
        int64_t at = ((o * n_out + k) * inner + i) * c_out;
        if (inverse && onesided) {
          // Real part of the inverse of the spectrum X[j] (j <= n/2) and
          // conj(X[n - j]) (j > n/2), X zero past the input.
          double sum = 0;
          for (int64_t j = 0; j < n; ++j) {
            int64_t src = j <= n / 2 ? j : n - j;
            if (src >= used) continue;
            Complex v = j <= n / 2 ? line[src] : std::conj(line[src]);
            sum += (v * Twiddle(j, k, n, 1)).real();
          }
          out[at] = sum / static_cast<double>(n);
          continue;
        }
        Complex sum = 0;
        for (int64_t t = 0; t < used; ++t) sum += line[t] * Twiddle(k, t, n, inverse ? 1 : -1);
        if (inverse) sum /= static_cast<double>(n);
        out[at] = sum.real();
        out[at + 1] = sum.imag();
      }
    }
  }
  return One(FloatTensor(x->elem_type(), out_dims, out));
}

// STFT: frames of frame_length samples every frame_step samples of the
// signal ([batch, length, 1 or 2]), each times the window, transformed;
// output [batch, frames, bins, 2] with bins = frame_length / 2 + 1 when
// onesided (the default), else frame_length.
Outputs StftKernel(const KernelCall& call) {
  const Tensor* signal = call.input(0);
  const Tensor* window = call.input(2);
  if (signal == nullptr || call.input(1) == nullptr) return call.Error("an input is absent");
  if (!IsFloatElement(signal->elem_type())) return call.Error(NoKernel(signal->elem_type()));
  if (signal->rank() != 3 || (signal->dims()[2] != 1 && signal->dims()[2] != 2)) {
    return call.Error("the signal must have shape [batch, length, 1 or 2]");
  }
  OC_ASSIGN_OR_RETURN(std::optional<int64_t> step, OptionalInt(call, 1));
  if (*step <= 0) return call.Error("frame_step must be positive");
  OC_ASSIGN_OR_RETURN(std::optional<int64_t> frame_length, OptionalInt(call, 3));
  if (window != nullptr && window->rank() != 1) return call.Error("the window must have rank 1");
  int64_t batch = signal->dims()[0], length = signal->dims()[1], c = signal->dims()[2];
  int64_t n = frame_length.value_or(window != nullptr ? window->dims()[0] : length);
  if (window != nullptr && window->dims()[0] != n) {
    return call.Error("the window's length differs from frame_length");
  }
  if (n <= 0 || n > length) return call.Error("frame_length is not in [1, signal length]");
  int64_t frames = 1 + (length - n) / *step;
  bool onesided = call.Int("onesided", 1) != 0;
  int64_t bins = onesided ? n / 2 + 1 : n;
  std::vector<int64_t> out_dims = {batch, frames, bins, 2};
  OC_RETURN_IF_ERROR(Count(call, out_dims).status());
  OC_RETURN_IF_ERROR(CheckWork(call, batch * frames, bins, n));
  OC_ASSIGN_OR_RETURN(std::vector<double> in, Doubles(call, *signal));
  std::vector<double> w(static_cast<size_t>(n), 1.0);
  if (window != nullptr) {
    if (!IsFloatElement(window->elem_type())) return call.Error(NoKernel(window->elem_type()));
    OC_ASSIGN_OR_RETURN(w, Doubles(call, *window));
  }
  std::vector<double> out(static_cast<size_t>(batch * frames * bins * 2));
  std::vector<Complex> frame(static_cast<size_t>(n));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < n; ++t) {
        int64_t at = (b * length + f * *step + t) * c;
        frame[t] = Complex(in[at], c == 2 ? in[at + 1] : 0.0) * w[t];
      }
      for (int64_t k = 0; k < bins; ++k) {
        Complex sum = 0;
        for (int64_t t = 0; t < n; ++t) sum += frame[t] * Twiddle(k, t, n, -1);
        int64_t at = ((b * frames + f) * bins + k) * 2;
        out[at] = sum.real();
        out[at + 1] = sum.imag();
      }
    }
  }
  return One(FloatTensor(signal->elem_type(), out_dims, out));
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters
// between num_mel_bins + 2 points evenly spaced in mel (2595 log10(1 +
// hz / 700)) from lower_edge_hertz to upper_edge_hertz, each point's
// spectrogram bin floor((dft_length + 1) hz / sample_rate). The mel edges
// and step compute in float (the inputs' type), as the reference's do.
Outputs MelWeightMatrixKernel(const KernelCall& call) {
  for (int i = 0; i < 5; ++i) {
    if (call.input(i) == nullptr || call.input(i)->size() != 1) {
      return call.Error(absl::StrCat("input ", i, " must hold one element"));
    }
  }
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> mel_bins, Int64s(call, *call.input(0)));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> dft_length, Int64s(call, *call.input(1)));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> sample_rate, Int64s(call, *call.input(2)));
  OC_ASSIGN_OR_RETURN(std::vector<double> lower, Doubles(call, *call.input(3)));
  OC_ASSIGN_OR_RETURN(std::vector<double> upper, Doubles(call, *call.input(4)));
  int64_t m = mel_bins[0], n = dft_length[0], rate = sample_rate[0];
  if (m <= 0 || n <= 0 || rate <= 0) {
    return call.Error("num_mel_bins, dft_length and sample_rate must be positive");
  }
  int32_t type = static_cast<int32_t>(call.Int("output_datatype", onnx::TensorProto::FLOAT));
  bool numeric = false;
  VisitElementType(type, [&](auto v) { numeric = kIsNumber<decltype(v)>; });
  if (!numeric) return call.Error(NoKernel(type));
  for (double edge : {lower[0], upper[0]}) {
    if (!(std::abs(edge) <= std::numeric_limits<float>::max())) {
      return call.Error("an edge frequency is not a finite float");
    }
  }
  int64_t spectrogram_bins = n / 2 + 1;
  std::vector<int64_t> out_dims = {spectrogram_bins, m};
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, out_dims));
  float low_mel = 2595.0f * std::log10(1.0f + static_cast<float>(lower[0]) / 700.0f);
  float high_mel = 2595.0f * std::log10(1.0f + static_cast<float>(upper[0]) / 700.0f);
  float step = (high_mel - low_mel) / static_cast<float>(m + 2);
  std::vector<int64_t> points(static_cast<size_t>(m + 2));
  for (int64_t i = 0; i < m + 2; ++i) {
    double mel = static_cast<double>(i) * static_cast<double>(step) + static_cast<double>(low_mel);
    double hz = 700 * (std::pow(10.0, mel / 2595) - 1);
    double bin = std::floor(static_cast<double>(n + 1) * hz / static_cast<double>(rate));
    if (!(bin >= 0 && bin < static_cast<double>(spectrogram_bins))) {
      return call.Error("a mel point lies outside the spectrogram's bins");
    }
    points[i] = static_cast<int64_t>(bin);
  }
  std::vector<double> out(static_cast<size_t>(count), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    int64_t left = points[i], center = points[i + 1], right = points[i + 2];
    if (center == left) {
      out[center * m + i] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j) {
        out[j * m + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
    }
    for (int64_t j = center; j < right; ++j) {
      out[j * m + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
  }
  Tensor result(type, out_dims);
  VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      for (int64_t i = 0; i < count; ++i) {
        result.data<T>()[i] = Store<T>(static_cast<Compute<T>>(out[i]));
      }
    }
  });
  return One(std::move(result));
}

}  // namespace onnxconvert::eval::signal_ops
