// Every model of the ONNX backend test corpus loads and serializes back to
// the same bytes.

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert {
namespace {

TEST(CorpusRoundTripTest, EveryModelIsByteIdentical) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  int checked = 0;
  for (const testing::CorpusCase& c : *cases) {
    std::ifstream in(c.model_path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << c.name << ": " << loaded.status();
    EXPECT_EQ(loaded->model.SerializeAsString(), bytes.str()) << c.name;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases->size()));
}

}  // namespace
}  // namespace onnxconvert
