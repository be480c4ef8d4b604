// onnx-convert: converts, inspects and checks ONNX models.

#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "ir/model_io.h"

int main(int argc, char** argv) {
  onnxconvert::QuietProtobufUtf8Logs();
  std::vector<std::string> args(argv + 1, argv + argc);
  return onnxconvert::cli::Run(args, std::cout, std::cerr);
}
