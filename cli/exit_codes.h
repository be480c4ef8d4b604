#ifndef ONNX_CONVERT_CLI_EXIT_CODES_H_
#define ONNX_CONVERT_CLI_EXIT_CODES_H_

// The process exit codes of `onnx-convert`, shared by every command.

namespace onnxconvert::cli {

// Process exit codes shared by every command.
enum ExitCode : int {
  kExitOk = 0,
  kExitInvalidModel = 1,  // the model is invalid or cannot be converted
  kExitUsageOrIo = 2,     // bad command line, or a file cannot be read/written
  kExitInfrastructure = 4,  // batch: a server failed some models (try them again)
};

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_EXIT_CODES_H_
