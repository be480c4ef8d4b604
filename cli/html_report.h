#ifndef ONNX_CONVERT_CLI_HTML_REPORT_H_
#define ONNX_CONVERT_CLI_HTML_REPORT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "converter/converter.h"

namespace onnxconvert::cli {

// `text` with the HTML special characters (& < > " ') escaped, safe both as
// element text and inside a quoted attribute.
std::string HtmlEscape(absl::string_view text);

// The conversion report as one self-contained HTML page titled with
// `model_name`: inline CSS only, no scripts and no external references.
// The page is deterministic apart from the timings it shows.
std::string ConversionReportToHtml(const converter::ConversionReport& report,
                                   absl::string_view model_name);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_HTML_REPORT_H_
