#ifndef ONNX_CONVERT_ADAPTERS_ADAPTER_TEST_UTIL_H_
#define ONNX_CONVERT_ADAPTERS_ADAPTER_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/text_printer.h"
#include "tests/model_text.h"

namespace onnxconvert::adapters {

// One adapter case: a one-node graph at opset `from`, converted to `to`.
struct ConversionCase {
  std::string name;
  int64_t from;
  int64_t to;
  std::string graph;          // ONNX text of the graph
  std::string expected_node;  // the converted node in ONNX text; "" when refused
  std::string error;          // a substring of the refusal; "" when it converts
  int64_t ir_version = 8;
  // Compare every node of the converted graph ("; "-joined), not only the
  // first.
  bool all_nodes = false;
  bool no_casts = false;  // ConvertOptions::no_casts
};

// The nodes of `graph` in ONNX text, joined by "; ".
inline std::string AllNodesText(const onnx::GraphProto& graph) {
  std::string text;
  for (const onnx::NodeProto& node : graph.node()) {
    absl::StrAppend(&text, text.empty() ? "" : "; ", PrintNodeText(node));
  }
  return text;
}

// Converts the case's model and checks the converted node (printed as ONNX
// text) or the FailedPrecondition refusal.
inline void ExpectConversion(const ConversionCase& c) {
  onnx::ModelProto model = testing::ModelFromText(absl::StrCat(
      "<ir_version: ", c.ir_version, ", opset_import: [\"\" : ", c.from, "]>\n", c.graph));
  converter::ConvertOptions options;
  options.target_opset = c.to;
  options.no_casts = c.no_casts;
  // Each step is validated node by node and as a whole, which must agree.
  options.cross_check = true;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
  if (c.error.empty()) {
    ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
    EXPECT_EQ(c.all_nodes ? AllNodesText(result->model.graph())
                          : PrintNodeText(result->model.graph().node(0)),
              c.expected_node)
        << c.name;
    for (const converter::StepReport& step : result->report.steps) {
      EXPECT_TRUE(step.validation == "ok" || step.validation == "incremental" ||
                  step.validation == "unchanged")
          << c.name;
    }
    return;
  }
  ASSERT_FALSE(result.ok()) << c.name;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
  EXPECT_TRUE(absl::StrContains(result.status().message(), c.error))
      << c.name << ": " << result.status();
}

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_ADAPTER_TEST_UTIL_H_
