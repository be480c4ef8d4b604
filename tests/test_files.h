#ifndef ONNX_CONVERT_TESTS_TEST_FILES_H_
#define ONNX_CONVERT_TESTS_TEST_FILES_H_

// Test files under $TEST_TMPDIR: fresh directories, and writing and reading
// whole files.

#include <filesystem>
#include <string>

namespace onnxconvert::testing {

// An empty directory $TEST_TMPDIR/`name` (or /tmp/`name`), created afresh,
// as a canonical path. `name` may contain slashes.
std::filesystem::path FreshTestDir(const std::string& name);

// Writes `bytes` to `path`, replacing it.
void WriteTestFile(const std::filesystem::path& path, const std::string& bytes);

// The whole content of `path` ("" if it cannot be read).
std::string ReadTestFile(const std::filesystem::path& path);

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_TEST_FILES_H_
