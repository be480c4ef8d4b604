// The signal kernels (kernels_signal.cc), one table-driven case per
// behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

const Case kCases[] = {
    {"dft_real_input", 20,
     "g () => (float[1,4,2] y) <float[1,4,1] x = {1, 2, 3, 4}> { y = DFT(x) }",
     "float[1,4,2] {10, 0, -2, 2, -2, 0, -2, -2}"},
    {"dft_onesided", 20,
     "g () => (float[1,3,2] y) <float[1,4,1] x = {1, 2, 3, 4}> { y = DFT<onesided = 1>(x) }",
     "float[1,3,2] {10, 0, -2, 2, -2, 0}"},
    {"dft_length_pads_and_truncates", 20,
     "g () => (float[1,2,2] a, float[1,6,2] b) <float[1,4,1] x = {1, 2, 3, 4}, int64 l2 = {2}, "
     "int64 l6 = {6}> { a = DFT(x, l2) b = DFT(x, l6) }",
     "float[1,2,2] {3, 0, -1, 0}; "
     "float[1,6,2] {10, 0, -3.5, -4.33013, 2.5, 0.866025, -2, 0, 2.5, -0.866025, -3.5, 4.33013}"},
    {"dft_inverse_of_complex", 20,
     "g () => (float[1,4,2] y) <float[1,4,2] x = {10, 0, -2, 2, -2, 0, -2, -2}> "
     "{ y = DFT<inverse = 1>(x) }",
     "float[1,4,2] {1, 0, 2, 0, 3, 0, 4, 0}"},
    {"dft_irfft_gives_the_real_signal", 20,
     "g () => (float[1,4,1] y) <float[1,3,2] x = {10, 0, -2, 2, -2, 0}> "
     "{ y = DFT<inverse = 1, onesided = 1>(x) }",
     "float[1,4,1] {1, 2, 3, 4}"},
    {"dft_axis_input", 20,
     "g () => (float[2,2,2] y) <float[2,2,1] x = {1, 2, 3, 4}, int64 a = {0}> "
     "{ y = DFT(x, , a) }",
     "float[2,2,2] {4, 0, 6, 0, -2, 0, -2, 0}"},
    {"dft17_axis_attribute", 17,
     "g () => (float[2,2,2] y) <float[2,2,1] x = {1, 2, 3, 4}> { y = DFT<axis = 0>(x) }",
     "float[2,2,2] {4, 0, 6, 0, -2, 0, -2, 0}"},
    {"dft_axis_on_the_complex_dim", 20,
     "g () => (float[1,4,2] y) <float[1,4,1] x = {1, 2, 3, 4}, int64 a = {-1}> "
     "{ y = DFT(x, , a) }",
     "node '' (DFT-20): axis -1 is not a signal axis"},
    {"dft_bad_last_dim", 20,
     "g () => (float[1,4,2] y) <float[1,1,3] x = {1, 2, 3}> { y = DFT(x) }",
     "node '' (DFT-20): the input's last dim must be 1 (real) or 2 (complex)"},
    {"stft_frames_and_onesided", 17,
     "g () => (float[1,2,2,2] y) <float[1,4,1] x = {1, 2, 3, 4}, int64 s = {2}, int64 l = {2}> "
     "{ y = STFT(x, s, , l) }",
     "float[1,2,2,2] {3, 0, -1, 0, 7, 0, -1, 0}"},
    {"stft_window_two_sided", 17,
     "g () => (float[1,2,2,2] y) <float[1,3,1] x = {1, 2, 3}, int64 s = {1}, "
     "float[2] w = {1, 0.5}> { y = STFT<onesided = 0>(x, s, w) }",
     "float[1,2,2,2] {2, 0, 0, 0, 3.5, 0, 0.5, 0}"},
    {"stft_window_and_length_differ", 17,
     "g () => (float[1,1,2,2] y) <float[1,3,1] x = {1, 2, 3}, int64 s = {1}, "
     "float[2] w = {1, 0.5}, int64 l = {3}> { y = STFT(x, s, w, l) }",
     "node '' (STFT-17): the window's length differs from frame_length"},
    {"mel_weight_matrix", 17,
     "g () => (float[5,2] y) <int32 m = {2}, int32 n = {8}, int32 r = {8000}, float lo = {0}, "
     "float hi = {4000}> { y = MelWeightMatrix(m, n, r, lo, hi) }",
     "float[5,2] {1, 0, 0, 1, 0, 0, 0, 0, 0, 0}"},
    {"mel_weight_matrix_of_strings", 17,
     "g () => (float[5,2] y) <int32 m = {2}, int32 n = {8}, int32 r = {8000}, float lo = {0}, "
     "float hi = {4000}> { y = MelWeightMatrix<output_datatype = 8>(m, n, r, lo, hi) }",
     "node '' (MelWeightMatrix-17): no kernel for elements of string"},
    {"mel_weight_matrix_past_the_bins", 17,
     "g () => (float[5,2] y) <int32 m = {2}, int32 n = {8}, int32 r = {8000}, float lo = {0}, "
     "float hi = {16000}> { y = MelWeightMatrix(m, n, r, lo, hi) }",
     "node '' (MelWeightMatrix-17): a mel point lies outside the spectrogram's bins"},
};

INSTANTIATE_TEST_SUITE_P(Signal, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace onnxconvert::eval
