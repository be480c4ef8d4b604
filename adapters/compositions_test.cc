// Compositions: downgrades written as several older ops where the target
// cannot take what the node uses directly, through the converter. The cases,
// with the constants each composition adds: adapters/testdata/compositions.cases.

#include "absl/strings/str_cat.h"
#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

// The report marks compositions whose float results may round otherwise
// than the node's own kernel, and only those.
TEST(CompositionTest, ReportMarksRoundingChanges) {
  const struct {
    const char* graph;
    int64_t from, to;
    bool marked;
  } cases[] = {
      {"g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMean(X, A) }", 18, 17, true},
      {"g (int64[2,3] X, int64[1] A) => (int64[2,1] Y) { [r] Y = ReduceL1(X, A) }", 18, 17, false},
      {"g (float[4] X) => (float[4] Y) { [s] Y = Shrink <bias = 1.0> (X) }", 9, 8, true},
      {"g (float[4] X) => (float[4] Y) { [s] Y = Shrink <bias = 0.5, lambd = 0.5> (X) }", 9, 8,
       false},
      {"g (float[4] X, float lo) => (float[4] Y) { [c] Y = Clip(X, lo) }", 11, 10, false},
  };
  for (const auto& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(
        absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", c.from, "]>\n", c.graph));
    absl::StatusOr<converter::ConversionResult> result = ConvertTo(model, c.to);
    ASSERT_TRUE(result.ok()) << c.graph << ": " << result.status();
    EXPECT_EQ(ReportLists(*result, ChangeKind::kRoundingChanged), c.marked) << c.graph;
  }
}

}  // namespace
}  // namespace onnxconvert::adapters
