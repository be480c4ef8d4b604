#include "service/admission.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {


TEST(ByteBudgetTest, ChargesFitOrAreRefused) {
  struct Case {
    const char* name;
    int64_t capacity;
    bool lone_may_exceed;
    std::vector<int64_t> held;  // charges already taken
    int64_t asked;
    bool admitted;
  };
  const Case kCases[] = {
      {"fits", 100, true, {40}, 60, true},
      {"one byte over", 100, true, {40}, 61, false},
      {"lone charge past the capacity", 100, true, {}, 500, true},
      {"lone charge past a hard capacity", 100, false, {}, 500, false},
      {"no limit", 0, false, {1000}, 1 << 30, true},
  };
  for (const Case& c : kCases) {
    std::shared_ptr<ByteBudget> budget = ByteBudget::Create(c.capacity, c.lone_may_exceed);
    std::vector<std::shared_ptr<ByteBudget::Charge>> held;
    for (int64_t bytes : c.held) held.push_back(budget->TryCharge(bytes));
    std::shared_ptr<ByteBudget::Charge> charge = budget->TryCharge(c.asked);
    EXPECT_EQ(charge != nullptr, c.admitted) << c.name;
    int64_t expected_in_use = c.admitted ? c.asked : 0;
    for (int64_t bytes : c.held) expected_in_use += bytes;
    EXPECT_EQ(budget->in_use(), expected_in_use) << c.name;
  }
}

TEST(ByteBudgetTest, ChargesGrowWithinTheCapacityAndAreGivenBackWhenDropped) {
  std::shared_ptr<ByteBudget> budget = ByteBudget::Create(100, /*lone_charge_may_exceed=*/false);
  std::shared_ptr<ByteBudget::Charge> first = budget->TryCharge(10);
  std::shared_ptr<ByteBudget::Charge> second = budget->TryCharge(0);
  EXPECT_TRUE(second->Grow(50));
  EXPECT_FALSE(first->Grow(41));  // 10 + 50 + 41 > 100
  EXPECT_EQ(first->bytes(), 10);
  EXPECT_TRUE(first->Grow(40));
  EXPECT_EQ(budget->in_use(), 100);
  second.reset();
  EXPECT_EQ(budget->in_use(), 50);
  first.reset();
  EXPECT_EQ(budget->in_use(), 0);
}

TEST(ByteBudgetTest, PeakIsTheMostChargedAtOnce) {
  std::shared_ptr<ByteBudget> budget = ByteBudget::Create(100, /*lone_charge_may_exceed=*/false);
  std::shared_ptr<ByteBudget::Charge> first = budget->TryCharge(30);
  std::shared_ptr<ByteBudget::Charge> second = budget->TryCharge(50);
  EXPECT_EQ(budget->TryCharge(30), nullptr);  // refused: not counted
  second.reset();
  EXPECT_TRUE(first->Grow(20));
  EXPECT_EQ(budget->in_use(), 50);
  EXPECT_EQ(budget->peak(), 80);
}

TEST(ModelBytesTest, DeclaredSizesAreByteCounts) {
  struct Case {
    const char* value;
    std::optional<int64_t> bytes;  // none: InvalidArgument
  };
  const Case kCases[] = {
      {"0", 0},
      {"492553", 492553},
      {"1073741824", int64_t{1} << 30},
      {"-1", std::nullopt},
      {"many", std::nullopt},
      {"", std::nullopt},
      {"99999999999999999999", std::nullopt},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<int64_t> bytes = ParseModelBytes(c.value);
    EXPECT_EQ(bytes.ok(), c.bytes.has_value()) << c.value;
    if (bytes.ok() && c.bytes) {
      EXPECT_EQ(*bytes, *c.bytes) << c.value;
    }
    if (!bytes.ok()) {
      EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument) << c.value;
      EXPECT_NE(bytes.status().message().find(kModelBytesMetadata), std::string::npos)
          << bytes.status();
    }
  }
}

TEST(ByteBudgetTest, LoneChargeMayGrowPastTheCapacityOnlyWhileAlone) {
  std::shared_ptr<ByteBudget> budget = ByteBudget::Create(100, /*lone_charge_may_exceed=*/true);
  std::shared_ptr<ByteBudget::Charge> lone = budget->TryCharge(10);
  EXPECT_TRUE(lone->Grow(200));
  EXPECT_EQ(budget->TryCharge(1), nullptr);
  std::shared_ptr<ByteBudget> shared = ByteBudget::Create(100, true);
  std::shared_ptr<ByteBudget::Charge> a = shared->TryCharge(10);
  std::shared_ptr<ByteBudget::Charge> b = shared->TryCharge(10);
  EXPECT_FALSE(a->Grow(200));
}

TEST(AdmissionTest, ModelCallChargeIsFourTimesTheModelPlusTwoMiB) {
  struct Case {
    int64_t model_bytes;
    int64_t charge;
  };
  const Case kCases[] = {
      {0, 2 << 20},
      {1000, 4000 + (2 << 20)},
      // The 10 k-node chain of bench/service_memory.sh: within issue 21's
      // 4 x model + 2 MB per call.
      {492553, 4 * 492553 + (2 << 20)},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(ModelCallCharge(c.model_bytes), c.charge) << c.model_bytes;
  }
}

// AddressSanitizer replaces glibc's malloc with its own, which takes no
// mallopt: the limit applies to the builds that ship.
#if defined(__SANITIZE_ADDRESS__)
#define OC_GLIBC_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OC_GLIBC_MALLOC 0
#endif
#endif
#ifndef OC_GLIBC_MALLOC
#define OC_GLIBC_MALLOC 1
#endif

TEST(AdmissionTest, MallocTakesAnArenaLimit) {
  if (!OC_GLIBC_MALLOC) GTEST_SKIP() << "the sanitizer's allocator takes no mallopt";
  for (int arenas : {0, 2, 1}) EXPECT_TRUE(LimitMallocArenas(arenas)) << arenas;
}

TEST(AdmissionTest, CgroupLimitsParse) {
  struct Case {
    const char* text;
    std::optional<int64_t> limit;
  };
  const Case kCases[] = {
      {"536870912\n", 536870912},
      {"max\n", std::nullopt},                   // v2: no limit
      {"9223372036854771712\n", std::nullopt},  // v1: no limit
      {"", std::nullopt},
      {"garbage", std::nullopt},
  };
  for (const Case& c : kCases) EXPECT_EQ(ParseCgroupMemoryLimit(c.text), c.limit) << c.text;
}

TEST(AdmissionTest, AvailableMemoryIsTheCgroupLimitV2ThenV1ElseTheMachines) {
  std::filesystem::path none = onnxconvert::testing::FreshTestDir("cgroup_none");
  int64_t machine = AvailableMemoryBytes(none.string());
  EXPECT_GT(machine, 0);
  std::filesystem::path v2 = onnxconvert::testing::FreshTestDir("cgroup_v2");
  onnxconvert::testing::WriteTestFile(v2 / "memory.max", "268435456\n");
  EXPECT_EQ(AvailableMemoryBytes(v2.string()), std::min<int64_t>(268435456, machine));
  std::filesystem::path v1 = onnxconvert::testing::FreshTestDir("cgroup_v1");
  std::filesystem::create_directories(v1 / "memory");
  onnxconvert::testing::WriteTestFile(v1 / "memory" / "memory.limit_in_bytes", "134217728\n");
  EXPECT_EQ(AvailableMemoryBytes(v1.string()), std::min<int64_t>(134217728, machine));
  std::filesystem::path unlimited = onnxconvert::testing::FreshTestDir("cgroup_max");
  onnxconvert::testing::WriteTestFile(unlimited / "memory.max", "max\n");
  EXPECT_EQ(AvailableMemoryBytes(unlimited.string()), machine);
}

}  // namespace
}  // namespace onnxconvert::service
