#include "cli/html_report.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

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
pre.onnx { margin: 0; font-family: ui-monospace, monospace; font-size: 0.9em;
           white-space: pre-wrap; }
table.diff td { width: 50%; }
table.diff td.before { background: #fdf0f0; }
table.diff td.after { background: #eefaf1; }
tr.rule td:first-child { padding-left: 1.8em; }
tr.nomatch td { background: #fff8e6; }
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
                    step.validation == converter::StepValidation::kOk ||
                            step.validation == converter::StepValidation::kIncremental
                        ? "ok"
                        : "",
                    "\">", HtmlEscape(converter::StepValidationName(step.validation)),
                    "</td><td class=\"num\">", absl::StrFormat("%.1f", step.milliseconds),
                    "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
}

// Before and after in ONNX text, side by side ("" shows as "(nothing)").
void AppendBeforeAfter(std::string& out, absl::string_view before, absl::string_view after) {
  auto cell = [](absl::string_view text) {
    return text.empty() ? std::string("<em>(nothing)</em>")
                        : absl::StrCat("<pre class=\"onnx\">", HtmlEscape(text), "</pre>");
  };
  absl::StrAppend(&out,
                  "<table class=\"diff\">\n<tr><th>Before</th><th>After</th></tr>\n"
                  "<tr><td class=\"before\">",
                  cell(before), "</td><td class=\"after\">", cell(after), "</td></tr>\n</table>\n");
}

// The changes an adapter made to a node, as a list.
std::string ChangeList(const converter::NodeChange& node) {
  if (node.changes.empty()) return "";
  std::string out = "<ul class=\"changes\">";
  for (const adapters::Change& change : node.changes) {
    absl::StrAppend(&out, "<li><code>", HtmlEscape(adapters::ChangeKindName(change.kind)), "</code>: ",
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
  if (node.before_text.empty()) return;
  absl::StrAppend(&out, "<tr class=\"region\"><td colspan=\"5\">\n");
  AppendBeforeAfter(out, node.before_text, node.after_text);
  absl::StrAppend(&out, "</td></tr>\n");
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

// The page's head and the start of its body, titled `title`.
std::string PageStart(absl::string_view title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
      "<title>", HtmlEscape(title), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n");
}

constexpr absl::string_view kPageEnd = "</body>\n</html>\n";

// The rewrite's totals.
void AppendRewriteFacts(std::string& out, const rewrites::RewriteReport& report) {
  auto arrow = [](int64_t a, int64_t b) { return absl::StrFormat("%d \xE2\x86\x92 %d", a, b); };
  absl::StrAppend(&out, "<dl class=\"facts\">\n");
  AppendFact(out, "Profile", report.profile);
  AppendFact(out, "Rounds", absl::StrCat(report.rounds, report.converged
                                                            ? " (fixed point)"
                                                            : " (no fixed point within the cap)"));
  AppendFact(out, "Nodes", arrow(report.nodes_before, report.nodes_after));
  AppendFact(out, "Initializers", arrow(report.initializers_before, report.initializers_after));
  AppendFact(out, "Bytes", arrow(report.bytes_before, report.bytes_after));
  absl::StrAppend(&out, "</dl>\n");
}

// A row per pass, then a row per rule it applied.
void AppendPassTable(std::string& out, const rewrites::RewriteReport& report) {
  absl::StrAppend(&out,
                  "<table class=\"passes\">\n<tr><th>Pass / rule</th><th>Matches</th>"
                  "<th>Nodes removed</th><th>Nodes added</th><th>Initializers removed</th>"
                  "<th>Initializers added</th></tr>\n");
  for (const rewrites::PassStats& pass : report.passes) {
    absl::StrAppend(&out, "<tr class=\"pass\"><td><code>", HtmlEscape(pass.pass),
                    "</code></td><td class=\"num\">", pass.matches, "</td><td class=\"num\">",
                    pass.nodes_removed, "</td><td class=\"num\">", pass.nodes_added,
                    "</td><td class=\"num\">", pass.initializers_removed,
                    "</td><td class=\"num\">", pass.initializers_added, "</td></tr>\n");
    for (const auto& [rule, count] : pass.rule_matches) {
      absl::StrAppend(&out, "<tr class=\"rule\"><td><code>", HtmlEscape(rule),
                      "</code></td><td class=\"num\">", count,
                      "</td><td></td><td></td><td></td><td></td></tr>\n");
    }
  }
  absl::StrAppend(&out, "</table>\n");
}

// Each recorded rewrite, before and after.
void AppendRewriteRecords(std::string& out, const rewrites::RewriteReport& report) {
  for (const rewrites::PassStats& pass : report.passes) {
    if (pass.records.empty()) continue;
    absl::StrAppend(&out, "<h3>Rewrites of <code>", HtmlEscape(pass.pass), "</code> (first ",
                    pass.records.size(), " of ", pass.matches, ")</h3>\n");
    for (const rewrites::RewriteRecord& record : pass.records) {
      absl::StrAppend(&out, "<p class=\"record\"><code>", HtmlEscape(record.what),
                      "</code> in ", HtmlEscape(record.graph), "</p>\n");
      AppendBeforeAfter(out, record.before, record.after);
    }
  }
}

// The --explain entries.
void AppendExplanations(std::string& out, const rewrites::RewriteReport& report) {
  if (report.explain.empty()) return;
  absl::StrAppend(&out,
                  "<h2>Rules explained</h2>\n<table class=\"explain\">\n<tr><th>Rule</th>"
                  "<th>Graph</th><th>Node</th><th>Op</th><th>Index</th><th>Outcome</th></tr>\n");
  for (const rewrites::RuleExplanation& e : report.explain) {
    absl::StrAppend(&out, "<tr class=\"", e.matched ? "matched" : "nomatch", "\"><td><code>",
                    HtmlEscape(e.rule), "</code></td><td>", HtmlEscape(e.graph), "</td><td><code>",
                    HtmlEscape(e.node), "</code></td><td><code>", HtmlEscape(e.op),
                    "</code></td><td class=\"num\">", e.index, "</td><td>",
                    e.matched ? "<span class=\"ok\">matches</span>: " : "no match: ",
                    HtmlEscape(e.reason), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
}

// The sections of a rewrite report.
void AppendRewriteReport(std::string& out, const rewrites::RewriteReport& report) {
  AppendRewriteFacts(out, report);
  absl::StrAppend(&out, "<h2>Passes</h2>\n");
  AppendPassTable(out, report);
  absl::StrAppend(&out, "<h2>Rewrites</h2>\n");
  bool any = false;
  for (const rewrites::PassStats& pass : report.passes) any |= !pass.records.empty();
  if (!any) absl::StrAppend(&out, "<p>None.</p>\n");
  AppendRewriteRecords(out, report);
  AppendExplanations(out, report);
}

}  // namespace

std::string HtmlEscape(absl::string_view text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

std::string ConversionReportToHtml(const converter::ConversionReport& report,
                                   absl::string_view model_name,
                                   const rewrites::RewriteReport* optimized) {
  std::string out = PageStart(absl::StrCat("onnx-convert report: ", model_name));
  AppendHeader(out, report, model_name);
  AppendStepSummary(out, report);
  AppendStepDetails(out, report);
  AppendUntouched(out, report);
  if (optimized != nullptr) {
    absl::StrAppend(&out, "<h1>Optimization</h1>\n");
    AppendRewriteReport(out, *optimized);
  }
  absl::StrAppend(&out, kPageEnd);
  return out;
}

std::string RewriteReportToHtml(const rewrites::RewriteReport& report,
                                absl::string_view model_name) {
  std::string out = PageStart(absl::StrCat("onnx-convert optimize report: ", model_name));
  absl::StrAppend(&out, "<h1>Optimization report: <code>", HtmlEscape(model_name),
                  "</code></h1>\n");
  AppendRewriteReport(out, report);
  absl::StrAppend(&out, kPageEnd);
  return out;
}

}  // namespace onnxconvert::cli
