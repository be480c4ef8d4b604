#include "base/alongside.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

TEST(AlongsideTest, OnThreadRunsOnAnotherThreadAndGivesItsResult) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  Alongside<std::string> work(
      [&] {
        ran_on = std::this_thread::get_id();
        return std::string("done");
      },
      /*on_thread=*/true);
  EXPECT_TRUE(work.on_thread());
  EXPECT_EQ(work.Join(), "done");
  EXPECT_NE(ran_on, caller);
}

TEST(AlongsideTest, NotOnThreadRunsAtJoinOnTheCallersThread) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  int runs = 0;
  Alongside<int> work(
      [&] {
        ran_on = std::this_thread::get_id();
        return ++runs;
      },
      /*on_thread=*/false);
  EXPECT_FALSE(work.on_thread());
  EXPECT_EQ(runs, 0);  // not before Join
  EXPECT_EQ(work.Join(), 1);
  EXPECT_EQ(ran_on, caller);
}

TEST(AlongsideTest, DestroyedUnjoinedWaitsForTheWork) {
  std::atomic<bool> finished = false;
  {
    Alongside<int> work(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          finished = true;
          return 0;
        },
        /*on_thread=*/true);
  }
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace onnxconvert
