#ifndef ONNX_CONVERT_SCHEMA_VERSION_H_
#define ONNX_CONVERT_SCHEMA_VERSION_H_

// What `onnx-convert --version` says: the tool's version and commit, the
// ONNX spec it implements, the opset ranges of its domains and the newest
// IR version.

#include <string>

namespace onnxconvert {

// The tool's own version.
inline constexpr char kToolVersion[] = "0.29.0";

// The version of the ONNX spec the registry, checker and inference follow.
inline constexpr char kOnnxSpecVersion[] = "1.22";

// The commit the binary was built from (a stamped build), or "unknown".
const char* BuildCommit();

// One line per fact, for people.
std::string VersionText();

// The same facts as one JSON object.
std::string VersionJson();

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_SCHEMA_VERSION_H_
