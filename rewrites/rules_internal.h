#ifndef ONNX_CONVERT_REWRITES_RULES_INTERNAL_H_
#define ONNX_CONVERT_REWRITES_RULES_INTERNAL_H_

// What the rule file parser (rule_parser.cc) and the rule engine (rules.cc)
// share; not for other callers.

#include <map>
#include <string>

namespace onnxconvert::rewrites::rules_internal {

// Element types by the names `where` spells them (float, int64, ...).
const std::map<std::string, int>& DtypeNames();

}  // namespace onnxconvert::rewrites::rules_internal

#endif  // ONNX_CONVERT_REWRITES_RULES_INTERNAL_H_
