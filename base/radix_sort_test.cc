#include "base/radix_sort.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

struct SortCase {
  const char* name;
  std::vector<uint64_t> values;
};

std::vector<uint64_t> Random(size_t count, uint64_t mask) {
  std::mt19937_64 random(count);
  std::vector<uint64_t> values(count);
  for (uint64_t& value : values) value = random() & mask;
  return values;
}

TEST(RadixSortTest, SortsAsStdSort) {
  std::vector<uint64_t> descending(10000);
  for (size_t i = 0; i < descending.size(); ++i) descending[i] = descending.size() - i;
  const std::vector<SortCase> cases = {
      {"empty", {}},
      {"few, by comparison", {3, 1, 2, ~uint64_t{0}, 0}},
      {"random 64-bit", Random(100000, ~uint64_t{0})},
      {"high bits only", Random(50000, uint64_t{0xffff} << 48)},
      {"low bits only, many repeated", Random(50000, 0xff)},
      {"descending", descending},
      {"all equal", std::vector<uint64_t>(5000, 42)},
  };
  for (const SortCase& c : cases) {
    std::vector<uint64_t> expected = c.values;
    std::sort(expected.begin(), expected.end());
    std::vector<uint64_t> sorted = c.values;
    RadixSort(sorted);
    EXPECT_EQ(sorted, expected) << c.name;
  }
}

}  // namespace
}  // namespace onnxconvert
