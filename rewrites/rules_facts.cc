// The facts `where` predicates see (rules.h lists them) and the
// predicates' evaluation on a match: the other half of the rule engine
// (rules.cc matches the patterns and applies the replacements).

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "rewrites/rules_internal.h"

namespace onnxconvert::rewrites {
namespace {

using rules_internal::DtypeNames;


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

  absl::string_view Value(const Term& term) const { return match.values.at(term.name); }
  // What defines the value `term` names: found by id where the matcher
  // bound it at a node input, else by name.
  ValueSource Source(const Term& term) const {
    for (const RuleMatch::InputSite& site : match.input_sites) {
      if (*site.pattern == term.name) return graph.InputProducer(site.node, site.slot);
    }
    return graph.Producer(Value(term));
  }
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
std::optional<std::vector<double>> NumbersOf(const onnx::TensorProto* constant);

std::optional<std::vector<double>> ConstantNumbers(const Env& env, const Term& term) {
  // An initializer's numbers are read once per round (rules read the same
  // weights at many nodes).
  const absl::string_view name = env.Value(term);
  const ValueSource source = env.Source(term);
  if (source.kind == ValueSource::Kind::kNodeOutput) {
    // A node's output is a constant only when inference knows it as one
    // (KnownConstant's answer, without looking the name up twice more).
    const schema::GraphTypes* types = env.context.GraphTypesOf(env.graph);
    if (types == nullptr || !types->facts.contains(name)) return std::nullopt;
  }
  // FindInitializer's answer, by index where the graph defines the value.
  const onnx::TensorProto* initializer = nullptr;
  if (source.kind == ValueSource::Kind::kInitializer) {
    if (env.graph.graph() != nullptr) initializer = &env.graph.graph()->initializer(source.index);
  } else if (source.kind == ValueSource::Kind::kOuterScope) {
    initializer = env.graph.FindInitializer(name);
  }
  if (initializer != nullptr) {
    return env.context.InitializerNumbers(initializer, [&] { return NumbersOf(initializer); });
  }
  return NumbersOf(env.context.KnownConstant(env.graph, name));
}

// The numbers `constant` holds, as doubles; nullopt when unknown (null,
// external, strings, too large).
std::optional<std::vector<double>> NumbersOf(const onnx::TensorProto* constant) {
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
  std::optional<std::vector<double>> numbers = ConstantNumbers(env, term);
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
  std::optional<std::vector<double>> dims = ConstantNumbers(env, args[0]);
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

// The `pads` of the Conv or pool computing `consumer` (auto_pad NOTSET; no
// pads: zeros) plus the spatial part of Pad's `pads` ([begin..., end...]
// over every axis); nullopt when those pad N or C, are negative, or do not
// fit.
std::optional<Fact> FusedPadsOf(const Env& env, const std::optional<std::vector<int64_t>>& pads,
                                const Term& consumer) {
  ValueSource source = env.graph.Producer(env.Value(consumer));
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

// fused_pads(p, C): Pad's constant pads `args[0]` over every axis.
std::optional<Fact> FusedPads(const Env& env, const std::vector<Term>& args) {
  return FusedPadsOf(env, IntsOf(env, args[0]), args[1]);
}

// fused_pads_on_axes(p, a, C): Pad's constant pads `args[0]` over its
// constant `axes` `args[1]` (Pad-18; negative axes count from the rank of
// C, which the padded input shares), spread over every axis; nullopt when
// an axis is out of range or listed twice.
std::optional<Fact> FusedPadsOnAxes(const Env& env, const std::vector<Term>& args) {
  std::optional<std::vector<int64_t>> pads = IntsOf(env, args[0]);
  std::optional<std::vector<int64_t>> axes = IntsOf(env, args[1]);
  const onnx::TensorShapeProto* shape = env.Shape(args[2]);
  if (!pads || !axes || shape == nullptr || pads->size() != 2 * axes->size()) {
    return std::nullopt;
  }
  const int64_t rank = shape->dim_size();
  const int64_t n = static_cast<int64_t>(axes->size());
  std::vector<int64_t> full(2 * rank, 0);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < n; ++i) {
    int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (axis < 0 || axis >= rank || !seen.insert(axis).second) return std::nullopt;
    full[axis] = (*pads)[i];
    full[rank + axis] = (*pads)[n + i];
  }
  return FusedPadsOf(env, full, args[2]);
}

// True when `k` broadcasts to `x` without growing it (each dim of k,
// aligned to x's last dims, 1 or x's); unknown otherwise.
std::optional<Fact> BroadcastKeeps(const onnx::TensorShapeProto* x,
                                   const onnx::TensorShapeProto* k) {
  if (x == nullptr || k == nullptr || k->dim_size() > x->dim_size()) return std::nullopt;
  int offset = x->dim_size() - k->dim_size();
  for (int i = 0; i < k->dim_size(); ++i) {
    const auto& kd = k->dim(i);
    if (kd.has_dim_value() && kd.dim_value() == 1) continue;
    if (!SameDim(kd, x->dim(offset + i))) return std::nullopt;
  }
  return Bool(true);
}

// Dim `i` of `shape` (negative: from the end), or nullptr when out of range.
const onnx::TensorShapeProto::Dimension* DimAt(const onnx::TensorShapeProto* shape, double i) {
  if (shape == nullptr) return nullptr;
  int64_t axis = static_cast<int64_t>(i);
  if (axis < 0) axis += shape->dim_size();
  return axis >= 0 && axis < shape->dim_size() ? &shape->dim(static_cast<int>(axis)) : nullptr;
}

// Whether dim args[1] of args[0] is dim args[3] of args[2] (negative
// indices from the end): true when inference knows them equal, false when
// it knows two different sizes, unknown otherwise.
std::optional<Fact> SameDimFact(const Env& env, const std::vector<Term>& args) {
  const auto* a = DimAt(env.Shape(args[0]), args[1].numbers[0]);
  const auto* b = DimAt(env.Shape(args[2]), args[3].numbers[0]);
  if (a == nullptr || b == nullptr) return std::nullopt;
  if (SameDim(*a, *b)) return Bool(true);
  if (a->has_dim_value() && b->has_dim_value()) return Bool(false);
  return std::nullopt;
}

// attention_shapes(Q, K, V): Q, K and V of rank 4 ([batch, heads,
// sequence, head size]), Q and K alike but in their sequence lengths, K and
// V alike but in their head sizes. False when inference knows a rank or two
// sizes that differ; unknown when it cannot tell.
std::optional<Fact> AttentionShapes(const Env& env, const std::vector<Term>& args) {
  const onnx::TensorShapeProto* q = env.Shape(args[0]);
  const onnx::TensorShapeProto* k = env.Shape(args[1]);
  const onnx::TensorShapeProto* v = env.Shape(args[2]);
  if (q == nullptr || k == nullptr || v == nullptr) return std::nullopt;
  if (q->dim_size() != 4 || k->dim_size() != 4 || v->dim_size() != 4) return Bool(false);
  struct DimPair {
    const onnx::TensorShapeProto* a;
    int i;
    const onnx::TensorShapeProto* b;
    int j;
  };
  const DimPair pairs[] = {{q, 0, k, 0}, {q, 1, k, 1}, {q, 3, k, 3},
                           {k, 0, v, 0}, {k, 1, v, 1}, {k, 2, v, 2}};
  bool known = true;
  for (const DimPair& pair : pairs) {
    const auto& a = pair.a->dim(pair.i);
    const auto& b = pair.b->dim(pair.j);
    if (SameDim(a, b)) continue;
    if (a.has_dim_value() && b.has_dim_value()) return Bool(false);
    known = false;
  }
  if (!known) return std::nullopt;
  return Bool(true);
}

// Whether constant args[0], of one element, is the last dim of args[1] to
// the power args[2], to float precision: within 2^-22 of it, relatively
// (an exporter's float rounding of d^p, however it computed it).
std::optional<Fact> LastDimPower(const Env& env, const std::vector<Term>& args) {
  std::optional<std::vector<double>> c = ConstantNumbers(env, args[0]);
  const auto* last = DimAt(env.Shape(args[1]), -1);
  if (!c || c->size() != 1 || last == nullptr || !last->has_dim_value() ||
      last->dim_value() < 1) {
    return std::nullopt;
  }
  const double want = std::pow(static_cast<double>(last->dim_value()), args[2].numbers[0]);
  return Bool(std::abs((*c)[0] - want) <= want * 0x1p-22);
}

// The one element of constant args[0] to the power args[1]; unknown when
// it is not a constant of one element or the power is not finite.
std::optional<Fact> Power(const Env& env, const std::vector<Term>& args) {
  std::optional<std::vector<double>> c = ConstantNumbers(env, args[0]);
  if (!c || c->size() != 1) return std::nullopt;
  const double power = std::pow((*c)[0], args[1].numbers[0]);
  if (!std::isfinite(power)) return std::nullopt;
  return Fact{{power}};
}

// Whether args[0] can be Attention's additive attn_mask for the scores
// args[1] ([batch, heads, q, kv]): of rank 2 or more, broadcasting to the
// scores without growing them, its last dim the scores' (Attention pads a
// shorter key dim with -inf: a last dim of 1 would not broadcast).
std::optional<Fact> AttentionMask(const Env& env, const std::vector<Term>& args) {
  const onnx::TensorShapeProto* mask = env.Shape(args[0]);
  const onnx::TensorShapeProto* scores = env.Shape(args[1]);
  if (mask == nullptr || scores == nullptr) return std::nullopt;
  if (mask->dim_size() < 2) return Bool(false);
  std::optional<Fact> keeps = BroadcastKeeps(scores, mask);
  if (!keeps) return std::nullopt;
  return SameDimFact(env, {args[0], Term{Term::Kind::kNumber, "", {-1}}, args[1],
                           Term{Term::Kind::kNumber, "", {-1}}});
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
         std::optional<std::vector<double>> numbers = ConstantNumbers(env, args[0]);
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
       [](const Env& env, const std::vector<Term>& args) {
         return BroadcastKeeps(env.Shape(args[0]), env.Shape(args[1]));
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
         std::optional<std::vector<double>> x = ConstantNumbers(env, args[0]);
         std::optional<std::vector<double>> y = ConstantNumbers(env, args[1]);
         if (!x || !y || x->size() != y->size()) return std::nullopt;
         for (size_t i = 0; i < x->size(); ++i) {
           if (!SameNumber((*x)[i], (*y)[i])) return Bool(false);
         }
         return Bool(true);
       }},
      {"no_zero",
       [](const Env& env, const std::vector<Term>& args) -> std::optional<Fact> {
         std::optional<std::vector<double>> x = ConstantNumbers(env, args[0]);
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
         std::optional<std::vector<double>> a1 = ConstantNumbers(env, args[1]);
         std::optional<std::vector<double>> a2 = ConstantNumbers(env, args[2]);
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
      {"same_dim", SameDimFact},
      {"last_dim_power", LastDimPower},
      {"power", Power},
      {"attention_mask", AttentionMask},
      {"attention_shapes", AttentionShapes},
      {"fused_pads", FusedPads},
      {"fused_pads_on_axes", FusedPadsOnAxes},
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
  if (predicate.comparison.empty()) return fact->numbers.size() == 1 && fact->numbers[0] == 1.0;
  std::optional<Fact> rhs = TermFact(env, predicate.rhs);
  return rhs && Compare(*fact, predicate.comparison, *rhs);
}

// ---- Binding `fact == @var` ----

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

// ---- For ExplainRule (rules_explain.cc): a predicate's outcome ----


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

bool WhereHolds(const Rule& rule, const PassContext& context, const GraphIndex& graph,
                RuleMatch& match) {
  Env env{context, graph, match};
  for (const Predicate& predicate : rule.where) {
    if (Binds(predicate, match)) {
      if (!BindFact(rule, env, predicate, match)) return false;
      continue;
    }
    if (!Holds(env, predicate)) return false;
  }
  return true;
}

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

}  // namespace rules_internal

}  // namespace onnxconvert::rewrites
