#include "service/worker.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "service/testing/cancel_later.h"

namespace onnxconvert::service {
namespace {

// Work that returns 1 once `release` is notified.
std::function<absl::StatusOr<int>()> WorkUntil(std::shared_ptr<absl::Notification> release) {
  return [release] {
    release->WaitForNotification();
    return 1;
  };
}

TEST(WorkSlotsTest, RefusesPastCapacityAndFreesOnRelease) {
  std::shared_ptr<WorkSlots> slots = WorkSlots::Create(2);
  auto first = slots->TryAcquire();
  auto second = slots->TryAcquire();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(slots->TryAcquire(), nullptr);
  EXPECT_EQ(slots->in_use(), 2);
  first.reset();
  EXPECT_EQ(slots->in_use(), 1);
  EXPECT_NE(slots->TryAcquire(), nullptr);
  EXPECT_FALSE(slots->WaitIdle(absl::Now() + absl::Milliseconds(10)));
  second.reset();
  EXPECT_TRUE(slots->WaitIdle(absl::Now()));
}

TEST(WorkSlotsTest, ZeroCapacityMeansNoLimit) {
  std::shared_ptr<WorkSlots> slots = WorkSlots::Create(0);
  std::vector<std::shared_ptr<WorkSlots::Slot>> held;
  for (int i = 0; i < 100; ++i) held.push_back(slots->TryAcquire());
  EXPECT_NE(held.back(), nullptr);
}

TEST(RunAbandonableTest, ReturnsTheWorksResult) {
  std::shared_ptr<WorkSlots> slots = WorkSlots::Create(1);
  std::function<absl::StatusOr<int>()> work = [] { return 42; };
  absl::StatusOr<int> result = RunAbandonable(work, slots->TryAcquire(), WaitLimits());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, 42);
  EXPECT_TRUE(slots->WaitIdle(absl::Now() + absl::Seconds(5)));
}

TEST(RunAbandonableTest, SlotIsFreeOnceTheResultIsBack) {
  std::shared_ptr<WorkSlots> slots = WorkSlots::Create(1);
  for (int i = 0; i < 200; ++i) {
    std::function<absl::StatusOr<int>()> work = [i] { return i; };
    std::shared_ptr<WorkSlots::Slot> slot = slots->TryAcquire();
    ASSERT_NE(slot, nullptr) << "call " << i;
    ASSERT_TRUE(RunAbandonable(work, std::move(slot), WaitLimits()).ok());
  }
}

TEST(RunAbandonableTest, CancellationReturnsAtOnceWhileTheWorkKeepsItsSlot) {
  std::shared_ptr<WorkSlots> slots = WorkSlots::Create(1);
  auto release = std::make_shared<absl::Notification>();
  std::function<absl::StatusOr<int>()> work = WorkUntil(release);
  absl::StatusOr<int> result;
  {
    testing::CancelLater client(std::chrono::milliseconds(30));
    result = RunAbandonable(work, slots->TryAcquire(), client.limits());
  }
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  // The abandoned work still runs and still counts.
  EXPECT_EQ(slots->in_use(), 1);
  EXPECT_EQ(slots->TryAcquire(), nullptr);
  release->Notify();
  EXPECT_TRUE(slots->WaitIdle(absl::Now() + absl::Seconds(5)));
}

TEST(RunAbandonableTest, DeadlineReturnsDeadlineExceeded) {
  std::shared_ptr<WorkSlots> slots = WorkSlots::Create(1);
  auto release = std::make_shared<absl::Notification>();
  std::function<absl::StatusOr<int>()> work = WorkUntil(release);
  WaitLimits limits;
  limits.deadline = absl::Now() + absl::Milliseconds(20);
  absl::Time start = absl::Now();
  absl::StatusOr<int> result = RunAbandonable(work, slots->TryAcquire(), limits);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  release->Notify();
  EXPECT_TRUE(slots->WaitIdle(absl::Now() + absl::Seconds(5)));
}

}  // namespace
}  // namespace onnxconvert::service
