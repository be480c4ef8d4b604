#include "base/json_writer.h"

#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

struct QuoteCase {
  std::string input;
  std::string expected;
};

class JsonQuoteTest : public ::testing::TestWithParam<QuoteCase> {};

TEST_P(JsonQuoteTest, Escapes) {
  EXPECT_EQ(JsonQuote(GetParam().input), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonQuoteTest,
    ::testing::Values(QuoteCase{"plain", "\"plain\""},
                      QuoteCase{"say \"hi\"", "\"say \\\"hi\\\"\""},
                      QuoteCase{"a\\b", "\"a\\\\b\""},
                      QuoteCase{"line\nbreak\ttab", "\"line\\nbreak\\ttab\""},
                      QuoteCase{std::string("nul\0x", 5), "\"nul\\u0000x\""},
                      QuoteCase{"caf\xc3\xa9", "\"caf\xc3\xa9\""},
                      QuoteCase{"bad\xff", "\"bad\\u00ff\""},
                      QuoteCase{"cut\xc3", "\"cut\\u00c3\""}));

TEST(JsonWriterTest, NestedContainersArePrettyPrinted) {
  JsonWriter json;
  json.BeginObject();
  json.Key("n").Int(-3);
  json.Key("list").BeginArray().Int(1).Bool(true).Null().EndArray();
  json.Key("empty").BeginObject().EndObject();
  json.Key("x").Double(0.1);
  json.EndObject();
  EXPECT_EQ(json.Finish(),
            "{\n  \"n\": -3,\n  \"list\": [\n    1,\n    true,\n    null\n  ],\n"
            "  \"empty\": {},\n  \"x\": 0.1\n}\n");
}

TEST(JsonWriterTest, NonFiniteDoublesAreNull) {
  JsonWriter json;
  json.BeginArray()
      .Double(std::numeric_limits<double>::infinity())
      .Double(std::numeric_limits<double>::quiet_NaN())
      .EndArray();
  EXPECT_EQ(json.Finish(), "[\n  null,\n  null\n]\n");
}

}  // namespace
}  // namespace onnxconvert
