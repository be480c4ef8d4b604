#ifndef ONNX_CONVERT_CLI_ARGS_H_
#define ONNX_CONVERT_CLI_ARGS_H_

// Command-line parsing shared by every command: the flags a command accepts
// (FlagSpec), parsing its arguments against them, and typed access to the
// values.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace onnxconvert::cli {

// A flag a command accepts: `--name` alone, or `--name VALUE` / `--name=VALUE`.
struct FlagSpec {
  absl::string_view name;        // without dashes, e.g. "json"
  bool takes_value = false;
  absl::string_view short_name;  // e.g. "o" for -o; "" for none
  // With takes_value: the value is optional and given only as
  // `--name=VALUE`; a bare `--name` has the value "".
  bool optional_value = false;
};

// A command line split into positional arguments and flags.
struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> flags;  // "" for bare flags

  // True if the flag was given.
  bool Has(absl::string_view name) const { return flags.contains(name); }
  // The flag's value, if given.
  std::optional<std::string> Get(absl::string_view name) const;
};

// Splits `args` by the flags in `specs`; an unknown flag, a missing value or
// a repeated flag is an InvalidArgument error naming it. `--` ends flags.
absl::StatusOr<ParsedArgs> ParseArgs(absl::Span<const std::string> args,
                                     absl::Span<const FlagSpec> specs);

// The word of `known` closest to `given` by edit distance, when close
// enough to be a misspelling of it (at most a third of its letters, and at
// most 3, differ); "" otherwise.
std::string ClosestWord(absl::string_view given, absl::Span<const std::string> known);

// The value of flag `name` as a non-negative integer; an InvalidArgument
// error naming the flag when it is missing or not one.
absl::StatusOr<int64_t> IntFlag(const ParsedArgs& args, absl::string_view name);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_ARGS_H_
