#ifndef ONNX_CONVERT_TESTS_CASE_FILE_H_
#define ONNX_CONVERT_TESTS_CASE_FILE_H_

// The plain layout of a data-driven test's case file, read into parts that
// the test gives their meaning:
//
//   # A comment, from '#' at the start of a line; blank lines are free.
//   case HEAD                 a case; HEAD is the rest of the line
//   KEY: VALUE                a part on one line
//   KEY:                      a part of the lines below, each indented by
//     a line                  two spaces (and read without them)
//   KEY: VALUE                a part may have both
//     a line
//
// KEY is the line up to its first ": " (or its last ':'), so KEY may hold
// spaces and quotes: `node 'a': no`.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::testing {

// One part of a case: its key, the value on its line, and the lines below.
struct CasePart {
  std::string key;
  std::string value;
  std::vector<std::string> lines;
  int line = 0;  // where the key stands in the file

  // The lines below, each ended by a newline.
  std::string Text() const;
};

// One case of a case file: the rest of its `case` line, and its parts in
// file order.
struct FileCase {
  std::string head;
  int line = 0;  // of the `case` line
  std::vector<CasePart> parts;

  // The first part with `key`, or null.
  const CasePart* Find(absl::string_view key) const;
};

// The cases of the case file at `path` (a runfiles path); an error names the
// file and the line at fault.
absl::StatusOr<std::vector<FileCase>> ReadCaseFile(const std::string& path);

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_CASE_FILE_H_
