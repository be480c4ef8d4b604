#include "base/radix_sort.h"

#include <algorithm>
#include <array>
#include <cstddef>

namespace onnxconvert {
namespace {

// Bits per pass: counts of 2^11 fit the processor's first cache.
constexpr int kDigitBits = 11;
constexpr int kPasses = (64 + kDigitBits - 1) / kDigitBits;
constexpr size_t kBuckets = size_t{1} << kDigitBits;
// Fewer values are sorted by comparison.
constexpr size_t kMinValues = 4096;

size_t DigitOf(uint64_t value, int pass) {
  return static_cast<size_t>(value >> (pass * kDigitBits)) & (kBuckets - 1);
}

}  // namespace

void RadixSort(std::vector<uint64_t>& values) {
  if (values.size() < kMinValues) {
    std::sort(values.begin(), values.end());
    return;
  }
  std::vector<std::array<size_t, kBuckets>> counts(kPasses);
  for (auto& count : counts) count.fill(0);
  for (uint64_t value : values) {
    for (int pass = 0; pass < kPasses; ++pass) ++counts[pass][DigitOf(value, pass)];
  }
  std::vector<uint64_t> scratch(values.size());
  for (int pass = 0; pass < kPasses; ++pass) {
    std::array<size_t, kBuckets>& count = counts[pass];
    // A digit every value shares leaves the order as it is.
    if (std::find(count.begin(), count.end(), values.size()) != count.end()) continue;
    size_t start = 0;
    for (size_t& bucket : count) {
      size_t size = bucket;
      bucket = start;
      start += size;
    }
    for (uint64_t value : values) scratch[count[DigitOf(value, pass)]++] = value;
    values.swap(scratch);
  }
}

}  // namespace onnxconvert
