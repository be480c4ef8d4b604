// The rule engine: patterns matched at a root node through the
// GraphIndex, `where` checked on the facts inference knows, replacements
// applied through ir::GraphIndexRewriter; the rules pass. Rule files are
// read by rule_parser.cc.

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
#include "rewrites/rules_internal.h"
#include "schema/registry.h"
namespace onnxconvert::rewrites {
namespace {

using rules_internal::DtypeNames;

// ---- Tables ----

// Binary ops whose two operands may be swapped.
const absl::flat_hash_set<std::string>& CommutativeOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Add", "Mul", "Max", "Min", "Sum", "And", "Or", "Xor", "Equal",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  return *ops;
}

// ---- Facts for `where` ----

// A fact: numbers (one for a scalar), or a string.
struct Fact {
  std::vector<double> numbers;
  bool list = false;
  std::optional<std::string> text = std::nullopt;
};

// What predicates see: the model's facts and the match's bindings.
struct Env {
  const PassContext& context;
  const GraphIndex& graph;
  const RuleMatch& match;

  const std::string& Value(const Term& term) const { return match.values.at(term.name); }
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
  // The common types directly; the others through the evaluator's Cast.
  auto as_doubles = [&](auto typed) {
    auto data = tensor->data<decltype(typed)>();
    return std::vector<double>(data.begin(), data.end());
  };
  switch (tensor->elem_type()) {
    case onnx::TensorProto::FLOAT: return as_doubles(float{});
    case onnx::TensorProto::DOUBLE: return as_doubles(double{});
    case onnx::TensorProto::INT64: return as_doubles(int64_t{});
    case onnx::TensorProto::INT32: return as_doubles(int32_t{});
    default: break;
  }
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

// The integers of a value-or-attribute term: a constant's elements, or an
// ints attribute; nullopt when unknown or not integral.
std::optional<std::vector<int64_t>> IntsOf(const Env& env, const Term& term) {
  if (term.kind == Term::Kind::kAttribute) return AttributeInts(env, term);
  std::optional<std::vector<double>> numbers = ConstantNumbers(env, env.Value(term));
  if (!numbers) return std::nullopt;
  std::vector<int64_t> ints;
  for (double v : *numbers) {
    if (v != std::floor(v)) return std::nullopt;
    ints.push_back(static_cast<int64_t>(v));
  }
  return ints;
}

// Whether every pad of `@pads` (begins, then ends) is below the kernel of
// the pool computing args[1] along its axis, the pool's dilations 1: then
// every window of the pool holds an element of its input.
std::optional<Fact> PadsBelowKernel(const Env& env, const std::vector<Term>& args) {
  std::optional<std::vector<int64_t>> pads = AttributeInts(env, args[0]);
  ValueSource source = env.graph.Producer(env.Value(args[1]));
  if (!pads || source.kind != ValueSource::Kind::kNodeOutput) return std::nullopt;
  std::vector<int64_t> kernel;
  for (const onnx::AttributeProto& attribute : env.graph.node(source.index).attribute()) {
    if (attribute.name() == "kernel_shape") kernel.assign(attribute.ints().begin(), attribute.ints().end());
    if (attribute.name() != "dilations") continue;
    for (int64_t dilation : attribute.ints()) {
      if (dilation != 1) return Bool(false);
    }
  }
  if (kernel.empty() || pads->size() != 2 * kernel.size()) return std::nullopt;
  for (size_t i = 0; i < pads->size(); ++i) {
    if ((*pads)[i] >= kernel[i % kernel.size()]) return Bool(false);
  }
  return Bool(true);
}

// Whether args[0] holds args[1]'s shape: computed by a Shape of it (the
// whole shape), or a constant equal to its dims, every one known.
std::optional<Fact> ShapeOf(const Env& env, const std::vector<Term>& args) {
  ValueSource source = env.graph.Producer(env.Value(args[0]));
  if (source.kind == ValueSource::Kind::kNodeOutput) {
    const onnx::NodeProto& node = env.graph.node(source.index);
    if (node.op_type() == "Shape" && node.input_size() == 1 &&
        node.input(0) == env.Value(args[1]) && node.attribute_size() == 0) {
      return Bool(true);
    }
  }
  std::optional<std::vector<double>> dims = ConstantNumbers(env, env.Value(args[0]));
  const onnx::TensorShapeProto* x = env.Shape(args[1]);
  if (!dims || x == nullptr || dims->size() != static_cast<size_t>(x->dim_size())) {
    return std::nullopt;
  }
  for (int i = 0; i < x->dim_size(); ++i) {
    if (!x->dim(i).has_dim_value()) return std::nullopt;
    if ((*dims)[i] != static_cast<double>(x->dim(i).dim_value())) return Bool(false);
  }
  return Bool(true);
}

// -k when `axes` are the last k axes of `x` (any order, either sign; a
// positive axis needs x's rank), else nullopt.
std::optional<Fact> TrailingAxes(const Env& env, const std::vector<Term>& args) {
  std::optional<std::vector<int64_t>> axes = IntsOf(env, args[1]);
  if (!axes || axes->empty()) return std::nullopt;
  const onnx::TensorShapeProto* shape = env.Shape(args[0]);
  std::set<int64_t> negative;
  for (int64_t axis : *axes) {
    if (axis >= 0) {
      if (shape == nullptr) return std::nullopt;
      axis -= shape->dim_size();
    }
    negative.insert(axis);
  }
  const int64_t k = static_cast<int64_t>(axes->size());
  if (negative.size() != axes->size() || *negative.begin() != -k || *negative.rbegin() != -1) {
    return std::nullopt;
  }
  if (shape != nullptr && k > shape->dim_size()) return std::nullopt;
  return Fact{{static_cast<double>(-k)}};
}

// The `pads` of the Conv or pool computing `args[1]` (auto_pad NOTSET; no
// pads: zeros) plus the spatial pads of Pad's constant pads `args[0]`
// ([begin..., end...] over every axis); nullopt when those pad N or C, are
// negative, or do not fit.
std::optional<Fact> FusedPads(const Env& env, const std::vector<Term>& args) {
  std::optional<std::vector<int64_t>> pads = IntsOf(env, args[0]);
  ValueSource source = env.graph.Producer(env.Value(args[1]));
  if (!pads || pads->size() % 2 != 0 || pads->size() < 6 ||
      source.kind != ValueSource::Kind::kNodeOutput) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(pads->size() / 2);
  const int64_t spatial = rank - 2;
  for (int64_t pad : *pads) {
    if (pad < 0) return std::nullopt;
  }
  if ((*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 || (*pads)[rank + 1] != 0) {
    return std::nullopt;
  }
  std::vector<double> fused(2 * spatial, 0.0);
  for (const onnx::AttributeProto& attribute : env.graph.node(source.index).attribute()) {
    if (attribute.name() == "auto_pad" && attribute.s() != "NOTSET") return std::nullopt;
    if (attribute.name() != "pads") continue;
    if (attribute.ints_size() != 2 * spatial) return std::nullopt;
    for (int i = 0; i < 2 * spatial; ++i) fused[i] = static_cast<double>(attribute.ints(i));
  }
  for (int64_t i = 0; i < spatial; ++i) {
    fused[i] += static_cast<double>((*pads)[2 + i]);
    fused[spatial + i] += static_cast<double>((*pads)[rank + 2 + i]);
  }
  return Fact{std::move(fused), true};
}

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
      {"disjoint_axes",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         const onnx::TensorShapeProto* x = env.Shape(args[0]);
         std::optional<std::vector<double>> a1 = ConstantNumbers(env, env.Value(args[1]));
         std::optional<std::vector<double>> a2 = ConstantNumbers(env, env.Value(args[2]));
         if (x == nullptr || !a1 || !a2) return std::nullopt;
         const int64_t rank = x->dim_size();
         std::set<int64_t> seen;
         for (const std::vector<double>* axes : {&*a1, &*a2}) {
           for (double v : *axes) {
             int64_t axis = static_cast<int64_t>(v);
             if (axis < 0) axis += rank;
             if (axis < 0 || axis >= rank || !seen.insert(axis).second) return Bool(false);
           }
         }
         return Bool(true);
       }},
      {"trailing_axes", TrailingAxes},
      {"fused_pads", FusedPads},
      {"pads_below_kernel", PadsBelowKernel},
      {"shape_of", ShapeOf},
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

// The inputs of `node` without the trailing omitted ones.
int TrimmedInputCount(const onnx::NodeProto& node) {
  int n = node.input_size();
  while (n > 0 && node.input(n - 1).empty()) --n;
  return n;
}

// The swap masks to try: bit i set swaps the operands of pattern node i,
// for the commutative binary nodes of a commutative rule.
std::vector<uint32_t> SwapMasks(const Rule& rule) {
  std::vector<uint32_t> masks = {0};
  if (!rule.commutative) return masks;
  for (int i = 0; i < rule.pattern.node_size() && i < 8; ++i) {
    const onnx::NodeProto& node = rule.pattern.node(i);
    if (TrimmedInputCount(node) != 2 || !CommutativeOps().contains(node.op_type())) continue;
    for (size_t m = 0, n = masks.size(); m < n; ++m) masks.push_back(masks[m] | (1u << i));
  }
  return masks;
}

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

// What matching `rule` needs of its pattern, worked out once.
struct CompiledRule {
  explicit CompiledRule(const Rule& r) : rule(&r), swaps(SwapMasks(r)), forwarded(Forwarded(r)) {
    const onnx::FunctionProto& p = r.pattern;
    for (int i = 0; i < p.node_size(); ++i) {
      for (int s = 0; s < p.node(i).output_size(); ++s) producer[p.node(i).output(s)] = {i, s};
    }
    inputs.insert(p.input().begin(), p.input().end());
    outputs.insert(p.output().begin(), p.output().end());
    auto root = producer.find(p.output_size() > 0 ? p.output(0) : "");
    if (root != producer.end()) root_node = root->second.first;
    for (const onnx::NodeProto& node : p.node()) input_counts.push_back(TrimmedInputCount(node));
  }

  const Rule* rule;
  std::vector<uint32_t> swaps;
  std::vector<std::pair<int, int>> forwarded;
  // Pattern value -> (pattern node, output slot) computing it.
  absl::flat_hash_map<std::string, std::pair<int, int>> producer;
  absl::flat_hash_set<std::string> inputs;
  absl::flat_hash_set<std::string> outputs;
  int root_node = -1;               // the pattern node computing output 0
  std::vector<int> input_counts;    // per pattern node, trailing omitted ones aside
};

class Matcher {
 public:
  // Matches with the commutative pattern nodes whose bit is set in `swaps`
  // taking their operands swapped.
  Matcher(const CompiledRule& compiled, const PassContext& context, const GraphIndex& graph,
          uint32_t swaps)
      : compiled_(compiled), rule_(*compiled.rule), context_(context), graph_(graph),
        swaps_(swaps) {}

  std::optional<RuleMatch> Match(NodeId root) {
    if (compiled_.root_node < 0) return std::nullopt;
    origins_.clear();
    RuleMatch match;
    match.nodes.assign(rule_.pattern.node_size(), kNoNode);
    if (!MatchNode(compiled_.root_node, root, match)) return std::nullopt;
    if (!CheckUses(match)) return std::nullopt;
    return match;
  }

 private:
  // Binds pattern node `pi` to graph node `id`; a failure anywhere fails
  // the whole match (nothing is tried instead), so `match` needs no undo.
  bool MatchNode(int pi, NodeId id, RuleMatch& match) {
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
    const int inputs = compiled_.input_counts[pi];
    if (inputs != TrimmedInputCount(g)) return false;
    match.nodes[pi] = id;
    if (!BindOutputs(p, id, g, match) || !BindAttributes(p, g, match)) return false;
    const bool swapped = ((swaps_ >> pi) & 1) != 0;
    for (int i = 0; i < inputs; ++i) {
      const int slot = swapped && i < 2 ? 1 - i : i;
      if (!MatchValue(p.input(i), id, slot, match)) return false;
    }
    return true;
  }

  bool BindOutputs(const onnx::NodeProto& p, NodeId id, const onnx::NodeProto& g,
                   RuleMatch& match) {
    for (int s = 0; s < g.output_size(); ++s) {
      const std::string& value = g.output(s);
      if (s >= p.output_size() || p.output(s).empty()) {
        if (!value.empty() && !graph_.OutputConsumers(id, s).empty()) return false;
        continue;
      }
      if (value.empty() || !Bind(p.output(s), value, match)) return false;
      origins_.push_back({&p.output(s), id, s, /*output=*/true});
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

  // Matches pattern value `pattern` to input `slot` of graph node `id`.
  bool MatchValue(const std::string& pattern, NodeId id, int slot, RuleMatch& match) {
    const std::string& value = graph_.node(id).input(slot);
    if (pattern.empty() || value.empty()) return pattern.empty() && value.empty();
    if (compiled_.inputs.contains(pattern)) {
      origins_.push_back({&pattern, id, slot, /*output=*/false});
      return Bind(pattern, value, match);
    }
    auto found = match.values.find(pattern);
    if (found != match.values.end()) return found->second == value;
    auto [pi, pattern_slot] = compiled_.producer.at(pattern);
    ValueSource source = graph_.InputProducer(id, slot);
    if (source.kind != ValueSource::Kind::kNodeOutput || source.slot != pattern_slot) return false;
    return MatchNode(pi, source.index, match);
  }

  // Intermediates used only inside the match; pattern inputs not computed
  // by matched nodes.
  bool CheckUses(const RuleMatch& match) const {
    auto matched = [&](NodeId id) { return absl::c_linear_search(match.nodes, id); };
    for (const Origin& origin : origins_) {
      if (!origin.output) {
        ValueSource source = graph_.InputProducer(origin.node, origin.slot);
        if (source.kind == ValueSource::Kind::kNodeOutput && matched(source.index)) return false;
        continue;
      }
      if (compiled_.outputs.contains(*origin.pattern)) continue;
      for (const ValueUse& use : graph_.OutputConsumers(origin.node, origin.slot)) {
        if (!use.is_input() || !matched(use.node)) return false;
      }
    }
    return true;
  }

  // Where a pattern value was bound: a pattern input to a graph node's
  // input slot, or a pattern node's output to the graph node's output.
  struct Origin {
    const std::string* pattern;
    NodeId node;
    int slot;
    bool output;
  };

  const CompiledRule& compiled_;
  const Rule& rule_;
  const PassContext& context_;
  const GraphIndex& graph_;
  const uint32_t swaps_;
  std::vector<Origin> origins_;
};

// ---- Matching with commutative operands, and `where` ----

// The nodes `match` took, in graph order, in ONNX text.
std::string MatchedText(const GraphIndex& graph, const RuleMatch& match) {
  std::vector<NodeId> ids = match.nodes;
  std::sort(ids.begin(), ids.end());
  std::vector<const onnx::NodeProto*> nodes;
  for (NodeId id : ids) nodes.push_back(&graph.node(id));
  return NodesText(nodes);
}

// The attribute `fact` makes for a replacement attribute of `type`;
// nullopt when it does not fit (a list of other than one element for a
// scalar, a fraction for an integer).
std::optional<onnx::AttributeProto> FactAttribute(const Fact& fact,
                                                  onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto attribute;
  attribute.set_type(type);
  const bool integral = absl::c_all_of(fact.numbers, [](double v) { return v == std::floor(v); });
  switch (type) {
    case onnx::AttributeProto::STRING:
      if (!fact.text) return std::nullopt;
      attribute.set_s(*fact.text);
      return attribute;
    case onnx::AttributeProto::INT:
    case onnx::AttributeProto::FLOAT:
      if (fact.text || fact.numbers.size() != 1) return std::nullopt;
      if (type == onnx::AttributeProto::FLOAT) {
        attribute.set_f(static_cast<float>(fact.numbers[0]));
        return attribute;
      }
      if (!integral) return std::nullopt;
      attribute.set_i(static_cast<int64_t>(fact.numbers[0]));
      return attribute;
    case onnx::AttributeProto::INTS:
      if (fact.text || !integral) return std::nullopt;
      for (double v : fact.numbers) attribute.add_ints(static_cast<int64_t>(v));
      return attribute;
    case onnx::AttributeProto::FLOATS:
      if (fact.text) return std::nullopt;
      for (double v : fact.numbers) attribute.add_floats(static_cast<float>(v));
      return attribute;
    default:
      return std::nullopt;
  }
}

// The type the replacement declares for attribute variable `@var`.
onnx::AttributeProto::AttributeType DeclaredType(const Rule& rule, const std::string& var) {
  for (const onnx::NodeProto& node : rule.replacement.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.ref_attr_name() == var) return attribute.type();
    }
  }
  return onnx::AttributeProto::UNDEFINED;
}

// Whether `predicate` binds an attribute variable: `fact == @var` with
// @var not bound (yet).
bool Binds(const Predicate& predicate, const RuleMatch& match) {
  return predicate.comparison == "==" && predicate.rhs.kind == Term::Kind::kAttribute &&
         !match.attributes.contains(predicate.rhs.name);
}

// Binds the variable of binding `predicate` to its fact, typed as the
// replacement declares it; false when the fact is unknown or does not fit.
bool BindFact(const Rule& rule, const Env& env, const Predicate& predicate, RuleMatch& match) {
  std::optional<Fact> fact = FactFns().at(predicate.function)(env, predicate.args);
  if (!fact) return false;
  std::optional<onnx::AttributeProto> attribute =
      FactAttribute(*fact, DeclaredType(rule, predicate.rhs.name));
  if (!attribute) return false;
  match.attributes.emplace(predicate.rhs.name, *std::move(attribute));
  return true;
}

// The match of `compiled`'s rule at `root` with operands swapped as
// `swaps` says.
std::optional<RuleMatch> MatchWith(const CompiledRule& compiled, const PassContext& context,
                                   const GraphIndex& graph, NodeId root, uint32_t swaps) {
  const Rule& rule = *compiled.rule;
  std::optional<RuleMatch> match = Matcher(compiled, context, graph, swaps).Match(root);
  if (!match) return std::nullopt;
  for (auto [output, input] : compiled.forwarded) {
    auto [pi, slot] = compiled.producer.at(rule.pattern.output(output));
    if (graph.IsGraphOutputOf(match->nodes[pi], slot)) return std::nullopt;
  }
  Env env{context, graph, *match};
  for (const Predicate& predicate : rule.where) {
    if (Binds(predicate, *match)) {
      if (!BindFact(rule, env, predicate, *match)) return std::nullopt;
      continue;
    }
    if (!Holds(env, predicate)) return std::nullopt;
  }
  return match;
}

// The match of `compiled`'s rule at live node `root`, trying each swap.
std::optional<RuleMatch> MatchCompiled(const CompiledRule& compiled, const PassContext& context,
                                       const GraphIndex& graph, NodeId root) {
  if (!graph.IsLive(root)) return std::nullopt;
  for (uint32_t swaps : compiled.swaps) {
    std::optional<RuleMatch> match = MatchWith(compiled, context, graph, root, swaps);
    if (match) return match;
  }
  return std::nullopt;
}

class RulesPass : public Pass {
 public:
  RulesPass(std::string name, absl::StatusOr<std::vector<Rule>> rules)
      : name_(std::move(name)), loaded_(rules.status()) {
    if (!rules.ok()) return;
    rules_ = *std::move(rules);
    compiled_.reserve(rules_.size());
    for (const Rule& rule : rules_) {
      const CompiledRule& compiled = compiled_.emplace_back(rule);
      if (compiled.root_node < 0) continue;
      const onnx::NodeProto& root = rule.pattern.node(compiled.root_node);
      by_root_[root.op_type()].push_back(&compiled);
    }
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
      const onnx::NodeProto& node = graph.node(id);
      auto candidates = by_root_.find(node.op_type());
      if (candidates == by_root_.end() || !context.focus().Visit(id)) continue;
      const absl::string_view domain = schema::Registry::CanonicalDomain(node.domain());
      for (const CompiledRule* compiled : candidates->second) {
        const Rule& rule = *compiled->rule;
        if (!rule.profile.empty() && rule.profile != context.options().profile) continue;
        if (schema::Registry::CanonicalDomain(rule.pattern.node(compiled->root_node).domain()) !=
            domain) {
          continue;
        }
        std::optional<RuleMatch> match = MatchCompiled(*compiled, context, graph, id);
        if (!match) continue;
        const bool recorded = stats.WantsRecord(context.options());
        RewriteRecord record{graph.path(), rule.name,
                             recorded ? MatchedText(graph, *match) : "", ""};
        OC_RETURN_IF_ERROR(
            ApplyRule(rule, *match, graph, stats, recorded ? &record.after : nullptr));
        if (recorded) stats.Record(context.options(), std::move(record));
        ++stats.matches;
        ++stats.rule_matches[rule.name];
        changed = true;
        break;
      }
    }
    return changed;
  }

 private:
  std::string name_;
  absl::Status loaded_;  // why the rules could not be read
  std::vector<Rule> rules_;
  std::vector<CompiledRule> compiled_;  // one per rule, pointing into rules_
  // The rules by the op_type they can match at, in file order.
  absl::flat_hash_map<std::string, std::vector<const CompiledRule*>> by_root_;
};

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

std::optional<RuleMatch> MatchRule(const Rule& rule, const PassContext& context,
                                   const GraphIndex& graph, NodeId root) {
  return MatchCompiled(CompiledRule(rule), context, graph, root);
}

absl::Status ApplyRule(const Rule& rule, const RuleMatch& match, GraphIndex& graph,
                       PassStats& stats, std::string* added_text) {
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
  if (added_text != nullptr) {
    std::vector<const onnx::NodeProto*> nodes;
    for (const onnx::NodeProto& node : added) nodes.push_back(&node);
    *added_text = NodesText(nodes);
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

// ---- For ExplainRule (rules_explain.cc): a predicate's outcome ----

namespace {

// A fact as the explanation prints it: "3", "[1, 2]", "'text'", or a dtype
// name when `dtype`; a long list by its first elements and its size.
std::string FactText(const Fact& fact, bool dtype) {
  if (fact.text) return absl::StrCat("'", *fact.text, "'");
  if (dtype && fact.numbers.size() == 1) {
    for (const auto& [name, code] : DtypeNames()) {
      if (code == fact.numbers[0]) return name;
    }
  }
  constexpr size_t kShown = 8;
  const size_t shown = std::min(fact.numbers.size(), kShown);
  std::string numbers = absl::StrJoin(
      fact.numbers.begin(), fact.numbers.begin() + shown, ", ", [](std::string* out, double v) {
        absl::StrAppend(out, std::signbit(v) && v == 0 ? "-0" : absl::StrCat(v));
      });
  if (shown < fact.numbers.size()) {
    absl::StrAppend(&numbers, ", ... (", fact.numbers.size(), " elements)");
  }
  return fact.list || fact.numbers.size() != 1 ? absl::StrCat("[", numbers, "]") : numbers;
}

}  // namespace

namespace rules_internal {

PredicateOutcome EvaluatePredicate(const Rule& rule, const Predicate& predicate,
                                   const PassContext& context, const GraphIndex& graph,
                                   RuleMatch& match) {
  Env env{context, graph, match};
  PredicateOutcome outcome;
  outcome.holds = Binds(predicate, match) ? BindFact(rule, env, predicate, match)
                                          : Holds(env, predicate);
  const bool dtype = predicate.function == "dtype";
  if (std::optional<Fact> fact = FactFns().at(predicate.function)(env, predicate.args)) {
    outcome.fact = predicate.comparison.empty()
                       ? std::string(fact->numbers == std::vector<double>{1.0} ? "true" : "false")
                       : FactText(*fact, dtype);
  }
  if (!predicate.comparison.empty()) {
    if (std::optional<Fact> rhs = TermFact(env, predicate.rhs)) {
      outcome.rhs = FactText(*rhs, dtype || predicate.rhs.kind == Term::Kind::kDtype);
    }
  }
  return outcome;
}

std::vector<uint32_t> OperandSwaps(const Rule& rule) { return SwapMasks(rule); }

std::optional<onnx::AttributeProto> AttributeDefault(const PassContext& context,
                                                     const onnx::NodeProto& node,
                                                     absl::string_view name, bool& defined) {
  return SchemaDefault(context, node, name, defined);
}

}  // namespace rules_internal

}  // namespace onnxconvert::rewrites
