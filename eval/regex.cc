#include "eval/regex.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace onnxconvert::eval {
namespace {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;
constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kReplacement = 0xFFFD;
// RE2's largest repetition count.
constexpr int kMaxRepeat = 1000;

// The code points of UTF-8 `text`; an invalid byte reads as U+FFFD.
std::vector<uint32_t> Decode(absl::string_view text) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char b = static_cast<unsigned char>(text[i]);
    int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    uint32_t cp = extra == 0 ? b : extra == 1 ? (b & 0x1f) : extra == 2 ? (b & 0x0f) : (b & 0x07);
    bool ok = extra >= 0 && i + extra < text.size();
    for (int k = 1; ok && k <= extra; ++k) {
      unsigned char c = static_cast<unsigned char>(text[i + k]);
      ok = (c >> 6) == 2;
      cp = (cp << 6) | (c & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (ok && (cp < kMin[extra] || cp > kMaxCodePoint || (cp >= 0xD800 && cp <= 0xDFFF))) {
      ok = false;
    }
    if (!ok) {
      out.push_back(kReplacement);
      ++i;
    } else {
      out.push_back(cp);
      i += extra + 1;
    }
  }
  return out;
}

bool IsWord(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// The code points outside `ranges` (sorted, not overlapping).
Ranges Complement(Ranges ranges) {
  std::sort(ranges.begin(), ranges.end());
  Ranges out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : ranges) {
    if (lo > next) out.emplace_back(next, lo - 1);
    if (hi >= next) next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

// The ranges of the Perl classes \d \w \s (lower case) and their
// complements (upper case); empty for another letter.
Ranges PerlClass(uint32_t letter) {
  Ranges r;
  switch (letter | 0x20) {
    case 'd': r = {{'0', '9'}}; break;
    case 'w': r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; break;
    case 's': r = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}}; break;
    default: return r;
  }
  return (letter & 0x20) != 0 ? r : Complement(r);
}

// A parsed pattern.
struct Node {
  enum Kind { kEmpty, kClass, kAny, kConcat, kAlternate, kRepeat, kAssert } kind = kEmpty;
  Ranges ranges;  // kClass
  bool negate = false;
  std::vector<Node> children;  // kConcat, kAlternate; kRepeat: one
  int min = 0, max = 0;        // kRepeat; max -1: unbounded
  char assertion = 0;          // kAssert
};

Node Literal(uint32_t c) {
  Node n;
  n.kind = Node::kClass;
  n.ranges = {{c, c}};
  return n;
}

class Parser {
 public:
  explicit Parser(std::vector<uint32_t> pattern) : p_(std::move(pattern)) {}

  absl::StatusOr<Node> Parse() {
    OC_ASSIGN_OR_RETURN(Node node, Alternation());
    if (pos_ != p_.size()) return Error("unexpected )");
    return node;
  }

 private:
  absl::Status Error(absl::string_view why) const {
    return absl::InvalidArgumentError(absl::StrCat("pattern: ", why, " at ", pos_));
  }
  bool AtEnd() const { return pos_ >= p_.size(); }
  uint32_t Peek(size_t ahead = 0) const {
    return pos_ + ahead < p_.size() ? p_[pos_ + ahead] : 0xFFFFFFFF;
  }

  absl::StatusOr<Node> Alternation() {
    Node alt;
    alt.kind = Node::kAlternate;
    while (true) {
      OC_ASSIGN_OR_RETURN(Node seq, Sequence());
      alt.children.push_back(std::move(seq));
      if (Peek() != '|') break;
      ++pos_;
    }
    if (alt.children.size() == 1) return std::move(alt.children[0]);
    return alt;
  }

  absl::StatusOr<Node> Sequence() {
    Node seq;
    seq.kind = Node::kConcat;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      OC_ASSIGN_OR_RETURN(Node atom, Atom());
      OC_ASSIGN_OR_RETURN(atom, Quantified(std::move(atom)));
      seq.children.push_back(std::move(atom));
    }
    return seq;
  }

  // Reads "{n}", "{n,}" or "{n,m}" at pos_; false (pos_ unmoved) when
  // the brace is a literal.
  bool Counts(int& min, int& max) {
    size_t at = pos_ + 1;
    auto number = [&](int& value) {
      size_t start = at;
      int64_t v = 0;
      while (at < p_.size() && p_[at] >= '0' && p_[at] <= '9') {
        v = std::min<int64_t>(v * 10 + (p_[at] - '0'), kMaxRepeat + 1);
        ++at;
      }
      value = static_cast<int>(v);
      return at > start;
    };
    if (!number(min)) return false;
    max = min;
    if (at < p_.size() && p_[at] == ',') {
      ++at;
      if (!number(max)) max = -1;
    }
    if (at >= p_.size() || p_[at] != '}') return false;
    pos_ = at + 1;
    return true;
  }

  absl::StatusOr<Node> Quantified(Node atom) {
    bool quantified = false;
    while (!AtEnd()) {
      int min, max;
      uint32_t c = Peek();
      if (c == '*' || c == '+' || c == '?') {
        min = c == '+' ? 1 : 0;
        max = c == '?' ? 1 : -1;
        ++pos_;
      } else if (c == '{' && Counts(min, max)) {
        if (min > kMaxRepeat || max > kMaxRepeat || (max >= 0 && max < min)) {
          return Error("bad repetition count");
        }
      } else {
        break;
      }
      if (quantified) return Error("bad repetition operator");
      quantified = true;
      if (Peek() == '?') ++pos_;  // lazy: the same for a whole match
      Node repeat;
      repeat.kind = Node::kRepeat;
      repeat.min = min;
      repeat.max = max;
      repeat.children.push_back(std::move(atom));
      atom = std::move(repeat);
    }
    return atom;
  }

  absl::StatusOr<Node> Atom() {
    uint32_t c = p_[pos_++];
    switch (c) {
      case '(': return Group();
      case '.': {
        Node n;
        n.kind = Node::kAny;
        return n;
      }
      case '^':
      case '$': {
        Node n;
        n.kind = Node::kAssert;
        n.assertion = static_cast<char>(c);
        return n;
      }
      case '[': return Class();
      case '\\': return Escape();
      case '*':
      case '+':
      case '?': return Error("missing argument to repetition operator");
      default: return Literal(c);
    }
  }

  absl::StatusOr<Node> Group() {
    if (++depth_ > kMaxDepth) return Error("groups nest too deeply");
    if (Peek() == '?') {
      if (Peek(1) == ':') {
        pos_ += 2;
      } else if ((Peek(1) == 'P' && Peek(2) == '<') || Peek(1) == '<') {
        pos_ += Peek(1) == 'P' ? 3 : 2;
        while (!AtEnd() && Peek() != '>') {
          if (!IsWord(Peek())) return Error("bad group name");
          ++pos_;
        }
        if (AtEnd()) return Error("missing >");
        ++pos_;
      } else {
        return Error("flags and other (? groups are not supported");
      }
    }
    OC_ASSIGN_OR_RETURN(Node inner, Alternation());
    if (Peek() != ')') return Error("missing )");
    ++pos_;
    --depth_;
    return inner;
  }

  // The code point a single-character escape names (after the backslash,
  // pos_ at its letter), or an error; Perl classes and assertions are
  // handled by the callers.
  absl::StatusOr<uint32_t> EscapedChar() {
    if (AtEnd()) return Error("trailing backslash");
    uint32_t c = p_[pos_++];
    switch (c) {
      case 'n': return uint32_t{'\n'};
      case 't': return uint32_t{'\t'};
      case 'r': return uint32_t{'\r'};
      case 'f': return uint32_t{'\f'};
      case 'v': return uint32_t{'\v'};
      case 'a': return uint32_t{'\a'};
      case '0': return uint32_t{0};
      case 'x': {
        bool braced = Peek() == '{';
        if (braced) ++pos_;
        uint32_t value = 0;
        int digits = 0;
        while ((braced || digits < 2) && Peek() < 0x80 &&
               std::isxdigit(static_cast<int>(Peek()))) {
          uint32_t d = Peek();
          value = value * 16 + (d <= '9' ? d - '0' : (d | 0x20) - 'a' + 10);
          if (value > kMaxCodePoint) return Error("bad \\x escape");
          ++digits;
          ++pos_;
        }
        if (braced) {
          if (Peek() != '}') return Error("bad \\x escape");
          ++pos_;
        }
        if (digits == 0 || (!braced && digits != 2)) return Error("bad \\x escape");
        return value;
      }
      default:
        if (c < 0x80 && !IsWord(c)) return c;  // escaped punctuation
        return Error(absl::StrCat("unsupported escape \\", std::string(1, static_cast<char>(c & 0x7f))));
    }
  }

  absl::StatusOr<Node> Escape() {
    uint32_t c = Peek();
    Ranges perl = c < 0x80 ? PerlClass(c) : Ranges();
    if (!perl.empty()) {
      ++pos_;
      Node n;
      n.kind = Node::kClass;
      n.ranges = std::move(perl);
      return n;
    }
    if (c == 'b' || c == 'B' || c == 'A' || c == 'z') {
      ++pos_;
      Node n;
      n.kind = Node::kAssert;
      n.assertion = c == 'A' ? '^' : c == 'z' ? '$' : static_cast<char>(c);
      return n;
    }
    OC_ASSIGN_OR_RETURN(uint32_t literal, EscapedChar());
    return Literal(literal);
  }

  absl::StatusOr<Node> Class() {
    Node n;
    n.kind = Node::kClass;
    if (Peek() == '^') {
      n.negate = true;
      ++pos_;
    }
    bool first = true;
    while (true) {
      if (AtEnd()) return Error("missing ]");
      uint32_t c = Peek();
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[' && Peek(1) == ':') return Error("POSIX classes are not supported");
      uint32_t lo;
      if (c == '\\') {
        ++pos_;
        Ranges perl = Peek() < 0x80 ? PerlClass(Peek()) : Ranges();
        if (!perl.empty()) {
          ++pos_;
          n.ranges.insert(n.ranges.end(), perl.begin(), perl.end());
          continue;
        }
        OC_ASSIGN_OR_RETURN(lo, EscapedChar());
      } else {
        lo = c;
        ++pos_;
      }
      uint32_t hi = lo;
      if (Peek() == '-' && Peek(1) != ']' && pos_ + 1 < p_.size()) {
        ++pos_;
        if (Peek() == '\\') {
          ++pos_;
          OC_ASSIGN_OR_RETURN(hi, EscapedChar());
        } else {
          hi = p_[pos_++];
        }
        if (hi < lo) return Error("bad character class range");
      }
      n.ranges.emplace_back(lo, hi);
    }
    return n;
  }

  // The deepest nesting of groups (RE2 allows 1000); it bounds the
  // recursion of parsing, compiling and freeing a pattern.
  static constexpr int kMaxDepth = 100;

  std::vector<uint32_t> p_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// An instruction of `op` with no operands yet.
Regex::Inst Op(Regex::Inst::Op op) {
  Regex::Inst inst;
  inst.op = op;
  return inst;
}

// Emits the instructions of parsed patterns.
class Compiler {
 public:
  absl::Status Emit(const Node& n) {
    switch (n.kind) {
      case Node::kEmpty: return absl::OkStatus();
      case Node::kClass: {
        Regex::Inst inst = Op(Regex::Inst::kChar);
        inst.ranges = n.ranges;
        inst.negate = n.negate;
        return Add(std::move(inst));
      }
      case Node::kAny: return Add(Op(Regex::Inst::kAnyNotNewline));
      case Node::kAssert: {
        Regex::Inst inst = Op(Regex::Inst::kAssert);
        inst.assertion = n.assertion;
        return Add(std::move(inst));
      }
      case Node::kConcat:
        for (const Node& child : n.children) OC_RETURN_IF_ERROR(Emit(child));
        return absl::OkStatus();
      case Node::kAlternate: {
        // split(L1, next) L1: a; jmp end; next: split(L2, ...) ... last.
        std::vector<int> to_end;
        for (size_t i = 0; i < n.children.size(); ++i) {
          int split = -1;
          if (i + 1 < n.children.size()) {
            split = Size();
            OC_RETURN_IF_ERROR(Add(Op(Regex::Inst::kSplit)));
            program_[split].x = Size();
          }
          OC_RETURN_IF_ERROR(Emit(n.children[i]));
          if (split >= 0) {
            to_end.push_back(Size());
            OC_RETURN_IF_ERROR(Add(Op(Regex::Inst::kJmp)));
            program_[split].y = Size();
          }
        }
        for (int jmp : to_end) program_[jmp].x = Size();
        return absl::OkStatus();
      }
      case Node::kRepeat: {
        const Node& body = n.children[0];
        for (int i = 0; i < n.min; ++i) OC_RETURN_IF_ERROR(Emit(body));
        if (n.max < 0) {
          // loop: split(body, end); body; jmp loop.
          int loop = Size();
          OC_RETURN_IF_ERROR(Add(Op(Regex::Inst::kSplit)));
          program_[loop].x = Size();
          OC_RETURN_IF_ERROR(Emit(body));
          Regex::Inst jmp = Op(Regex::Inst::kJmp);
          jmp.x = loop;
          OC_RETURN_IF_ERROR(Add(std::move(jmp)));
          program_[loop].y = Size();
          return absl::OkStatus();
        }
        std::vector<int> splits;
        for (int i = n.min; i < n.max; ++i) {
          splits.push_back(Size());
          OC_RETURN_IF_ERROR(Add(Op(Regex::Inst::kSplit)));
          program_[splits.back()].x = Size();
          OC_RETURN_IF_ERROR(Emit(body));
        }
        for (int split : splits) program_[split].y = Size();
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  absl::Status Add(Regex::Inst inst) {
    if (program_.size() >= Regex::kMaxInstructions) {
      return absl::InvalidArgumentError("pattern: expands to too many instructions");
    }
    program_.push_back(std::move(inst));
    return absl::OkStatus();
  }

  int Size() const { return static_cast<int>(program_.size()); }
  std::vector<Regex::Inst> Take() { return std::move(program_); }

 private:
  std::vector<Regex::Inst> program_;
};

bool InRanges(const Regex::Inst& inst, uint32_t c) {
  bool in = false;
  for (const auto& [lo, hi] : inst.ranges) {
    if (c >= lo && c <= hi) {
      in = true;
      break;
    }
  }
  return in != inst.negate;
}

}  // namespace

absl::StatusOr<Regex> Regex::Compile(absl::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("pattern: longer than ", kMaxPatternBytes, " bytes"));
  }
  Parser parser(Decode(pattern));
  OC_ASSIGN_OR_RETURN(Node root, parser.Parse());
  Compiler compiler;
  OC_RETURN_IF_ERROR(compiler.Emit(root));
  OC_RETURN_IF_ERROR(compiler.Add(Op(Inst::kMatch)));
  Regex regex;
  regex.program_ = compiler.Take();
  return regex;
}

bool Regex::FullMatch(absl::string_view text) const {
  std::vector<uint32_t> cps = Decode(text);
  size_t n = cps.size();
  std::vector<int> current, next, stack;
  std::vector<size_t> seen(program_.size(), SIZE_MAX);  // the step a pc was added at
  // Adds pc and what it reaches without reading, at text position `at`.
  auto add = [&](std::vector<int>& list, int start, size_t at) {
    stack.push_back(start);
    while (!stack.empty()) {
      int pc = stack.back();
      stack.pop_back();
      if (seen[pc] == at) continue;
      seen[pc] = at;
      const Inst& inst = program_[pc];
      switch (inst.op) {
        case Inst::kJmp: stack.push_back(inst.x); break;
        case Inst::kSplit:
          stack.push_back(inst.y);
          stack.push_back(inst.x);
          break;
        case Inst::kAssert: {
          bool before = at > 0 && IsWord(cps[at - 1]);
          bool after = at < n && IsWord(cps[at]);
          bool holds = inst.assertion == '^'   ? at == 0
                       : inst.assertion == '$' ? at == n
                       : inst.assertion == 'b' ? before != after
                                               : before == after;
          if (holds) stack.push_back(pc + 1);
          break;
        }
        default: list.push_back(pc);
      }
    }
  };
  add(current, 0, 0);
  for (size_t at = 0; at < n && !current.empty(); ++at) {
    next.clear();
    for (int pc : current) {
      const Inst& inst = program_[pc];
      bool reads = (inst.op == Inst::kChar && InRanges(inst, cps[at])) ||
                   (inst.op == Inst::kAnyNotNewline && cps[at] != '\n');
      if (reads) add(next, pc + 1, at + 1);
    }
    std::swap(current, next);
  }
  for (int pc : current) {
    if (program_[pc].op == Inst::kMatch) return true;
  }
  return false;
}

}  // namespace onnxconvert::eval
