#include "eval/gemm.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "eval/gemm_internal.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

struct Shape {
  std::string name;
  int64_t m, k, n;
  bool transpose_a = false, transpose_b = false;
  double scale = 1;
};

const Shape kShapes[] = {
    {"Empty", 0, 0, 0},
    {"NoRows", 0, 3, 4},
    {"NoInner", 3, 0, 4},
    {"OneByOne", 1, 1, 1},
    {"Row", 1, 7, 33},
    {"Column", 33, 7, 1},
    {"Odd", 13, 17, 19},
    {"OddTransposeA", 13, 17, 19, true, false},
    {"OddTransposeB", 13, 17, 19, false, true},
    {"OddTransposeBoth", 13, 17, 19, true, true, 0.25},
    {"LargeScaled", 67, 129, 251, false, false, 0.5},
    {"LargeTransposeB", 65, 96, 127, false, true, 0.125},
};

// Deterministic values in [-1, 1).
template <typename C>
std::vector<C> Values(int64_t count, uint32_t seed) {
  std::vector<C> out(count);
  for (int64_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    out[i] = static_cast<C>(static_cast<double>(seed >> 8) / (1 << 23) - 1);
  }
  return out;
}

// op(a) * op(b) * scale, summed in double.
template <typename C>
std::vector<double> Reference(const Shape& s, const std::vector<C>& a, const std::vector<C>& b) {
  std::vector<double> out(s.m * s.n);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        double x = s.transpose_a ? a[p * s.m + i] : a[i * s.k + p];
        double y = s.transpose_b ? b[j * s.k + p] : b[p * s.n + j];
        sum += x * y;
      }
      out[i * s.n + j] = sum * s.scale;
    }
  }
  return out;
}

template <typename C>
using Implementation = void (*)(const C*, const C*, C*, int64_t, int64_t, int64_t, bool, bool,
                                C);

// Checks `multiply` against Reference, within C's rounding over k terms.
template <typename C>
void ExpectAgrees(const Shape& s, Implementation<C> multiply) {
  std::vector<C> a = Values<C>(s.m * s.k, 1), b = Values<C>(s.k * s.n, 2);
  std::vector<double> want = Reference(s, a, b);
  std::vector<C> got(s.m * s.n, C{7});
  if (s.m > 0 && s.k > 0 && s.n > 0) {
    multiply(a.data(), b.data(), got.data(), s.m, s.k, s.n, s.transpose_a, s.transpose_b,
             static_cast<C>(s.scale));
  } else {
    MultiplyInto(a.data(), b.data(), got.data(), s.m, s.k, s.n,
                 {s.transpose_a, s.transpose_b, s.scale});
  }
  double tolerance = (sizeof(C) == 4 ? 1e-5 : 1e-13) * (s.k + 1);
  for (int64_t i = 0; i < s.m * s.n; ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance) << s.name << " at " << i;
  }
}

class GemmTest : public testing::TestWithParam<Shape> {};

TEST_P(GemmTest, PortableFloat) {
  ExpectAgrees<float>(GetParam(), gemm_internal::MultiplyPortable);
}

TEST_P(GemmTest, PortableDouble) {
  ExpectAgrees<double>(GetParam(), gemm_internal::MultiplyPortable);
}

TEST_P(GemmTest, Avx2FmaFloat) {
  if (!gemm_internal::CpuHasAvx2Fma()) GTEST_SKIP() << "no AVX2+FMA";
  ExpectAgrees<float>(GetParam(), gemm_internal::MultiplyAvx2Fma);
}

TEST_P(GemmTest, Avx2FmaDouble) {
  if (!gemm_internal::CpuHasAvx2Fma()) GTEST_SKIP() << "no AVX2+FMA";
  ExpectAgrees<double>(GetParam(), gemm_internal::MultiplyAvx2Fma);
}

// The two paths agree with each other element by element.
TEST_P(GemmTest, PathsAgree) {
  if (!gemm_internal::CpuHasAvx2Fma()) GTEST_SKIP() << "no AVX2+FMA";
  const Shape& s = GetParam();
  if (s.m == 0 || s.k == 0 || s.n == 0) return;
  std::vector<float> a = Values<float>(s.m * s.k, 3), b = Values<float>(s.k * s.n, 4);
  std::vector<float> portable(s.m * s.n), avx2(s.m * s.n);
  gemm_internal::MultiplyPortable(a.data(), b.data(), portable.data(), s.m, s.k, s.n,
                                  s.transpose_a, s.transpose_b, static_cast<float>(s.scale));
  gemm_internal::MultiplyAvx2Fma(a.data(), b.data(), avx2.data(), s.m, s.k, s.n, s.transpose_a,
                                 s.transpose_b, static_cast<float>(s.scale));
  for (int64_t i = 0; i < s.m * s.n; ++i) {
    EXPECT_NEAR(avx2[i], portable[i], 1e-5 * (s.k + 1)) << s.name << " at " << i;
  }
}

// MultiplyInto fills zeros for k = 0 and leaves empty outputs alone.
TEST(MultiplyIntoTest, EmptyInner) {
  std::vector<float> out(6, 5.0f);
  MultiplyInto(static_cast<const float*>(nullptr), nullptr, out.data(), 2, 0, 3);
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmTest, testing::ValuesIn(kShapes),
                         [](const testing::TestParamInfo<Shape>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace onnxconvert::eval
