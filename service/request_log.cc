#include "service/request_log.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onnxconvert::service {
namespace {

// The length of the well-formed UTF-8 sequence of 2 to 4 bytes at the start
// of `text`, or 0.
size_t Utf8SequenceLength(absl::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (length == 0 || text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms, surrogates and code points past U+10FFFF.
  if (lead == 0xE0 && byte(1) < 0xA0) return 0;
  if (lead == 0xED && byte(1) >= 0xA0) return 0;
  if (lead == 0xF0 && byte(1) < 0x90) return 0;
  if (lead == 0xF4 && byte(1) >= 0x90) return 0;
  return length;
}

}  // namespace

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (size_t at = 0; at < text.size(); ++at) {
    char c = text[at];
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t length = Utf8SequenceLength(text.substr(at));
      if (length == 0) {
        out += "\\ufffd";  // not UTF-8: the replacement character
      } else {
        out.append(text.data() + at, length);
        at += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string JsonLogLine(const RequestLogEntry& entry) {
  std::string line = absl::StrCat(
      "{\"time\":",
      JsonString(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", entry.time, absl::UTCTimeZone())),
      ",\"id\":", JsonString(entry.id), ",\"method\":", JsonString(entry.method),
      ",\"code\":", JsonString(entry.code), ",\"ms\":", absl::StrFormat("%.3f", entry.milliseconds),
      ",\"bytes_in\":", entry.bytes_in, ",\"bytes_out\":", entry.bytes_out);
  if (!entry.model_name.empty())
    absl::StrAppend(&line, ",\"model\":", JsonString(entry.model_name));
  if (entry.from_opset != 0) absl::StrAppend(&line, ",\"from_opset\":", entry.from_opset);
  if (entry.to_opset != 0) absl::StrAppend(&line, ",\"to_opset\":", entry.to_opset);
  if (!entry.error.empty()) absl::StrAppend(&line, ",\"error\":", JsonString(entry.error));
  line += '}';
  return line;
}

}  // namespace onnxconvert::service
