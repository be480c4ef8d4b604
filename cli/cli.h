#ifndef ONNX_CONVERT_CLI_CLI_H_
#define ONNX_CONVERT_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace onnxconvert::cli {

// Process exit codes shared by every command.
enum ExitCode : int {
  kExitOk = 0,
  kExitInvalidModel = 1,  // the model is invalid or cannot be converted
  kExitUsageOrIo = 2,     // bad command line, or a file cannot be read/written
};

// Runs `onnx-convert` with `args` (without the program name), writing results
// to `out` and one-line errors to `err`; returns the process exit code.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_CLI_H_
