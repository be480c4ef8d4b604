#ifndef ONNX_CONVERT_CLI_VERSION_H_
#define ONNX_CONVERT_CLI_VERSION_H_

// What `onnx-convert --version` says: the tool's version and commit, the
// ONNX spec it implements, the opset ranges of its domains and the newest
// IR version.

#include <string>

namespace onnxconvert::cli {

// The tool's own version.
inline constexpr char kToolVersion[] = "0.29.0";

// One line per fact, for people.
std::string VersionText();

// The same facts as one JSON object.
std::string VersionJson();

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_VERSION_H_
