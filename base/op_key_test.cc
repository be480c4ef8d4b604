#include "base/op_key.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

struct KeyCase {
  std::string domain;
  std::string op;
  std::string key;
};

const std::vector<KeyCase>& KeyCases() {
  static const std::vector<KeyCase> cases = {
      {"", "Relu", "\x1fRelu"},
      {"ai.onnx.ml", "LabelEncoder", "ai.onnx.ml\x1fLabelEncoder"},
      {"com.example", "", "com.example\x1f"},
  };
  return cases;
}

TEST(OpKeyTest, JoinsDomainAndOpWithTheSeparator) {
  for (const KeyCase& c : KeyCases()) {
    EXPECT_EQ(OpKey(c.domain, c.op), c.key) << c.domain << "." << c.op;
  }
}

TEST(OpKeyTest, DistinguishesSplitsOfTheSameCharacters) {
  EXPECT_NE(OpKey("a", "bc"), OpKey("ab", "c"));
}

TEST(OpKeyInTest, BuildsTheSameKeyInTheBufferOrTheSpill) {
  for (size_t buffer_size : {0, 4, 96}) {
    for (const KeyCase& c : KeyCases()) {
      std::vector<char> buffer(buffer_size);
      std::string spill;
      absl::string_view key = OpKeyIn(c.domain, c.op, absl::MakeSpan(buffer), spill);
      EXPECT_EQ(key, c.key) << c.domain << "." << c.op << " in " << buffer_size;
      bool fits = c.key.size() <= buffer_size;
      EXPECT_EQ(key.data() == buffer.data(), fits) << c.domain << "." << c.op;
    }
  }
}

TEST(OpKeyInTest, TakesAnEmptyDomainThatViewsNoStorage) {
  char buffer[8];
  std::string spill;
  EXPECT_EQ(OpKeyIn(absl::string_view(), "Add", absl::MakeSpan(buffer), spill), "\x1f" "Add");
}

}  // namespace
}  // namespace onnxconvert
