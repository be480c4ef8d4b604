// Casts around a node whose types its target version lacks (the default;
// refused with no_casts), through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> WidensTypesTheTargetLacks() {
  return AllNodes({
      {"int8_add_refused_with_no_casts", 14, 13,
       "g (int8[2] A, int8[2] B) => (int8[2] C) { [a] C = Add(A, B) }", "",
       "'A' is tensor(int8), which Add-13 does not allow for T", 8, /*all_nodes=*/true,
       /*no_casts=*/true},
      {"int8_add_cast_to_int32_by_default", 14, 13,
       "g (int8[2] A, int8[2] B) => (int8[2] C) { [a] C = Add(A, B) }",
       "[a_cast__0] A_cast__0 = Cast <to = 6> (A); [a_cast__1] B_cast__0 = Cast <to = 6> (B); "
       "[a] C__0 = Add(A_cast__0, B_cast__0); [a_cast__2] C = Cast <to = 3> (C__0)",
       ""},
      {"uint16_add_cast_to_int32", 14, 13,
       "g (uint16[2] A, uint16[2] B) => (uint16[2] C) { [a] C = Add(A, B) }",
       "[a_cast__0] A_cast__0 = Cast <to = 6> (A); [a_cast__1] B_cast__0 = Cast <to = 6> (B); "
       "[a] C__0 = Add(A_cast__0, B_cast__0); [a_cast__2] C = Cast <to = 4> (C__0)",
       ""},
      {"int32_relu_cast_to_double", 14, 13,
       "g (int32[2] X) => (int32[2] Y) { [r] Y = Relu(X) }",
       "[r_cast__0] X_cast__0 = Cast <to = 11> (X); [r] Y__0 = Relu(X_cast__0); "
       "[r_cast__1] Y = Cast <to = 6> (Y__0)",
       ""},
      {"float16_isinf_cast_to_float", 20, 19,
       "g (float16[2] X) => (bool[2] Y) { [i] Y = IsInf(X) }",
       "[i_cast__0] X_cast__0 = Cast <to = 1> (X); [i] Y = IsInf(X_cast__0)", ""},
      {"int8_max_cast_to_float", 13, 8,
       "g (int8[2] A, int8[2] B) => (int8[2] C) { [m] C = Max(A, B) }",
       "[m_cast__0] A_cast__0 = Cast <to = 1> (A); [m_cast__1] B_cast__0 = Cast <to = 1> (B); "
       "[m] C__0 = Max(A_cast__0, B_cast__0); [m_cast__2] C = Cast <to = 3> (C__0)",
       ""},
      {"uint16_less_cast_to_float", 13, 7,
       "g (uint16[2] A, uint16[2] B) => (bool[2] C) { [l] C = Less(A, B) }",
       "[l_cast__0] A_cast__0 = Cast <to = 1> (A); [l_cast__1] B_cast__0 = Cast <to = 1> (B); "
       "[l] C = Less(A_cast__0, B_cast__0)",
       ""},
      {"int64_relu_lossy_refused_naming_the_range", 14, 13,
       "g (int64[2] X) => (int64[2] Y) { [r] Y = Relu(X) }", "",
       "no type Relu-13 allows for T holds their values exactly: a cast to tensor(double) would "
       "hold integers only up to ±2^53 and 53-bit fractions, and values of tensor(int64) outside "
       "that would be lost"},
  });
}

INSTANTIATE_TEST_SUITE_P(WidensTypesTheTargetLacks, ConversionCaseTest,
                         ::testing::ValuesIn(WidensTypesTheTargetLacks()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
