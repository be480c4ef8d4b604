#include "base/heap_trimmer.h"

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

}  // namespace
}  // namespace onnxconvert
