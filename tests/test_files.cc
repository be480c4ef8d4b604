#include "tests/test_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace onnxconvert::testing {
namespace fs = std::filesystem;

fs::path FreshTestDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(base != nullptr ? base : "/tmp") / name;
  // Another thread may still be removing a folder under `dir` (a server of
  // the test before, cleaning its stream files): a walk that finds an entry
  // gone fails with ENOENT; walk again.
  std::error_code ec;
  for (int attempt = 0; attempt < 20; ++attempt) {
    ec.clear();
    fs::remove_all(dir, ec);
    if (!ec) break;
  }
  if (ec) throw fs::filesystem_error("cannot empty the test folder", dir, ec);
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
