#include "base/json_writer.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_format.h"

namespace onnxconvert {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  unsigned char lead = static_cast<unsigned char>(s[i]);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                  : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > s.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

std::string JsonQuote(absl::string_view value) {
  std::string out = "\"";
  for (size_t i = 0; i < value.size();) {
    char c = value[i];
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      default: break;
    }
    size_t length = Utf8SequenceLength(value, i);
    unsigned char byte = static_cast<unsigned char>(c);
    if (length == 0 || byte < 0x20) {
      // Control characters, and bytes that are not UTF-8, as code points.
      absl::StrAppendFormat(&out, "\\u%04x", byte);
      ++i;
      continue;
    }
    out.append(value.data() + i, length);
    i += length;
  }
  out += '"';
  return out;
}

void JsonWriter::Newline() {
  out_ += '\n';
  out_.append(2 * has_element_.size(), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_element_.empty()) return;
  if (has_element_.back()) out_ += ',';
  has_element_.back() = true;
  Newline();
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  bool had_elements = has_element_.back();
  has_element_.pop_back();
  if (had_elements) Newline();
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::EndObject() { return Close('}'); }

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() { return Close(']'); }

JsonWriter& JsonWriter::Key(absl::string_view key) {
  BeforeValue();
  out_ += JsonQuote(key);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(absl::string_view value) {
  BeforeValue();
  out_ += JsonQuote(value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return *this;
  }
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out_.append(buffer, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

std::string JsonWriter::Finish() {
  out_ += '\n';
  return std::move(out_);
}

}  // namespace onnxconvert
