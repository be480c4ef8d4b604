#include "ir/wire.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::wire {
namespace {

// What a FieldReader read from a message: field number, wire type and
// payload (length-delimited) or value (varint), one string per field.
absl::StatusOr<std::vector<std::string>> ReadAll(absl::string_view message) {
  FieldReader reader(message);
  std::vector<std::string> fields;
  Field field;
  bool found;
  size_t end = 0;
  while (true) {
    absl::Status status = reader.Next(field, found);
    if (!status.ok()) return status;
    if (!found) break;
    if (field.whole.data() != message.data() + end || reader.offset() != end + field.whole.size()) {
      return absl::InternalError("a field does not follow the one before");
    }
    end = reader.offset();
    std::string value = field.wire_type == kLengthDelimited ? std::string(field.payload)
                                                            : std::to_string(field.varint);
    fields.push_back(std::to_string(field.number) + "/" + std::to_string(field.wire_type) + ":" +
                     value);
  }
  return fields;
}

struct LengthCase {
  const char* name;
  size_t length;
};

class FieldReaderLengthTest : public testing::TestWithParam<LengthCase> {};

// Names of every length, between varint fields, read back as protobuf wrote them.
TEST_P(FieldReaderLengthTest, ReadsWhatProtobufWrote) {
  const std::string payload(GetParam().length, 'x');
  onnx::TensorProto tensor;
  tensor.add_dims(7);
  tensor.set_name(payload);
  tensor.set_data_type(1);
  tensor.set_doc_string("d");
  std::string bytes = tensor.SerializeAsString();
  absl::StatusOr<std::vector<std::string>> fields = ReadAll(bytes);
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(*fields, (std::vector<std::string>{"1/0:7", "2/0:1", "8/2:" + payload, "12/2:d"}));
  // Cut inside the name (which starts at byte 4, after dims and data_type;
  // doc_string's 3 bytes follow it), the message is an error at the name.
  const size_t name_end = bytes.size() - 3;
  for (size_t kept : {size_t{0}, payload.size() / 2}) {
    if (kept >= payload.size()) continue;
    std::string truncated = bytes.substr(0, name_end - (payload.size() - kept));
    absl::StatusOr<std::vector<std::string>> cut = ReadAll(truncated);
    ASSERT_FALSE(cut.ok()) << "kept " << kept;
    EXPECT_EQ(cut.status().message(), "a truncated length-delimited field at byte 4");
  }
}

INSTANTIATE_TEST_SUITE_P(Lengths, FieldReaderLengthTest,
                         testing::Values(LengthCase{"empty", 0}, LengthCase{"one", 1},
                                         LengthCase{"one_byte_length", 127},
                                         LengthCase{"two_byte_length", 128},
                                         LengthCase{"largest_two_byte_length", 16383},
                                         LengthCase{"three_byte_length", 16384},
                                         LengthCase{"large", 100000}),
                         [](const testing::TestParamInfo<LengthCase>& info) {
                           return info.param.name;
                         });

// Varints of every size (one byte, the most common, is read apart), as
// protobuf wrote them.
TEST(FieldReaderTest, ReadsVarintsOfEverySize) {
  onnx::TensorProto tensor;
  for (int64_t dim : {int64_t{0}, int64_t{127}, int64_t{128}, int64_t{16384}, int64_t{-1}}) {
    tensor.add_dims(dim);
  }
  tensor.set_data_type(1);
  absl::StatusOr<std::vector<std::string>> fields = ReadAll(tensor.SerializeAsString());
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(*fields, (std::vector<std::string>{"1/0:0", "1/0:127", "1/0:128", "1/0:16384",
                                               "1/0:18446744073709551615", "2/0:1"}));
}

struct MalformedCase {
  const char* name;
  std::string bytes;
  const char* error;
};

class FieldReaderMalformedTest : public testing::TestWithParam<MalformedCase> {};

TEST_P(FieldReaderMalformedTest, SaysWhatAndWhere) {
  absl::StatusOr<std::vector<std::string>> fields = ReadAll(GetParam().bytes);
  ASSERT_FALSE(fields.ok());
  EXPECT_EQ(fields.status().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Bytes, FieldReaderMalformedTest,
    testing::Values(
        MalformedCase{"length_past_end", std::string("\x0a\x05" "abc", 5),
                      "a truncated length-delimited field at byte 0"},
        MalformedCase{"two_byte_length_past_end", std::string("\x08\x01\x0a\x80\x01xy", 7),
                      "a truncated length-delimited field at byte 2"},
        MalformedCase{"field_number_zero", std::string("\x02\x01z", 3),
                      "an invalid field number at byte 0"},
        MalformedCase{"group", std::string("\x0b\x0c", 2), "wire type 3 at byte 0"},
        MalformedCase{"truncated_tag", std::string("\x08\x01\x8a", 3),
                      "a truncated tag at byte 2"},
        MalformedCase{"varint_without_value", std::string("\x08\x01\x10", 3),
                      "a truncated varint at byte 2"},
        MalformedCase{"truncated_varint", std::string("\x08\x80", 2),
                      "a truncated varint at byte 0"}),
    [](const testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::wire
