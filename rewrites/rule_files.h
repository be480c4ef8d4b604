#ifndef ONNX_CONVERT_REWRITES_RULE_FILES_H_
#define ONNX_CONVERT_REWRITES_RULE_FILES_H_

// The built-in rule files (rewrites/rules/*.rules), compiled into the
// binary by a genrule (rewrites/BUILD).

#include <vector>

namespace onnxconvert::rewrites {

// One rule file: its path in the source tree and its text.
struct RuleFileText {
  const char* path;
  const char* text;
};

// Every built-in rule file, in path order.
const std::vector<RuleFileText>& BuiltinRuleFiles();

}  // namespace onnxconvert::rewrites

#endif  // ONNX_CONVERT_REWRITES_RULE_FILES_H_
