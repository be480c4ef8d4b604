#ifndef ONNX_CONVERT_IR_WIRE_H_
#define ONNX_CONVERT_IR_WIRE_H_

// Reading and writing the protobuf wire format directly, for code that
// works on a serialized model without parsing all of it.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message_lite.h"

namespace onnxconvert::wire {

// Wire types of the protobuf encoding.
enum WireType : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field of a serialized message.
struct Field {
  uint32_t number = 0;
  int wire_type = 0;
  absl::string_view whole;    // the field as encoded: tag, length and payload
  absl::string_view payload;  // length-delimited: the bytes; else empty
  uint64_t varint = 0;        // varint fields: the value
};

// Reads the fields of one serialized message in order.
class FieldReader {
 public:
  explicit FieldReader(absl::string_view message) : data_(message) {}

  // Reads the next field into `field`: true if there was one, false at the
  // end; an error (naming the byte offset) where the bytes are not a
  // well-formed message. Groups (wire types 3 and 4) are errors.
  absl::Status Next(Field& field, bool& found) {
    if (ReadShortLengthDelimited(field) || ReadSmallVarint(field)) {
      found = true;
      return absl::OkStatus();
    }
    return NextSlowly(field, found);
  }
  // The offset of the next field in the message.
  size_t offset() const { return offset_; }

 private:
  // Reads the next field when it is the most common kind, a length-delimited
  // field of a one-byte tag and a length under 16 KiB that fits; false
  // (nothing read) otherwise.
  bool ReadShortLengthDelimited(Field& field) {
    if (offset_ + 3 > data_.size()) return false;
    const size_t left = data_.size() - offset_;
    const auto* at = reinterpret_cast<const uint8_t*>(data_.data() + offset_);
    const uint8_t tag = at[0];
    if (tag >= 0x80 || (tag & 7) != kLengthDelimited || tag < 8) return false;
    size_t length = at[1];
    size_t header = 2;
    if (length >= 0x80) {
      if (at[2] >= 0x80) return false;
      length = (length & 0x7f) | (size_t{at[2]} << 7);
      header = 3;
    }
    if (length > left - header) return false;
    field.number = tag >> 3;
    field.wire_type = kLengthDelimited;
    field.varint = 0;
    field.whole = absl::string_view(data_.data() + offset_, header + length);
    field.payload = absl::string_view(data_.data() + offset_ + header, length);
    offset_ += header + length;
    return true;
  }
  // Reads the next field when it is a varint field of a one-byte tag and a
  // one-byte value (an enum, a small integer); false (nothing read)
  // otherwise.
  bool ReadSmallVarint(Field& field) {
    if (offset_ + 2 > data_.size()) return false;
    const auto* at = reinterpret_cast<const uint8_t*>(data_.data() + offset_);
    const uint8_t tag = at[0];
    if (tag >= 0x80 || (tag & 7) != kVarint || tag < 8 || at[1] >= 0x80) return false;
    field.number = tag >> 3;
    field.wire_type = kVarint;
    field.varint = at[1];
    field.whole = absl::string_view(data_.data() + offset_, 2);
    field.payload = {};
    offset_ += 2;
    return true;
  }
  absl::Status NextSlowly(Field& field, bool& found);
  bool ReadVarint(uint64_t& value);

  absl::string_view data_;
  size_t offset_ = 0;
};

// Calls `visit(field)` (returning absl::Status) for each length-delimited
// field of `message`, in order; stops at the first error, the reader's
// (naming the byte offset) or `visit`'s.
template <typename Visit>
absl::Status ForEachLengthDelimited(absl::string_view message, Visit visit) {
  FieldReader reader(message);
  Field field;
  bool found;
  while (true) {
    absl::Status status = reader.Next(field, found);
    if (!status.ok()) return status;
    if (!found) return absl::OkStatus();
    if (field.wire_type != kLengthDelimited) continue;
    status = visit(static_cast<const Field&>(field));
    if (!status.ok()) return status;
  }
}

// Appends `value` as a varint.
void AppendVarint(uint64_t value, std::string& out);

// Reads a varint at `at`, before `end`, into `value`: the byte after it,
// or null where it does not end before `end` or within 10 bytes.
inline const uint8_t* ReadVarint(const uint8_t* at, const uint8_t* end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && at < end; shift += 7) {
    const uint8_t byte = *at++;
    value |= uint64_t{byte & 0x7fu} << shift;
    if (byte < 0x80) return at;
  }
  return nullptr;
}

// Reads a varint from the front of `in` into `value` and drops it from
// `in`; false where `in` ends inside it or it is longer than 10 bytes.
bool ConsumeVarint(absl::string_view& in, uint64_t& value);

// Appends the tag of length-delimited field `number` and `length`.
void AppendLengthDelimitedHeader(uint32_t number, uint64_t length, std::string& out);

// Appends the bytes of `message`, whose ByteSizeLong() has just given
// `size` (the sizes it cached are used, not computed again).
void AppendSerialized(const google::protobuf::MessageLite& message, size_t size,
                      std::string& out);

// Appends `message` as length-delimited field `number` (its size computed
// once).
void AppendMessageField(uint32_t number, const google::protobuf::MessageLite& message,
                        std::string& out);

// A 64-bit hash of `bytes` (FNV-1a with a final mix), stable across runs.
uint64_t Fingerprint(absl::string_view bytes);

}  // namespace onnxconvert::wire

#endif  // ONNX_CONVERT_IR_WIRE_H_
