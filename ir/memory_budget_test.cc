#include "ir/memory_budget.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {
namespace {

TEST(MemoryBudgetTest, CountsWhatTheThreadHoldsAndRefusesPastTheLimit) {
  if (!MemoryBudget::Enforced()) GTEST_SKIP() << "a sanitizer's operator new runs";
  MemoryBudget budget(1 << 20);
  auto small = std::make_unique<std::vector<char>>(100'000);
  EXPECT_GE(budget.used(), 100'000);
  EXPECT_THROW(std::vector<char>(2 << 20), MemoryBudgetExceeded);
  EXPECT_TRUE(budget.exceeded());
  small.reset();
  EXPECT_LT(budget.used(), 1000);
  EXPECT_GE(budget.peak(), 100'000);
  // Refusing one allocation does not refuse the next that fits.
  EXPECT_NO_THROW(std::vector<char>(500'000));
}

TEST(MemoryBudgetTest, EndsWithItsScopeAndRestoresTheOuterOne) {
  if (!MemoryBudget::Enforced()) GTEST_SKIP() << "a sanitizer's operator new runs";
  MemoryBudget outer(64 << 20);
  {
    MemoryBudget inner(1 << 10);
    EXPECT_THROW(std::string(1 << 20, 'x'), MemoryBudgetExceeded);
  }
  EXPECT_NO_THROW(std::string(1 << 20, 'x'));
}

// A model of one string tensor of 3 M empty strings (6 bytes each on the
// wire, ~40 parsed): its parse fails with the budget's exception instead of
// taking memory without bound, and the bytes it took are given back.
TEST(MemoryBudgetTest, BoundsTheParseOfManyEmptyStrings) {
  if (!MemoryBudget::Enforced()) GTEST_SKIP() << "a sanitizer's operator new runs";
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::TensorProto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name("strings");
  tensor->set_data_type(onnx::TensorProto::STRING);
  tensor->add_dims(3'000'000);
  for (int i = 0; i < 3'000'000; ++i) tensor->add_string_data("");
  const std::string bytes = model.SerializeAsString();
  model.Clear();
  const int64_t limit = BudgetFor(static_cast<int64_t>(bytes.size()), 8, 0);
  bool refused = false;
  try {
    MemoryBudget budget(limit);
    absl::StatusOr<onnx::ModelProto> parsed = ParseModel(bytes, "strings.onnx");
  } catch (const MemoryBudgetExceeded&) {
    refused = true;
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(BudgetError("strings.onnx", limit).code(), absl::StatusCode::kResourceExhausted);
}

TEST(MemoryBudgetTest, BudgetForFileCountsTheFilesBytes) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/budget_model.onnx";
  std::ofstream(path, std::ios::binary) << std::string(1000, 'x');
  EXPECT_EQ(BudgetForFile(path), BudgetFor(1000));
  EXPECT_EQ(BudgetForFile(path + ".absent"), BudgetFor(0));
}

TEST(MemoryBudgetTest, BudgetForSaturates) {
  EXPECT_EQ(BudgetFor(10, 32, 5), 325);
  EXPECT_EQ(BudgetFor(int64_t{1} << 62, 32, 5), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace onnxconvert
