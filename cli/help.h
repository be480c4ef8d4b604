#ifndef ONNX_CONVERT_CLI_HELP_H_
#define ONNX_CONVERT_CLI_HELP_H_

// What the command table does not hold itself: a line of help per option
// (an option means the same in every command taking it), the closest known
// word to a misspelt one, and shell completion scripts generated from the
// table.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "cli/args.h"

namespace onnxconvert::cli {

// One line of help for option `--name`, or "" when the table has none.
absl::string_view FlagHelp(absl::string_view name);

// A command as completion sees it.
struct CompletionEntry {
  std::string name;
  std::vector<FlagSpec> flags;
};

// The completion script for `shell` ("bash" or "zsh") of a program whose
// commands are `commands`; "" for another shell.
std::string CompletionScript(absl::string_view shell, absl::Span<const CompletionEntry> commands);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_HELP_H_
