#include "ir/wire_diagnostics.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/unknown_field_set.h"
#include "google/protobuf/wire_format_lite.h"

namespace onnxconvert {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;

constexpr int kMaxVarintBytes = 10;
constexpr uint64_t kMaxTag = 0xFFFFFFFFu;
constexpr uint64_t kMaxFieldNumber = (uint64_t{1} << 29) - 1;

// Names of the wire types, indexed by their number (0..7).
constexpr const char* kWireTypeNames[] = {
    "varint",    "fixed64", "length-delimited", "start-group",
    "end-group", "fixed32", "invalid (6)",      "invalid (7)",
};

// The wire type a declared field's values are written with, unpacked.
int DeclaredWireType(const FieldDescriptor& field) {
  return WireFormatLite::WireTypeForFieldType(
      static_cast<WireFormatLite::FieldType>(field.type()));
}

// Whether protobuf's parser reads `wire_type` as a value of `field`.
bool AcceptsWireType(const FieldDescriptor& field, int wire_type) {
  if (wire_type == DeclaredWireType(field)) return true;
  return field.is_packable() &&
         wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// Varint, fixed64, length-delimited and fixed32; not groups (which ONNX
// does not use) nor the undefined types 6 and 7.
bool IsUsableWireType(int wire_type) {
  switch (wire_type) {
    case WireFormatLite::WIRETYPE_VARINT:
    case WireFormatLite::WIRETYPE_FIXED64:
    case WireFormatLite::WIRETYPE_LENGTH_DELIMITED:
    case WireFormatLite::WIRETYPE_FIXED32:
      return true;
    default:
      return false;
  }
}

std::string UnusableWireTypeProblem(int wire_type, uint64_t number) {
  if (wire_type == WireFormatLite::WIRETYPE_START_GROUP ||
      wire_type == WireFormatLite::WIRETYPE_END_GROUP) {
    return absl::StrCat("group tag (", kWireTypeNames[wire_type],
                        ") for field ", number, "; ONNX does not use groups");
  }
  return absl::StrCat("invalid wire type ", wire_type, " for field ", number);
}

std::string QualifiedName(const FieldDescriptor& field) {
  return absl::StrCat(field.containing_type()->name(), ".", field.name());
}

// One message being walked: its type and where its bytes end.
struct Frame {
  const Descriptor* type;
  size_t end;
  absl::flat_hash_map<int, int> next_index;  // per repeated message field
};

// Walks serialized bytes with an explicit stack, so deep nesting cannot
// exhaust the call stack.
class WireWalker {
 public:
  WireWalker(std::string_view bytes, int recursion_limit)
      : bytes_(bytes), recursion_limit_(recursion_limit) {}

  std::optional<WireError> Walk(const Descriptor& type) {
    root_name_ = type.name();
    stack_.push_back(Frame{&type, bytes_.size(), {}});
    while (!stack_.empty()) {
      if (pos_ == stack_.back().end) {
        PopFrame();
        continue;
      }
      if (!WalkField()) return std::move(error_);
    }
    return std::nullopt;
  }

 private:
  bool Fail(size_t offset, std::string problem) {
    error_ = WireError{static_cast<int64_t>(offset), std::move(problem),
                       PathString()};
    return false;
  }

  // The steps to the innermost message; long paths keep both ends.
  std::string PathString() const {
    constexpr size_t kHead = 4, kTail = 6;
    if (steps_.empty()) return root_name_;
    if (steps_.size() <= kHead + kTail + 1) return absl::StrJoin(steps_, " > ");
    return absl::StrCat(
        absl::StrJoin(steps_.begin(), steps_.begin() + kHead, " > "), " > (",
        steps_.size() - kHead - kTail, " more) > ",
        absl::StrJoin(steps_.end() - kTail, steps_.end(), " > "));
  }

  void PopFrame() {
    stack_.pop_back();
    if (!steps_.empty()) steps_.pop_back();
  }

  size_t Remaining() const { return stack_.back().end - pos_; }

  // Reads a varint at pos_ and advances past it; fails when it runs past the
  // current message or is longer than 10 bytes.
  bool ReadVarint(uint64_t& value, const char* what) {
    size_t start = pos_;
    value = 0;
    for (int i = 0; i < kMaxVarintBytes; ++i) {
      if (pos_ >= stack_.back().end) {
        return Fail(start, absl::StrCat("truncated ", what));
      }
      uint8_t byte = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) return true;
    }
    return Fail(start, absl::StrCat(what, " longer than 10 bytes"));
  }

  // Reads one field (tag and value) of the innermost message; a nested
  // message pushes a frame instead of being skipped.
  bool WalkField() {
    size_t field_start = pos_;
    uint64_t tag = 0;
    if (!ReadVarint(tag, "field tag")) return false;
    if (tag > kMaxTag) return Fail(field_start, "field tag wider than 32 bits");
    uint64_t number = tag >> 3;
    int wire_type = static_cast<int>(tag & 7);
    if (number == 0 || number > kMaxFieldNumber) {
      return Fail(field_start, absl::StrCat("invalid field number ", number));
    }
    if (!IsUsableWireType(wire_type)) {
      return Fail(field_start, UnusableWireTypeProblem(wire_type, number));
    }
    const FieldDescriptor* field =
        stack_.back().type->FindFieldByNumber(static_cast<int>(number));
    if (field != nullptr && !AcceptsWireType(*field, wire_type)) {
      return Fail(field_start,
                  absl::StrCat("field ", QualifiedName(*field), " (", number,
                               ") has wire type ", kWireTypeNames[wire_type],
                               ", its declared type needs ",
                               kWireTypeNames[DeclaredWireType(*field)]));
    }
    return WalkValue(field_start, number, wire_type, field);
  }

  // Reads a value of a usable wire type.
  bool WalkValue(size_t field_start, uint64_t number, int wire_type,
                 const FieldDescriptor* field) {
    switch (wire_type) {
      case WireFormatLite::WIRETYPE_VARINT: {
        uint64_t ignored;
        return ReadVarint(ignored, "varint");
      }
      case WireFormatLite::WIRETYPE_FIXED64:
        return SkipFixed(field_start, 8);
      case WireFormatLite::WIRETYPE_FIXED32:
        return SkipFixed(field_start, 4);
      default:
        return WalkLengthDelimited(field_start, number, field);
    }
  }

  bool SkipFixed(size_t field_start, size_t size) {
    if (Remaining() < size) {
      return Fail(field_start,
                  absl::StrCat("truncated fixed", 8 * size, " value: needs ",
                               size, " bytes, ", Remaining(), " left"));
    }
    pos_ += size;
    return true;
  }

  bool WalkLengthDelimited(size_t field_start, uint64_t number,
                           const FieldDescriptor* field) {
    uint64_t length = 0;
    if (!ReadVarint(length, "length")) return false;
    if (length > Remaining()) {
      return Fail(field_start,
                  absl::StrCat("length ", length, " of ",
                               field ? QualifiedName(*field)
                                     : absl::StrCat("field ", number),
                               " runs past the end of its message (",
                               Remaining(), " bytes left)"));
    }
    size_t payload = pos_;
    if (field == nullptr) {
      pos_ += length;
      return true;
    }
    if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      return PushMessage(field_start, *field, payload + length);
    }
    pos_ += length;
    if (field->is_packable()) {
      return CheckPacked(field_start, *field, payload, payload + length);
    }
    return true;
  }

  bool PushMessage(size_t field_start, const FieldDescriptor& field,
                   size_t end) {
    if (static_cast<int64_t>(stack_.size()) > recursion_limit_) {
      return Fail(field_start,
                  absl::StrCat("messages nested deeper than ",
                               recursion_limit_, " levels at ",
                               QualifiedName(field)));
    }
    std::string step = QualifiedName(field);
    if (field.is_repeated()) {
      absl::StrAppend(&step, "[", stack_.back().next_index[field.number()]++,
                      "]");
    }
    steps_.push_back(std::move(step));
    stack_.push_back(Frame{field.message_type(), end, {}});
    return true;
  }

  // A packed payload must hold whole values.
  bool CheckPacked(size_t field_start, const FieldDescriptor& field,
                   size_t begin, size_t end) {
    int wire_type = DeclaredWireType(field);
    if (wire_type != WireFormatLite::WIRETYPE_VARINT) {
      size_t width = wire_type == WireFormatLite::WIRETYPE_FIXED64 ? 8 : 4;
      if ((end - begin) % width == 0) return true;
      return Fail(field_start,
                  absl::StrCat("packed ", QualifiedName(field), " holds ",
                               end - begin, " bytes, not a multiple of ",
                               width));
    }
    for (size_t at = begin; at < end;) {
      size_t start = at;
      int count = 0;
      while (at < end && (static_cast<uint8_t>(bytes_[at]) & 0x80) != 0 &&
             count < kMaxVarintBytes) {
        ++at;
        ++count;
      }
      if (at == end || count == kMaxVarintBytes) {
        return Fail(start, absl::StrCat("truncated or overlong varint in packed ",
                                        QualifiedName(field)));
      }
      ++at;
    }
    return true;
  }

  std::string_view bytes_;
  int recursion_limit_;
  size_t pos_ = 0;
  std::string root_name_;
  std::vector<Frame> stack_;
  std::vector<std::string> steps_;  // one per nested frame
  WireError error_;
};

// The wire type protobuf recorded an unknown field with.
int WireTypeOf(const google::protobuf::UnknownField& field) {
  using google::protobuf::UnknownField;
  switch (field.type()) {
    case UnknownField::TYPE_VARINT: return WireFormatLite::WIRETYPE_VARINT;
    case UnknownField::TYPE_FIXED32: return WireFormatLite::WIRETYPE_FIXED32;
    case UnknownField::TYPE_FIXED64: return WireFormatLite::WIRETYPE_FIXED64;
    case UnknownField::TYPE_LENGTH_DELIMITED:
      return WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    case UnknownField::TYPE_GROUP: return WireFormatLite::WIRETYPE_START_GROUP;
  }
  return WireFormatLite::WIRETYPE_START_GROUP;
}

bool HasSuspectUnknownField(const google::protobuf::Message& message) {
  const google::protobuf::UnknownFieldSet& unknown =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    int wire_type = WireTypeOf(unknown.field(i));
    if (wire_type == WireFormatLite::WIRETYPE_START_GROUP) return true;
    const FieldDescriptor* field =
        message.GetDescriptor()->FindFieldByNumber(unknown.field(i).number());
    if (field != nullptr && !AcceptsWireType(*field, wire_type)) return true;
  }
  return false;
}

}  // namespace

bool NeedsWireCheck(const google::protobuf::Message& message) {
  if (HasSuspectUnknownField(message)) return true;
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      if (NeedsWireCheck(reflection.GetMessage(message, field))) return true;
      continue;
    }
    for (int i = 0, n = reflection.FieldSize(message, field); i < n; ++i) {
      if (NeedsWireCheck(reflection.GetRepeatedMessage(message, field, i))) {
        return true;
      }
    }
  }
  return false;
}

std::string WireError::ToString() const {
  return absl::StrCat(problem, " at byte ", offset, " (", path, ")");
}

std::optional<WireError> FindWireError(std::string_view bytes,
                                       const Descriptor& type,
                                       int recursion_limit) {
  return WireWalker(bytes, recursion_limit).Walk(type);
}

}  // namespace onnxconvert
