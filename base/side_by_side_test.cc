#include "base/side_by_side.h"

#include <stdexcept>
#include <thread>

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

struct Case {
  const char* name;
  bool parallel;
  bool second_thread;  // whether `a` runs on a thread other than the caller's
};

class SideBySideTest : public ::testing::TestWithParam<Case> {};

TEST_P(SideBySideTest, RunsBothWhereAsked) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id a_on;
  std::thread::id b_on;
  RunSideBySide([&] { a_on = std::this_thread::get_id(); },
                [&] { b_on = std::this_thread::get_id(); }, GetParam().parallel);
  EXPECT_EQ(a_on != caller, GetParam().second_thread);
  EXPECT_EQ(b_on, caller);
}

TEST_P(SideBySideTest, AnExceptionComesBackOnceBothFinished) {
  bool b_finished = false;
  EXPECT_THROW(RunSideBySide([] { throw std::runtime_error("a failed"); },
                             [&] { b_finished = true; }, GetParam().parallel),
               std::runtime_error);
  EXPECT_TRUE(b_finished || !GetParam().parallel);
}

INSTANTIATE_TEST_SUITE_P(Cases, SideBySideTest,
                         ::testing::Values(Case{"parallel", true, true},
                                           Case{"one_after_the_other", false, false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace onnxconvert
