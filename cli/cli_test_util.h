#ifndef ONNX_CONVERT_CLI_CLI_TEST_UTIL_H_
#define ONNX_CONVERT_CLI_CLI_TEST_UTIL_H_

// Runs the CLI in process for the CLI tests and collects what it printed.

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace onnxconvert::cli {

// What one run of the CLI printed and returned.
struct Result {
  int exit_code;
  std::string out;
  std::string err;
};

// Runs the CLI in process with `args` (without the program name).
inline Result RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = Run(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_CLI_TEST_UTIL_H_
