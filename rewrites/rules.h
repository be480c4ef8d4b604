#ifndef ONNX_CONVERT_REWRITES_RULES_H_
#define ONNX_CONVERT_REWRITES_RULES_H_

// Rewrite rules written in ONNX text, and the engine applying them.
//
// Rule file format (rewrites/rules/*.rules; one family per file):
//
//   # a comment, to the end of the line
//   profile deploy            # optional, before the first rule
//   rule NAME [commutative]
//     pattern (X, k) => (Y) { Y = Mul(X, k) }
//     replace (X, k) => (X)
//     where value(k) == 1 && broadcast_keeps(X, k)
//
// - `profile exact|deploy` (once, before the first rule): the file's rules
//   apply only when the rewrite runs that profile (RewriteOptions::profile);
//   without it they apply in every profile.
// - `rule NAME` starts a rule; `commutative` lets the pattern's commutative
//   binary ops (Add, Mul, Max, Min, Sum, And, Or, Xor, Equal, BitwiseAnd,
//   BitwiseOr, BitwiseXor) match with their two operands swapped.
// - `pattern` and `replace` are ONNX-text function signatures and bodies
//   (the engine parses them with ParseFunctionText); the body may span
//   lines, up to its closing `}`. Both have the same number of inputs and
//   outputs, paired by position. A replacement without a body (`{}` may be
//   left out) whose output is one of its inputs forwards that input: the
//   uses of the pattern's output then read the graph value bound to the
//   input (not allowed when the output is a graph output: no match).
// - In the pattern, an attribute `name: T = @var` binds the graph node's
//   attribute to `@var`; a literal attribute must equal the node's. An
//   attribute the node leaves unset takes the default of the op's schema
//   at the model's opset (no default: no match); a literal attribute that
//   op version does not define at all matches when unset (e.g.
//   `training_mode: int = 0` also matches BatchNormalization-9).
//   Attributes the pattern does not name are not constrained (name every
//   attribute the rewrite depends on). In the replacement `@var`
//   substitutes the bound attribute (`value_float: float = @eps` renames it).
// - A replacement node named like a pattern node of the same op (`[conv]
//   Y = Conv(X, W2, B2)` for the pattern's `[conv] T = Conv(X, W, B)`)
//   takes the attributes of the graph node matched there that it does not
//   set itself: the attributes the pattern leaves unnamed carry over.
// - Replacement nodes may compute new constants from constant inputs with
//   ordinary ops (Mul, Sqrt, Reshape...): fold-constants turns them into
//   initializers in the next round of the pass manager.
// - A pattern node's inputs match the graph node's inputs (trailing
//   omitted ones ignored) exactly in number; graph node outputs beyond the
//   pattern's must be unused. A pattern value computed by the pattern that
//   is not a pattern output (an intermediate) must have no user outside
//   the match and must not be a graph output.
// - `where` (one or more lines, each a conjunction with `&&`) holds
//   predicates over the facts inference knows of the model being
//   rewritten; an unknown fact is no match. Valued predicates are compared
//   with ==, !=, <, <=, >, >= to a number, a list `[0, 1]`, a dtype name
//   (float, int64, ...), a string or an attribute `@var`:
//     rank(X)  dim(X, i)  dtype(X)  value(k) (every element; -0.0 != 0)
//     opset (the model's ai.onnx version)  @var (an attribute's value)
//   Boolean predicates:
//     is_const(k)  one_use(T)  same_shape(X, Y)  broadcast_keeps(X, k)
//     same_value(a, b)  no_zero(k)  is_identity(@perm)
//     composes_to_identity(@p1, @p2) (Transpose p1 then p2 is the identity)
//     per_channel(X, k) (k broadcasts to X along X's axis 1 only: every
//       other dim of k, aligned to X's last dims, is 1)
//     disjoint_axes(X, a1, a2) (constant axes lists of X, negative ones
//       counted from X's rank: every axis in range, none twice in a1 and
//       a2 together)
//   More valued predicates:
//     outputs(Y) (the number of outputs of the node computing Y)
//     trailing_axes(X, a) (a: a constant or @attribute of axes; -k when
//       they are X's last k axes, in any order and either sign)
//     power(k, n) (the one element of constant k to the power n)
//     fused_pads(p, C) (the `pads` of the Conv or pool computing C, its
//       auto_pad NOTSET, plus the spatial part of constant Pad pads p;
//       unknown when p pads axis 0 or 1 or is negative)
//     fused_pads_on_axes(p, a, C) (the same for Pad-18's pads p over its
//       constant axes a; unknown when an axis is out of range or twice)
//     pads_below_kernel(@pads, C) (every pad of @pads is below the kernel
//       of the pool computing C along its axis, its dilations 1: each
//       window holds an element of the input)
//     shape_of(s, X) (s holds X's shape: a Shape of X, or a constant equal
//       to X's dims, every one known)
//     same_dim(X, i, Y, j) (dim i of X is dim j of Y, as inference knows
//       them; negative indices count from the end)
//     last_dim_power(c, X, p) (constant c, of one element, is X's last dim
//       to the power p, to float precision: within 2^-22 relatively)
//     attention_shapes(Q, K, V) (all of rank 4, [batch, heads, sequence,
//       head size]; Q's dims K's but the sequence, K's V's but the head
//       size)
//     attention_mask(M, S) (M can be Attention's additive attn_mask for
//       the scores S: rank 2 or more, broadcasting to S without growing
//       it, its last dim S's)
//   `fact == @var` with @var bound neither by the pattern nor by an earlier
//   predicate binds @var to the fact, for the replacement, which must use
//   it: typed as the replacement declares it (`epsilon: float = @eps` from
//   `value(e) == @eps` takes e's one element; ints take a list of integers);
//   a fact that is unknown or does not fit the type is no match.
//
// Errors in a rule file read "FILE:LINE:COLUMN: message".

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph_index.h"
#include "proto/onnx.pb.h"
#include "rewrites/pass.h"

namespace onnxconvert::rewrites {

// An argument or right-hand side of a predicate.
struct Term {
  enum class Kind { kValue, kAttribute, kNumber, kList, kDtype, kString };
  Kind kind = Kind::kNumber;
  std::string name;  // value, attribute (without '@'), dtype name, string
  std::vector<double> numbers;  // kNumber: one; kList: its elements
};

// One predicate of a rule's `where`.
struct Predicate {
  std::string function;    // "rank", "is_const", "opset", "@" (an attribute)...
  std::vector<Term> args;
  std::string comparison;  // "" for a boolean predicate
  Term rhs;
  int line = 0;
  int column = 0;
};

// A parsed rule.
struct Rule {
  std::string name;
  std::string file;
  int line = 0;
  bool commutative = false;
  std::string profile;  // the only profile applying it; "" for every profile
  onnx::FunctionProto pattern;
  onnx::FunctionProto replacement;
  std::vector<Predicate> where;
};

// The rules of `text`, a rule file named `file` (for messages).
absl::StatusOr<std::vector<Rule>> ParseRules(absl::string_view text, absl::string_view file);

// The built-in rules (rewrites/rules/*.rules, compiled in), in file order.
absl::StatusOr<std::vector<Rule>> BuiltinRules();

// Where a rule matched: the graph node of each pattern node, the graph
// value of each pattern value, and the attribute bound to each `@var`.
// A match's few bindings by name, in name order: the part of std::map's
// interface the engine uses, held in one inline array (a match binds a
// handful of names, and the engine tries a match at most nodes). Names
// view the rule's strings, which must outlive the bindings.
template <typename Value, size_t kInline>
class Bindings {
 public:
  using value_type = std::pair<absl::string_view, Value>;
  using Storage = absl::InlinedVector<value_type, kInline>;
  using iterator = typename Storage::iterator;
  using const_iterator = typename Storage::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

  // The entry of `key`, or end().
  iterator find(absl::string_view key) {
    iterator it = LowerBound(key);
    return it != end() && it->first == key ? it : end();
  }
  const_iterator find(absl::string_view key) const {
    return const_cast<Bindings*>(this)->find(key);
  }
  bool contains(absl::string_view key) const { return find(key) != end(); }
  // The value of `key`; std::out_of_range when unbound.
  const Value& at(absl::string_view key) const {
    const_iterator it = find(key);
    if (it == end()) throw std::out_of_range(std::string(key));
    return it->second;
  }
  // Binds `key` to a value made of `args` unless bound already; the entry
  // and whether it is new.
  template <typename... Args>
  std::pair<iterator, bool> emplace(absl::string_view key, Args&&... args) {
    iterator it = LowerBound(key);
    if (it != end() && it->first == key) return {it, false};
    it = entries_.emplace(it, std::piecewise_construct, std::forward_as_tuple(key),
                          std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }

 private:
  iterator LowerBound(absl::string_view key) {
    iterator it = entries_.begin();
    while (it != entries_.end() && it->first < key) ++it;
    return it;
  }

  Storage entries_;
};

struct RuleMatch {
  absl::InlinedVector<NodeId, 4> nodes;
  // Values view the graph's names: valid until the graph is edited.
  Bindings<absl::string_view, 8> values;
  Bindings<onnx::AttributeProto, 2> attributes;
  // Where the matcher bound pattern inputs: the graph node input each was
  // first read at, so that facts find its producer by id rather than by
  // name (a pattern input not listed is looked up by name).
  struct InputSite {
    const std::string* pattern;  // the rule's name of the input
    NodeId node;
    int slot;
  };
  absl::InlinedVector<InputSite, 8> input_sites;
};

// The match of `rule` rooted at live node `root` of `graph` (the node
// computing the pattern's first output), where every `where` holds on the
// facts of `context`; nullopt when it does not match.
std::optional<RuleMatch> MatchRule(const Rule& rule, const PassContext& context,
                                   const GraphIndex& graph, NodeId root);

// Replaces `match` of `rule` in `graph` by the rule's replacement, counting
// nodes in `stats`; `added_text` (when given) receives the nodes added, in
// ONNX text.
absl::Status ApplyRule(const Rule& rule, const RuleMatch& match, GraphIndex& graph,
                       PassStats& stats, std::string* added_text = nullptr);

// A pass applying `rules` (each graph node tried as the root of each rule,
// first match wins; a rule of another profile than the rewrite's skipped),
// named `name`.
std::unique_ptr<Pass> MakeRulesPass(std::string name, std::vector<Rule> rules);

}  // namespace onnxconvert::rewrites

#endif  // ONNX_CONVERT_REWRITES_RULES_H_
