// Every built-in rule checks itself: models of its pattern are built over
// sampled dtypes, shapes (size-1 and square dims among them), opsets,
// constant inputs and attribute values (unset ones among them); where the
// rule matches, the model with the rule applied must compute the same
// outputs as the pattern's: to the bit on random inputs holding edge
// values for rules of every profile (exact), within the float tolerances
// of eval/compare.h on plain random inputs for deploy rules (which change
// rounding).

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "eval/tensor.h"
#include "gtest/gtest.h"
#include "ir/graph_index.h"
#include "ir/text_printer.h"
#include "rewrites/rules.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {
namespace {

using Shape = std::vector<int64_t>;

// 9: the attribute forms of Pad (before 11) and Slice (before 10).
const int kOpsets[] = {9, 11, 13, 15};
const int kDtypes[] = {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE,
                       onnx::TensorProto::INT64, onnx::TensorProto::INT32};
const Shape kShapes[] = {{2, 3}, {1, 3}, {3, 3}, {2, 1, 3}, {2, 3, 4}, {1, 2, 3, 3}};

// The output channels of the sampled Conv weights (the channels of the
// BatchNormalization after it).
constexpr int64_t kChannels = 2;

// One choice the sampler makes: a constant input or an attribute value.
struct Choice {
  std::string name;  // pattern input, or attribute variable
  bool attribute = false;
  std::vector<onnx::TensorProto> constants;
  std::vector<onnx::AttributeProto> attributes;
};

onnx::TensorProto Constant(int dtype, const Shape& dims, const std::vector<double>& values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(dtype);
  for (int64_t d : dims) tensor.add_dims(d);
  int64_t size = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  for (int64_t i = 0; i < size; ++i) {
    double v = values[i % values.size()];
    switch (dtype) {
      case onnx::TensorProto::FLOAT: tensor.add_float_data(static_cast<float>(v)); break;
      case onnx::TensorProto::DOUBLE: tensor.add_double_data(v); break;
      case onnx::TensorProto::INT64: tensor.add_int64_data(static_cast<int64_t>(v)); break;
      default: tensor.add_int32_data(static_cast<int32_t>(v)); break;  // int32, bool
    }
  }
  return tensor;
}

onnx::TensorProto Ints(const std::vector<int64_t>& values) {
  return Constant(onnx::TensorProto::INT64, {static_cast<int64_t>(values.size())},
                  std::vector<double>(values.begin(), values.end()));
}

// Unnamed attribute values, of one int, one float, one tensor, ints.
onnx::AttributeProto IntAttribute(int64_t value) {
  onnx::AttributeProto attribute;
  attribute.set_type(onnx::AttributeProto::INT);
  attribute.set_i(value);
  return attribute;
}

onnx::AttributeProto FloatAttribute(float value) {
  onnx::AttributeProto attribute;
  attribute.set_type(onnx::AttributeProto::FLOAT);
  attribute.set_f(value);
  return attribute;
}

onnx::AttributeProto TensorAttribute(onnx::TensorProto value) {
  onnx::AttributeProto attribute;
  attribute.set_type(onnx::AttributeProto::TENSOR);
  *attribute.mutable_t() = std::move(value);
  return attribute;
}

onnx::AttributeProto IntsAttribute(const std::vector<int64_t>& values) {
  onnx::AttributeProto attribute;
  attribute.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute.add_ints(v);
  return attribute;
}

// The number a `value(name) == N` predicate asks of `name`, if any.
std::optional<double> ValueAskedOf(const Rule& rule, const std::string& name) {
  for (const Predicate& predicate : rule.where) {
    if (predicate.function == "value" && predicate.args[0].name == name &&
        predicate.rhs.kind == Term::Kind::kNumber) {
      return predicate.rhs.numbers[0];
    }
  }
  return std::nullopt;
}

// How many pattern inputs of `rule` a `value(name) == N` asks of.
int ValuesAsked(const Rule& rule) {
  int count = 0;
  for (const std::string& input : rule.pattern.input()) count += ValueAskedOf(rule, input) ? 1 : 0;
  return count;
}

// Whether `rule`'s `where` has predicate `function` over value `name`.
bool Asks(const Rule& rule, const std::string& function, const std::string& name) {
  for (const Predicate& predicate : rule.where) {
    if (predicate.function != function) continue;
    for (const Term& arg : predicate.args) {
      if (arg.kind == Term::Kind::kValue && arg.name == name) return true;
    }
  }
  return false;
}

// The sampled opsets, with the lowest each `opset >= N` or `opset == N`
// of `rule` allows (for ops newer than kOpsets), less those its `opset`
// predicates rule out (the rule cannot match there: nothing to check).
std::vector<int> Opsets(const Rule& rule) {
  std::vector<int> opsets(std::begin(kOpsets), std::end(kOpsets));
  std::vector<const Predicate*> bounds;
  for (const Predicate& predicate : rule.where) {
    if (predicate.function != "opset" || predicate.rhs.kind != Term::Kind::kNumber) continue;
    bounds.push_back(&predicate);
    int opset = static_cast<int>(predicate.rhs.numbers[0]);
    if ((predicate.comparison == ">=" || predicate.comparison == "==") &&
        absl::c_find(opsets, opset) == opsets.end()) {
      opsets.push_back(opset);
    }
  }
  std::vector<int> allowed;
  for (int opset : opsets) {
    bool ok = true;
    for (const Predicate* bound : bounds) {
      double n = bound->rhs.numbers[0];
      const std::string& c = bound->comparison;
      ok &= c == ">=" ? opset >= n : c == ">" ? opset > n : c == "<=" ? opset <= n
            : c == "<" ? opset < n : c == "==" ? opset == n : opset != n;
    }
    if (ok) allowed.push_back(opset);
  }
  return allowed;
}

// Pads of Pad for data of `shape`: the spatial axes only (wide, and of 1
// at the start), the channel axis too (not fusable), and a negative one.
std::vector<onnx::TensorProto> PadCandidates(const Shape& shape) {
  const size_t rank = shape.size();
  std::vector<int64_t> spatial(2 * rank, 0), narrow(2 * rank, 0), channel(2 * rank, 0),
      negative(2 * rank, 0);
  for (size_t i = 2; i < rank; ++i) {
    spatial[i] = 1;
    spatial[rank + i] = static_cast<int64_t>(i);
    narrow[i] = 1;
    negative[rank + i] = -1;
  }
  channel[1] = 1;
  return {Ints(spatial), Ints(narrow), Ints(channel), Ints(negative)};
}

// Pad-18's pads over `rank - 2` listed axes, and the axes lists: the
// spatial axes in order, the same counted from the end in reverse, and a
// list that takes in the channel axis (no fusion where it is padded).
std::vector<onnx::TensorProto> ListedAxesPadCandidates(const Shape& shape) {
  const int64_t listed = static_cast<int64_t>(shape.size()) - 2;
  std::vector<int64_t> growing(2 * listed), negative(2 * listed, 0), one(2 * listed, 0);
  for (int64_t i = 0; i < listed; ++i) {
    growing[i] = i + 1;
    growing[listed + i] = i + 2;
  }
  negative[listed] = -1;
  one[0] = 1;
  return {Ints(growing), Ints(negative), Ints(one)};
}

std::vector<onnx::TensorProto> PadAxesCandidates(const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> spatial, from_end, with_channel;
  for (int64_t i = 2; i < rank; ++i) {
    spatial.push_back(i);
    from_end.push_back(1 - i);
    with_channel.push_back(i - 1);
  }
  return {Ints(spatial), Ints(from_end), Ints(with_channel)};
}

// Whether `rule`'s where asks predicate `function`.
bool AsksPredicate(const Rule& rule, absl::string_view function) {
  return absl::c_any_of(rule.where,
                        [&](const Predicate& predicate) { return predicate.function == function; });
}

// Whether `rule`'s pattern has a node of `op`.
bool HasOp(const Rule& rule, const std::string& op) {
  for (const onnx::NodeProto& node : rule.pattern.node()) {
    if (node.op_type() == op) return true;
  }
  return false;
}

// Binary element-wise ops.
const std::set<std::string> kElementwise = {"Add", "Sub", "Mul", "Div", "Pow"};

// Large enough for any sampled dim: a Slice bound past the end.
constexpr int64_t kFar = int64_t{1} << 30;

// Candidate constants for the index inputs of shape ops (int64 whatever
// the data dtype: pads, repeats, bounds, shapes), or nullopt for another
// input. Each op gets inputs that keep X and inputs that do not.
std::optional<std::vector<onnx::TensorProto>> IndexCandidates(const std::string& op, int slot,
                                                              int dtype, const Shape& shape) {
  const size_t rank = shape.size();
  if (op == "Slice" && slot >= 1 && slot <= 4) {
    // One axis each: starts, ends, axes, steps (a step of -1 reverses).
    static const std::vector<int64_t> kBounds[][2] = {
        {{0}, {-1}}, {{kFar}, {-kFar}}, {{0}, {-1}}, {{1}, {-1}}};
    return std::vector<onnx::TensorProto>{Ints(kBounds[slot - 1][0]), Ints(kBounds[slot - 1][1])};
  }
  if (op == "Pad" && slot == 1) {
    std::vector<int64_t> pads(2 * rank, 0);
    std::vector<int64_t> one_more = pads;
    one_more.back() = 1;
    return std::vector<onnx::TensorProto>{Ints(pads), Ints(one_more)};
  }
  if (op == "Pad" && slot == 2) return std::vector<onnx::TensorProto>{Constant(dtype, {}, {0.5})};
  if (op == "Tile" && slot == 1) {
    std::vector<int64_t> once(rank, 1);
    std::vector<int64_t> twice = once;
    twice[0] = 2;
    return std::vector<onnx::TensorProto>{Ints(once), Ints(twice)};
  }
  if (op == "Expand" && slot == 1) {
    Shape longer = shape;
    longer.insert(longer.begin(), 2);
    Shape wider = shape;
    wider[0] = 3;
    return std::vector<onnx::TensorProto>{Ints(shape), Ints({1}), Ints(longer), Ints(wider)};
  }
  if (op == "Split" && slot == 1) return std::vector<onnx::TensorProto>{Ints({shape[0]})};
  if (op == "ConstantOfShape" && slot == 0) {
    return std::vector<onnx::TensorProto>{Ints(shape), Ints({})};
  }
  return std::nullopt;
}

// Whether `rule` takes pattern input `name` as a scale: a power of the last
// dim (last_dim_power), a power of it bound (power), or its value bound as
// an Attention's attribute.
bool AsksScale(const Rule& rule, const std::string& name) {
  const bool attention = absl::c_any_of(rule.replacement.node(), [](const onnx::NodeProto& node) {
    return node.op_type() == "Attention";
  });
  for (const Predicate& predicate : rule.where) {
    const bool binds = attention && predicate.rhs.kind == Term::Kind::kAttribute;
    if (predicate.args.empty() || predicate.args[0].name != name) continue;
    if (predicate.function == "last_dim_power" || predicate.function == "power" ||
        (predicate.function == "value" && binds)) {
      return true;
    }
  }
  return false;
}

// Scales of data of `shape` (Attention's): the default 1/sqrt(D) and its
// square root and reciprocal root (D the last dim), another one, and the
// default as [1] and along the last axis.
std::vector<onnx::TensorProto> ScaleCandidates(int dtype, const Shape& shape) {
  const double d = static_cast<double>(shape.back());
  return {Constant(dtype, {}, {1 / std::sqrt(d)}), Constant(dtype, {}, {std::sqrt(d)}),
          Constant(dtype, {}, {std::pow(d, -0.25)}), Constant(dtype, {}, {0.3}),
          Constant(dtype, {1}, {1 / std::sqrt(d)}),
          Constant(dtype, {shape.back()}, {1 / std::sqrt(d), 0.3})};
}

// Candidate constants for pattern input `name`, first read by input `slot`
// of `op`; empty for a data input.
std::vector<onnx::TensorProto> ConstantCandidates(const Rule& rule, const std::string& name,
                                                  const std::string& op, int slot, int dtype,
                                                  const Shape& shape) {
  // The Pad fusions (fused_pads): spatial pads and others, and the zero pad
  // value they ask for.
  const bool on_axes = AsksPredicate(rule, "fused_pads_on_axes");
  if (op == "Pad" && (on_axes || AsksPredicate(rule, "fused_pads"))) {
    if (slot == 1 && shape.size() >= 3) {
      return on_axes ? ListedAxesPadCandidates(shape) : PadCandidates(shape);
    }
    if (slot == 3 && shape.size() >= 3) return PadAxesCandidates(shape);
    std::optional<double> value = ValueAskedOf(rule, name);
    if (slot == 2 && value) return {Constant(dtype, {}, {*value})};
  }
  if (auto index = IndexCandidates(op, slot, dtype, shape)) return *std::move(index);
  if (AsksScale(rule, name)) return ScaleCandidates(dtype, shape);
  if (std::optional<double> value = ValueAskedOf(rule, name)) {
    if (op == "Dropout") return {Constant(onnx::TensorProto::BOOL, {}, {*value})};
    if (ValuesAsked(rule) >= 4) {
      // Many such inputs (Gelu's constants): fewer shapes, one growing X.
      return {Constant(dtype, {}, {*value}), Constant(dtype, {1}, {*value}),
              Constant(dtype, Shape{2, 2, 3, 4}, {*value})};
    }
    return {Constant(dtype, {}, {*value}), Constant(dtype, {1}, {*value}),
            Constant(dtype, {shape.back()}, {*value}), Constant(dtype, shape, {*value}),
            Constant(dtype, Shape{2, 2, 3, 4}, {*value})};
  }
  if ((op == "Mul" || op == "Add") && slot == 1 && HasOp(rule, "Flatten") &&
      Asks(rule, "rank", name)) {
    // A scale or bias flattened to [1, K], K the last dim.
    return {Constant(dtype, {1, shape.back()}, {1.5, -0.25, 0.75})};
  }
  if (op == "LayerNormalization" && slot == 1) {
    return {Constant(dtype, {shape.back()}, {1.5, -0.25, 0.75})};
  }
  if (op == "ReduceMean" && slot == 1) {
    return {Ints({-1}), Ints({static_cast<int64_t>(shape.size()) - 1}), Ints({0})};
  }
  if (op == "MatMul" && slot == 1 && HasOp(rule, "BatchNormalization")) {
    // [K, kChannels] weights.
    return {Constant(dtype, {shape.back(), kChannels}, {0.5, -1.25, 2, 0.75, -0.3})};
  }
  if (op == "Gemm" && slot == 1 && HasOp(rule, "BatchNormalization")) {
    // B as [K, kChannels] (transB = 0) and [kChannels, K] (transB = 1).
    return {Constant(dtype, {shape.back(), kChannels}, {0.5, -1.25, 2, 0.75, -0.3}),
            Constant(dtype, {kChannels, shape.back()}, {0.5, -1.25, 2, 0.75, -0.3})};
  }
  if (op == "Gemm" && slot == 2 && HasOp(rule, "BatchNormalization")) {
    return {Constant(dtype, {kChannels}, {0.1, -0.2}), Constant(dtype, {}, {0.5}),
            Constant(dtype, {shape[0], kChannels}, {0.1, -0.2, 0.3})};
  }
  if (op == "Reshape" && slot == 1) {
    Shape reversed(shape.rbegin(), shape.rend());
    Shape ones = shape;
    ones.insert(ones.begin(), 1);
    return {Ints(shape), Ints({-1}), Ints(reversed), Ints(ones), Ints({0, -1})};
  }
  if ((op == "Squeeze" || op == "Unsqueeze") && slot == 1) {
    return {Ints({0}), Ints({-1}), Ints({1})};
  }
  if (op == "Dropout" && slot == 1) return {Constant(onnx::TensorProto::FLOAT, {}, {0.5})};
  if ((op == "Max" || op == "Min") && slot == 1) {
    return {Constant(dtype, {}, {0.5}), Constant(dtype, {}, {-2}),
            Constant(dtype, {shape.back()}, {0.5, -2})};
  }
  if (op == "Conv" && slot == 1 && shape.size() >= 3) {
    // Weights [kChannels, C, k...] with kernels of 1 and 2.
    std::vector<onnx::TensorProto> weights;
    for (int64_t kernel : {1, 2}) {
      Shape dims = {kChannels, shape[1]};
      dims.resize(shape.size(), kernel);
      weights.push_back(Constant(dtype, dims, {0.5, -1.25, 2, 0.75, -0.3}));
    }
    return weights;
  }
  if ((op == "Mul" || op == "Add") && slot == 1 && shape.size() >= 3 && HasOp(rule, "Conv")) {
    // Per channel (kChannels along axis 1), one element, and along the
    // last axis (not per channel).
    Shape channel(shape.size() - 1, 1);
    channel[0] = kChannels;
    Shape full(shape.size(), 1);
    full[1] = kChannels;
    return {Constant(dtype, channel, {1.5, -0.25}), Constant(dtype, full, {0.75, 2}),
            Constant(dtype, {1}, {-1.5}), Constant(dtype, {}, {0.5}),
            Constant(dtype, {shape.back()}, {0.5, -2})};
  }
  if (op == "ConvTranspose" && slot == 1 && shape.size() >= 3) {
    // Weights [C, kChannels, k...] with kernels of 1 and 2.
    std::vector<onnx::TensorProto> weights;
    for (int64_t kernel : {1, 2}) {
      Shape dims = {shape[1], kChannels};
      dims.resize(shape.size(), kernel);
      weights.push_back(Constant(dtype, dims, {0.5, -1.25, 2, 0.75, -0.3}));
    }
    return weights;
  }
  if ((op == "Conv" || op == "ConvTranspose") && slot == 2) return {Constant(dtype, {kChannels}, {0.1, -0.2})};
  if (op == "BatchNormalization" && slot >= 1) {
    // scale, bias, mean, var (positive).
    static const std::vector<double> kValues[] = {{1.5, -0.5}, {0.25, -1}, {0.3, -0.7}, {0.8, 2.5}};
    return {Constant(dtype, {kChannels}, kValues[slot - 1])};
  }
  if (kElementwise.contains(op) && (Asks(rule, "is_const", name) || Asks(rule, "rank", name)) &&
      !Asks(rule, "same_dim", name)) {
    // A constant operand the rule asks about: one element, or along the
    // last axis (not one whose dims it compares with another's: data).
    return {Constant(dtype, {}, {0.5}), Constant(dtype, {shape.back()}, {1.5, -0.25, 0.75})};
  }
  return {};
}

// An attribute left unset (the schema's default applies).
onnx::AttributeProto Unset() { return onnx::AttributeProto(); }

// Candidate values for attribute variable `@var`, bound to `attribute` of
// `op`.
std::vector<onnx::AttributeProto> AttributeCandidates(const std::string& op,
                                                      const std::string& attribute, int dtype,
                                                      const Shape& shape) {
  if (op == "Cast" && attribute == "to") {
    return {IntAttribute(dtype), IntAttribute(onnx::TensorProto::FLOAT),
            IntAttribute(onnx::TensorProto::INT64)};
  }
  if (op == "Transpose" && attribute == "perm") {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::vector<onnx::AttributeProto> out;
    do out.push_back(IntsAttribute(perm));
    while (std::next_permutation(perm.begin(), perm.end()));
    return out;
  }
  if (attribute == "kernel_shape" && shape.size() >= 3) {
    return {IntsAttribute(std::vector<int64_t>(shape.size() - 2, 1)),
            IntsAttribute(std::vector<int64_t>(shape.size() - 2, 2))};
  }
  if (op == "Gemm" && attribute == "beta") return {Unset(), FloatAttribute(0.5f)};
  if (op == "Pad" && attribute == "pads") {
    std::vector<int64_t> pads(2 * shape.size(), 0);
    std::vector<int64_t> one_more = pads;
    one_more.back() = 1;
    return {IntsAttribute(pads), IntsAttribute(one_more)};
  }
  if (op == "Slice" && attribute == "starts") return {IntsAttribute({0}), IntsAttribute({-1})};
  if (op == "Slice" && attribute == "ends") return {IntsAttribute({kFar}), IntsAttribute({-1})};
  if (op == "ConstantOfShape" && attribute == "value") {
    return {TensorAttribute(Constant(onnx::TensorProto::FLOAT, {1}, {1.5})),
            TensorAttribute(Constant(onnx::TensorProto::INT64, {1}, {-3})),
            TensorAttribute(Constant(onnx::TensorProto::DOUBLE, {1}, {-0.0}))};
  }
  if (attribute == "axes") return {IntsAttribute({0}), IntsAttribute({-1}), IntsAttribute({1})};
  if (attribute == "axis") return {Unset(), IntAttribute(0), IntAttribute(-1), IntAttribute(1)};
  if (op == "BatchNormalization" && attribute == "epsilon") {
    return {Unset(), FloatAttribute(1e-3f)};
  }
  return {};
}

// The choices a model of `rule`'s pattern needs, given the data dtype and
// shape; the data inputs in `data`.
std::vector<Choice> Choices(const Rule& rule, int dtype, const Shape& shape,
                            std::vector<std::string>& data) {
  std::vector<Choice> choices;
  for (const std::string& input : rule.pattern.input()) {
    std::vector<onnx::TensorProto> constants;
    for (const onnx::NodeProto& node : rule.pattern.node()) {
      for (int slot = 0; slot < node.input_size() && constants.empty(); ++slot) {
        if (node.input(slot) == input) {
          constants = ConstantCandidates(rule, input, node.op_type(), slot, dtype, shape);
        }
      }
    }
    if (constants.empty()) {
      data.push_back(input);
    } else {
      choices.push_back(Choice{input, false, std::move(constants), {}});
    }
  }
  for (const onnx::NodeProto& node : rule.pattern.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.ref_attr_name().empty()) continue;
      bool seen = false;
      for (const Choice& choice : choices) seen |= choice.attribute && choice.name == attribute.ref_attr_name();
      if (seen) continue;
      choices.push_back(Choice{attribute.ref_attr_name(), true, {},
                               AttributeCandidates(node.op_type(), attribute.name(), dtype, shape)});
    }
  }
  return choices;
}

// A model of the pattern: data inputs of `dtype` and `shape`, constants and
// attributes as `pick` chooses; each pattern output read by an Identity so
// that it is not a graph output. `swap` swaps the operands of binary nodes.
onnx::ModelProto PatternModel(const Rule& rule, int opset, int dtype, const Shape& shape,
                              const std::vector<std::string>& data,
                              const std::vector<Choice>& choices, const std::vector<size_t>& pick,
                              bool swap) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(opset);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(rule.name);
  for (const std::string& name : data) {
    onnx::ValueInfoProto& input = *graph.add_input();
    input.set_name(name);
    auto* tensor = input.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(dtype);
    for (int64_t d : shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  }
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i].attribute) continue;
    onnx::TensorProto constant = choices[i].constants[pick[i]];
    constant.set_name(choices[i].name);
    *graph.add_initializer() = constant;
  }
  for (onnx::NodeProto node : rule.pattern.node()) {
    if (swap && node.input_size() == 2) {
      std::string first = node.input(0);
      node.set_input(0, node.input(1));
      node.set_input(1, first);
    }
    const schema::OpSchema* op = schema::Registry::Get().Lookup("", node.op_type(), opset);
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
    for (onnx::AttributeProto attribute : node.attribute()) {
      // A literal the op version does not define is left out (the rule
      // matches it unset).
      if (attribute.ref_attr_name().empty()) {
        if (op == nullptr || op->FindAttr(attribute.name()) != nullptr) {
          *attributes.Add() = attribute;
        }
        continue;
      }
      for (size_t i = 0; i < choices.size(); ++i) {
        if (choices[i].attribute && choices[i].name == attribute.ref_attr_name()) {
          std::string name = attribute.name();
          attribute = choices[i].attributes[pick[i]];
          attribute.set_name(name);
        }
      }
      if (attribute.type() != onnx::AttributeProto::UNDEFINED) *attributes.Add() = attribute;
    }
    *node.mutable_attribute() = std::move(attributes);
    *graph.add_node() = node;
  }
  for (const std::string& output : rule.pattern.output()) {
    onnx::NodeProto& read = *graph.add_node();
    read.set_op_type("Identity");
    read.add_input(output);
    read.add_output(output + "_out");
    graph.add_output()->set_name(output + "_out");
  }
  return model;
}

// The bytes of every output, to compare to the bit.
std::vector<std::string> OutputBytes(const eval::EvalResult& result) {
  std::vector<std::string> bytes;
  for (const eval::NamedValue& output : result.outputs) {
    bytes.push_back(output.value.is_tensor()
                        ? eval::ToProto(output.value.tensor(), "").SerializeAsString()
                        : "not a tensor");
  }
  return bytes;
}

// Whether `after` computes what `before` does: to the bit, or for a deploy
// rule within the tolerances of eval/compare.h.
bool SameOutputs(const Rule& rule, const eval::EvalResult& before,
                 const eval::EvalResult& after) {
  if (rule.profile != "deploy") return OutputBytes(before) == OutputBytes(after);
  if (before.outputs.size() != after.outputs.size()) return false;
  for (size_t i = 0; i < before.outputs.size(); ++i) {
    if (!eval::CompareValues(before.outputs[i].value, after.outputs[i].value).ok) return false;
  }
  return true;
}

// Samples checked and matched for one rule.
struct Outcome {
  int models = 0;
  int matched = 0;
  std::vector<std::string> failures;
};

// Checks `rule` on one sampled model, if its pattern model is valid and the
// rule matches there.
void CheckSample(const Rule& rule, onnx::ModelProto model, Outcome& outcome) {
  absl::StatusOr<schema::InferenceResult> types = schema::InferModel(model);
  if (!types.ok()) return;
  ++outcome.models;
  const onnx::ModelProto original = model;
  absl::StatusOr<std::unique_ptr<ModelIndex>> index = ModelIndex::Build(&model);
  ASSERT_TRUE(index.ok()) << index.status();
  RewriteOptions options;
  options.profile = rule.profile.empty() ? "exact" : rule.profile;
  PassContext context(original, *types, options);
  GraphIndex& graph = *(*index)->main_graph();
  NodeId root = kNoNode;
  for (int i = 0; i < rule.pattern.node_size(); ++i) {
    for (const std::string& output : rule.pattern.node(i).output()) {
      if (output == rule.pattern.output(0)) root = i;
    }
  }
  std::optional<RuleMatch> match = MatchRule(rule, context, graph, root);
  if (!match) return;
  ++outcome.matched;
  PassStats stats;
  absl::Status applied = ApplyRule(rule, *match, graph, stats);
  if (applied.ok()) applied = (*index)->Commit();
  std::string where = PrintModelText(original);
  if (!applied.ok()) {
    outcome.failures.push_back(absl::StrCat(applied.message(), "\n", where));
    return;
  }
  for (uint64_t seed : {1, 2, 3}) {
    std::mt19937_64 rng(seed);
    eval::RandomInputOptions random;
    random.edge_values = rule.profile != "deploy";
    absl::StatusOr<std::vector<eval::NamedValue>> inputs =
        eval::RandomInputs(original.graph(), random, rng);
    ASSERT_TRUE(inputs.ok()) << inputs.status();
    absl::StatusOr<eval::EvalResult> before = eval::EvaluateModel(original, *inputs);
    if (!before.ok()) return;  // the pattern fails at run time (a bad Reshape): nothing to keep
    absl::StatusOr<eval::EvalResult> after = eval::EvaluateModel(model, *inputs);
    if (!after.ok() || !SameOutputs(rule, *before, *after)) {
      outcome.failures.push_back(absl::StrCat(
          after.ok() ? "outputs differ" : after.status().message(), "\nbefore:\n", where,
          "after:\n", PrintModelText(model)));
      return;
    }
  }
}

// Checks `rule` over every sample.
Outcome SelfTest(const Rule& rule) {
  Outcome outcome;
  for (int opset : Opsets(rule)) {
    for (int dtype : kDtypes) {
      for (const Shape& shape : kShapes) {
        std::vector<std::string> data;
        std::vector<Choice> choices = Choices(rule, dtype, shape, data);
        std::vector<size_t> pick(choices.size(), 0);
        bool empty = false;
        for (const Choice& choice : choices) {
          empty |= (choice.attribute ? choice.attributes.size() : choice.constants.size()) == 0;
        }
        if (empty) continue;
        while (true) {
          for (bool swap : {false, true}) {
            if (swap && !rule.commutative) continue;
            CheckSample(rule, PatternModel(rule, opset, dtype, shape, data, choices, pick, swap),
                        outcome);
          }
          // The next combination, odometer-wise.
          size_t i = 0;
          for (; i < choices.size(); ++i) {
            size_t n = choices[i].attribute ? choices[i].attributes.size()
                                            : choices[i].constants.size();
            if (++pick[i] < n) break;
            pick[i] = 0;
          }
          if (i == choices.size()) break;
        }
      }
    }
  }
  return outcome;
}

class RuleSelfTest : public ::testing::TestWithParam<Rule> {};

TEST_P(RuleSelfTest, ReplacementComputesTheSame) {
  const Rule& rule = GetParam();
  Outcome outcome = SelfTest(rule);
  RecordProperty("matched", outcome.matched);
  RecordProperty("models", outcome.models);
  EXPECT_GT(outcome.matched, 0) << rule.name << ": no sample satisfies its where ("
                                << outcome.models << " valid models)";
  EXPECT_TRUE(outcome.failures.empty())
      << rule.name << " (" << rule.file << ":" << rule.line << "): " << outcome.failures.size()
      << " failing samples; first:\n"
      << (outcome.failures.empty() ? "" : outcome.failures[0]);
}

std::vector<Rule> Builtin() {
  absl::StatusOr<std::vector<Rule>> rules = BuiltinRules();
  return rules.ok() ? *rules : std::vector<Rule>{};
}

// Rule files of wrong rules, each rule one the self-test must catch (the
// flaw of each in a comment above it).
constexpr const char* kWrongRuleFiles[] = {"rewrites/testdata/wrong_exact.rules",
                                           "rewrites/testdata/wrong_deploy.rules"};

// The rules of `path`, or its error.
absl::StatusOr<std::vector<Rule>> RulesOfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseRules(text.str(), path);
}

// The rules of kWrongRuleFiles (those that parse: WrongRuleFilesParse
// checks they all do).
std::vector<Rule> WrongRules() {
  std::vector<Rule> wrong;
  for (const char* path : kWrongRuleFiles) {
    absl::StatusOr<std::vector<Rule>> rules = RulesOfFile(path);
    if (rules.ok()) wrong.insert(wrong.end(), rules->begin(), rules->end());
  }
  return wrong;
}

TEST(RuleSelfTest, WrongRuleFilesParse) {
  size_t count = 0;
  for (const char* path : kWrongRuleFiles) {
    absl::StatusOr<std::vector<Rule>> rules = RulesOfFile(path);
    ASSERT_TRUE(rules.ok()) << rules.status();
    count += rules->size();
  }
  EXPECT_EQ(count, 5u);
}

class WrongRuleTest : public ::testing::TestWithParam<Rule> {};

// The self-test matches the wrong rule on some samples and finds it
// computing differently on some.
TEST_P(WrongRuleTest, SelfTestCatchesIt) {
  Outcome outcome = SelfTest(GetParam());
  EXPECT_GT(outcome.matched, 0);
  EXPECT_FALSE(outcome.failures.empty());
}

INSTANTIATE_TEST_SUITE_P(Wrong, WrongRuleTest, ::testing::ValuesIn(WrongRules()),
                         [](const auto& info) { return info.param.name; });

TEST(RuleSelfTest, BuiltinRulesParse) { EXPECT_TRUE(BuiltinRules().ok()); }

INSTANTIATE_TEST_SUITE_P(Builtin, RuleSelfTest, ::testing::ValuesIn(Builtin()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::rewrites
