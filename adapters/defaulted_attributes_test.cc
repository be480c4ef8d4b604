// Attributes written with their default value (as the PyTorch 2.x exporter
// writes them all) mean what their absence does: a step to a version that
// lacks them drops them, in one place for every op (DropDefaultedAttributes),
// through the converter. The cases: adapters/testdata/defaulted_attributes.cases.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

// The step's report lists the attribute dropped.
TEST(DefaultedAttributesTest, TheReportListsTheDrop) {
  onnx::ModelProto model = testing::ModelFromText(
      "<ir_version: 8, opset_import: [\"\" : 14]>\n"
      "g (float[5,2,3] X, float[1,12,3] W, float[1,12,4] R) => (float[5,1,2,4] Y) "
      "{ [r] Y = GRU <hidden_size = 4, layout = 0> (X, W, R) }");
  absl::StatusOr<converter::ConversionResult> result = ConvertTo(model, 13);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(ReportLists(*result, ChangeKind::kAttributeRemoved,
                          "layout (set to its default, which GRU-7 lacks) dropped"));
}

}  // namespace
}  // namespace onnxconvert::adapters
