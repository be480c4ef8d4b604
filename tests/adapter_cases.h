#ifndef ONNX_CONVERT_TESTS_ADAPTER_CASES_H_
#define ONNX_CONVERT_TESTS_ADAPTER_CASES_H_

// For the adapter tests: cases, read from the case files of
// adapters/testdata, that convert a graph written in ONNX text through the
// whole converter and compare the converted model, or the refusal, with what
// the case expects.

#include <cctype>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "adapters/adapter.h"
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
  // The op the conversion expands into its function body, which no node of
  // the converted graph may have (instead of `expected_node`), or "".
  std::string expanded_op = "";
  int64_t ir_version = 8;
  // Compare every node of the converted graph ("; "-joined), not only the
  // first.
  bool all_nodes = false;
  bool no_casts = false;  // ConvertOptions::no_casts
  // The whole converted model in ONNX text (header, initializers the adapter
  // added, nodes); when set, compared as well as `expected_node`. Compared
  // after a parse and print, so its spacing and line breaks are free.
  std::string expected_model = "";
  // The initializers of the converted graph (ConstantsText); compared when
  // set, "" for none.
  std::optional<std::string> constants = std::nullopt;
  // Where the case stands in its case file ("file:line"), or "".
  std::string where = "";
  // The error of a malformed case file this case stands for, or "".
  std::string file_error = "";
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
// text) or that the expanded op is gone, the constants and the whole model
// where the case gives them, or the FailedPrecondition refusal; a case that
// stands for a malformed case file (file_error) fails with that error.
void ExpectConversion(const ConversionCase& c);

// The initializers of `graph`, "name = {values}" (a scalar without braces;
// float16 as its bits) joined by "; ".
std::string ConstantsText(const onnx::GraphProto& graph);

// The cases of the case file `path` whose text is `text` (the format:
// adapters/testdata/README.md); an error names the file and line at fault.
absl::StatusOr<std::vector<ConversionCase>> ParseCaseFile(absl::string_view path,
                                                          absl::string_view text);

// The cases of every *.cases file in `folder`, by file name then by place.
// A file that cannot be read or parsed, a case name used twice, or a folder
// without case files gives a case that fails with the error instead.
std::vector<ConversionCase> CasesInFolder(const std::string& folder);

// Whether any step of `result`'s report lists a change of `kind` (and, when
// `detail` is given, with that detail).
bool ReportLists(const converter::ConversionResult& result, ChangeKind kind,
                 std::optional<std::string> detail = std::nullopt);

// A parameterized test over ConversionCases (its one TEST_P, Converts, runs
// ExpectConversion: adapter_cases.cc); adapters/cases_test.cc instantiates it
// with the cases of every case file, each a test named after its case.
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

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_TESTS_ADAPTER_CASES_H_
