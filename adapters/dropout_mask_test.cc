// Dropout's mask across opset 10 (float before, bool from 10): dropped when
// nothing reads it, else cast to the type its readers expect, through the
// converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> DropsOrCastsTheMask() {
  return AllNodes({
      {"no_mask_up", 9, 10, "g (float[2] X) => (float[2] Y) { [d] Y = Dropout(X) }",
       "[d] Y = Dropout(X)", ""},
      {"unused_mask_dropped_up", 9, 10,
       "g (float[2] X) => (float[2] Y) { [d] Y, M = Dropout(X) }", "[d] Y = Dropout(X)", ""},
      {"mask_graph_output_cast_up", 9, 10,
       "g (float[2] X) => (float[2] Y, float[2] M) { [d] Y, M = Dropout(X) }",
       "[d] Y, M__0 = Dropout(X); [d_cast__0] M = Cast <to = 1> (M__0)", ""},
      {"mask_read_cast_up", 7, 12,
       "g (float[2] X) => (float[2] Z) { [d] Y, M = Dropout(X)\n [a] Z = Add(Y, M) }",
       "[d] Y, M__0 = Dropout(X); [d_cast__0] M = Cast <to = 1> (M__0); [a] Z = Add(Y, M)", ""},
      {"double_mask_cast_up", 9, 10,
       "g (double[2] X) => (double[2] Y, double[2] M) { [d] Y, M = Dropout(X) }",
       "[d] Y, M__0 = Dropout(X); [d_cast__0] M = Cast <to = 11> (M__0)", ""},
      {"unused_mask_dropped_down", 10, 9,
       "g (float[2] X) => (float[2] Y) { [d] Y, M = Dropout(X) }", "[d] Y = Dropout(X)", ""},
      {"mask_graph_output_cast_down", 10, 7,
       "g (float[2] X) => (float[2] Y, bool[2] M) { [d] Y, M = Dropout(X) }",
       "[d] Y, M__0 = Dropout(X); [d_cast__0] M = Cast <to = 9> (M__0)", ""},
  });
}

INSTANTIATE_TEST_SUITE_P(DropsOrCastsTheMask, ConversionCaseTest,
                         ::testing::ValuesIn(DropsOrCastsTheMask()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
