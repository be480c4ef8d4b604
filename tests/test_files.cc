#include "tests/test_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace onnxconvert::testing {
namespace fs = std::filesystem;

fs::path FreshTestDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(base != nullptr ? base : "/tmp") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return fs::canonical(dir);
}

void WriteTestFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadTestFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace onnxconvert::testing
