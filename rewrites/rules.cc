// The rule engine: rule files parsed (rules.h describes the format),
// patterns matched at a root node through the GraphIndex, replacements
// applied through ir::GraphIndexRewriter.

#include "rewrites/rules.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "ir/graph_index_rewriter.h"
#include "ir/status_macros.h"
#include "ir/text_parser.h"
#include "rewrites/rule_files.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {
namespace {

// ---- Tables ----

// Binary ops whose two operands may be swapped.
const absl::flat_hash_set<std::string>& CommutativeOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Add", "Mul", "Max", "Min", "Sum", "And", "Or", "Xor", "Equal",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  return *ops;
}

// Element types by the names `where` spells them.
const std::map<std::string, int>& DtypeNames() {
  static const auto* names = new std::map<std::string, int>{
      {"float", 1},   {"uint8", 2},    {"int8", 3},     {"uint16", 4},  {"int16", 5},
      {"int32", 6},   {"int64", 7},    {"string", 8},   {"bool", 9},    {"float16", 10},
      {"double", 11}, {"uint32", 12},  {"uint64", 13},  {"bfloat16", 16}};
  return *names;
}

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

// What each predicate takes: 'v' a value, 'a' an attribute, 'n' a number;
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
        Term::Kind want = *kind == 'v'   ? Term::Kind::kValue
                          : *kind == 'a' ? Term::Kind::kAttribute
                                         : Term::Kind::kNumber;
        if (term.kind != want) {
          return Error(tokens_[pos_ - 1], absl::StrCat("argument ", kind - spec->args + 1, " of ",
                                                       head.text, " must be ",
                                                       *kind == 'v'   ? "a value name"
                                                       : *kind == 'a' ? "an @attribute"
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

// ---- Facts for `where` ----

// A fact: numbers (one for a scalar), or a string.
struct Fact {
  std::vector<double> numbers;
  bool list = false;
  std::optional<std::string> text;
};

// What predicates see: the model's facts and the match's bindings.
struct Env {
  const PassContext& context;
  const GraphIndex& graph;
  const RuleMatch& match;

  std::string Value(const Term& term) const { return match.values.at(term.name); }
  const onnx::TypeProto* Type(const Term& term) const {
    const onnx::TypeProto* type = context.TypeOf(graph, Value(term));
    return type != nullptr && type->has_tensor_type() ? type : nullptr;
  }
  const onnx::TensorShapeProto* Shape(const Term& term) const {
    const onnx::TypeProto* type = Type(term);
    return type != nullptr && type->tensor_type().has_shape() ? &type->tensor_type().shape()
                                                              : nullptr;
  }
};

// Numbers equal, -0.0 apart from +0.0.
bool SameNumber(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

// Dims equal as far as inference tells.
bool SameDim(const onnx::TensorShapeProto::Dimension& a, const onnx::TensorShapeProto::Dimension& b) {
  if (a.has_dim_value() && b.has_dim_value()) return a.dim_value() == b.dim_value();
  return a.has_dim_param() && b.has_dim_param() && !a.dim_param().empty() &&
         a.dim_param() == b.dim_param();
}

// The elements of constant `name` as doubles, or nullopt.
std::optional<std::vector<double>> ConstantNumbers(const Env& env, const std::string& name) {
  const onnx::TensorProto* constant = env.context.KnownConstant(env.graph, name);
  if (constant == nullptr || constant->data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  absl::StatusOr<eval::Tensor> tensor = eval::FromProto(*constant, 1 << 16);
  if (!tensor.ok() || tensor->elem_type() == onnx::TensorProto::STRING) return std::nullopt;
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  onnx::AttributeProto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::DOUBLE);
  const eval::Tensor* inputs[] = {&*tensor};
  absl::StatusOr<std::vector<eval::Tensor>> doubles = eval::EvaluateNode(cast, 13, inputs);
  if (!doubles.ok()) return std::nullopt;
  absl::Span<const double> data = (*doubles)[0].data<double>();
  return std::vector<double>(data.begin(), data.end());
}

// The value of attribute `@name` as a fact.
std::optional<Fact> AttributeFact(const Env& env, const std::string& name) {
  auto found = env.match.attributes.find(name);
  if (found == env.match.attributes.end()) return std::nullopt;
  const onnx::AttributeProto& a = found->second;
  switch (a.type()) {
    case onnx::AttributeProto::INT: return Fact{{static_cast<double>(a.i())}};
    case onnx::AttributeProto::FLOAT: return Fact{{a.f()}};
    case onnx::AttributeProto::STRING: return Fact{{}, false, a.s()};
    case onnx::AttributeProto::INTS: return Fact{{a.ints().begin(), a.ints().end()}, true};
    case onnx::AttributeProto::FLOATS: return Fact{{a.floats().begin(), a.floats().end()}, true};
    default: return std::nullopt;
  }
}

std::optional<std::vector<int64_t>> AttributeInts(const Env& env, const Term& term) {
  std::optional<Fact> fact = AttributeFact(env, term.name);
  if (!fact || fact->text) return std::nullopt;
  return std::vector<int64_t>(fact->numbers.begin(), fact->numbers.end());
}

std::optional<Fact> Bool(bool b) { return Fact{{b ? 1.0 : 0.0}}; }

using FactFn = std::function<std::optional<Fact>(const Env&, const std::vector<Term>&)>;

// How each predicate computes its fact (boolean ones: 1 or 0).
const std::map<std::string, FactFn>& FactFns() {
  static const auto* fns = new std::map<std::string, FactFn>{
      {"rank",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorShapeProto* shape = env.Shape(args[0]);
         if (shape == nullptr) return std::nullopt;
         return Fact{{static_cast<double>(shape->dim_size())}};
       }},
      {"dim",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorShapeProto* shape = env.Shape(args[0]);
         if (shape == nullptr) return std::nullopt;
         int64_t i = static_cast<int64_t>(args[1].numbers[0]);
         if (i < 0) i += shape->dim_size();
         if (i < 0 || i >= shape->dim_size() || !shape->dim(i).has_dim_value()) return std::nullopt;
         return Fact{{static_cast<double>(shape->dim(i).dim_value())}};
       }},
      {"dtype",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TypeProto* type = env.Type(args[0]);
         if (type == nullptr || type->tensor_type().elem_type() == 0) return std::nullopt;
         return Fact{{static_cast<double>(type->tensor_type().elem_type())}};
       }},
      {"value",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         std::optional<std::vector<double>> numbers = ConstantNumbers(env, env.Value(args[0]));
         if (!numbers) return std::nullopt;
         return Fact{*std::move(numbers), true};
       }},
      {"opset",
       [](const Env& env, const std::vector<Term>&) -> std::optional<Fact> {
         int version = env.context.OpsetVersion("");
         if (version == 0) return std::nullopt;
         return Fact{{static_cast<double>(version)}};
       }},
      {"@",
       [](const Env& env, const std::vector<Term>& args) {
         return AttributeFact(env, args[0].name);
       }},
      {"is_const",
       [](const Env& env, const std::vector<Term>& args) {
         return Bool(env.context.KnownConstant(env.graph, env.Value(args[0])) != nullptr);
       }},
      {"one_use",
       [](const Env& env, const std::vector<Term>& args) {
         absl::Span<const ValueUse> uses = env.graph.Consumers(env.Value(args[0]));
         return Bool(uses.size() == 1 && uses[0].is_input());
       }},
      {"same_shape",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorShapeProto* a = env.Shape(args[0]);
         const onnx::TensorShapeProto* b = env.Shape(args[1]);
         if (a == nullptr || b == nullptr || a->dim_size() != b->dim_size()) return std::nullopt;
         for (int i = 0; i < a->dim_size(); ++i) {
           if (!SameDim(a->dim(i), b->dim(i))) return std::nullopt;
         }
         return Bool(true);
       }},
      {"broadcast_keeps",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorShapeProto* x = env.Shape(args[0]);
         const onnx::TensorShapeProto* k = env.Shape(args[1]);
         if (x == nullptr || k == nullptr || k->dim_size() > x->dim_size()) return std::nullopt;
         int offset = x->dim_size() - k->dim_size();
         for (int i = 0; i < k->dim_size(); ++i) {
           const auto& kd = k->dim(i);
           if (kd.has_dim_value() && kd.dim_value() == 1) continue;
           if (!SameDim(kd, x->dim(offset + i))) return std::nullopt;
         }
         return Bool(true);
       }},
      {"per_channel",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorShapeProto* x = env.Shape(args[0]);
         const onnx::TensorShapeProto* k = env.Shape(args[1]);
         if (x == nullptr || k == nullptr || x->dim_size() < 2 || k->dim_size() > x->dim_size()) {
           return std::nullopt;
         }
         const int offset = x->dim_size() - k->dim_size();
         for (int i = 0; i < k->dim_size(); ++i) {
           const auto& kd = k->dim(i);
           if (kd.has_dim_value() && kd.dim_value() == 1) continue;
           if (offset + i != 1 || !SameDim(kd, x->dim(1))) return Bool(false);
         }
         return Bool(true);
       }},
      {"same_value",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorProto* a = env.context.KnownConstant(env.graph, env.Value(args[0]));
         const onnx::TensorProto* b = env.context.KnownConstant(env.graph, env.Value(args[1]));
         if (a == nullptr || b == nullptr || a->data_type() != b->data_type() ||
             !std::equal(a->dims().begin(), a->dims().end(), b->dims().begin(), b->dims().end())) {
           return std::nullopt;
         }
         std::optional<std::vector<double>> x = ConstantNumbers(env, env.Value(args[0]));
         std::optional<std::vector<double>> y = ConstantNumbers(env, env.Value(args[1]));
         if (!x || !y || x->size() != y->size()) return std::nullopt;
         for (size_t i = 0; i < x->size(); ++i) {
           if (!SameNumber((*x)[i], (*y)[i])) return Bool(false);
         }
         return Bool(true);
       }},
      {"no_zero",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         std::optional<std::vector<double>> x = ConstantNumbers(env, env.Value(args[0]));
         if (!x) return std::nullopt;
         for (double v : *x) {
           if (v == 0) return Bool(false);
         }
         return Bool(true);
       }},
      {"is_identity",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         std::optional<std::vector<int64_t>> perm = AttributeInts(env, args[0]);
         if (!perm) return std::nullopt;
         for (size_t i = 0; i < perm->size(); ++i) {
           if ((*perm)[i] != static_cast<int64_t>(i)) return Bool(false);
         }
         return Bool(true);
       }},
      {"outputs",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         ValueSource source = env.graph.Producer(env.Value(args[0]));
         if (source.kind != ValueSource::Kind::kNodeOutput) return std::nullopt;
         const onnx::NodeProto& node = env.graph.node(source.index);
         int count = node.output_size();
         while (count > 0 && node.output(count - 1).empty()) --count;
         return Fact{{static_cast<double>(count)}};
       }},
      {"composes_to_identity",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         std::optional<std::vector<int64_t>> p1 = AttributeInts(env, args[0]);
         std::optional<std::vector<int64_t>> p2 = AttributeInts(env, args[1]);
         if (!p1 || !p2 || p1->size() != p2->size()) return std::nullopt;
         const int64_t n = static_cast<int64_t>(p1->size());
         for (int64_t j = 0; j < n; ++j) {
           int64_t k = (*p2)[j];
           if (k < 0 || k >= n || (*p1)[k] != j) return Bool(false);
         }
         return Bool(true);
       }},
  };
  return *fns;
}

// The right-hand side of a comparison as a fact.
std::optional<Fact> TermFact(const Env& env, const Term& term) {
  switch (term.kind) {
    case Term::Kind::kNumber: return Fact{term.numbers};
    case Term::Kind::kList: return Fact{term.numbers, true};
    case Term::Kind::kDtype: return Fact{{static_cast<double>(DtypeNames().at(term.name))}};
    case Term::Kind::kString: return Fact{{}, false, term.name};
    case Term::Kind::kAttribute: return AttributeFact(env, term.name);
    case Term::Kind::kValue: return std::nullopt;
  }
  return std::nullopt;
}

// Whether `lhs` `comparison` `rhs` holds; a list against a scalar compares
// every element.
bool Compare(const Fact& lhs, absl::string_view comparison, const Fact& rhs) {
  if (lhs.text || rhs.text) {
    bool equal = lhs.text == rhs.text;
    return comparison == "==" ? equal : comparison == "!=" ? !equal : false;
  }
  if (comparison == "==" || comparison == "!=") {
    bool equal;
    if (!rhs.list && rhs.numbers.size() == 1) {
      equal = !lhs.numbers.empty();
      for (double v : lhs.numbers) equal &= SameNumber(v, rhs.numbers[0]);
    } else {
      equal = lhs.numbers.size() == rhs.numbers.size();
      for (size_t i = 0; equal && i < lhs.numbers.size(); ++i) {
        equal = SameNumber(lhs.numbers[i], rhs.numbers[i]);
      }
    }
    return (comparison == "==") == equal;
  }
  if (lhs.list || rhs.list || lhs.numbers.size() != 1 || rhs.numbers.size() != 1) return false;
  double a = lhs.numbers[0], b = rhs.numbers[0];
  if (comparison == "<") return a < b;
  if (comparison == "<=") return a <= b;
  if (comparison == ">") return a > b;
  return a >= b;
}

bool Holds(const Env& env, const Predicate& predicate) {
  std::optional<Fact> fact = FactFns().at(predicate.function)(env, predicate.args);
  if (!fact) return false;
  if (predicate.comparison.empty()) return fact->numbers == std::vector<double>{1.0};
  std::optional<Fact> rhs = TermFact(env, predicate.rhs);
  return rhs && Compare(*fact, predicate.comparison, *rhs);
}

// ---- Matching ----

// An attribute's content, name and doc aside.
std::string AttributeContent(onnx::AttributeProto attribute) {
  attribute.clear_name();
  attribute.clear_doc_string();
  return attribute.SerializeAsString();
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, absl::string_view name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// A node's inputs without the trailing omitted ones.
std::vector<std::string> Inputs(const onnx::NodeProto& node) {
  std::vector<std::string> inputs(node.input().begin(), node.input().end());
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  return inputs;
}

// The default the schema of `node`'s op (at the model's opset for its
// domain) gives attribute `name`, named `name`; nullopt when it has none.
// `defined` says whether that op version has the attribute at all.
std::optional<onnx::AttributeProto> SchemaDefault(const PassContext& context,
                                                  const onnx::NodeProto& node,
                                                  absl::string_view name, bool& defined) {
  defined = false;
  absl::string_view domain = schema::Registry::CanonicalDomain(node.domain());
  const schema::OpSchema* op =
      schema::Registry::Get().Lookup(domain, node.op_type(), context.OpsetVersion(domain));
  if (op == nullptr) return std::nullopt;
  const schema::AttrSpec* spec = op->FindAttr(name);
  defined = spec != nullptr;
  if (spec == nullptr) return std::nullopt;
  return schema::DefaultAttribute(*spec, name);
}

class Matcher {
 public:
  // Matches with the commutative pattern nodes whose bit is set in `swaps`
  // taking their operands swapped.
  Matcher(const Rule& rule, const PassContext& context, const GraphIndex& graph, uint32_t swaps)
      : rule_(rule), context_(context), graph_(graph), swaps_(swaps) {
    const onnx::FunctionProto& p = rule.pattern;
    for (int i = 0; i < p.node_size(); ++i) {
      for (int s = 0; s < p.node(i).output_size(); ++s) producer_[p.node(i).output(s)] = {i, s};
    }
    inputs_.insert(p.input().begin(), p.input().end());
  }

  std::optional<RuleMatch> Match(NodeId root) {
    RuleMatch match;
    match.nodes.assign(rule_.pattern.node_size(), kNoNode);
    auto [index, slot] = producer_.at(rule_.pattern.output(0));
    if (!MatchNode(index, root, match)) return std::nullopt;
    if (!CheckUses(match)) return std::nullopt;
    return match;
  }

 private:
  bool MatchNode(int pi, NodeId id, RuleMatch& match) const {
    if (match.nodes[pi] != kNoNode) return match.nodes[pi] == id;
    for (NodeId other : match.nodes) {
      if (other == id) return false;
    }
    const onnx::NodeProto& p = rule_.pattern.node(pi);
    const onnx::NodeProto& g = graph_.node(id);
    if (p.op_type() != g.op_type() || schema::Registry::CanonicalDomain(p.domain()) !=
                                          schema::Registry::CanonicalDomain(g.domain())) {
      return false;
    }
    RuleMatch trial = match;
    trial.nodes[pi] = id;
    if (!BindOutputs(p, g, trial) || !BindAttributes(p, g, trial)) return false;
    std::vector<std::string> p_inputs = Inputs(p);
    std::vector<std::string> g_inputs = Inputs(g);
    if (p_inputs.size() != g_inputs.size()) return false;
    if (((swaps_ >> pi) & 1) != 0) std::swap(g_inputs[0], g_inputs[1]);
    for (size_t i = 0; i < p_inputs.size(); ++i) {
      if (!MatchValue(p_inputs[i], g_inputs[i], trial)) return false;
    }
    match = std::move(trial);
    return true;
  }

  bool BindOutputs(const onnx::NodeProto& p, const onnx::NodeProto& g, RuleMatch& match) const {
    for (int s = 0; s < g.output_size(); ++s) {
      const std::string& value = g.output(s);
      if (s >= p.output_size() || p.output(s).empty()) {
        if (!value.empty() && !graph_.Consumers(value).empty()) return false;
        continue;
      }
      if (value.empty() || !Bind(p.output(s), value, match)) return false;
    }
    return p.output_size() <= g.output_size();
  }

  // Binds the pattern's attributes; one the graph node leaves unset takes
  // the schema's default. A literal the node's op version does not define
  // matches when unset.
  bool BindAttributes(const onnx::NodeProto& p, const onnx::NodeProto& g, RuleMatch& match) const {
    for (const onnx::AttributeProto& attribute : p.attribute()) {
      const onnx::AttributeProto* found = FindAttribute(g, attribute.name());
      std::optional<onnx::AttributeProto> by_default;
      if (found == nullptr) {
        bool defined = false;
        by_default = SchemaDefault(context_, g, attribute.name(), defined);
        if (!defined && attribute.ref_attr_name().empty()) continue;
        if (!by_default) return false;
        found = &*by_default;
      }
      if (attribute.ref_attr_name().empty()) {
        if (AttributeContent(attribute) != AttributeContent(*found)) return false;
        continue;
      }
      auto [it, inserted] = match.attributes.emplace(attribute.ref_attr_name(), *found);
      if (!inserted && AttributeContent(it->second) != AttributeContent(*found)) return false;
    }
    return true;
  }

  static bool Bind(const std::string& pattern, const std::string& value, RuleMatch& match) {
    auto [it, inserted] = match.values.emplace(pattern, value);
    return inserted || it->second == value;
  }

  bool MatchValue(const std::string& pattern, const std::string& value, RuleMatch& match) const {
    if (pattern.empty() || value.empty()) return pattern.empty() && value.empty();
    if (inputs_.contains(pattern)) return Bind(pattern, value, match);
    auto found = match.values.find(pattern);
    if (found != match.values.end()) return found->second == value;
    auto [pi, slot] = producer_.at(pattern);
    ValueSource source = graph_.Producer(value);
    if (source.kind != ValueSource::Kind::kNodeOutput || source.slot != slot) return false;
    return MatchNode(pi, source.index, match);
  }

  // Intermediates used only inside the match; pattern inputs not computed
  // by matched nodes.
  bool CheckUses(const RuleMatch& match) const {
    absl::flat_hash_set<NodeId> matched(match.nodes.begin(), match.nodes.end());
    absl::flat_hash_set<std::string> outputs(rule_.pattern.output().begin(),
                                             rule_.pattern.output().end());
    for (const auto& [pattern, value] : match.values) {
      if (inputs_.contains(pattern)) {
        ValueSource source = graph_.Producer(value);
        if (source.kind == ValueSource::Kind::kNodeOutput && matched.contains(source.index)) {
          return false;
        }
        continue;
      }
      if (outputs.contains(pattern)) continue;
      for (const ValueUse& use : graph_.Consumers(value)) {
        if (!use.is_input() || !matched.contains(use.node)) return false;
      }
    }
    return true;
  }

  const Rule& rule_;
  const PassContext& context_;
  const GraphIndex& graph_;
  const uint32_t swaps_;
  absl::flat_hash_map<std::string, std::pair<int, int>> producer_;
  absl::flat_hash_set<std::string> inputs_;
};

// The pattern outputs the replacement forwards from an input: output
// position -> pattern input position.
std::vector<std::pair<int, int>> Forwarded(const Rule& rule) {
  std::vector<std::pair<int, int>> forwarded;
  const onnx::FunctionProto& r = rule.replacement;
  for (int o = 0; o < r.output_size(); ++o) {
    for (int i = 0; i < r.input_size(); ++i) {
      if (r.output(o) == r.input(i)) {
        forwarded.push_back({o, i});
        break;
      }
    }
  }
  return forwarded;
}

bool IsGraphOutput(const GraphIndex& graph, absl::string_view value) {
  for (const ValueUse& use : graph.Consumers(value)) {
    if (use.is_graph_output()) return true;
  }
  return false;
}

// ---- Matching with commutative operands, and `where` ----

class RulesPass : public Pass {
 public:
  RulesPass(std::string name, absl::StatusOr<std::vector<Rule>> rules)
      : name_(std::move(name)), loaded_(rules.status()) {
    if (!rules.ok()) return;
    rules_ = *std::move(rules);
    for (const Rule& rule : rules_) by_root_[RootOp(rule)].push_back(&rule);
  }

  absl::string_view name() const override { return name_; }
  // A match takes nodes up to a pattern's size upstream of where it matches.
  int Reach(const RewriteOptions& options) const override {
    int reach = 1;
    for (const Rule& rule : rules_) {
      if (!rule.profile.empty() && rule.profile != options.profile) continue;
      reach = std::max(reach, rule.pattern.node_size());
    }
    return reach;
  }

  absl::StatusOr<bool> Run(const PassContext& context, GraphIndex& graph,
                           PassStats& stats) override {
    if (!loaded_.ok()) return loaded_;
    bool changed = false;
    for (NodeId id : graph.LiveNodes()) {
      if (!graph.IsLive(id)) continue;  // removed by an earlier match
      if (!context.focus().Visit(id)) continue;
      const onnx::NodeProto& node = graph.node(id);
      auto candidates = by_root_.find(OpKey(node.domain(), node.op_type()));
      if (candidates == by_root_.end()) continue;
      for (const Rule* candidate : candidates->second) {
        const Rule& rule = *candidate;
        if (!rule.profile.empty() && rule.profile != context.options().profile) continue;
        std::optional<RuleMatch> match = MatchRule(rule, context, graph, id);
        if (!match) continue;
        OC_RETURN_IF_ERROR(ApplyRule(rule, *match, graph, stats));
        ++stats.matches;
        ++stats.rule_matches[rule.name];
        changed = true;
        break;
      }
    }
    return changed;
  }

 private:
  // "domain\x1fop" of a node, the domain canonical.
  static std::string OpKey(absl::string_view domain, absl::string_view op) {
    return absl::StrCat(schema::Registry::CanonicalDomain(domain), "\x1f", op);
  }
  // The op of the pattern node computing the rule's first output: the only
  // nodes the rule can match at.
  static std::string RootOp(const Rule& rule) {
    const std::string& output = rule.pattern.output(0);
    for (const onnx::NodeProto& node : rule.pattern.node()) {
      for (const std::string& name : node.output()) {
        if (name == output) return OpKey(node.domain(), node.op_type());
      }
    }
    return "";
  }

  std::string name_;
  absl::Status loaded_;  // why the rules could not be read
  std::vector<Rule> rules_;
  // The rules by the op they can match at, in file order.
  absl::flat_hash_map<std::string, std::vector<const Rule*>> by_root_;
};

// The swap masks to try: bit i set swaps the operands of pattern node i,
// for the commutative binary nodes of a commutative rule.
std::vector<uint32_t> SwapMasks(const Rule& rule) {
  std::vector<uint32_t> masks = {0};
  if (!rule.commutative) return masks;
  for (int i = 0; i < rule.pattern.node_size() && i < 8; ++i) {
    const onnx::NodeProto& node = rule.pattern.node(i);
    if (Inputs(node).size() != 2 || !CommutativeOps().contains(node.op_type())) continue;
    for (size_t m = 0, n = masks.size(); m < n; ++m) masks.push_back(masks[m] | (1u << i));
  }
  return masks;
}

// The match of `rule` at `root` with operands swapped as `swaps` says.
std::optional<RuleMatch> MatchWith(const Rule& rule, const PassContext& context,
                                   const GraphIndex& graph, NodeId root, uint32_t swaps) {
  std::optional<RuleMatch> match = Matcher(rule, context, graph, swaps).Match(root);
  if (!match) return std::nullopt;
  for (auto [output, input] : Forwarded(rule)) {
    if (IsGraphOutput(graph, match->values.at(rule.pattern.output(output)))) return std::nullopt;
  }
  Env env{context, graph, *match};
  for (const Predicate& predicate : rule.where) {
    if (!Holds(env, predicate)) return std::nullopt;
  }
  return match;
}

// A replacement node named as a pattern node of the same op takes the
// attributes of the graph node matched there that it does not set itself.
void CopyUnsetAttributes(const Rule& rule, const RuleMatch& match, const GraphIndex& graph,
                         onnx::NodeProto& node) {
  if (node.name().empty()) return;
  for (int i = 0; i < rule.pattern.node_size(); ++i) {
    const onnx::NodeProto& p = rule.pattern.node(i);
    if (p.name() != node.name() || p.op_type() != node.op_type()) continue;
    for (const onnx::AttributeProto& attribute : graph.node(match.nodes[i]).attribute()) {
      if (FindAttribute(node, attribute.name()) == nullptr) *node.add_attribute() = attribute;
    }
    return;
  }
}

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

std::optional<RuleMatch> MatchRule(const Rule& rule, const PassContext& context,
                                   const GraphIndex& graph, NodeId root) {
  if (!graph.IsLive(root)) return std::nullopt;
  for (uint32_t swaps : SwapMasks(rule)) {
    std::optional<RuleMatch> match = MatchWith(rule, context, graph, root, swaps);
    if (match) return match;
  }
  return std::nullopt;
}

absl::Status ApplyRule(const Rule& rule, const RuleMatch& match, GraphIndex& graph,
                       PassStats& stats) {
  const onnx::FunctionProto& p = rule.pattern;
  const onnx::FunctionProto& r = rule.replacement;
  // Replacement names -> graph names.
  absl::flat_hash_map<std::string, std::string> names;
  for (int i = 0; i < r.input_size(); ++i) names[r.input(i)] = match.values.at(p.input(i));
  std::vector<std::pair<std::string, std::string>> renames;  // forwarded: from, to
  for (int o = 0; o < r.output_size(); ++o) {
    const std::string& graph_output = match.values.at(p.output(o));
    if (names.contains(r.output(o))) {
      renames.push_back({graph_output, names[r.output(o)]});
    } else {
      names[r.output(o)] = graph_output;
    }
  }
  std::vector<onnx::NodeProto> added;
  for (const onnx::NodeProto& node : r.node()) {
    onnx::NodeProto out = node;
    CopyUnsetAttributes(rule, match, graph, out);
    out.set_name(graph.FreshName(rule.name));
    for (int i = 0; i < out.input_size(); ++i) {
      if (!out.input(i).empty()) out.set_input(i, names.at(out.input(i)));
    }
    for (int i = 0; i < out.output_size(); ++i) {
      if (out.output(i).empty()) continue;
      auto [it, inserted] = names.emplace(out.output(i), "");
      if (inserted) it->second = graph.FreshName(out.output(i));
      out.set_output(i, it->second);
    }
    for (onnx::AttributeProto& attribute : *out.mutable_attribute()) {
      if (attribute.ref_attr_name().empty()) continue;
      std::string name = attribute.name();
      attribute = match.attributes.at(attribute.ref_attr_name());
      attribute.set_name(name);
    }
    added.push_back(std::move(out));
  }
  auto [root_index, root_slot] = std::pair<int, int>{-1, -1};
  for (int i = 0; i < p.node_size(); ++i) {
    for (const std::string& output : p.node(i).output()) {
      if (output == p.output(0)) root_index = i;
    }
  }
  const NodeId root = match.nodes[root_index];
  for (NodeId id : match.nodes) {
    if (id != root) OC_RETURN_IF_ERROR(graph.RemoveNode(id));
  }
  ir::GraphIndexRewriter rewriter(graph, root);
  for (onnx::NodeProto& node : added) rewriter.InsertBefore(std::move(node));
  rewriter.RemoveAnchor();
  OC_RETURN_IF_ERROR(rewriter.Finish());
  for (const auto& [from, to] : renames) OC_RETURN_IF_ERROR(graph.RenameUses(from, to));
  stats.nodes_removed += static_cast<int64_t>(match.nodes.size());
  stats.nodes_added += r.node_size();
  return absl::OkStatus();
}

std::unique_ptr<Pass> MakeRulesPass(std::string name, std::vector<Rule> rules) {
  return std::make_unique<RulesPass>(std::move(name), std::move(rules));
}

std::unique_ptr<Pass> MakeRules() {
  // A built-in rule file that does not parse (rules_test catches it) fails
  // the pass when it runs.
  return std::make_unique<RulesPass>("rules", BuiltinRules());
}

}  // namespace onnxconvert::rewrites
