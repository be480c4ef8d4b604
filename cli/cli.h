#ifndef ONNX_CONVERT_CLI_CLI_H_
#define ONNX_CONVERT_CLI_CLI_H_

// Entry point of the `onnx-convert` command line (main.cc and the CLI tests
// call Run) and the table of its commands.

#include <ostream>
#include <string>
#include <vector>

#include "cli/exit_codes.h"

namespace onnxconvert::cli {

// Runs `onnx-convert` with `args` (without the program name), writing results
// to `out` and one-line errors to `err`; returns the process exit code.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// A command of the table that drives usage, parsing, help and completion.
struct CommandInfo {
  std::string name;
  std::vector<std::string> options;  // "--name" of each option
};

// Every command, in the order --help lists them.
std::vector<CommandInfo> CommandTable();

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_CLI_H_
