#ifndef ONNX_CONVERT_BASE_JSON_WRITER_H_
#define ONNX_CONVERT_BASE_JSON_WRITER_H_

// Deterministic JSON text for reports and machine-readable output.

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace onnxconvert {

// Builds deterministic, pretty-printed JSON text. Keys are written in the
// order they are added; strings are escaped (control characters and bytes
// that are not valid UTF-8 become \u escapes).
//
//   JsonWriter json;
//   json.BeginObject();
//   json.Key("ir_version").Int(13);
//   json.EndObject();
//   std::string text = json.Finish();
class JsonWriter {
 public:
  // Starts an object as a value.
  JsonWriter& BeginObject();
  // Ends the innermost object.
  JsonWriter& EndObject();
  // Starts an array as a value.
  JsonWriter& BeginArray();
  // Ends the innermost array.
  JsonWriter& EndArray();
  // Writes a key inside an object; the next call writes its value.
  JsonWriter& Key(absl::string_view key);
  // Writes a string value.
  JsonWriter& String(absl::string_view value);
  // Writes an integer value.
  JsonWriter& Int(int64_t value);
  // Writes a floating-point value (shortest form that reads back exactly;
  // null for NaN and infinities, which JSON cannot express).
  JsonWriter& Double(double value);
  // Writes true or false.
  JsonWriter& Bool(bool value);
  // Writes null.
  JsonWriter& Null();
  // Returns the text, ending in a newline.
  std::string Finish();

 private:
  void BeforeValue();
  void Newline();
  JsonWriter& Close(char bracket);

  std::string out_;
  // One entry per open container: whether it has a first element yet.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Returns `value` as a quoted, escaped JSON string.
std::string JsonQuote(absl::string_view value);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_JSON_WRITER_H_
