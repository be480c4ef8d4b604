#include "cli/html_report.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onnxconvert::cli {
namespace {

// Styles for the page; no external fonts or images.
constexpr absl::string_view kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.5em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left;
         vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.facts dt { font-weight: bold; }
dl.facts dd { margin: 0; }
tr.refused td { background: #fde8e8; }
.refusal { color: #b00020; font-weight: bold; }
.ok { color: #1b7f3b; }
code { font-family: ui-monospace, monospace; }
ul.changes { margin: 0; padding-left: 1.2em; }
)css";

// The name a report gives a domain ("" is ai.onnx).
std::string DomainName(absl::string_view domain) {
  return domain.empty() ? "ai.onnx" : std::string(domain);
}

// "ai.onnx 12 → 13" for a step.
std::string StepTitle(const converter::StepReport& step) {
  return absl::StrFormat("%s %d \xE2\x86\x92 %d", DomainName(step.domain), step.from_opset,
                         step.to_opset);
}

// Total milliseconds over the steps.
double TotalMilliseconds(const converter::ConversionReport& report) {
  double total = 0;
  for (const converter::StepReport& step : report.steps) total += step.milliseconds;
  return total;
}

// Appends one row of the facts list.
void AppendFact(std::string& out, absl::string_view name, absl::string_view value) {
  absl::StrAppend(&out, "<dt>", HtmlEscape(name), "</dt><dd>", HtmlEscape(value), "</dd>\n");
}

// The header: opsets, IR versions and totals.
void AppendHeader(std::string& out, const converter::ConversionReport& report,
                  absl::string_view model_name) {
  absl::StrAppend(&out, "<h1>Conversion report: <code>", HtmlEscape(model_name),
                  "</code></h1>\n<dl class=\"facts\">\n");
  AppendFact(out, "ai.onnx opset",
             absl::StrFormat("%d \xE2\x86\x92 %d", report.source_opset, report.target_opset));
  if (report.source_ml_opset || report.target_ml_opset) {
    AppendFact(out, "ai.onnx.ml opset",
               absl::StrFormat("%d \xE2\x86\x92 %d", report.source_ml_opset.value_or(0),
                               report.target_ml_opset.value_or(0)));
  }
  AppendFact(out, "IR version", absl::StrFormat("%d \xE2\x86\x92 %d", report.source_ir_version,
                                                report.target_ir_version));
  AppendFact(out, "Nodes converted", absl::StrCat(report.nodes_converted));
  AppendFact(out, "Nodes refused", absl::StrCat(report.nodes_refused));
  AppendFact(out, "Steps", absl::StrCat(report.steps.size()));
  AppendFact(out, "Total time", absl::StrFormat("%.1f ms", TotalMilliseconds(report)));
  if (report.verification) {
    AppendFact(out, "Verification", converter::VerificationText(*report.verification));
  }
  absl::StrAppend(&out, "</dl>\n");
}

// The summary table, a row per step.
void AppendStepSummary(std::string& out, const converter::ConversionReport& report) {
  absl::StrAppend(&out,
                  "<h2>Steps</h2>\n<table class=\"steps\">\n<tr><th>Step</th>"
                  "<th>Nodes converted</th><th>Validation</th><th>ms</th></tr>\n");
  for (size_t i = 0; i < report.steps.size(); ++i) {
    const converter::StepReport& step = report.steps[i];
    absl::StrAppend(&out, "<tr class=\"step\"><td><a href=\"#step-", i, "\">",
                    HtmlEscape(StepTitle(step)), "</a></td><td class=\"num\">",
                    step.NodeCount(), "</td><td class=\"",
                    step.validation == "ok" || step.validation == "incremental" ? "ok" : "",
                    "\">", HtmlEscape(step.validation),
                    "</td><td class=\"num\">", absl::StrFormat("%.1f", step.milliseconds),
                    "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
}

// The changes an adapter made to a node, as a list.
std::string ChangeList(const converter::NodeChange& node) {
  if (node.changes.empty()) return "";
  std::string out = "<ul class=\"changes\">";
  for (const adapters::Change& change : node.changes) {
    absl::StrAppend(&out, "<li><code>", HtmlEscape(change.kind), "</code>: ",
                    HtmlEscape(change.detail), "</li>");
  }
  absl::StrAppend(&out, "</ul>");
  return out;
}

// One table row for a changed (or refused) node.
void AppendNodeRow(std::string& out, const converter::NodeChange& node) {
  bool refused = !node.refusal.empty();
  std::string name = node.node.empty() ? "<em>(unnamed)</em>"
                                       : absl::StrCat("<code>", HtmlEscape(node.node), "</code>");
  if (!node.alike.empty()) {
    // The page names a few; the JSON report names them all.
    constexpr size_t kNamed = 20;
    absl::StrAppend(&name, "<br>and ", node.alike.size(), " more alike:");
    for (size_t i = 0; i < node.alike.size() && i < kNamed; ++i) {
      absl::StrAppend(&name, " <code>", HtmlEscape(node.alike[i]), "</code>");
    }
    if (node.alike.size() > kNamed) absl::StrAppend(&name, " \xE2\x80\xA6");
  }
  std::string outcome =
      refused ? absl::StrCat("<span class=\"refusal\">cannot convert: ", HtmlEscape(node.refusal),
                             "</span>")
              : absl::StrCat(HtmlEscape(node.adapter), ChangeList(node));
  absl::StrAppend(&out, "<tr class=\"", refused ? "node refused" : "node", "\"><td>",
                  HtmlEscape(node.graph), "</td><td>", name, "</td><td><code>",
                  HtmlEscape(node.op), "</code></td><td>", node.from_version, " \xE2\x86\x92 ",
                  node.to_version, "</td><td>", outcome, "</td></tr>\n");
}

// The nodes a step only rebound, a row per graph and op.
void AppendBumps(std::string& out, const converter::StepReport& step) {
  absl::StrAppend(&out,
                  "<table class=\"bumps\">\n<tr><th>Graph</th><th>Op</th><th>Version</th>"
                  "<th>Nodes rebound, unchanged</th></tr>\n");
  for (const converter::VersionBump& bump : step.bumps) {
    absl::StrAppend(&out, "<tr class=\"bump\"><td>", HtmlEscape(bump.graph), "</td><td><code>",
                    HtmlEscape(bump.op), "</code></td><td>", bump.from_version, " \xE2\x86\x92 ",
                    bump.to_version, "</td><td class=\"num\">", bump.nodes, "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
}

// A section per step listing its changed nodes.
void AppendStepDetails(std::string& out, const converter::ConversionReport& report) {
  for (size_t i = 0; i < report.steps.size(); ++i) {
    const converter::StepReport& step = report.steps[i];
    absl::StrAppend(&out, "<section id=\"step-", i, "\">\n<h2>Step ",
                    HtmlEscape(StepTitle(step)), "</h2>\n");
    if (step.nodes.empty() && step.bumps.empty()) {
      absl::StrAppend(&out, "<p>No node changed.</p>\n</section>\n");
      continue;
    }
    if (!step.bumps.empty()) AppendBumps(out, step);
    if (!step.nodes.empty()) {
      absl::StrAppend(&out,
                      "<table class=\"nodes\">\n<tr><th>Graph</th><th>Node</th><th>Op</th>"
                      "<th>Version</th><th>Adapter and changes</th></tr>\n");
      for (const converter::NodeChange& node : step.nodes) AppendNodeRow(out, node);
      absl::StrAppend(&out, "</table>\n");
    }
    absl::StrAppend(&out, "</section>\n");
  }
}

// The ops of other domains, left as they were.
void AppendUntouched(std::string& out, const converter::ConversionReport& report) {
  absl::StrAppend(&out, "<h2>Untouched ops</h2>\n");
  if (report.untouched_ops.empty()) {
    absl::StrAppend(&out, "<p>None.</p>\n");
    return;
  }
  absl::StrAppend(&out, "<table class=\"untouched\">\n<tr><th>Op</th><th>Count</th></tr>\n");
  for (const auto& [op, count] : report.untouched_ops) {
    absl::StrAppend(&out, "<tr><td><code>", HtmlEscape(op), "</code></td><td class=\"num\">",
                    count, "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
}

}  // namespace

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ConversionReportToHtml(const converter::ConversionReport& report,
                                   absl::string_view model_name) {
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
      "<title>onnx-convert report: ", HtmlEscape(model_name), "</title>\n<style>", kStyle,
      "</style>\n</head>\n<body>\n");
  AppendHeader(out, report, model_name);
  AppendStepSummary(out, report);
  AppendStepDetails(out, report);
  AppendUntouched(out, report);
  absl::StrAppend(&out, "</body>\n</html>\n");
  return out;
}

}  // namespace onnxconvert::cli
