#ifndef ONNX_CONVERT_CLI_HTML_REPORT_H_
#define ONNX_CONVERT_CLI_HTML_REPORT_H_

// The conversion and rewrite reports as self-contained HTML pages, for the
// `--report FILE.html` of convert and optimize.

#include <string>

#include "absl/strings/string_view.h"
#include "converter/converter.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::cli {

// `text` with the HTML special characters (& < > " ') escaped, safe both as
// element text and inside a quoted attribute.
std::string HtmlEscape(absl::string_view text);

// The conversion report as one self-contained HTML page titled with
// `model_name`: inline CSS only, no scripts and no external references.
// The page is deterministic apart from the timings it shows. `optimized`
// (when given) adds the report of the rewrite that followed the conversion.
std::string ConversionReportToHtml(const converter::ConversionReport& report,
                                   absl::string_view model_name,
                                   const rewrites::RewriteReport* optimized = nullptr);

// The rewrite report (`onnx-convert optimize --report FILE.html`) as one
// self-contained page titled with `model_name`: totals, a row per pass and
// rule, each recorded rewrite's nodes before and after in ONNX text side by
// side, and the --explain entries. Deterministic.
std::string RewriteReportToHtml(const rewrites::RewriteReport& report,
                                absl::string_view model_name);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_HTML_REPORT_H_
