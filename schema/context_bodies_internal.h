#ifndef ONNX_CONVERT_SCHEMA_CONTEXT_BODIES_INTERNAL_H_
#define ONNX_CONVERT_SCHEMA_CONTEXT_BODIES_INTERNAL_H_

// Internal to schema/context_bodies*.cc: what a body builder sees of the
// call (Call), the body being written (Body) and the small helpers both
// files' builders use; the builders context_bodies_attention.cc defines for
// the table in context_bodies.cc.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::schema::bodies_internal {

inline constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
inline constexpr int32_t kDouble = onnx::TensorProto::DOUBLE;
inline constexpr int32_t kInt64 = onnx::TensorProto::INT64;
inline constexpr int32_t kBool = onnx::TensorProto::BOOL;

// The longest sequence a body unrolls step by step (LinearAttention; a Scan
// runs longer or unknown ones).
inline constexpr int64_t kMaxUnrolledSteps = 64;
// The largest constant a body writes out element by element (a causal
// mask, zeros); larger ones are computed.
inline constexpr int64_t kMaxConstantElements = 1 << 16;

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
inline std::string Number(double value, int32_t elem) {
  return elem == kDouble ? absl::StrFormat("%.17g", value)
                         : absl::StrFormat("%.9g", static_cast<float>(value));
}

// "[1, 2, 3]".
inline std::string List(absl::Span<const int64_t> values) {
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
}

// first, first + 1, ..., first + count - 1.
inline std::vector<int64_t> Iota(int64_t first, int64_t count, int64_t step = 1) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(first + i * step);
  return values;
}

// Whether float represents every one of `values` exactly.
inline bool FloatsHold(absl::Span<const int64_t> values) {
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

// ---------------------------------------------------------------------------
// Builders defined in context_bodies_attention.cc.

// Attention-23 and -24: softmax(Q K^T * scale (softcapped) + bias) V per
// head. Query heads sharing a key/value head (grouped-query attention) are
// folded into its query rows: Q [B, Hq, L, D] viewed as [B, Hkv, g L, D].
// qk_matmul_output is the scores after the stage its mode names.
absl::StatusOr<std::string> AttentionBody(const Call& call);

// RotaryEmbedding: the first rotary_embedding_dim (R) elements of each head
// rotate in pairs (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2), the pairs
// being the two halves of those R elements, or neighbours when interleaved;
// cos and sin are [B, S, R/2] (gathered by position_ids from [P, >= R/2]).
// Heads stay where they are: 4-D input [B, H, S, D], 3-D [B, S, H * D]
// viewed as [B, S, H, D]; the caches are reshaped to broadcast over H.
absl::StatusOr<std::string> RotaryEmbeddingBody(const Call& call);

// CausalConvWithState: a depthwise 1-D convolution over the past state (or
// k - 1 zeros) followed by the input, keeping the input's length; the state
// becomes the last k - 1 positions of that sequence. SiLU ("silu" or
// "swish") optionally follows. 16-bit types are convolved in float.
absl::StatusOr<std::string> CausalConvWithStateBody(const Call& call);

// LinearAttention: the recurrence over the T tokens in float, unrolled when
// T is known and at most kMaxUnrolledSteps, else a Scan. Each step reads
// o = scale q^T S per query head, query heads sharing their key/value
// head's state in groups; heads are unpacked with Reshape.
absl::StatusOr<std::string> LinearAttentionBody(const Call& call);

}  // namespace onnxconvert::schema::bodies_internal

#endif  // ONNX_CONVERT_SCHEMA_CONTEXT_BODIES_INTERNAL_H_
