#ifndef ONNX_CONVERT_EVAL_REGEX_H_
#define ONNX_CONVERT_EVAL_REGEX_H_

// Whole-string matching of RE2-syntax patterns, for RegexFullMatch, in
// time linear in the text (a Thompson NFA run over the text's code
// points): no backtracking, so no pattern can take exponential time.
//
// Supported: literals and escaped punctuation, ., character classes with
// ranges and negation, \d \D \w \W \s \S (ASCII, as RE2), \b \B \A \z ^ $
// (without multi-line), groups (capturing, (?:...), (?P<name>...)),
// alternation, and the quantifiers * + ? {n} {n,} {n,m} (lazy or not,
// alike for a whole match), with groups nested up to 100 deep. Flags, Unicode classes (\p), \C and
// anything else RE2 rejects or this does not know fail to compile.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::eval {

// A compiled pattern.
class Regex {
 public:
  // The longest pattern accepted (in bytes), and the most NFA instructions
  // a pattern may expand to (counted repetitions copy their operand).
  static constexpr size_t kMaxPatternBytes = 4096;
  static constexpr size_t kMaxInstructions = 20000;

  // `pattern` compiled, or an error saying what is unsupported or wrong.
  static absl::StatusOr<Regex> Compile(absl::string_view pattern);

  // Whether the whole of `text` (UTF-8; invalid bytes read as U+FFFD)
  // matches.
  bool FullMatch(absl::string_view text) const;

  // One NFA instruction (public for the compiler in regex.cc).
  struct Inst {
    enum Op : uint8_t { kChar, kAnyNotNewline, kSplit, kJmp, kAssert, kMatch } op = kMatch;
    bool negate = false;                            // kChar: match outside the ranges
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // kChar: inclusive ranges
    int x = 0, y = 0;                               // kSplit targets; kJmp uses x
    char assertion = 0;                             // kAssert: '^', '$', 'b', 'B'
  };

 private:
  std::vector<Inst> program_;
};

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_REGEX_H_
