#include "base/heap_trimmer.h"

#include <cstring>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/eventually.h"

namespace onnxconvert {
namespace {

using onnxconvert::testing::Eventually;

TEST(IdleHeapTrimmerTest, TrimsOnceAfterIdleAndNotWithoutIt) {
  IdleHeapTrimmer trimmer(absl::ZeroDuration());
  EXPECT_EQ(trimmer.trims(), 0);
  trimmer.Idle();
  EXPECT_TRUE(Eventually([&] { return trimmer.trims() == 1; }));
  trimmer.Idle();
  EXPECT_TRUE(Eventually([&] { return trimmer.trims() == 2; }));
}

TEST(PeriodicHeapTrimmerTest, TrimsOnlyOnceResidentMemoryGrewBeyondTheSlack) {
  PeriodicHeapTrimmer trimmer(/*every_ticks=*/2, /*slack_bytes=*/size_t{8} << 20);
  trimmer.Tick();
  trimmer.Tick();
  EXPECT_EQ(trimmer.trims(), 0);  // nothing grew
  // 64 MB in blocks below the heap's mmap threshold, touched.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 2048; ++i) {
    blocks.emplace_back(new char[32 << 10]);
    std::memset(blocks.back().get(), 1, 32 << 10);
  }
  trimmer.Tick();
  EXPECT_EQ(trimmer.trims(), 0);  // not the tick that looks
  trimmer.Tick();
  EXPECT_EQ(trimmer.trims(), 1);
  trimmer.Tick();
  trimmer.Tick();
  EXPECT_EQ(trimmer.trims(), 1);  // no further growth since
}

}  // namespace
}  // namespace onnxconvert
