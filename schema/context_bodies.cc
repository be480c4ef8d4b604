// Function bodies that depend on the call, written per op from the spec's
// definitions (onnx docs/Operators.md, and the corpus's *_expanded cases,
// which show the spec's expansions). Each builder returns ONNX text.
//
// The bodies are written to convert far down: the converter takes an
// input that must become an attribute in an older version (Reduce* axes,
// Unsqueeze axes, Slice starts) only from an initializer, never from a
// Constant node of a body, so the bodies avoid such inputs where an
// equivalent op does without them (Gather with constant indices instead of
// Slice and Split, Reshape instead of Unsqueeze and Squeeze,
// GlobalAveragePool over a [M, 1, K] view instead of ReduceMean with axes),
// and write int64 constants as float constants cast to int64, since
// Constant holds only floats before opset 9.

#include "schema/context_bodies.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace onnxconvert::schema {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kDouble = onnx::TensorProto::DOUBLE;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

// The longest sequence a body unrolls step by step (LinearAttention; a Scan
// runs longer or unknown ones).
constexpr int64_t kMaxUnrolledSteps = 64;
// The largest constant a body writes out element by element (a causal
// mask, zeros); larger ones are computed.
constexpr int64_t kMaxConstantElements = 1 << 16;

// What a builder sees of the call.
struct Call {
  const OpSchema& schema;
  const onnx::NodeProto& node;
  absl::Span<const onnx::TypeProto* const> input_types;

  // The call's attribute `name`, or null.
  const onnx::AttributeProto* Attr(absl::string_view name) const {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  // The schema's default for attribute `name`, or null.
  const AttrDefault* Default(absl::string_view name) const {
    const AttrSpec* spec = schema.FindAttr(name);
    return spec != nullptr && spec->has_default ? &spec->default_value : nullptr;
  }
  // The FLOAT attribute `name`, or the schema's default (0 without one).
  float Float(absl::string_view name) const {
    if (const onnx::AttributeProto* a = Attr(name)) return a->f();
    const AttrDefault* value = Default(name);
    return value != nullptr ? value->f : 0.0f;
  }
  // The INT attribute `name`, or the schema's default (0 without one).
  int64_t Int(absl::string_view name) const {
    if (const onnx::AttributeProto* a = Attr(name)) return a->i();
    const AttrDefault* value = Default(name);
    return value != nullptr ? value->i : 0;
  }
  // The STRING attribute `name`, or the schema's default.
  std::string String(absl::string_view name) const {
    if (const onnx::AttributeProto* a = Attr(name)) return a->s();
    const AttrDefault* value = Default(name);
    return value != nullptr ? std::string(value->s) : "";
  }
  // The INTS attribute `name`, if set.
  std::optional<std::vector<int64_t>> Ints(absl::string_view name) const {
    const onnx::AttributeProto* a = Attr(name);
    if (a == nullptr) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }

  // Whether the call gives input `i`.
  bool Has(int i) const { return i < node.input_size() && !node.input(i).empty(); }
  // Whether the call uses output `o`.
  bool Wants(int o) const { return o < node.output_size() && !node.output(o).empty(); }
  // The formal name of input `i`.
  absl::string_view InputName(int i) const { return schema.inputs[i].name; }

  // The tensor type of input `i`, or null where unknown.
  const onnx::TypeProto::Tensor* Tensor(int i) const {
    if (i >= static_cast<int>(input_types.size()) || input_types[i] == nullptr ||
        !input_types[i]->has_tensor_type()) {
      return nullptr;
    }
    return &input_types[i]->tensor_type();
  }
  // The element type of input `i`.
  absl::StatusOr<int32_t> ElemType(int i) const {
    const onnx::TypeProto::Tensor* tensor = Tensor(i);
    if (tensor == nullptr || tensor->elem_type() == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("the element type of input '", InputName(i), "' is unknown"));
    }
    return tensor->elem_type();
  }
  // The rank of input `i`, which must be at least `at_least`.
  absl::StatusOr<int> Rank(int i, int at_least = 0) const {
    const onnx::TypeProto::Tensor* tensor = Tensor(i);
    if (tensor == nullptr || !tensor->has_shape()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the rank of input '", InputName(i), "' is unknown"));
    }
    int rank = tensor->shape().dim_size();
    if (rank < at_least) {
      return absl::InvalidArgumentError(absl::StrCat("input '", InputName(i), "' has rank ", rank,
                                                     ", below ", at_least));
    }
    return rank;
  }
  // The size of axis `axis` (negative: from the back) of input `i`, or -1
  // when unknown or above kMaxConstantElements: bodies build constants of
  // sizes they know, which a declared size must not make arbitrarily large.
  int64_t Dim(int i, int axis) const {
    const onnx::TypeProto::Tensor* tensor = Tensor(i);
    if (tensor == nullptr || !tensor->has_shape()) return -1;
    int rank = tensor->shape().dim_size();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || !tensor->shape().dim(axis).has_dim_value()) return -1;
    int64_t size = tensor->shape().dim(axis).dim_value();
    return size <= kMaxConstantElements ? size : -1;
  }
  // The size of axis `axis` of input `i`, which the body needs.
  absl::StatusOr<int64_t> NeedDim(int i, int axis) const {
    int64_t size = Dim(i, axis);
    if (size < 0) {
      return absl::FailedPreconditionError(absl::StrCat("the size of axis ", axis, " of input '",
                                                        InputName(i), "' is unknown or above ",
                                                        kMaxConstantElements));
    }
    return size;
  }
  // The INT attribute `name`, which the body needs.
  absl::StatusOr<int64_t> NeedInt(absl::string_view name) const {
    if (Attr(name) == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("attribute '", name, "' is not set"));
    }
    return Int(name);
  }
};

// A number as the text parser reads it back exactly in `elem`.
std::string Number(double value, int32_t elem) {
  return elem == kDouble ? absl::StrFormat("%.17g", value)
                         : absl::StrFormat("%.9g", static_cast<float>(value));
}

// "[1, 2, 3]".
std::string List(absl::Span<const int64_t> values) {
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
}

// first, first + 1, ..., first + count - 1.
std::vector<int64_t> Iota(int64_t first, int64_t count, int64_t step = 1) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(first + i * step);
  return values;
}

// Whether float represents every one of `values` exactly.
bool FloatsHold(absl::Span<const int64_t> values) {
  constexpr int64_t kExact = int64_t{1} << 24;
  for (int64_t v : values) {
    if (v > kExact || v < -kExact) return false;
  }
  return true;
}

// The nodes of a body being written, in order. Every value gets a fresh
// name; Output binds a value to a formal output.
class Body {
 public:
  // `prefix` starts every value's name (a subgraph's values must not
  // shadow its parent's).
  explicit Body(const Call& call, absl::string_view prefix = "") : call_(call), prefix_(prefix) {}

  // Appends `op <attrs> (inputs)` with `count` outputs and returns them.
  std::vector<std::string> Ops(absl::string_view op, std::vector<std::string> inputs, int count,
                               std::string attrs = "", absl::string_view hint = "") {
    std::vector<std::string> outputs;
    for (int i = 0; i < count; ++i) {
      outputs.push_back(absl::StrCat(prefix_, hint.empty() ? op : hint, "_", ++count_));
    }
    nodes_.push_back({std::string(op), std::move(attrs), std::move(inputs), outputs});
    return outputs;
  }
  // Appends `op <attrs> (inputs)` and returns its output.
  std::string Op(absl::string_view op, std::vector<std::string> inputs, std::string attrs = "",
                 absl::string_view hint = "") {
    return Ops(op, std::move(inputs), 1, std::move(attrs), hint)[0];
  }

  // Makes `value` the body's formal output `formal`: the node computing it
  // writes `formal`, or an Identity does for a formal input or a value
  // bound already.
  void Output(absl::string_view formal, const std::string& value) {
    bool computed = false;
    for (const BodyNode& node : nodes_) {
      computed |= absl::c_linear_search(node.outputs, value);
    }
    if (computed && !renamed_.contains(value)) {
      renamed_[value] = std::string(formal);
      return;
    }
    nodes_.push_back({"Identity", "", {value}, {std::string(formal)}});
  }

  // A constant of element type `elem` (float or double written directly,
  // others cast from float) with `dims` ({} for a scalar).
  std::string Constant(absl::Span<const double> values, absl::Span<const int64_t> dims,
                       int32_t elem) {
    int32_t written = elem == kDouble ? kDouble : kFloat;
    std::vector<std::string> numbers;
    for (double v : values) numbers.push_back(Number(v, written));
    std::string constant =
        Op("Constant", {},
           absl::StrCat("value = ", written == kDouble ? "double" : "float", "[",
                        absl::StrJoin(dims, ","), "] {", absl::StrJoin(numbers, ", "), "}"),
           "Const");
    return Cast(constant, written, elem);
  }
  // A scalar constant of element type `elem`.
  std::string Scalar(double value, int32_t elem) { return Constant({value}, {}, elem); }
  // A 1-D int64 constant: cast from float (Constant-1 holds floats only)
  // when float holds every value exactly.
  std::string Int64s(absl::Span<const int64_t> values) {
    std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
    return FloatsHold(values)
               ? Constant(std::vector<double>(values.begin(), values.end()), dims, kInt64)
               : Op("Constant", {},
                    absl::StrCat("value = int64[", values.size(), "] {",
                                 absl::StrJoin(values, ", "), "}"),
                    "Const");
  }
  // A 0-D int64 constant.
  std::string Int64Scalar(int64_t value) {
    return Constant({static_cast<double>(value)}, {}, kInt64);
  }

  // `x` cast from element type `from` to `to` (itself when they agree).
  std::string Cast(const std::string& x, int32_t from, int32_t to) {
    if (from == to) return x;
    return Op("Cast", {x}, absl::StrCat("to = ", to));
  }
  // `x` reshaped to the constant shape `shape` (0 copies, -1 infers).
  std::string Reshape(const std::string& x, absl::Span<const int64_t> shape) {
    return Op("Reshape", {x, Int64s(shape)});
  }
  // The elements of `x` at `indices` along `axis` (>= 0), axis kept.
  std::string Take(const std::string& x, absl::Span<const int64_t> indices, int axis) {
    return Op("Gather", {x, Int64s(indices)}, absl::StrCat("axis = ", axis));
  }
  // The size of axis `axis` of `x` as a 1-D int64 tensor of one element.
  std::string DimOf(const std::string& x, int axis) {
    return Op("Gather", {Op("Shape", {x}), Int64s({axis})});
  }

  // The function text: the header (the op's since_version, its formal
  // inputs and outputs), then the nodes.
  std::string Text() const {
    const OpSchema& schema = call_.schema;
    std::vector<absl::string_view> inputs, outputs;
    for (const FormalParam& p : schema.inputs) inputs.push_back(p.name);
    for (const FormalParam& p : schema.outputs) outputs.push_back(p.name);
    return absl::StrFormat("<domain: \"\", opset_import: [\"\" : %d]>\n%s (%s) => (%s)\n{\n%s}",
                           schema.since_version, schema.name, absl::StrJoin(inputs, ", "),
                           absl::StrJoin(outputs, ", "), NodesText("  "));
  }
  // The nodes as a graph attribute's value: `name (inputs) => (outputs) {...}`.
  std::string GraphText(absl::string_view name, absl::Span<const std::string> inputs,
                        absl::Span<const std::string> outputs) const {
    return absl::StrCat(name, " (", absl::StrJoin(inputs, ", "), ") => (",
                        absl::StrJoin(outputs, ", "), ") {\n", NodesText("    "), "  }");
  }

  int opset() const { return call_.schema.since_version; }

 private:
  struct BodyNode {
    std::string op;
    std::string attrs;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
  };

  // A line per node, formal outputs in place of the values bound to them.
  std::string NodesText(absl::string_view indent) const {
    auto names = [&](const std::vector<std::string>& values) {
      std::vector<std::string> named;
      for (const std::string& value : values) {
        auto it = renamed_.find(value);
        named.push_back(it == renamed_.end() ? value : it->second);
      }
      return absl::StrJoin(named, ", ");
    };
    std::string text;
    for (const BodyNode& node : nodes_) {
      absl::StrAppend(&text, indent, names(node.outputs), " = ", node.op,
                      node.attrs.empty() ? "" : absl::StrCat(" <", node.attrs, ">"), " (",
                      names(node.inputs), ")\n");
    }
    return text;
  }

  const Call& call_;
  std::string prefix_;
  std::vector<BodyNode> nodes_;
  absl::flat_hash_map<std::string, std::string> renamed_;  // value -> formal output
  int count_ = 0;
};

// `axis` made non-negative for a tensor of rank `rank`.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= std::max(rank, 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(normalized);
}

// The first opset at which an op takes its axes as an input instead of an
// attribute.
struct AxesMove {
  const char* op;
  int since;
};
constexpr AxesMove kAxesInputSince[] = {
    {"Unsqueeze", 13},
    {"Squeeze", 13},
    {"ReduceSum", 13},
    {"ReduceMean", 18},
};

// `op` over `axes` of `x`, in the form the body's opset has.
std::string AxesOp(Body& b, absl::string_view op, const std::string& x,
                   absl::Span<const int64_t> axes, std::string attrs = "") {
  int since = 0;
  for (const AxesMove& move : kAxesInputSince) {
    if (op == move.op) since = move.since;
  }
  if (b.opset() >= since) return b.Op(op, {x, b.Int64s(axes)}, attrs);
  return b.Op(op, {x}, absl::StrCat(attrs, attrs.empty() ? "" : ", ", "axes = ", List(axes)));
}

// `x` viewed as [M, 1, K], M the product of its axes before `axis`, K of
// the rest: GlobalAveragePool then averages over the axes from `axis` on
// and needs no axes input.
std::string TrailingView3D(Body& b, const std::string& x, int axis) {
  std::string flat = b.Op("Flatten", {x}, absl::StrCat("axis = ", axis));
  return b.Reshape(flat, {0, 1, -1});
}

// ---------------------------------------------------------------------------
// Element-wise functions.

// Celu(X) = alpha * Elu(X / alpha) (float only).
absl::StatusOr<std::string> CeluBody(const Call& call) {
  Body b(call);
  std::string alpha = b.Scalar(call.Float("alpha"), kFloat);
  std::string elu = b.Op("Elu", {b.Op("Div", {"X", alpha})}, "alpha = 1.0");
  b.Output("Y", b.Op("Mul", {alpha, elu}));
  return b.Text();
}

// Gelu(x) = x/2 * (1 + erf(x / sqrt 2)), or with approximate = "tanh"
// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
absl::StatusOr<std::string> GeluBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  Body b(call);
  std::string approximate = call.String("approximate");
  std::string inner;
  if (approximate == "tanh") {
    std::string cube = b.Op("Mul", {"X", b.Op("Mul", {"X", "X"})});
    std::string poly = b.Op("Add", {"X", b.Op("Mul", {cube, b.Scalar(0.044715, t)})});
    inner = b.Op("Tanh", {b.Op("Mul", {poly, b.Scalar(std::sqrt(2.0 / M_PI), t)})});
  } else if (approximate == "none") {
    inner = b.Op("Erf", {b.Op("Mul", {"X", b.Scalar(1.0 / std::sqrt(2.0), t)})});
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("approximate = \"", approximate, "\" is neither \"none\" nor \"tanh\""));
  }
  std::string phi = b.Op("Add", {inner, b.Scalar(1.0, t)});
  b.Output("Y", b.Op("Mul", {b.Op("Mul", {"X", b.Scalar(0.5, t)}), phi}));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Normalizations.

// LayerNormalization: (X - mean) / sqrt(var + epsilon) over the axes from
// `axis` on, computed in stash_type, then * Scale + B in X's type; Mean and
// InvStdDev keep the reduced axes. ReduceMean-13 takes axes as an attribute.
absl::StatusOr<std::string> LayerNormalizationBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0));
  OC_ASSIGN_OR_RETURN(int axis, NormalizeAxis(call.Int("axis"), rank, "axis"));
  int32_t stash = static_cast<int32_t>(call.Int("stash_type"));
  std::vector<int64_t> axes = Iota(axis, rank - axis);
  Body b(call);
  std::string x = b.Cast("X", t, stash);
  std::string mean = AxesOp(b, "ReduceMean", x, axes);
  std::string deviation = b.Op("Sub", {x, mean});
  std::string variance = AxesOp(b, "ReduceMean", b.Op("Mul", {deviation, deviation}), axes);
  std::string stddev =
      b.Op("Sqrt", {b.Op("Add", {variance, b.Scalar(call.Float("epsilon"), stash)})});
  std::string normalized = b.Cast(b.Op("Div", {deviation, stddev}), stash, t);
  std::string y = b.Op("Mul", {normalized, "Scale"});
  if (call.Has(2)) y = b.Op("Add", {y, "B"});
  b.Output("Y", y);
  if (call.Wants(1)) b.Output("Mean", mean);
  if (call.Wants(2)) b.Output("InvStdDev", b.Op("Reciprocal", {stddev}));
  return b.Text();
}

// RMSNormalization: X / sqrt(mean(X^2) + epsilon) over the axes from `axis`
// on, computed in stash_type, cast back to X's type, then * scale.
absl::StatusOr<std::string> RmsNormalizationBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int32_t v, call.ElemType(1));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0));
  OC_ASSIGN_OR_RETURN(int axis, NormalizeAxis(call.Int("axis"), rank, "axis"));
  int32_t stash = static_cast<int32_t>(call.Int("stash_type"));
  Body b(call);
  std::string x = TrailingView3D(b, b.Cast("X", t, stash), axis);
  std::string mean_square = b.Op("GlobalAveragePool", {b.Op("Mul", {x, x})});
  std::string rms =
      b.Op("Sqrt", {b.Op("Add", {mean_square, b.Scalar(call.Float("epsilon"), stash)})});
  std::string normalized = b.Op("Reshape", {b.Op("Div", {x, rms}), b.Op("Shape", {"X"})});
  normalized = b.Cast(b.Cast(normalized, stash, t), t, v);
  b.Output("Y", b.Op("Mul", {normalized, "scale"}));
  return b.Text();
}

// GroupNormalization: X [N, C, ...] normalized per group of C / num_groups
// channels, then scaled and shifted: per group before opset 21 (scale and
// bias [num_groups]), per channel from 21 on (scale and bias [C], and the
// statistics in stash_type). 16-bit types are normalized in float.
absl::StatusOr<std::string> GroupNormalizationBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int64_t groups, call.NeedInt("num_groups"));
  bool per_channel = call.schema.since_version >= 21;
  int32_t stash = per_channel ? static_cast<int32_t>(call.Int("stash_type"))
                              : (t == kDouble ? kDouble : kFloat);
  Body b(call);
  std::string grouped = b.Reshape(b.Cast("X", t, stash), {0, groups, -1});
  std::string mean = b.Op("GlobalAveragePool", {grouped});
  std::string deviation = b.Op("Sub", {grouped, mean});
  std::string variance = b.Op("GlobalAveragePool", {b.Op("Mul", {deviation, deviation})});
  std::string stddev =
      b.Op("Sqrt", {b.Op("Add", {variance, b.Scalar(call.Float("epsilon"), stash)})});
  std::string normalized = b.Cast(b.Op("Div", {deviation, stddev}), stash, t);
  if (per_channel) {
    normalized = b.Reshape(b.Op("Reshape", {normalized, b.Op("Shape", {"X"})}), {0, 0, -1});
  }
  std::string scale = b.Reshape("scale", {1, -1, 1});
  std::string bias = b.Reshape("bias", {1, -1, 1});
  std::string y = b.Op("Add", {b.Op("Mul", {normalized, scale}), bias});
  b.Output("Y", b.Op("Reshape", {y, b.Op("Shape", {"X"})}));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Losses.

// What NegativeLogLikelihoodLoss computes from log-probabilities.
struct NllInputs {
  std::string log_prob;  // [N, C, d1, ...]
  int rank;              // of log_prob
  int64_t classes;       // C, or -1 when unknown
  std::string target;    // [N, d1, ...]
  std::string weight;    // [C], or "" when absent
};

// The class indices 0 .. C-1 of `tind` along axis 1 of a tensor of rank
// `rank` ([1, C, 1, ...]): a constant when C is known, else a Range.
std::string ClassIndices(Body& b, const NllInputs& in, int32_t tind) {
  std::vector<int64_t> shape(in.rank, 1);
  if (in.classes >= 0) {
    shape[1] = in.classes;
    std::vector<int64_t> classes = Iota(0, in.classes);
    return b.Constant(std::vector<double>(classes.begin(), classes.end()), shape, tind);
  }
  std::string count = b.Op("Gather", {b.Op("Shape", {in.log_prob}), b.Int64Scalar(1)});
  std::string range = b.Op("Range", {b.Int64Scalar(0), count, b.Int64Scalar(1)});
  shape[1] = -1;
  return b.Cast(b.Reshape(range, shape), kInt64, tind);
}

// loss[n, d...] = -log_prob[n, target[n, d...], d...] * weight[target],
// 0 where target == ignore_index, then reduced as `reduction` says ("mean"
// divides by the sum of the weights taken). The target's log-probability
// is selected with a one-hot mask (Where, then ReduceSum over the classes),
// which exists from opset 9 on, unlike GatherElements.
absl::StatusOr<std::string> Nll(Body& b, const Call& call, const NllInputs& in, int32_t t,
                                int32_t tind) {
  std::string reduction = call.String("reduction");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return absl::InvalidArgumentError(absl::StrCat("reduction \"", reduction, "\" is unknown"));
  }
  bool ignores = call.Attr("ignore_index") != nullptr;
  // target [N, 1, d...] against the classes [1, C, 1...]: [N, C, d...].
  std::string target = AxesOp(b, "Unsqueeze", in.target, {1});
  std::string selected = b.Op("Equal", {target, ClassIndices(b, in, tind)});
  std::string zero = b.Scalar(0, t);
  std::string ignored;
  if (ignores) {
    ignored = b.Op("Equal", {target, b.Scalar(call.Int("ignore_index"), tind)});
    selected = b.Op("And", {selected, b.Op("Not", {ignored})});
    target = b.Op("Where", {ignored, b.Scalar(0, tind), target});  // a class Gather can take
  }
  std::string picked = AxesOp(b, "ReduceSum", b.Op("Where", {selected, in.log_prob, zero}), {1});
  std::string loss = b.Op("Neg", {picked});
  std::string weight;  // the weight of each element, or "" for all ones
  if (!in.weight.empty()) {
    weight = b.Op("Gather", {in.weight, target});
    if (ignores) weight = b.Op("Where", {ignored, zero, weight});
    loss = b.Op("Mul", {loss, weight});
  } else if (ignores) {
    weight = b.Cast(b.Op("Not", {ignored}), kBool, t);
  }
  loss = b.Op("Reshape", {loss, b.Op("Shape", {in.target})});
  if (reduction == "none") return loss;
  if (reduction == "sum") return b.Op("ReduceSum", {loss}, "keepdims = 0");
  if (weight.empty()) return b.Op("ReduceMean", {loss}, "keepdims = 0");
  return b.Op("Div", {b.Op("ReduceSum", {loss}, "keepdims = 0"),
                      b.Op("ReduceSum", {weight}, "keepdims = 0")});
}

// NegativeLogLikelihoodLoss(input, target, weight).
absl::StatusOr<std::string> NegativeLogLikelihoodLossBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int32_t tind, call.ElemType(1));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0, 2));
  Body b(call);
  NllInputs in{"input", rank, call.Dim(0, 1), "target", call.Has(2) ? "weight" : ""};
  OC_ASSIGN_OR_RETURN(std::string loss, Nll(b, call, in, t, tind));
  b.Output("loss", loss);
  return b.Text();
}

// SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of LogSoftmax(scores)
// over axis 1. LogSoftmax before opset 13 flattens from its axis on, so the
// class axis is moved last for it when there are more axes.
absl::StatusOr<std::string> SoftmaxCrossEntropyLossBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(0));
  OC_ASSIGN_OR_RETURN(int32_t tind, call.ElemType(1));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0, 2));
  Body b(call);
  std::string log_prob;
  if (rank <= 2) {
    log_prob = b.Op("LogSoftmax", {"scores"}, "axis = 1");
  } else {
    std::vector<int64_t> to_last = {0};
    for (int i = 2; i < rank; ++i) to_last.push_back(i);
    to_last.push_back(1);
    std::vector<int64_t> back = {0, rank - 1};
    for (int i = 1; i < rank - 1; ++i) back.push_back(i);
    std::string last = b.Op("Transpose", {"scores"}, absl::StrCat("perm = ", List(to_last)));
    std::string soft = b.Op("LogSoftmax", {last}, absl::StrCat("axis = ", rank - 1));
    log_prob = b.Op("Transpose", {soft}, absl::StrCat("perm = ", List(back)));
  }
  NllInputs in{log_prob, rank, call.Dim(0, 1), "labels", call.Has(2) ? "weights" : ""};
  OC_ASSIGN_OR_RETURN(std::string loss, Nll(b, call, in, t, tind));
  b.Output("output", loss);
  if (call.Wants(1)) b.Output("log_prob", log_prob);
  return b.Text();
}

// ---------------------------------------------------------------------------
// Shape manipulation.

// CenterCropPad: pads `input_data` evenly (the extra element at the end) up
// to `shape` along `axes`, then crops it evenly (the extra element at the
// end dropped) down to `shape`. Pad covers every axis: the axes CenterCropPad
// leaves alone keep their size.
absl::StatusOr<std::string> CenterCropPadBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(0));
  OC_ASSIGN_OR_RETURN(int32_t tind, call.ElemType(1));
  std::vector<int64_t> axes = call.Ints("axes").value_or(Iota(0, rank));
  std::vector<int> position(rank, -1);  // where each axis is in `shape`
  for (size_t j = 0; j < axes.size(); ++j) {
    OC_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axes[j], rank, "axis"));
    position[axis] = static_cast<int>(j);
  }
  Body b(call);
  std::string shape = b.Cast("shape", tind, kInt64);
  std::string x_shape = b.Op("Shape", {"input_data"});
  std::vector<std::string> parts;
  for (int i = 0; i < rank; ++i) {
    parts.push_back(position[i] >= 0 ? b.Op("Gather", {shape, b.Int64s({position[i]})})
                                     : b.Op("Gather", {x_shape, b.Int64s({i})}));
  }
  std::string target = rank == 1 ? parts[0] : b.Op("Concat", parts, "axis = 0");
  std::string larger = b.Op("Where", {b.Op("Less", {x_shape, target}), target, x_shape});
  std::string two = b.Int64s({2});
  std::string pad = b.Op("Sub", {larger, x_shape});
  std::string pad_begin = b.Op("Div", {pad, two});
  std::string pads = b.Op("Concat", {pad_begin, b.Op("Sub", {pad, pad_begin})}, "axis = 0");
  std::string padded = b.Op("Pad", {"input_data", pads});
  std::string starts = b.Op("Div", {b.Op("Sub", {larger, target}), two});
  std::string ends = b.Op("Add", {starts, target});
  b.Output("output_data", b.Op("Slice", {padded, starts, ends}));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Attention.

// 1 / sqrt(head size) of `x4` [B, H, L, D] as a scalar of `elem`, raised to
// `power` (0.5: the factor both Q and K are scaled by): a constant when D
// is known, else computed from x4's shape.
std::string HeadSizeScale(Body& b, const std::string& x4, int64_t head_size, double power,
                          int32_t elem) {
  if (head_size > 0) {
    return b.Scalar(std::pow(1.0 / std::sqrt(static_cast<double>(head_size)), power), elem);
  }
  std::string size = b.Cast(b.DimOf(x4, 3), kInt64, kFloat);
  std::string scale = b.Op("Reciprocal", {b.Op("Sqrt", {size})});
  if (power == 0.5) scale = b.Op("Sqrt", {scale});
  return b.Cast(scale, kFloat, elem);
}

// The query-key bias of the causal mask: -inf where key j > query i +
// `past` (the keys before the query block), [L, S]: a constant when the
// sizes are known and small, else built with Range.
std::string CausalBias(Body& b, const std::string& q4, const std::string& k4, int64_t q_len,
                       int64_t kv_len, int64_t past, const std::string& past_key, int32_t t) {
  if (q_len > 0 && kv_len > 0 && past >= 0 && q_len * kv_len <= kMaxConstantElements) {
    std::vector<double> bias;
    for (int64_t i = 0; i < q_len; ++i) {
      for (int64_t j = 0; j < kv_len; ++j) bias.push_back(j > i + past ? -INFINITY : 0.0);
    }
    return b.Constant(bias, {q_len, kv_len}, t);
  }
  std::string zero = b.Int64Scalar(0), one = b.Int64Scalar(1), two = b.Int64Scalar(2);
  auto length = [&](const std::string& x) { return b.Op("Gather", {b.Op("Shape", {x}), two}); };
  std::string rows = b.Op("Range", {zero, length(q4), one});
  if (!past_key.empty()) rows = b.Op("Add", {rows, length(past_key)});
  std::string cols = b.Op("Range", {zero, length(k4), one});
  std::string masked = b.Op("Less", {b.Reshape(rows, {-1, 1}), cols});
  return b.Op("Where", {masked, b.Scalar(-INFINITY, t), b.Scalar(0, t)});
}

// A boolean mask (true: attend) as an additive bias of `t`: log(1) = 0 and
// log(0) = -inf (Where would need opset 9).
std::string BoolToBias(Body& b, const std::string& mask, int32_t t) {
  return b.Op("Log", {b.Cast(mask, kBool, t)});
}

// Attention's inputs by position.
enum AttentionInput { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad };

// Q, K and V as [B, heads, length, head size], K and V after the past keys
// and values, with what is known of their sizes (-1: unknown).
struct AttentionHeads {
  std::string q = "Q", k = "K", v = "V";
  int64_t q_heads = 0, kv_heads = 0;
  int64_t head_size = -1;  // of Q and K
  int64_t q_len = -1;
  int64_t past_len = 0;    // 0 without past
  int64_t total_len = -1;  // past and new keys
  bool has_past = false;
};

// Splits 3-D Q, K, V [B, L, heads * size] into heads (the heads counts come
// from q_num_heads and kv_num_heads; 4-D inputs give them as axis 1), and
// puts the past keys and values before K and V.
absl::StatusOr<AttentionHeads> SplitAttentionHeads(Body& b, const Call& call, int rank) {
  AttentionHeads h;
  int64_t kv_len;
  if (rank == 3) {
    OC_ASSIGN_OR_RETURN(h.q_heads, call.NeedInt("q_num_heads"));
    OC_ASSIGN_OR_RETURN(h.kv_heads, call.NeedInt("kv_num_heads"));
    auto split = [&](absl::string_view x, int64_t heads) {
      return b.Op("Transpose", {b.Reshape(std::string(x), {0, 0, heads, -1})},
                  "perm = [0, 2, 1, 3]");
    };
    h.q = split("Q", h.q_heads);
    h.k = split("K", h.kv_heads);
    h.v = split("V", h.kv_heads);
    int64_t hidden = call.Dim(kQ, 2);
    h.head_size = hidden > 0 && h.q_heads > 0 ? hidden / h.q_heads : -1;
    h.q_len = call.Dim(kQ, 1);
    kv_len = call.Dim(kK, 1);
  } else {
    OC_ASSIGN_OR_RETURN(h.q_heads, call.NeedDim(kQ, 1));
    OC_ASSIGN_OR_RETURN(h.kv_heads, call.NeedDim(kK, 1));
    h.head_size = call.Dim(kQ, 3);
    h.q_len = call.Dim(kQ, 2);
    kv_len = call.Dim(kK, 2);
  }
  if (h.kv_heads <= 0 || h.q_heads % h.kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(h.q_heads, " query heads cannot share ",
                                                   h.kv_heads, " key/value heads evenly"));
  }
  if (call.Has(kPastKey) != call.Has(kPastValue)) {
    return absl::FailedPreconditionError(
        "past_key and past_value must be given together; the node gives one");
  }
  h.has_past = call.Has(kPastKey);
  if (h.has_past) {
    h.k = b.Op("Concat", {"past_key", h.k}, "axis = 2");
    h.v = b.Op("Concat", {"past_value", h.v}, "axis = 2");
    h.past_len = call.Dim(kPastKey, 2);
  }
  h.total_len = kv_len >= 0 && h.past_len >= 0 ? kv_len + h.past_len : -1;
  return h;
}

// attn_mask as an additive bias of `t`; from opset 24 on, a last axis
// shorter than the keys is padded with -inf.
absl::StatusOr<std::string> MaskBias(Body& b, const Call& call, const AttentionHeads& h,
                                     int32_t t) {
  OC_ASSIGN_OR_RETURN(int32_t u, call.ElemType(kMask));
  std::string bias = u == kBool ? BoolToBias(b, "attn_mask", t) : b.Cast("attn_mask", u, t);
  int64_t mask_len = call.Dim(kMask, -1);
  if (call.schema.since_version < 24 || (mask_len >= 0 && mask_len == h.total_len)) return bias;
  OC_ASSIGN_OR_RETURN(int mask_rank, call.Rank(kMask, 1));
  std::string missing = b.Op("Sub", {b.DimOf(h.k, 2), b.DimOf(bias, mask_rank - 1)});
  std::string pads =
      b.Op("Concat", {b.Int64s(std::vector<int64_t>(2 * mask_rank - 1, 0)), missing}, "axis = 0");
  return b.Op("Pad", {bias, pads, b.Scalar(-INFINITY, t)});
}

// The bias of the keys at or after nonpad_kv_seqlen[b] (padding), [B, 1, 1,
// S].
std::string PaddingBias(Body& b, const AttentionHeads& h, int32_t t) {
  std::string keys = h.total_len > 0
                         ? b.Int64s(Iota(0, h.total_len))
                         : b.Op("Range", {b.Int64Scalar(0),
                                          b.Op("Gather", {b.Op("Shape", {h.k}), b.Int64Scalar(2)}),
                                          b.Int64Scalar(1)});
  std::string valid = b.Reshape("nonpad_kv_seqlen", {-1, 1, 1, 1});
  return BoolToBias(b, b.Op("Less", {keys, valid}), t);
}

// The biases added to the scores: attn_mask, the causal mask, padding.
absl::StatusOr<std::vector<std::string>> AttentionBiases(Body& b, const Call& call,
                                                         const AttentionHeads& h, int32_t t) {
  std::vector<std::string> biases;
  if (call.Has(kMask)) {
    OC_ASSIGN_OR_RETURN(std::string mask, MaskBias(b, call, h, t));
    biases.push_back(mask);
  }
  if (call.Int("is_causal") != 0) {
    biases.push_back(
        CausalBias(b, h.q, h.k, h.q_len, h.total_len, h.past_len, h.has_past ? "past_key" : "", t));
  }
  if (call.Has(kNonpad)) biases.push_back(PaddingBias(b, h, t));
  return biases;
}

// Attention-23 and -24: softmax(Q K^T * scale (softcapped) + bias) V per
// head. Query heads sharing a key/value head (grouped-query attention) are
// folded into its query rows: Q [B, Hq, L, D] viewed as [B, Hkv, g L, D].
// qk_matmul_output is the scores after the stage its mode names.
absl::StatusOr<std::string> AttentionBody(const Call& call) {
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(kQ));
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(kQ));
  if (rank != 3 && rank != 4) {
    return absl::InvalidArgumentError(absl::StrCat("Q has rank ", rank, ", not 3 or 4"));
  }
  Body b(call);
  OC_ASSIGN_OR_RETURN(AttentionHeads h, SplitAttentionHeads(b, call, rank));
  if (call.Wants(1)) b.Output("present_key", h.k);
  if (call.Wants(2)) b.Output("present_value", h.v);

  // Q and K are each scaled by sqrt(scale).
  std::string scale = call.Attr("scale") != nullptr
                          ? b.Scalar(std::sqrt(static_cast<double>(call.Float("scale"))), t)
                          : HeadSizeScale(b, h.q, h.head_size, 0.5, t);
  bool grouped = h.q_heads != h.kv_heads;
  std::string q = b.Op("Mul", {h.q, scale});
  if (grouped) q = b.Reshape(q, {0, h.kv_heads, -1, 0});
  std::string k = b.Op("Mul", {b.Op("Transpose", {h.k}, "perm = [0, 1, 3, 2]"), scale});
  std::string scores = b.Op("MatMul", {q, k});
  if (grouped) scores = b.Reshape(scores, {0, h.q_heads, -1, 0});
  std::vector<std::string> stages = {scores};  // by qk_matmul_output_mode

  if (float softcap = call.Float("softcap"); softcap != 0.0f) {
    std::string cap = b.Scalar(softcap, t);
    scores = b.Op("Mul", {b.Op("Tanh", {b.Op("Div", {scores, cap})}), cap});
  }
  stages.push_back(scores);
  OC_ASSIGN_OR_RETURN(std::vector<std::string> biases, AttentionBiases(b, call, h, t));
  for (const std::string& bias : biases) scores = b.Op("Add", {scores, bias});
  stages.push_back(scores);

  int32_t precision = call.Attr("softmax_precision") != nullptr
                          ? static_cast<int32_t>(call.Int("softmax_precision"))
                          : t;
  std::string probs =
      b.Cast(b.Op("Softmax", {b.Cast(scores, t, precision)}, "axis = -1"), precision, t);
  stages.push_back(probs);

  std::string y = b.Op("MatMul", {grouped ? b.Reshape(probs, {0, h.kv_heads, -1, 0}) : probs, h.v});
  if (grouped) y = b.Reshape(y, {0, h.q_heads, -1, 0});
  if (rank == 3) y = b.Reshape(b.Op("Transpose", {y}, "perm = [0, 2, 1, 3]"), {0, 0, -1});
  b.Output("Y", y);
  if (call.Wants(3)) {
    int64_t mode = call.Int("qk_matmul_output_mode");
    if (mode < 0 || mode >= static_cast<int64_t>(stages.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("qk_matmul_output_mode ", mode, " is unknown"));
    }
    b.Output("qk_matmul_output", stages[mode]);
  }
  return b.Text();
}

// RotaryEmbedding: the first rotary_embedding_dim (R) elements of each head
// rotate in pairs (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2), the pairs
// being the two halves of those R elements, or neighbours when interleaved;
// cos and sin are [B, S, R/2] (gathered by position_ids from [P, >= R/2]).
// Heads stay where they are: 4-D input [B, H, S, D], 3-D [B, S, H * D]
// viewed as [B, S, H, D]; the caches are reshaped to broadcast over H.
absl::StatusOr<std::string> RotaryEmbeddingBody(const Call& call) {
  enum { kX, kCos, kSin, kPositions };
  OC_ASSIGN_OR_RETURN(int rank, call.Rank(kX));
  if (rank != 3 && rank != 4) {
    return absl::InvalidArgumentError(absl::StrCat("X has rank ", rank, ", not 3 or 4"));
  }
  int64_t head_size;
  Body b(call);
  std::string x = "X";
  if (rank == 4) {
    OC_ASSIGN_OR_RETURN(head_size, call.NeedDim(kX, 3));
  } else {
    OC_ASSIGN_OR_RETURN(int64_t heads, call.NeedInt("num_heads"));
    OC_ASSIGN_OR_RETURN(int64_t hidden, call.NeedDim(kX, 2));
    if (heads <= 0 || hidden % heads != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("hidden size ", hidden, " does not split into ", heads, " heads"));
    }
    head_size = hidden / heads;
    x = b.Reshape(x, {0, 0, heads, head_size});
  }
  int64_t rotated =
      call.Int("rotary_embedding_dim") > 0 ? call.Int("rotary_embedding_dim") : head_size;
  if (rotated % 2 != 0 || rotated > head_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rotary_embedding_dim ", rotated, " is odd or larger than the head size ", head_size));
  }
  int64_t half = rotated / 2;
  auto cache = [&](int input) {
    std::string c(call.InputName(input));
    if (call.Has(kPositions)) c = b.Op("Gather", {c, "position_ids"});
    if (call.Dim(input, -1) != half) c = b.Take(c, Iota(0, half), 2);
    // [B, S, R/2] to [B, 1, S, R/2] (4-D input) or [B, S, 1, R/2] (3-D).
    return rank == 4 ? b.Reshape(c, {0, 1, -1, half}) : b.Reshape(c, {0, 0, 1, half});
  };
  std::string cos = cache(kCos), sin = cache(kSin);
  bool interleaved = call.Int("interleaved") != 0;
  std::string x1 = b.Take(x, interleaved ? Iota(0, half, 2) : Iota(0, half), 3);
  std::string x2 = b.Take(x, interleaved ? Iota(1, half, 2) : Iota(half, half), 3);
  std::string real = b.Op("Sub", {b.Op("Mul", {cos, x1}), b.Op("Mul", {sin, x2})});
  std::string imaginary = b.Op("Add", {b.Op("Mul", {sin, x1}), b.Op("Mul", {cos, x2})});
  std::string y = b.Op("Concat", {real, imaginary}, "axis = 3");
  if (interleaved) {
    std::vector<int64_t> order;  // real[0], imaginary[0], real[1], ...
    for (int64_t i = 0; i < half; ++i) order.insert(order.end(), {i, half + i});
    y = b.Take(y, order, 3);
  }
  if (rotated < head_size) {
    y = b.Op("Concat", {y, b.Take(x, Iota(rotated, head_size - rotated), 3)}, "axis = 3");
  }
  if (rank == 3) y = b.Reshape(y, {0, 0, -1});
  b.Output("Y", y);
  return b.Text();
}

// Zeros [B, C, count] of `t` for an input [B, C, L]: a constant when B and
// C are known (ConstantOfShape needs opset 9), else ConstantOfShape.
std::string CausalZeros(Body& b, const Call& call, int64_t count, int32_t t) {
  int64_t batch = call.Dim(0, 0), channels = call.Dim(0, 1);
  if (batch >= 0 && channels >= 0 && batch * channels * count <= kMaxConstantElements) {
    return b.Constant(std::vector<double>(batch * channels * count, 0.0), {batch, channels, count},
                      t);
  }
  std::string shape =
      b.Op("Concat", {b.Take(b.Op("Shape", {"input"}), {0, 1}, 0), b.Int64s({count})}, "axis = 0");
  return b.Cast(b.Op("ConstantOfShape", {shape}), kFloat, t);
}

// CausalConvWithState: a depthwise 1-D convolution over the past state (or
// k - 1 zeros) followed by the input, keeping the input's length; the state
// becomes the last k - 1 positions of that sequence. SiLU ("silu" or
// "swish") optionally follows. 16-bit types are convolved in float.
absl::StatusOr<std::string> CausalConvWithStateBody(const Call& call) {
  enum { kInput, kWeight, kBias, kPast };
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(kInput));
  OC_ASSIGN_OR_RETURN(int64_t channels, call.NeedDim(kWeight, 0));
  OC_ASSIGN_OR_RETURN(int64_t kernel, call.NeedDim(kWeight, 2));
  std::string activation = call.String("activation");
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return absl::InvalidArgumentError(absl::StrCat("activation \"", activation, "\" is unknown"));
  }
  Body b(call);
  std::string sequence = "input";
  if (call.Has(kPast)) {
    sequence = b.Op("Concat", {"past_state", "input"}, "axis = 2");
  } else if (kernel > 1) {
    sequence = b.Op("Concat", {CausalZeros(b, call, kernel - 1, t), "input"}, "axis = 2");
  }
  int32_t compute = t == kDouble ? kDouble : kFloat;
  std::vector<std::string> conv_inputs = {b.Cast(sequence, t, compute),
                                          b.Cast("weight", t, compute)};
  if (call.Has(kBias)) conv_inputs.push_back(b.Cast("bias", t, compute));
  std::string y = b.Op("Conv", conv_inputs, absl::StrCat("group = ", channels));
  if (activation != "none") y = b.Op("Mul", {y, b.Op("Sigmoid", {y})});
  b.Output("output", b.Cast(y, compute, t));
  // The last k - 1 positions of the sequence: input length + [0, k - 1).
  int64_t length = call.Dim(kInput, 2);
  std::string positions = b.Int64s(Iota(std::max<int64_t>(length, 0), kernel - 1));
  if (length < 0) {
    positions =
        b.Op("Add", {positions, b.Op("Gather", {b.Op("Shape", {"input"}), b.Int64Scalar(2)})});
  }
  b.Output("present_state", b.Op("Gather", {sequence, positions}, "axis = 2"));
  return b.Text();
}

// How each LinearAttention update rule changes the state S [dk, dv] per
// key/value head with key k, value v, decay g and rate beta:
//   linear:      S = S + k v^T
//   gated:       S = exp(g) S + k v^T
//   delta:       S = S + beta k (v - S^T k)^T
//   gated_delta: S = exp(g) S + beta k (v - (exp(g) S)^T k)^T
struct UpdateRule {
  const char* name;
  bool gated;
  bool delta;
};
constexpr UpdateRule kUpdateRules[] = {
    {"linear", false, false},
    {"gated", true, false},
    {"delta", false, true},
    {"gated_delta", true, true},
};

// One token's values for a LinearAttention step, per head: q [B, Hq, dk],
// k [B, Hkv, dk], v [B, Hkv, dv], decay [B, Hkv, dk or 1], beta
// [B, Hkv or 1, 1]; the state [B, Hkv, dk, dv] ("" for zero).
struct LinearStep {
  std::string state, q, k, v, decay = "", beta = "";
};

// The step's new state and its output [B, Hq * dv] (unscaled): query heads
// read their key/value head's state in groups of `group`.
std::pair<std::string, std::string> LinearAttentionStep(Body& b, const UpdateRule& rule,
                                                        const LinearStep& in, int64_t kv_heads,
                                                        int64_t group) {
  std::string state = in.state;
  if (rule.gated && !state.empty()) {
    state = b.Op("Mul", {state, b.Reshape(b.Op("Exp", {in.decay}), {0, 0, -1, 1})});
  }
  std::string write = b.Reshape(in.v, {0, 0, 1, -1});  // [B, Hkv, 1, dv]
  if (rule.delta) {
    if (!state.empty()) {
      std::string read = b.Op("MatMul", {b.Reshape(in.k, {0, 0, 1, -1}), state});
      write = b.Op("Sub", {write, read});
    }
    write = b.Op("Mul", {write, b.Reshape(in.beta, {0, 0, 1, 1})});
  }
  std::string outer = b.Op("MatMul", {b.Reshape(in.k, {0, 0, -1, 1}), write});
  state = state.empty() ? outer : b.Op("Add", {state, outer});
  std::string q = b.Reshape(in.q, {0, kv_heads, group, -1});  // [B, Hkv, g, dk]
  return {state, b.Reshape(b.Op("MatMul", {q, state}), {0, -1})};
}

// LinearAttention's inputs, unpacked to heads in float: [B, T, H, d]
// (decay d = dk or 1; beta [B, T, 1 or Hkv, 1]).
struct LinearInputs {
  std::string q, k, v, decay = "", beta = "", state = "";  // "" where absent
};

// The steps unrolled, tokens taken with Gather; a zero state is left out of
// the first step. The outputs [B, T, Hq * dv] and the last state.
std::pair<std::string, std::string> UnrolledLinearAttention(Body& b, const UpdateRule& rule,
                                                            const LinearInputs& in, int64_t steps,
                                                            int64_t kv_heads, int64_t group) {
  std::string state = in.state;
  std::vector<std::string> outputs;
  for (int64_t step = 0; step < steps; ++step) {
    std::string index = b.Int64Scalar(step);
    auto token = [&](const std::string& x) {
      return x.empty() ? x : b.Op("Gather", {x, index}, "axis = 1");
    };
    std::string output;
    std::tie(state, output) = LinearAttentionStep(
        b, rule, {state, token(in.q), token(in.k), token(in.v), token(in.decay), token(in.beta)},
        kv_heads, group);
    outputs.push_back(output);
  }
  std::string output = outputs.size() == 1 ? outputs[0] : b.Op("Concat", outputs, "axis = 1");
  return {b.Reshape(output, {0, steps, -1}), state};
}

// The steps as a Scan over the tokens (axis 1 moved first), from the past
// state or zeros. The outputs [B, T, Hq * dv] and the last state.
std::pair<std::string, std::string> ScannedLinearAttention(Body& b, const Call& call,
                                                           const UpdateRule& rule,
                                                           const LinearInputs& in, int64_t kv_heads,
                                                           int64_t group) {
  std::string state = in.state;
  if (state.empty()) {  // zeros [B, Hkv, dk, dv]
    std::string shape =
        b.Op("Concat",
             {b.Take(b.Op("Shape", {in.k}), {0, 2, 3}, 0), b.Take(b.Op("Shape", {in.v}), {3}, 0)},
             "axis = 0");
    state = b.Op("ConstantOfShape", {shape});
  }
  Body step(call, "step_");
  LinearStep formal{"step_state", "step_q", "step_k", "step_v"};
  std::vector<std::string> scanned = {in.q, in.k, in.v};
  std::vector<std::string> step_inputs = {formal.state, formal.q, formal.k, formal.v};
  if (!in.decay.empty()) {
    formal.decay = "step_decay";
    scanned.push_back(in.decay);
    step_inputs.push_back(formal.decay);
  }
  if (!in.beta.empty()) {
    formal.beta = "step_beta";
    scanned.push_back(in.beta);
    step_inputs.push_back(formal.beta);
  }
  auto [next, output] = LinearAttentionStep(step, rule, formal, kv_heads, group);
  std::vector<std::string> scan_inputs = {state};
  for (const std::string& x : scanned) {
    scan_inputs.push_back(b.Op("Transpose", {x}, "perm = [1, 0, 2, 3]"));
  }
  std::vector<std::string> results =
      b.Ops("Scan", scan_inputs, 2,
            absl::StrCat("num_scan_inputs = ", scanned.size(),
                         ", body = ", step.GraphText("step", step_inputs, {next, output})));
  return {b.Op("Transpose", {results[1]}, "perm = [1, 0, 2]"), results[0]};
}

// LinearAttention: the recurrence over the T tokens in float, unrolled when
// T is known and at most kMaxUnrolledSteps, else a Scan. Each step reads
// o = scale q^T S per query head, query heads sharing their key/value
// head's state in groups; heads are unpacked with Reshape.
absl::StatusOr<std::string> LinearAttentionBody(const Call& call) {
  enum { kQuery, kKey, kValue, kPast, kDecay, kBeta };
  OC_ASSIGN_OR_RETURN(int32_t t, call.ElemType(kQuery));
  OC_ASSIGN_OR_RETURN(int64_t q_heads, call.NeedInt("q_num_heads"));
  OC_ASSIGN_OR_RETURN(int64_t kv_heads, call.NeedInt("kv_num_heads"));
  if (kv_heads <= 0 || q_heads % kv_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(q_heads, " query heads cannot share ", kv_heads, " key/value heads evenly"));
  }
  const UpdateRule* rule = nullptr;
  std::string rule_name = call.String("update_rule");
  for (const UpdateRule& r : kUpdateRules) {
    if (rule_name == r.name) rule = &r;
  }
  if (rule == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("update_rule \"", rule_name, "\" is unknown"));
  }
  if ((rule->gated && !call.Has(kDecay)) || (rule->delta && !call.Has(kBeta))) {
    return absl::InvalidArgumentError(
        absl::StrCat("update_rule \"", rule_name, "\" needs its decay and beta inputs"));
  }
  int32_t state_type = t;
  if (call.Has(kPast)) {
    OC_ASSIGN_OR_RETURN(state_type, call.ElemType(kPast));
  }
  Body b(call);
  auto heads = [&](int input, int64_t count) {
    return b.Reshape(b.Cast(std::string(call.InputName(input)), t, kFloat), {0, 0, count, -1});
  };
  LinearInputs in{heads(kQuery, q_heads), heads(kKey, kv_heads), heads(kValue, kv_heads)};
  if (rule->gated) in.decay = heads(kDecay, kv_heads);
  if (rule->delta) in.beta = b.Reshape(b.Cast("beta", t, kFloat), {0, 0, -1, 1});
  if (call.Has(kPast)) in.state = b.Cast("past_state", state_type, kFloat);
  int64_t steps = call.Dim(kQuery, 1);
  auto [output, state] =
      steps >= 1 && steps <= kMaxUnrolledSteps
          ? UnrolledLinearAttention(b, *rule, in, steps, kv_heads, q_heads / kv_heads)
          : ScannedLinearAttention(b, call, *rule, in, kv_heads, q_heads / kv_heads);
  float scale = call.Float("scale");
  int64_t packed = call.Dim(kQuery, 2);
  std::string factor =
      scale != 0.0f ? b.Scalar(scale, kFloat)
                    : HeadSizeScale(b, in.q, packed > 0 ? packed / q_heads : -1, 1.0, kFloat);
  b.Output("output", b.Cast(b.Op("Mul", {output, factor}), kFloat, t));
  b.Output("present_state", b.Cast(state, kFloat, state_type));
  return b.Text();
}

// ---------------------------------------------------------------------------
// Builders by op name and since_version.

struct Entry {
  const char* op;
  int since_version;
  absl::StatusOr<std::string> (*build)(const Call&);
};

constexpr Entry kBuilders[] = {
    {"Attention", 23, AttentionBody},
    {"Attention", 24, AttentionBody},
    {"CausalConvWithState", 27, CausalConvWithStateBody},
    {"Celu", 12, CeluBody},
    {"CenterCropPad", 18, CenterCropPadBody},
    {"Gelu", 20, GeluBody},
    {"GroupNormalization", 18, GroupNormalizationBody},
    {"GroupNormalization", 21, GroupNormalizationBody},
    {"LayerNormalization", 17, LayerNormalizationBody},
    {"LinearAttention", 27, LinearAttentionBody},
    {"NegativeLogLikelihoodLoss", 12, NegativeLogLikelihoodLossBody},
    {"NegativeLogLikelihoodLoss", 13, NegativeLogLikelihoodLossBody},
    {"NegativeLogLikelihoodLoss", 22, NegativeLogLikelihoodLossBody},
    {"RMSNormalization", 23, RmsNormalizationBody},
    {"RotaryEmbedding", 23, RotaryEmbeddingBody},
    {"SoftmaxCrossEntropyLoss", 12, SoftmaxCrossEntropyLossBody},
    {"SoftmaxCrossEntropyLoss", 13, SoftmaxCrossEntropyLossBody},
};

}  // namespace

absl::StatusOr<std::string> ContextDependentBody(
    const OpSchema& schema, const onnx::NodeProto& node,
    absl::Span<const onnx::TypeProto* const> input_types) {
  Call call{schema, node, input_types};
  for (const Entry& entry : kBuilders) {
    if (schema.domain.empty() && schema.name == entry.op &&
        schema.since_version == entry.since_version) {
      return entry.build(call);
    }
  }
  return absl::UnimplementedError(
      absl::StrCat("the type-dependent function body of ", schema.Label(), " is not written yet"));
}

}  // namespace onnxconvert::schema
