#include "tests/corpus.h"

#include <filesystem>

#include "gtest/gtest.h"

namespace onnxconvert::testing {
namespace {

// The corpus is found beside the checkout and holds all three suites.
TEST(CorpusTest, FindsEveryModel) {
  absl::StatusOr<std::vector<CorpusCase>> cases = ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_GT(cases->size(), 1000u);
  for (const CorpusCase& c : *cases) {
    EXPECT_TRUE(std::filesystem::exists(c.model_path)) << c.name;
  }
}

}  // namespace
}  // namespace onnxconvert::testing
