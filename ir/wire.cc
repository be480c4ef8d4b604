#include "ir/wire.h"

#include "absl/strings/str_cat.h"

namespace onnxconvert::wire {

bool ConsumeVarint(absl::string_view& in, uint64_t& value) {
  const auto* begin = reinterpret_cast<const uint8_t*>(in.data());
  const uint8_t* after = ReadVarint(begin, begin + in.size(), value);
  if (after == nullptr) return false;
  in.remove_prefix(after - begin);
  return true;
}

bool FieldReader::ReadVarint(uint64_t& value) {
  absl::string_view rest = data_.substr(offset_);
  const size_t before = rest.size();
  if (!ConsumeVarint(rest, value)) return false;
  offset_ += before - rest.size();
  return true;
}

absl::Status FieldReader::NextSlowly(Field& field, bool& found) {
  found = false;
  if (offset_ >= data_.size()) return absl::OkStatus();
  size_t start = offset_;
  auto malformed = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(what, " at byte ", start));
  };
  uint64_t tag;
  if (!ReadVarint(tag)) return malformed("a truncated tag");
  field.number = static_cast<uint32_t>(tag >> 3);
  field.wire_type = static_cast<int>(tag & 7);
  if (field.number == 0 || (tag >> 3) > 0x1fffffff) return malformed("an invalid field number");
  field.payload = {};
  field.varint = 0;
  switch (field.wire_type) {
    case kVarint:
      if (!ReadVarint(field.varint)) return malformed("a truncated varint");
      break;
    case kFixed64:
      if (data_.size() - offset_ < 8) return malformed("a truncated fixed64");
      offset_ += 8;
      break;
    case kFixed32:
      if (data_.size() - offset_ < 4) return malformed("a truncated fixed32");
      offset_ += 4;
      break;
    case kLengthDelimited: {
      uint64_t length;
      if (!ReadVarint(length) || length > data_.size() - offset_) {
        return malformed("a truncated length-delimited field");
      }
      field.payload = data_.substr(offset_, length);
      offset_ += length;
      break;
    }
    default:
      return malformed(absl::StrCat("wire type ", field.wire_type));
  }
  field.whole = data_.substr(start, offset_ - start);
  found = true;
  return absl::OkStatus();
}

void AppendVarint(uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendLengthDelimitedHeader(uint32_t number, uint64_t length, std::string& out) {
  AppendVarint((uint64_t{number} << 3) | kLengthDelimited, out);
  AppendVarint(length, out);
}

void AppendMessageField(uint32_t number, const google::protobuf::MessageLite& message,
                        std::string& out) {
  size_t size = message.ByteSizeLong();
  AppendLengthDelimitedHeader(number, size, out);
  AppendSerialized(message, size, out);
}

void AppendSerialized(const google::protobuf::MessageLite& message, size_t size,
                      std::string& out) {
  size_t at = out.size();
  out.resize(at + size);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&out[at]));
}

uint64_t Fingerprint(absl::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  return hash;
}

}  // namespace onnxconvert::wire
