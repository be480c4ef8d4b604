// Legacy (opset 6) and numpy (opset 7) broadcasting, both ways, through the
// converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

// The cases' models are of IR version 3 (the opsets of legacy broadcasting).
std::vector<ConversionCase> AtIrVersion3(std::vector<ConversionCase> cases) {
  for (ConversionCase& c : cases) c.ir_version = 3;
  return cases;
}

std::vector<ConversionCase> LegacyAndNumpy() {
  return AtIrVersion3({
      {"suffix_up", 6, 7,
       "g (float[2,3,4] A, float[4] B) => (float[2,3,4] Y) { [add] Y = Add <broadcast = 1> (A, B) }",
       "[add] Y = Add(A, B)", ""},
      {"axis_matching_suffix_up", 6, 7,
       "g (float[2,3,4] A, float[3,4] B) => (float[2,3,4] Y) "
       "{ [mul] Y = Mul <axis = 1, broadcast = 1> (A, B) }",
       "[mul] Y = Mul(A, B)", ""},
      {"inner_axis_up", 6, 7,
       "g (float[2,3,4] A, float[3] B) => (float[2,3,4] Y) "
       "{ [sub] Y = Sub <axis = 1, broadcast = 1> (A, B) }",
       "", "B is broadcast from axis 1 of A"},
      {"suffix_down", 7, 6,
       "g (float[2,3,4] A, float[4] B) => (float[2,3,4] Y) { [add] Y = Add(A, B) }",
       "[add] Y = Add <broadcast = 1> (A, B)", ""},
      {"same_shape_down", 7, 6,
       "g (float[2,3] A, float[2,3] B) => (float[2,3] Y) { [div] Y = Div(A, B) }",
       "[div] Y = Div(A, B)", ""},
      {"two_way_down", 7, 6,
       "g (float[2,1] A, float[1,3] B) => (float[2,3] Y) { [add] Y = Add(A, B) }", "",
       "B's shape is not a suffix of A's"},
      {"gemm_up", 6, 7,
       "g (float[2,3] A, float[3,4] B, float[4] C) => (float[2,4] Y) "
       "{ [gemm] Y = Gemm <broadcast = 1> (A, B, C) }",
       "[gemm] Y = Gemm(A, B, C)", ""},
  });
}

INSTANTIATE_TEST_SUITE_P(LegacyAndNumpy, ConversionCaseTest, ::testing::ValuesIn(LegacyAndNumpy()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
