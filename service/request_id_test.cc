#include "service/request_id.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/request_log.h"

namespace onnxconvert::service {
namespace {

TEST(RequestIdTest, TakesPlainClientIdsOnly) {
  struct Case {
    const char* sent;  // null: no x-request-id
    const char* taken;
  };
  std::string too_long(kMaxRequestIdLength + 1, 'a');
  std::string longest(kMaxRequestIdLength, 'a');
  for (const Case& c : {Case{nullptr, ""}, Case{"job-42", "job-42"}, Case{"a.b_c-9", "a.b_c-9"},
                        Case{"", ""}, Case{"has space", ""}, Case{"quote\"", ""},
                        Case{too_long.c_str(), ""}, Case{longest.c_str(), longest.c_str()}}) {
    std::multimap<grpc::string_ref, grpc::string_ref> metadata;
    metadata.emplace("other", "x");
    if (c.sent != nullptr) metadata.emplace(kRequestIdMetadata, c.sent);
    EXPECT_EQ(ClientRequestId(metadata), c.taken) << (c.sent ? c.sent : "(none)");
  }
}

TEST(RequestIdTest, GeneratedIdsAreSixteenHexDigitsAndDiffer) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    std::string id = NewRequestId();
    ASSERT_EQ(id.size(), 16u) << id;
    for (char c : id) EXPECT_TRUE(absl::ascii_isxdigit(c) && !absl::ascii_isupper(c)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 100u);
}

TEST(RequestIdTest, ErrorsNameTheRequestOnce) {
  struct Case {
    const char* message;
    const char* id;
    const char* expected;
  };
  for (const Case& c : {
           Case{"model.onnx: bad", "job-1", "model.onnx: bad [request job-1]"},
           Case{"request job-1: out of memory", "job-1", "request job-1: out of memory"},
           Case{"request job-10: x", "job-1", "request job-10: x [request job-1]"},
           Case{"", "abc", " [request abc]"},
       }) {
    EXPECT_EQ(WithRequestId(c.message, c.id), c.expected) << c.message;
  }
}

TEST(RequestIdTest, StripRequestIdUndoesWithRequestId) {
  struct Case {
    const char* message;
    const char* stripped;
  };
  for (const Case& c : {
           Case{"model.onnx: bad [request job-1]", "model.onnx: bad"},
           Case{"model.onnx: bad", "model.onnx: bad"},
           Case{"x [request 0123456789abcdef]", "x"},
           Case{"x [request a b]", "x [request a b]"},
           Case{"x [request ]", "x [request ]"},
           Case{"[request a] y", "[request a] y"},
           Case{"", ""},
       }) {
    EXPECT_EQ(StripRequestId(c.message), c.stripped) << c.message;
  }
  EXPECT_EQ(StripRequestId(WithRequestId("a: b", "job-3")), "a: b");
}

// The JSON line parsed (protobuf's JSON parser), or an empty Struct.
google::protobuf::Struct Parse(const std::string& line) {
  google::protobuf::Struct parsed;
  auto status = google::protobuf::util::JsonStringToMessage(line, &parsed);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << line;
  return parsed;
}

TEST(RequestLogTest, JsonLineHasTheCallsFieldsAndParses) {
  RequestLogEntry entry;
  entry.time = absl::FromUnixMillis(1764162000123);
  entry.id = "job-7";
  entry.method = "Convert";
  entry.code = "INVALID_ARGUMENT";
  entry.milliseconds = 12.5;
  entry.bytes_in = 1563;
  entry.bytes_out = 0;
  entry.model_name = "m\"odel\n.onnx";
  entry.to_opset = 17;
  std::string error = "bad \x01 byte \xff and \xE2\x80\xA6 [request job-7]";
  entry.error = error;
  std::string line = JsonLogLine(entry);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  google::protobuf::Struct parsed = Parse(line);
  const auto& fields = parsed.fields();
  EXPECT_EQ(fields.at("time").string_value(), "2025-11-26T13:00:00.123Z");
  EXPECT_EQ(fields.at("id").string_value(), "job-7");
  EXPECT_EQ(fields.at("method").string_value(), "Convert");
  EXPECT_EQ(fields.at("code").string_value(), "INVALID_ARGUMENT");
  EXPECT_DOUBLE_EQ(fields.at("ms").number_value(), 12.5);
  EXPECT_EQ(fields.at("bytes_in").number_value(), 1563);
  EXPECT_EQ(fields.at("bytes_out").number_value(), 0);
  EXPECT_EQ(fields.at("model").string_value(), "m\"odel\n.onnx");
  EXPECT_EQ(fields.count("from_opset"), 0u);  // not known
  EXPECT_EQ(fields.at("to_opset").number_value(), 17);
  EXPECT_EQ(fields.at("error").string_value(),
            "bad \x01 byte \xEF\xBF\xBD and \xE2\x80\xA6 [request job-7]");
}

TEST(RequestLogTest, SuccessHasNoErrorNorUnknownFields) {
  RequestLogEntry entry;
  entry.id = "r";
  entry.method = "Capabilities";
  entry.code = "OK";
  google::protobuf::Struct parsed = Parse(JsonLogLine(entry));
  for (const char* absent : {"error", "model", "from_opset", "to_opset"}) {
    EXPECT_EQ(parsed.fields().count(absent), 0u) << absent;
  }
  EXPECT_EQ(parsed.fields().at("code").string_value(), "OK");
}

}  // namespace
}  // namespace onnxconvert::service
