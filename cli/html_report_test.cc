#include "cli/html_report.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"

namespace onnxconvert::cli {
namespace {

// Relu then Unsqueeze (axes an attribute until opset 13); the Unsqueeze
// node's name needs escaping.
constexpr absl::string_view kReluUnsqueeze =
    R"(<ir_version: 7, opset_import: ["" : 12, "com.vendor" : 1]>
g (float[3] X) => (float[1,3] Y) {
  [relu] R = Relu(X)
  [fancy] F = com.vendor.Fancy(R)
  [unsq] Y = Unsqueeze <axes = [0]> (R)
})";

// Trilu (new in 14) cannot go down to 13: refused in a dry run.
constexpr absl::string_view kTrilu = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[3,3] X) => (float[3,3] Y) {
  [tri] A = Trilu(X)
  [r] Y = Relu(A)
})";

// HardSwish (new in 14) down to 13: its function body in its place.
constexpr absl::string_view kHardSwish = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2,3] X) => (float[2,3] Y) {
  [hs] Y = HardSwish(X)
})";

// The report of converting `text` (its last node renamed to `last_name`
// when that is not empty) to `target`.
converter::ConversionReport Report(absl::string_view text, int64_t target, bool dry_run,
                                   const std::string& last_name) {
  onnx::ModelProto model = testing::ModelFromText(text);
  int last = model.graph().node_size() - 1;
  if (!last_name.empty()) model.mutable_graph()->mutable_node(last)->set_name(last_name);
  converter::ConvertOptions options;
  options.target_opset = target;
  options.dry_run = dry_run;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->report : converter::ConversionReport();
}

struct HtmlCase {
  std::string name;
  absl::string_view model;
  int64_t target;
  bool dry_run;
  std::string last_node_name;
  std::string model_name;
  std::vector<std::string> expected;  // substrings the page must contain
  std::vector<std::string> absent;    // substrings it must not
};

TEST(HtmlReportTest, PagesShowStepsNodesAndAdaptersEscaped) {
  std::vector<HtmlCase> cases = {
      {"upgrade",
       kReluUnsqueeze,
       13,
       false,
       "a<b&\"c",
       "relu<&>.onnx",
       {"<title>onnx-convert report: relu&lt;&amp;&gt;.onnx</title>",
        "<dt>ai.onnx opset</dt><dd>12 \xE2\x86\x92 13</dd>",
        "<dt>IR version</dt><dd>7 \xE2\x86\x92 7</dd>",
        "<dt>Nodes converted</dt><dd>2</dd>", "<dt>Nodes refused</dt><dd>0</dd>",
        "<dt>Steps</dt><dd>1</dd>", "<tr class=\"step\"><td><a href=\"#step-0\">ai.onnx 12 "
        "\xE2\x86\x92 13</a></td><td class=\"num\">2</td><td class=\"ok\">incremental</td>",
        "<section id=\"step-0\">", "<code>a&lt;b&amp;&quot;c</code>",
        "<tr class=\"bump\"><td>main</td><td><code>Relu</code></td><td>6 \xE2\x86\x92 13</td>"
        "<td class=\"num\">1</td></tr>",
        "Unsqueeze 11-&gt;13", "<code>attribute-to-input</code>",
        "<code>com.vendor.Fancy</code>",
        // The node before and after its axes became an input, escaped.
        "<tr class=\"region\"><td colspan=\"5\">",
        "<td class=\"before\"><pre class=\"onnx\">", "Y = Unsqueeze &lt;axes = [0]&gt; (R)",
        "<td class=\"after\"><pre class=\"onnx\">"},
       {"a<b&\"c", "relu<&>", "class=\"node refused\"", "ai.onnx.ml opset"}},
      {"dry run with a refusal",
       kTrilu,
       13,
       true,
       "",
       "tri.onnx",
       {"<dt>Nodes refused</dt><dd>1</dd>", "<dt>Nodes converted</dt><dd>1</dd>",
        "ai.onnx 14 \xE2\x86\x92 13", "<tr class=\"node refused\">", "<code>tri</code>",
        "<span class=\"refusal\">cannot convert: ",
        "<td><code>Relu</code></td><td>14 \xE2\x86\x92 13</td>",
        "<h2>Untouched ops</h2>\n<p>None.</p>"},
       {"<tr class=\"region\">"}},
      {"function body expanded",
       kHardSwish,
       13,
       false,
       "",
       "hs.onnx",
       {"<tr class=\"region\">", "[hs] Y = HardSwish(X)", "= HardSigmoid &lt;alpha = ",
        "Y = Mul(X, "},
       {}},
  };
  for (const HtmlCase& c : cases) {
    std::string html = ConversionReportToHtml(
        Report(c.model, c.target, c.dry_run, c.last_node_name), c.model_name);
    for (const std::string& want : c.expected) {
      EXPECT_TRUE(absl::StrContains(html, want)) << c.name << ": missing " << want << "\n"
                                                 << html;
    }
    for (const std::string& unwanted : c.absent) {
      EXPECT_FALSE(absl::StrContains(html, unwanted)) << c.name << ": has " << unwanted;
    }
    // Self-contained: nothing fetched from anywhere.
    for (absl::string_view external : {"http://", "https://", "<script", "<link", "src=", "@import",
                                       "url("}) {
      EXPECT_FALSE(absl::StrContains(html, external)) << c.name << ": has " << external;
    }
  }
}

TEST(HtmlReportTest, EscapesEverySpecialCharacter) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&#39;d");
  EXPECT_EQ(HtmlEscape("plain \xE2\x80\xBA text"), "plain \xE2\x80\xBA text");
}

TEST(HtmlReportTest, ShowsMlOpsetsWhenPresent) {
  converter::ConversionReport report;
  report.source_opset = 12;
  report.target_opset = 13;
  report.source_ml_opset = 2;
  report.target_ml_opset = 3;
  std::string html = ConversionReportToHtml(report, "m");
  EXPECT_TRUE(absl::StrContains(html, "<dt>ai.onnx.ml opset</dt><dd>2 \xE2\x86\x92 3</dd>"));
}

TEST(HtmlReportTest, SameReportGivesSamePage) {
  converter::ConversionReport report = Report(kReluUnsqueeze, 13, false, "");
  EXPECT_EQ(ConversionReportToHtml(report, "m"), ConversionReportToHtml(report, "m"));
}

}  // namespace
}  // namespace onnxconvert::cli
