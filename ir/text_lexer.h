#ifndef ONNX_CONVERT_IR_TEXT_LEXER_H_
#define ONNX_CONVERT_IR_TEXT_LEXER_H_

// Tokens of ONNX text syntax, and the names of element and attribute types,
// shared by the text parser, printer and residue.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::text {

// Kinds of tokens in ONNX text syntax.
enum class TokenKind {
  kIdentifier,  // [A-Za-z_][A-Za-z0-9_]*
  kInteger,     // -?[0-9]+
  kFloat,       // a number with '.', 'e' or 'E'
  kString,      // "..." with escapes; `text` holds the unescaped bytes
  kPunct,       // one of < > ( ) [ ] { } , : = . @ ? and "=>"
  kEnd,
};

// One token with its position (1-based line and column).
struct Token {
  TokenKind kind;
  std::string text;
  int line;
  int column;
};

// Splits `source` into tokens; `#` starts a comment to the end of the line.
// Errors give the line and column of the bad character.
absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view source);

// True if `name` can be written without quotes.
bool IsPlainIdentifier(absl::string_view name);

// `bytes` as a quoted string literal: printable ASCII as is, `"` and `\`
// escaped, anything else as \n, \t, \r or \xHH.
std::string QuoteString(absl::string_view bytes);

// The TensorProto.DataType of an element-type keyword ("float" -> 1).
std::optional<int32_t> ElemTypeFromName(absl::string_view name);

// The keyword of a TensorProto.DataType, or nullopt for UNDEFINED and
// values this IR version does not define.
std::optional<absl::string_view> ElemTypeName(int32_t data_type);

// The AttributeProto.AttributeType of a type keyword ("ints" -> INTS).
std::optional<int> AttributeTypeFromName(absl::string_view name);

// The keyword of an AttributeProto.AttributeType.
std::optional<absl::string_view> AttributeTypeName(int type);

}  // namespace onnxconvert::text

#endif  // ONNX_CONVERT_IR_TEXT_LEXER_H_
