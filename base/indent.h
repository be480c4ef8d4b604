#ifndef ONNX_CONVERT_BASE_INDENT_H_
#define ONNX_CONVERT_BASE_INDENT_H_

// Indenting multi-line text in the reports' text forms.

#include <string>

#include "absl/strings/string_view.h"

namespace onnxconvert {

// `text`'s non-empty lines, each after `indent` and ending in a newline.
std::string Indented(absl::string_view text, absl::string_view indent);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_INDENT_H_
