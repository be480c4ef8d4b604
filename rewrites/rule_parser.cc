// Rule files read: the `where` clauses and the rule file format that
// rules.h describes, into Rules. The engine that matches and applies them
// is rules.cc.

#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "ir/text_parser.h"
#include "rewrites/rule_files.h"
#include "rewrites/rules.h"
#include "rewrites/rules_internal.h"

namespace onnxconvert::rewrites {

namespace rules_internal {

// Element types by the names `where` spells them.
const std::map<std::string, int>& DtypeNames() {
  static const auto* names = new std::map<std::string, int>{
      {"float", 1},   {"uint8", 2},    {"int8", 3},     {"uint16", 4},  {"int16", 5},
      {"int32", 6},   {"int64", 7},    {"string", 8},   {"bool", 9},    {"float16", 10},
      {"double", 11}, {"uint32", 12},  {"uint64", 13},  {"bfloat16", 16}};
  return *names;
}

}  // namespace rules_internal

namespace {

using rules_internal::DtypeNames;

// The profiles a rule file may name (rewrites/pass.h RewriteOptions).
constexpr absl::string_view kProfiles[] = {"exact", "deploy"};

// ---- Rule-file errors ----

absl::Status FileError(absl::string_view file, int line, int column, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ":", column, ": ", message));
}

// ---- `where` ----

struct Token {
  enum class Kind { kIdent, kAttribute, kNumber, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;
  int column = 0;
};

// Splits a `where` clause (starting at file column `column`) into tokens.
absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view text, absl::string_view file,
                                            int line, int column) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto is_ident = [](char c) { return absl::ascii_isalnum(c) || c == '_'; };
  while (i < text.size()) {
    char c = text[i];
    int at = column + static_cast<int>(i);
    if (absl::ascii_isspace(c)) {
      ++i;
      continue;
    }
    size_t start = i;
    Token token;
    token.column = at;
    if (absl::ascii_isalpha(c) || c == '_' || c == '@') {
      token.kind = c == '@' ? Token::Kind::kAttribute : Token::Kind::kIdent;
      if (c == '@') ++i;
      while (i < text.size() && is_ident(text[i])) ++i;
      token.text = std::string(text.substr(c == '@' ? start + 1 : start, i - start - (c == '@')));
      if (token.text.empty()) return FileError(file, line, at, "'@' must name an attribute");
    } else if (absl::ascii_isdigit(c) || c == '-' || c == '.') {
      token.kind = Token::Kind::kNumber;
      ++i;
      while (i < text.size() && (absl::ascii_isalnum(text[i]) || text[i] == '.' ||
                                 ((text[i] == '-' || text[i] == '+') &&
                                  (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
        ++i;
      }
      token.text = std::string(text.substr(start, i - start));
    } else if (c == '"') {
      token.kind = Token::Kind::kString;
      size_t end = text.find('"', i + 1);
      if (end == absl::string_view::npos) return FileError(file, line, at, "unterminated string");
      token.text = std::string(text.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      token.kind = Token::Kind::kPunct;
      static const char* kTwo[] = {"&&", "==", "!=", ">=", "<="};
      for (const char* two : kTwo) {
        if (text.substr(i, 2) == two) token.text = two;
      }
      if (token.text.empty() && absl::string_view("()[],<>").find(c) != absl::string_view::npos) {
        token.text = std::string(1, c);
      }
      if (token.text.empty()) {
        return FileError(file, line, at, absl::StrCat("unexpected character '", std::string(1, c), "'"));
      }
      i += token.text.size();
    }
    tokens.push_back(std::move(token));
  }
  tokens.push_back(Token{Token::Kind::kEnd, "", column + static_cast<int>(text.size())});
  return tokens;
}

// What each predicate takes: 'v' a value, 'a' an attribute, 'n' a number,
// 'x' a value or an attribute;
// valued ones need a comparison, boolean ones take none.
struct PredicateSpec {
  const char* name;
  const char* args;
  bool valued;
};

const PredicateSpec kPredicates[] = {
    {"rank", "v", true},         {"dim", "vn", true},
    {"dtype", "v", true},        {"value", "v", true},
    {"opset", "", true},         {"@", "a", true},
    {"is_const", "v", false},    {"one_use", "v", false},
    {"same_shape", "vv", false}, {"broadcast_keeps", "vv", false},
    {"same_value", "vv", false}, {"no_zero", "v", false},
    {"is_identity", "a", false}, {"composes_to_identity", "aa", false},
    {"outputs", "v", true},        {"per_channel", "vv", false},
    {"disjoint_axes", "vvv", false},
    {"trailing_axes", "vx", true}, {"fused_pads", "vv", true},
    {"pads_below_kernel", "av", false}, {"shape_of", "vv", false},
    {"same_dim", "vnvn", false},       {"last_dim_power", "vvn", false},
    {"power", "vn", true},             {"attention_mask", "vv", false},
    {"attention_shapes", "vvv", false},
    {"fused_pads_on_axes", "vvv", true},
};

const PredicateSpec* FindPredicate(absl::string_view name) {
  for (const PredicateSpec& spec : kPredicates) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// Parses the tokens of a `where` clause into predicates.
class WhereParser {
 public:
  WhereParser(std::vector<Token> tokens, absl::string_view file, int line)
      : tokens_(std::move(tokens)), file_(file), line_(line) {}

  absl::Status Parse(std::vector<Predicate>& out) {
    while (true) {
      OC_ASSIGN_OR_RETURN(Predicate predicate, ParsePredicate());
      out.push_back(std::move(predicate));
      if (Peek().kind == Token::Kind::kEnd) return absl::OkStatus();
      OC_RETURN_IF_ERROR(Expect("&&"));
    }
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  absl::Status Error(const Token& at, absl::string_view message) const {
    return FileError(file_, line_, at.column, message);
  }
  absl::Status Expect(absl::string_view punct) {
    const Token& token = Next();
    if (token.kind == Token::Kind::kPunct && token.text == punct) return absl::OkStatus();
    return Error(token, absl::StrCat("expected '", punct, "', found '", token.text, "'"));
  }

  absl::StatusOr<Predicate> ParsePredicate() {
    const Token& head = Next();
    Predicate predicate;
    predicate.line = line_;
    predicate.column = head.column;
    if (head.kind == Token::Kind::kAttribute) {
      predicate.function = "@";
      predicate.args.push_back(Term{Term::Kind::kAttribute, head.text, {}});
    } else if (head.kind == Token::Kind::kIdent) {
      predicate.function = head.text;
    } else {
      return Error(head, absl::StrCat("expected a predicate, found '", head.text, "'"));
    }
    const PredicateSpec* spec = FindPredicate(predicate.function);
    if (spec == nullptr) return Error(head, absl::StrCat("unknown predicate '", head.text, "'"));
    if (predicate.function != "@" && spec->args[0] != '\0') {
      OC_RETURN_IF_ERROR(Expect("("));
      for (const char* kind = spec->args; *kind != '\0'; ++kind) {
        if (kind != spec->args) OC_RETURN_IF_ERROR(Expect(","));
        OC_ASSIGN_OR_RETURN(Term term, ParseTerm());
        Term::Kind want = *kind == 'v' || *kind == 'x' ? Term::Kind::kValue
                          : *kind == 'a' ? Term::Kind::kAttribute
                                         : Term::Kind::kNumber;
        bool either = *kind == 'x' && (term.kind == Term::Kind::kValue ||
                                       term.kind == Term::Kind::kAttribute);
        if (term.kind != want && !either) {
          return Error(tokens_[pos_ - 1], absl::StrCat("argument ", kind - spec->args + 1, " of ",
                                                       head.text, " must be ",
                                                       *kind == 'v'   ? "a value name"
                                                       : *kind == 'a' ? "an @attribute"
                                                       : *kind == 'x' ? "a value or an @attribute"
                                                                      : "a number"));
        }
        predicate.args.push_back(std::move(term));
      }
      OC_RETURN_IF_ERROR(Expect(")"));
    }
    static const std::set<std::string> kComparisons = {"==", "!=", "<", "<=", ">", ">="};
    if (Peek().kind == Token::Kind::kPunct && kComparisons.contains(Peek().text)) {
      if (!spec->valued) return Error(Peek(), absl::StrCat(head.text, " takes no comparison"));
      predicate.comparison = Next().text;
      OC_ASSIGN_OR_RETURN(predicate.rhs, ParseTerm());
      if (predicate.rhs.kind == Term::Kind::kValue) {
        return Error(tokens_[pos_ - 1], "compare with a number, list, dtype, string or @attribute");
      }
    } else if (spec->valued) {
      return Error(Peek(), absl::StrCat(head.text, " must be compared (==, !=, <, <=, >, >=)"));
    }
    return predicate;
  }

  absl::StatusOr<Term> ParseTerm() {
    const Token& token = Next();
    Term term;
    switch (token.kind) {
      case Token::Kind::kAttribute:
        return Term{Term::Kind::kAttribute, token.text, {}};
      case Token::Kind::kString:
        return Term{Term::Kind::kString, token.text, {}};
      case Token::Kind::kIdent:
        if (DtypeNames().contains(token.text)) return Term{Term::Kind::kDtype, token.text, {}};
        return Term{Term::Kind::kValue, token.text, {}};
      case Token::Kind::kNumber: {
        double number = 0;
        if (!absl::SimpleAtod(token.text, &number)) {
          return Error(token, absl::StrCat("bad number '", token.text, "'"));
        }
        if (token.text == "-0" || absl::StartsWith(token.text, "-0.")) number = -std::abs(number);
        return Term{Term::Kind::kNumber, "", {number}};
      }
      case Token::Kind::kPunct:
        if (token.text == "[") {
          term.kind = Term::Kind::kList;
          while (!(Peek().kind == Token::Kind::kPunct && Peek().text == "]")) {
            if (!term.numbers.empty()) OC_RETURN_IF_ERROR(Expect(","));
            OC_ASSIGN_OR_RETURN(Term element, ParseTerm());
            if (element.kind != Term::Kind::kNumber) {
              return Error(tokens_[pos_ - 1], "list elements must be numbers");
            }
            term.numbers.push_back(element.numbers[0]);
          }
          Next();
          return term;
        }
        break;
      case Token::Kind::kEnd:
        break;
    }
    return Error(token, absl::StrCat("expected a term, found '", token.text, "'"));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::string file_;
  int line_;
};

// ---- Rule files ----

// A clause's text and where it starts in the file.
struct Clause {
  std::string text;
  int line = 0;
  int column = 0;
};

// Parses a pattern or replacement clause as a function: a header on line 1,
// the clause on line 2 at its column in the file, so that the parser's
// positions map back to the file.
absl::StatusOr<onnx::FunctionProto> ParseClause(const Clause& clause, absl::string_view file,
                                                absl::string_view name) {
  std::string text = clause.text;
  if (text.find('{') == std::string::npos) text += " {}";
  std::string wrapped = absl::StrCat("<domain: \"rules\", opset_import: [\"\" : 21]>\n", "f",
                                     std::string(std::max(1, clause.column - 2), ' '), text);
  absl::StatusOr<onnx::FunctionProto> function = ParseFunctionText(wrapped);
  if (function.ok()) {
    function->set_name(std::string(name));
    return function;
  }
  int line = 0, column = 0;
  std::string message(function.status().message());
  std::vector<std::string> parts = absl::StrSplit(message, absl::MaxSplits(": ", 1));
  if (sscanf(parts[0].c_str(), "line %d, column %d", &line, &column) == 2 && parts.size() == 2) {
    return FileError(file, clause.line + std::max(0, line - 2), column, parts[1]);
  }
  return FileError(file, clause.line, clause.column, message);
}

// Names computed by the nodes of `function`.
absl::flat_hash_set<std::string> Computed(const onnx::FunctionProto& function) {
  absl::flat_hash_set<std::string> names;
  for (const onnx::NodeProto& node : function.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) names.insert(output);
    }
  }
  return names;
}

// Attribute variables a function's nodes refer to.
std::set<std::string> AttributeRefs(const onnx::FunctionProto& function) {
  std::set<std::string> refs;
  for (const onnx::NodeProto& node : function.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.ref_attr_name().empty()) refs.insert(attribute.ref_attr_name());
    }
  }
  return refs;
}

// Checks what a rule's clauses must satisfy together.
absl::Status CheckRule(const Rule& rule, const Clause& pattern, const Clause& replace) {
  const onnx::FunctionProto& p = rule.pattern;
  const onnx::FunctionProto& r = rule.replacement;
  auto at = [&](const Clause& clause, absl::string_view message) {
    return FileError(rule.file, clause.line, clause.column, message);
  };
  if (p.node_size() == 0) return at(pattern, "the pattern has no nodes");
  if (p.input_size() != r.input_size() || p.output_size() != r.output_size()) {
    return at(replace, absl::StrCat("the replacement's signature (", r.input_size(), " inputs, ",
                                    r.output_size(), " outputs) differs from the pattern's (",
                                    p.input_size(), " inputs, ", p.output_size(), " outputs)"));
  }
  absl::flat_hash_set<std::string> computed = Computed(p);
  for (const std::string& output : p.output()) {
    if (!computed.contains(output)) {
      return at(pattern, absl::StrCat("pattern output '", output, "' is not computed by the pattern"));
    }
  }
  // Every pattern node must lead to an output (the match walks up from them).
  absl::flat_hash_set<std::string> needed(p.output().begin(), p.output().end());
  for (int i = p.node_size() - 1; i >= 0; --i) {
    bool used = false;
    for (const std::string& output : p.node(i).output()) used |= needed.contains(output);
    if (!used) return at(pattern, absl::StrCat("pattern node ", i + 1, " (", p.node(i).op_type(),
                                               ") computes no pattern output"));
    needed.insert(p.node(i).input().begin(), p.node(i).input().end());
  }
  std::set<std::string> bound = AttributeRefs(p);
  // `fact == @var` with @var not bound before binds it for the replacement.
  const std::set<std::string> declared = AttributeRefs(r);
  std::set<std::string> where_bound;
  for (const Predicate& predicate : rule.where) {
    const std::string& var = predicate.rhs.name;
    if (predicate.comparison == "==" && predicate.rhs.kind == Term::Kind::kAttribute &&
        !bound.contains(var) && !where_bound.contains(var) && declared.contains(var)) {
      where_bound.insert(var);
    }
  }
  bound.insert(where_bound.begin(), where_bound.end());
  for (const std::string& ref : AttributeRefs(r)) {
    if (!bound.contains(ref)) return at(replace, absl::StrCat("@", ref, " is not bound by the pattern"));
  }
  absl::flat_hash_set<std::string> defined(r.input().begin(), r.input().end());
  for (const onnx::NodeProto& node : r.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && !defined.contains(input)) {
        return at(replace, absl::StrCat("replacement value '", input, "' is not defined"));
      }
    }
    defined.insert(node.output().begin(), node.output().end());
  }
  for (const std::string& output : r.output()) {
    if (!defined.contains(output)) {
      return at(replace, absl::StrCat("replacement output '", output, "' is not defined"));
    }
  }
  for (const onnx::NodeProto& node : r.node()) {
    if (node.name().empty()) continue;
    bool found = false;
    for (const onnx::NodeProto& pattern_node : p.node()) {
      found |= pattern_node.name() == node.name() && pattern_node.op_type() == node.op_type();
    }
    if (!found) {
      return at(replace, absl::StrCat("replacement node [", node.name(), "] names no pattern ",
                                      node.op_type(), " node"));
    }
  }
  absl::flat_hash_set<std::string> values(p.input().begin(), p.input().end());
  values.insert(computed.begin(), computed.end());
  for (const Predicate& predicate : rule.where) {
    std::vector<const Term*> terms;
    for (const Term& term : predicate.args) terms.push_back(&term);
    if (!predicate.comparison.empty()) terms.push_back(&predicate.rhs);
    for (const Term* term : terms) {
      if (term->kind == Term::Kind::kValue && !values.contains(term->name)) {
        return FileError(rule.file, predicate.line, predicate.column,
                         absl::StrCat("'", term->name, "' is not a value of the pattern"));
      }
      if (term->kind == Term::Kind::kAttribute && !bound.contains(term->name)) {
        return FileError(rule.file, predicate.line, predicate.column,
                         absl::StrCat("@", term->name, " is not bound by the pattern"));
      }
    }
  }
  return absl::OkStatus();
}

// The rule-file parser: one line at a time.
class RuleFileParser {
 public:
  RuleFileParser(absl::string_view text, absl::string_view file) : file_(file) {
    lines_ = absl::StrSplit(text, '\n');
  }

  absl::StatusOr<std::vector<Rule>> Parse() {
    for (line_ = 0; line_ < lines_.size(); ++line_) {
      absl::string_view line = StripComment(lines_[line_]);
      absl::string_view body = absl::StripLeadingAsciiWhitespace(line);
      if (body.empty()) continue;
      int column = static_cast<int>(body.data() - line.data()) + 1;
      absl::string_view keyword = body.substr(0, body.find_first_of(" \t"));
      absl::string_view rest = absl::StripLeadingAsciiWhitespace(body.substr(keyword.size()));
      int rest_column = static_cast<int>(rest.data() - line.data()) + 1;
      if (keyword == "profile") {
        OC_RETURN_IF_ERROR(SetProfile(rest, column));
      } else if (keyword == "rule") {
        OC_RETURN_IF_ERROR(FinishRule());
        OC_RETURN_IF_ERROR(StartRule(rest, rest_column));
      } else if (keyword == "pattern" || keyword == "replace" || keyword == "where") {
        if (!rule_) return Error(column, absl::StrCat("'", keyword, "' outside a rule"));
        if (keyword == "where") {
          OC_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                              Tokenize(rest, file_, LineNumber(), rest_column));
          OC_RETURN_IF_ERROR(WhereParser(std::move(tokens), file_, LineNumber()).Parse(rule_->where));
          continue;
        }
        Clause& clause = keyword == "pattern" ? pattern_ : replace_;
        if (clause.line != 0) return Error(column, absl::StrCat("a second '", keyword, "'"));
        OC_ASSIGN_OR_RETURN(clause, ReadClause(rest, rest_column));
      } else {
        return Error(column, absl::StrCat("expected 'profile', 'rule', 'pattern', 'replace' or "
                                          "'where', found '",
                                          keyword, "'"));
      }
    }
    OC_RETURN_IF_ERROR(FinishRule());
    return std::move(rules_);
  }

 private:
  static absl::string_view StripComment(absl::string_view line) {
    size_t hash = line.find('#');
    return hash == absl::string_view::npos ? line : line.substr(0, hash);
  }
  int LineNumber() const { return static_cast<int>(line_) + 1; }
  absl::Status Error(int column, absl::string_view message) const {
    return FileError(file_, LineNumber(), column, message);
  }

  // A file-level `profile NAME`, before the first rule.
  absl::Status SetProfile(absl::string_view rest, int column) {
    if (rule_ || !rules_.empty()) return Error(column, "'profile' must come before the first rule");
    if (!profile_.empty()) return Error(column, "a second 'profile'");
    std::vector<absl::string_view> words = absl::StrSplit(rest, ' ', absl::SkipWhitespace());
    if (words.size() != 1 || !absl::c_linear_search(kProfiles, words[0])) {
      return Error(column, "expected 'profile exact' or 'profile deploy'");
    }
    profile_ = std::string(words[0]);
    return absl::OkStatus();
  }

  absl::Status StartRule(absl::string_view rest, int column) {
    std::vector<absl::string_view> words = absl::StrSplit(rest, ' ', absl::SkipWhitespace());
    if (words.empty()) return Error(column, "a rule needs a name");
    if (words.size() > 2 || (words.size() == 2 && words[1] != "commutative")) {
      return Error(column, "expected 'rule NAME [commutative]'");
    }
    rule_ = Rule{};
    rule_->name = std::string(words[0]);
    rule_->file = file_;
    rule_->line = LineNumber();
    rule_->commutative = words.size() == 2;
    rule_->profile = profile_;
    pattern_ = replace_ = Clause{};
    return absl::OkStatus();
  }

  // A clause from `rest` on, through the line closing its braces.
  absl::StatusOr<Clause> ReadClause(absl::string_view rest, int column) {
    Clause clause{std::string(rest), LineNumber(), column};
    int depth = 0;
    auto count = [&](absl::string_view text) {
      for (char c : text) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    };
    count(StripComment(rest));
    while (depth > 0 && line_ + 1 < lines_.size()) {
      ++line_;
      absl::StrAppend(&clause.text, "\n", lines_[line_]);
      count(StripComment(lines_[line_]));
    }
    if (depth > 0) return FileError(file_, clause.line, column, "unclosed '{'");
    return clause;
  }

  absl::Status FinishRule() {
    if (!rule_) return absl::OkStatus();
    if (pattern_.line == 0 || replace_.line == 0) {
      return FileError(file_, rule_->line, 1,
                       absl::StrCat("rule '", rule_->name, "' needs a pattern and a replace"));
    }
    OC_ASSIGN_OR_RETURN(rule_->pattern, ParseClause(pattern_, file_, rule_->name + "_pattern"));
    OC_ASSIGN_OR_RETURN(rule_->replacement, ParseClause(replace_, file_, rule_->name + "_replace"));
    OC_RETURN_IF_ERROR(CheckRule(*rule_, pattern_, replace_));
    for (const Rule& other : rules_) {
      if (other.name == rule_->name) {
        return FileError(file_, rule_->line, 1, absl::StrCat("a second rule '", rule_->name, "'"));
      }
    }
    rules_.push_back(*std::move(rule_));
    rule_.reset();
    return absl::OkStatus();
  }

  std::string file_;
  std::vector<absl::string_view> lines_;
  size_t line_ = 0;
  std::optional<Rule> rule_;
  std::string profile_;  // the file's, "" for every profile
  Clause pattern_, replace_;
  std::vector<Rule> rules_;
};

}  // namespace

absl::StatusOr<std::vector<Rule>> ParseRules(absl::string_view text, absl::string_view file) {
  return RuleFileParser(text, file).Parse();
}

absl::StatusOr<std::vector<Rule>> BuiltinRules() {
  std::vector<Rule> rules;
  for (const RuleFileText& file : BuiltinRuleFiles()) {
    OC_ASSIGN_OR_RETURN(std::vector<Rule> parsed, ParseRules(file.text, file.path));
    for (Rule& rule : parsed) rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace onnxconvert::rewrites
