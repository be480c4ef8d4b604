#include "ir/wire_diagnostics.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnxconvert {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// Deeper nesting than protobuf's own default recursion limit is refused.
constexpr int kMaxDepth = 100;

enum WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// The wire type a declared field is written with when not packed.
int ExpectedWireType(const FieldDescriptor& field) {
  switch (field.type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return kFixed64;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return kFixed32;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
      return kLengthDelimited;
    case FieldDescriptor::TYPE_GROUP:
      return kStartGroup;
    default:
      return kVarint;
  }
}

class WireWalker {
 public:
  explicit WireWalker(absl::string_view bytes) : bytes_(bytes) {}

  std::optional<std::string> Walk(const Descriptor* descriptor) {
    path_.push_back(descriptor->name());
    if (!WalkMessage(0, bytes_.size(), descriptor, 0)) return error_;
    return std::nullopt;
  }

 private:
  bool Fail(size_t offset, absl::string_view what) {
    error_ = absl::StrCat(what, ", at byte ", offset, " (", absl::StrJoin(path_, " > "), ")");
    return false;
  }

  // Reads a varint at `pos` (advanced past it) not beyond `end`.
  bool ReadVarint(size_t& pos, size_t end, uint64_t& value) {
    size_t start = pos;
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) return Fail(start, "truncated varint");
      uint8_t byte = static_cast<uint8_t>(bytes_[pos++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return Fail(start, "varint longer than 10 bytes");
  }

  bool Skip(size_t& pos, size_t end, size_t count, size_t field_start,
            absl::string_view what) {
    if (end - pos < count) {
      return Fail(field_start, absl::StrCat("truncated ", what, ": needs ", count,
                                            " bytes, ", end - pos, " left"));
    }
    pos += count;
    return true;
  }

  bool WalkMessage(size_t pos, size_t end, const Descriptor* descriptor, int depth) {
    if (depth > kMaxDepth) return Fail(pos, "messages nested too deeply");
    absl::flat_hash_map<int, int> repeat_index;
    while (pos < end) {
      size_t field_start = pos;
      uint64_t tag = 0;
      if (!ReadVarint(pos, end, tag)) return false;
      uint64_t number = tag >> 3;
      int wire_type = static_cast<int>(tag & 7);
      if (number == 0 || number > 536870911) {
        return Fail(field_start, absl::StrCat("invalid field number ", number));
      }
      const FieldDescriptor* field =
          descriptor->FindFieldByNumber(static_cast<int>(number));
      if (wire_type > kFixed32) {
        return Fail(field_start, absl::StrCat("invalid wire type ", wire_type));
      }
      if (field != nullptr && !WireTypeMatches(*field, wire_type)) {
        return Fail(field_start,
                    absl::StrCat("wrong wire type ", wire_type, " for field ", number,
                                 " (", field->name(), "), expected ",
                                 ExpectedWireType(*field)));
      }
      if (!WalkField(pos, end, field_start, wire_type, field, repeat_index, depth)) {
        return false;
      }
    }
    return true;
  }

  static bool WireTypeMatches(const FieldDescriptor& field, int wire_type) {
    if (wire_type == ExpectedWireType(field)) return true;
    return field.is_packable() && wire_type == kLengthDelimited;
  }

  bool WalkField(size_t& pos, size_t end, size_t field_start, int wire_type,
                 const FieldDescriptor* field,
                 absl::flat_hash_map<int, int>& repeat_index, int depth) {
    switch (wire_type) {
      case kVarint: {
        uint64_t ignored;
        return ReadVarint(pos, end, ignored);
      }
      case kFixed64:
        return Skip(pos, end, 8, field_start, "fixed64 field");
      case kFixed32:
        return Skip(pos, end, 4, field_start, "fixed32 field");
      case kLengthDelimited:
        return WalkLengthDelimited(pos, end, field_start, field, repeat_index, depth);
      case kStartGroup:
      case kEndGroup:
        return Fail(field_start, "groups are not used by ONNX");
      default:
        return Fail(field_start, absl::StrCat("invalid wire type ", wire_type));
    }
  }

  bool WalkLengthDelimited(size_t& pos, size_t end, size_t field_start,
                           const FieldDescriptor* field,
                           absl::flat_hash_map<int, int>& repeat_index, int depth) {
    uint64_t length = 0;
    if (!ReadVarint(pos, end, length)) return false;
    if (length > end - pos) {
      return Fail(field_start,
                  absl::StrCat("length ", length, " of field ",
                               field ? field->name() : "(unknown)",
                               " runs past the end of its message (", end - pos,
                               " bytes left)"));
    }
    size_t body = pos;
    pos += length;
    if (field == nullptr || field->type() != FieldDescriptor::TYPE_MESSAGE) return true;
    std::string step = field->name();
    if (field->is_repeated()) absl::StrAppend(&step, "[", repeat_index[field->number()]++, "]");
    path_.push_back(step);
    bool ok = WalkMessage(body, body + length, field->message_type(), depth + 1);
    if (ok) path_.pop_back();
    return ok;
  }

  absl::string_view bytes_;
  std::vector<std::string> path_;
  std::string error_;
};

}  // namespace

std::optional<std::string> FindWireError(absl::string_view bytes,
                                         const Descriptor* descriptor) {
  return WireWalker(bytes).Walk(descriptor);
}

}  // namespace onnxconvert
