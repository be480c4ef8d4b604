#include "service/transport_counts.h"

#include "gtest/gtest.h"

namespace onnxconvert::service {
namespace {

TEST(TransportCountsTest, ChannelzServerListsParse) {
  struct Case {
    const char* name;
    const char* json;
    std::optional<int64_t> started;
    int64_t failed;
  };
  const Case kCases[] = {
      {"one server",
       R"({"end":true,"server":[{"data":{"callsFailed":"2","callsStarted":"4"},)"
       R"("ref":{"serverId":"1"}}]})",
       4, 2},
      {"two servers summed",
       R"({"server":[{"data":{"callsStarted":"3"},"ref":{"serverId":"1"}},)"
       R"({"data":{"callsFailed":"1","callsStarted":"5"},"ref":{"serverId":"7"}}]})",
       8, 1},
      {"no calls yet (zero counts left out)", R"({"server":[{"data":{},"ref":{"serverId":"1"}}]})",
       0, 0},
      {"no server", R"({"end":true})", std::nullopt, 0},
  };
  for (const Case& c : kCases) {
    std::optional<TransportCalls> calls = ParseChannelzServers(c.json);
    ASSERT_EQ(calls.has_value(), c.started.has_value()) << c.name;
    if (!calls) continue;
    EXPECT_EQ(calls->started, *c.started) << c.name;
    EXPECT_EQ(calls->failed, c.failed) << c.name;
  }
}

}  // namespace
}  // namespace onnxconvert::service
