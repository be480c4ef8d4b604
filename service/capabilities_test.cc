#include "service/capabilities.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "schema/version.h"

namespace onnxconvert::service {
namespace {

const v1::AdapterInfo* Find(const v1::CapabilitiesResponse& caps, const std::string& op,
                            int from, int to) {
  for (const v1::AdapterInfo& info : caps.adapters()) {
    if (info.op() == op && info.from_version() == from && info.to_version() == to) return &info;
  }
  return nullptr;
}

TEST(CapabilitiesTest, OpsetRangesCoverTheSpec) {
  const v1::CapabilitiesResponse& caps = BuildCapabilities();
  auto onnx = std::find_if(caps.opsets().begin(), caps.opsets().end(),
                           [](const v1::OpsetRange& range) { return range.domain().empty(); });
  ASSERT_NE(onnx, caps.opsets().end());
  EXPECT_EQ(onnx->min_opset(), 1);
  EXPECT_EQ(onnx->max_opset(), 27);
  EXPECT_TRUE(std::any_of(caps.opsets().begin(), caps.opsets().end(),
                          [](const v1::OpsetRange& range) {
                            return range.domain() == "ai.onnx.ml" && range.max_opset() == 5;
                          }));
  EXPECT_EQ(caps.max_ir_version(), 13);
}

TEST(CapabilitiesTest, NameTheServersVersionCommitAndSpec) {
  const v1::CapabilitiesResponse& caps = BuildCapabilities();
  EXPECT_EQ(caps.tool_version(), kToolVersion);
  EXPECT_EQ(caps.onnx_spec(), "1.22");
  EXPECT_FALSE(caps.commit().empty());
  EXPECT_EQ(caps.commit(), BuildCommit());
}

TEST(CapabilitiesTest, OperatorVersionsAreListed) {
  const v1::CapabilitiesResponse& caps = BuildCapabilities();
  auto softmax = std::find_if(caps.operators().begin(), caps.operators().end(),
                              [](const v1::OperatorVersions& op) {
                                return op.domain().empty() && op.name() == "Softmax";
                              });
  ASSERT_NE(softmax, caps.operators().end());
  EXPECT_EQ(std::vector<int>(softmax->since_versions().begin(), softmax->since_versions().end()),
            (std::vector<int>{1, 11, 13}));
}

TEST(CapabilitiesTest, AdaptersSayHowEachChangeIsHandled) {
  const v1::CapabilitiesResponse& caps = BuildCapabilities();
  const v1::AdapterInfo* up = Find(caps, "Softmax", 11, 13);
  const v1::AdapterInfo* down = Find(caps, "Softmax", 13, 11);
  ASSERT_NE(up, nullptr);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(up->kind(), v1::AdapterInfo::REWRITE);
  EXPECT_NE(up->name().find("Softmax"), std::string::npos);
  const v1::AdapterInfo* relu = Find(caps, "Relu", 13, 14);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->kind(), v1::AdapterInfo::DERIVED);
  const v1::AdapterInfo* gelu = Find(caps, "Gelu", 20, 0);
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->kind(), v1::AdapterInfo::FUNCTION_EXPANSION);
  bool any_unsupported_with_reason = std::any_of(
      caps.adapters().begin(), caps.adapters().end(), [](const v1::AdapterInfo& info) {
        return info.kind() == v1::AdapterInfo::UNSUPPORTED && !info.reason().empty();
      });
  EXPECT_TRUE(any_unsupported_with_reason);
}

}  // namespace
}  // namespace onnxconvert::service
