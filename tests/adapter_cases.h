#ifndef ONNX_CONVERT_TESTS_ADAPTER_CASES_H_
#define ONNX_CONVERT_TESTS_ADAPTER_CASES_H_

// For the adapter tests (adapters/*_test.cc): cases that convert a one-node
// graph written in ONNX text through the whole converter and compare the
// converted model, or the refusal, with what the case expects.

#include <cctype>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

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
  // The whole converted model in ONNX text (header, initializers the adapter
  // added, nodes); when set, compared as well as `expected_node`. Compared
  // after a parse and print, so its spacing and line breaks are free.
  std::string expected_model = "";
};

// Prints a case by its name (in the failures of parameterized tests).
inline void PrintTo(const ConversionCase& c, std::ostream* os) { *os << c.name; }

// The nodes of `graph` in ONNX text, joined by "; ".
inline std::string AllNodesText(const onnx::GraphProto& graph) {
  std::string text;
  for (const onnx::NodeProto& node : graph.node()) {
    absl::StrAppend(&text, text.empty() ? "" : "; ", PrintNodeText(node));
  }
  return text;
}

// The case's model: its graph at IR version `ir_version` and opset `from`.
inline onnx::ModelProto CaseModel(const ConversionCase& c) {
  return testing::ModelFromText(absl::StrCat(
      "<ir_version: ", c.ir_version, ", opset_import: [\"\" : ", c.from, "]>\n", c.graph));
}

// `model` converted to opset `target` with the default options.
inline absl::StatusOr<converter::ConversionResult> ConvertTo(const onnx::ModelProto& model,
                                                             int64_t target) {
  converter::ConvertOptions options;
  options.target_opset = target;
  return converter::ConvertModel(model, options);
}

// Converts the case's model and checks the converted node (printed as ONNX
// text) or the FailedPrecondition refusal.
inline void ExpectConversion(const ConversionCase& c) {
  onnx::ModelProto model = CaseModel(c);
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
    if (!c.expected_model.empty()) {
      EXPECT_EQ(PrintModelText(result->model),
                PrintModelText(testing::ModelFromText(c.expected_model)))
          << c.name;
    }
    for (const converter::StepReport& step : result->report.steps) {
      EXPECT_TRUE(step.validation == converter::StepValidation::kOk ||
                  step.validation == converter::StepValidation::kIncremental ||
                  step.validation == converter::StepValidation::kUnchanged)
          << c.name;
    }
    return;
  }
  ASSERT_FALSE(result.ok()) << c.name;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
  EXPECT_TRUE(absl::StrContains(result.status().message(), c.error))
      << c.name << ": " << result.status();
}

// A parameterized test over ConversionCases (its one TEST_P, Converts, runs
// ExpectConversion: adapter_cases.cc); each test file instantiates it with
// its tables, named after the table:
//   INSTANTIATE_TEST_SUITE_P(Table, ConversionCaseTest,
//                            ::testing::ValuesIn(Table()), CaseName);
// so that each case is a test named after it.
class ConversionCaseTest : public ::testing::TestWithParam<ConversionCase> {};

// The test name of a case: its name, with any character a test name cannot
// hold replaced by '_'.
inline std::string CaseName(const ::testing::TestParamInfo<ConversionCase>& info) {
  std::string name = info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// `c` with the whole converted model to compare (expected_model).
inline ConversionCase WithModel(ConversionCase c, std::string expected_model) {
  c.expected_model = std::move(expected_model);
  return c;
}

// `cases` with every node of the converted graph compared (all_nodes).
inline std::vector<ConversionCase> AllNodes(std::vector<ConversionCase> cases) {
  for (ConversionCase& c : cases) c.all_nodes = true;
  return cases;
}

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_TESTS_ADAPTER_CASES_H_
