#include "ir/text_lexer.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onnxconvert::text {
namespace {

constexpr absl::string_view kElemTypeNames[] = {
    "",          "float",        "uint8",          "int8",       "uint16",
    "int16",     "int32",        "int64",          "string",     "bool",
    "float16",   "double",       "uint32",         "uint64",     "complex64",
    "complex128", "bfloat16",    "float8e4m3fn",   "float8e4m3fnuz",
    "float8e5m2", "float8e5m2fnuz", "uint4",       "int4",       "float4e2m1",
    "float8e8m0", "uint2",       "int2",
};

// Indexed by AttributeProto.AttributeType.
constexpr absl::string_view kAttributeTypeNames[] = {
    "",        "float",   "int",     "string",         "tensor",
    "graph",   "floats",  "ints",    "strings",        "tensors",
    "graphs",  "sparse_tensor", "sparse_tensors", "type_proto", "type_protos",
};

// The code of `keyword` in a table of keywords indexed by code (entry 0,
// the undefined code, never matches), or nullopt.
template <size_t N>
std::optional<int> KeywordCode(const absl::string_view (&keywords)[N], absl::string_view keyword) {
  for (int code = 1; code < static_cast<int>(N); ++code) {
    if (keywords[code] == keyword) return code;
  }
  return std::nullopt;
}

// The keyword of `code` in a table of keywords indexed by code, or nullopt
// for 0 and codes past the table.
template <size_t N>
std::optional<absl::string_view> CodeKeyword(const absl::string_view (&keywords)[N], int code) {
  if (code <= 0 || code >= static_cast<int>(N)) return std::nullopt;
  return keywords[code];
}

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(absl::string_view source) : source_(source) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaceAndComments();
      if (pos_ >= source_.size()) break;
      absl::StatusOr<Token> token = Next();
      if (!token.ok()) return token.status();
      tokens.push_back(std::move(*token));
    }
    tokens.push_back({TokenKind::kEnd, "", line_, column_});
    return tokens;
  }

 private:
  void Advance() {
    if (source_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void SkipSpaceAndComments() {
    while (pos_ < source_.size()) {
      char c = source_[pos_];
      if (c == '#') {
        while (pos_ < source_.size() && source_[pos_] != '\n') Advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        Advance();
      } else {
        return;
      }
    }
  }

  absl::Status ErrorAt(int line, int column, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", line, ", column ", column, ": ", what));
  }

  absl::StatusOr<Token> Next() {
    int line = line_, column = column_;
    char c = source_[pos_];
    if (IsIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < source_.size() && IsIdentChar(source_[pos_])) Advance();
      return Token{TokenKind::kIdentifier, std::string(source_.substr(start, pos_ - start)),
                   line, column};
    }
    bool signed_number = (c == '-' || c == '+') && pos_ + 1 < source_.size() &&
                         (IsDigit(source_[pos_ + 1]) || source_[pos_ + 1] == '.');
    if (IsDigit(c) || signed_number || (c == '.' && pos_ + 1 < source_.size() &&
                                        IsDigit(source_[pos_ + 1]))) {
      return Number(line, column);
    }
    if (c == '"') return String(line, column);
    if (c == '=' && pos_ + 1 < source_.size() && source_[pos_ + 1] == '>') {
      Advance();
      Advance();
      return Token{TokenKind::kPunct, "=>", line, column};
    }
    if (absl::string_view("<>()[]{},:=.@?-").find(c) != absl::string_view::npos) {
      Advance();
      return Token{TokenKind::kPunct, std::string(1, c), line, column};
    }
    return ErrorAt(line, column, absl::StrFormat("unexpected character '%s'",
                                                 QuoteString(std::string(1, c))));
  }

  absl::StatusOr<Token> Number(int line, int column) {
    size_t start = pos_;
    bool is_float = false;
    if (source_[pos_] == '-' || source_[pos_] == '+') Advance();
    while (pos_ < source_.size()) {
      char c = source_[pos_];
      if (IsDigit(c)) {
        Advance();
      } else if (c == '.' ) {
        is_float = true;
        Advance();
      } else if ((c == 'e' || c == 'E')) {
        is_float = true;
        Advance();
        if (pos_ < source_.size() && (source_[pos_] == '-' || source_[pos_] == '+')) Advance();
      } else {
        break;
      }
    }
    return Token{is_float ? TokenKind::kFloat : TokenKind::kInteger,
                 std::string(source_.substr(start, pos_ - start)), line, column};
  }

  absl::StatusOr<Token> String(int line, int column) {
    Advance();  // opening quote
    std::string value;
    while (true) {
      if (pos_ >= source_.size()) return ErrorAt(line, column, "unterminated string");
      char c = source_[pos_];
      if (c == '"') {
        Advance();
        return Token{TokenKind::kString, std::move(value), line, column};
      }
      if (c != '\\') {
        value.push_back(c);
        Advance();
        continue;
      }
      int escape_line = line_, escape_column = column_;
      Advance();
      if (pos_ >= source_.size()) return ErrorAt(line, column, "unterminated string");
      char e = source_[pos_];
      Advance();
      switch (e) {
        case 'n': value.push_back('\n'); break;
        case 't': value.push_back('\t'); break;
        case 'r': value.push_back('\r'); break;
        case '"': case '\\': case '\'': value.push_back(e); break;
        case 'x': {
          int high = pos_ < source_.size() ? HexValue(source_[pos_]) : -1;
          int low = pos_ + 1 < source_.size() ? HexValue(source_[pos_ + 1]) : -1;
          if (high < 0 || low < 0) {
            return ErrorAt(escape_line, escape_column, "\\x needs two hex digits");
          }
          Advance();
          Advance();
          value.push_back(static_cast<char>(high * 16 + low));
          break;
        }
        default:
          return ErrorAt(escape_line, escape_column,
                         absl::StrCat("unknown escape '\\", std::string(1, e), "'"));
      }
    }
  }

  absl::string_view source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view source) {
  return Lexer(source).Run();
}

bool IsPlainIdentifier(absl::string_view name) {
  if (name.empty() || !IsIdentStart(name[0])) return false;
  for (char c : name) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

std::string QuoteString(absl::string_view bytes) {
  std::string out = "\"";
  for (char c : bytes) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u >= 0x7f) {
          absl::StrAppendFormat(&out, "\\x%02x", u);
        } else {
          out.push_back(c);
        }
    }
  }
  out += '"';
  return out;
}

std::optional<int32_t> ElemTypeFromName(absl::string_view name) {
  return KeywordCode(kElemTypeNames, name);
}

std::optional<absl::string_view> ElemTypeName(int32_t data_type) {
  return CodeKeyword(kElemTypeNames, data_type);
}

std::optional<int> AttributeTypeFromName(absl::string_view name) {
  return KeywordCode(kAttributeTypeNames, name);
}

std::optional<absl::string_view> AttributeTypeName(int type) {
  return CodeKeyword(kAttributeTypeNames, type);
}

}  // namespace onnxconvert::text
