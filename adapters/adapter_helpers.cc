#include "adapters/adapter_helpers.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/enum_words.h"
#include "schema/inference.h"
#include "schema/shape_util.h"
#include "schema/type_strings.h"

namespace onnxconvert::adapters {
namespace {

using schema::AttrSpec;
using schema::FormalFor;
using schema::FormalParam;
using schema::OpSchema;
using schema::TypeConstraint;

// versions, which lack them, do: unset or written with that default, the
// node still means something else there (a rewrite or a refusal decides).
// Every other attribute an earlier version lacks means, at its default,
// what that version does.
struct DefaultUnlikeOlder {
  const char* op;
  int since;  // the since_version that added the attribute
  const char* attribute;
  const char* older;  // what the earlier versions do
};

constexpr DefaultUnlikeOlder kDefaultsUnlikeOlder[] = {
    {"Resize", 11, "coordinate_transformation_mode", "asymmetric"},
    {"Resize", 11, "nearest_mode", "floor"},
    {"RoiAlign", 16, "coordinate_transformation_mode", "output_half_pixel"},
};

}  // namespace

const char* OlderBehaviour(const OpSchema& from, const OpSchema& to,
                           absl::string_view attribute) {
  for (const DefaultUnlikeOlder& row : kDefaultsUnlikeOlder) {
    if (from.domain.empty() && from.name == row.op && attribute == row.attribute &&
        from.since_version >= row.since && to.since_version < row.since) {
      return row.older;
    }
  }
  return nullptr;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, absl::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool HoldsDefault(const AttrSpec& spec, const onnx::AttributeProto& attribute) {
  if (!spec.has_default) return false;
  if (attribute.has_type() && attribute.type() != spec.type) return false;
  const schema::AttrDefault& d = spec.default_value;
  switch (spec.type) {
    case onnx::AttributeProto::INT:
      return attribute.i() == d.i;
    case onnx::AttributeProto::FLOAT:
      return attribute.f() == d.f || (attribute.f() != attribute.f() && d.f != d.f);
    case onnx::AttributeProto::STRING:
      return attribute.s() == d.s;
    case onnx::AttributeProto::INTS:
      return std::equal(attribute.ints().begin(), attribute.ints().end(), d.ints.begin(),
                        d.ints.end());
    case onnx::AttributeProto::STRINGS:
      return std::equal(attribute.strings().begin(), attribute.strings().end(),
                        d.strings.begin(), d.strings.end());
    default:
      return false;  // tensors, graphs, floats: the registry keeps no such defaults
  }
}

void DropDefaultedAttributes(AdapterContext& ctx) {
  for (const AttrSpec& spec : ctx.from.attributes) {
    if (ctx.to.FindAttr(spec.name) != nullptr) continue;
    if (OlderBehaviour(ctx.from, ctx.to, spec.name) != nullptr) continue;
    const onnx::AttributeProto* attribute = FindAttribute(ctx.node, spec.name);
    if (attribute == nullptr || !HoldsDefault(spec, *attribute)) continue;
    RemoveAttribute(ctx.node, spec.name);
    ctx.changes.push_back(
        {ChangeKind::kAttributeRemoved, absl::StrCat(spec.name, " (set to its default, which ",
                                                     ctx.to.Label(), " lacks) dropped")});
  }
}

void RemoveAttribute(onnx::NodeProto& node, absl::string_view name) {
  auto& attributes = *node.mutable_attribute();
  for (int i = 0; i < attributes.size(); ++i) {
    if (attributes[i].name() != name) continue;
    // Moved last, the others keeping their order, and cleared rather than
    // freed: the field keeps it for the next attribute parsed into it (a
    // window's node is parsed into again by the next window). 4% fewer
    // instructions converting a chain of 100 k nodes to 21, for 0.4-1.3 MB
    // more peak heap at 1 M (stop 37, bench/README.md).
    for (int j = i; j + 1 < attributes.size(); ++j) attributes.SwapElements(j, j + 1);
    attributes.RemoveLast();
    --i;
  }
}

void AddIntAttribute(onnx::NodeProto& node, absl::string_view name, int64_t value) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(std::string(name));
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

absl::Status CheckTypesAllowed(AdapterContext& ctx) {
  // Type parameter -> the type its first value binds it to.
  absl::InlinedVector<std::pair<absl::string_view, std::string>, 4> bound;
  auto check = [&](const google::protobuf::RepeatedPtrField<std::string>& values,
                   absl::Span<const FormalParam> to_formals) -> absl::Status {
    for (int i = 0; i < values.size(); ++i) {
      const FormalParam* formal = FormalFor(to_formals, i);
      if (values[i].empty() || formal == nullptr) continue;
      const onnx::TypeProto* type = ctx.rewriter.TypeOf(values[i]);
      std::string actual = type != nullptr ? schema::TypeString(*type) : "";
      if (actual.empty()) continue;
      const TypeConstraint* constraint = ctx.to.FindConstraint(formal->type_str);
      absl::Span<const absl::string_view> allowed_types = ctx.to.AllowedTypes(*formal);
      // (A tensor's element type is looked up as a bit, not among the
      // strings: a Loop's constraint lists some 60 types.)
      int32_t elem = type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
      bool allowed = elem > 0 && elem < 64
                         ? ((schema::TensorElemMask(allowed_types) >> elem) & 1) != 0
                         : std::find(allowed_types.begin(), allowed_types.end(), actual) !=
                               allowed_types.end();
      if (!allowed) {
        return absl::FailedPreconditionError(absl::StrCat(
            "'", values[i], "' is ", actual, ", which ", ctx.to.Label(), " does not allow for ",
            formal->type_str,
            constraint == nullptr
                ? std::string()
                : absl::StrCat(" (allowed: ", absl::StrJoin(constraint->allowed_types, ", "), ")")));
      }
      if (constraint == nullptr || !formal->is_homogeneous) continue;
      bool seen = false;
      for (const auto& [param, bound_type] : bound) {
        if (param != formal->type_str) continue;
        seen = true;
        if (bound_type != actual) {
          return absl::FailedPreconditionError(absl::StrCat(
              "'", values[i], "' is ", actual, " but ", ctx.to.Label(), " needs it to match ",
              bound_type, " (both bind ", formal->type_str, ")"));
        }
      }
      if (!seen) bound.emplace_back(formal->type_str, actual);
    }
    return absl::OkStatus();
  };
  absl::Status inputs = check(ctx.node.input(), ctx.to.inputs);
  if (!inputs.ok()) return inputs;
  return check(ctx.node.output(), ctx.to.outputs);
}

void AddIntsAttribute(onnx::NodeProto& node, absl::string_view name,
                      absl::Span<const int64_t> values) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(std::string(name));
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void SetStringAttribute(onnx::NodeProto& node, absl::string_view name, absl::string_view value) {
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == name) {
      attribute.set_s(std::string(value));
      return;
    }
  }
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(std::string(name));
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(std::string(value));
}

const onnx::TensorShapeProto* ShapeOf(const AdapterContext& ctx, absl::string_view value) {
  const onnx::TypeProto* type = ctx.rewriter.TypeOf(value);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return nullptr;
  }
  return &type->tensor_type().shape();
}

int64_t RankOf(const AdapterContext& ctx, absl::string_view value) {
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, value);
  return shape == nullptr ? -1 : shape->dim_size();
}

namespace {

// Appends the raw little-endian values of `tensor` as T to `out`.
template <typename T, typename Out>
void ReadRaw(const onnx::TensorProto& tensor, std::vector<Out>& out) {
  const std::string& raw = tensor.raw_data();
  for (size_t i = 0; i + sizeof(T) <= raw.size(); i += sizeof(T)) {
    T v;
    std::memcpy(&v, raw.data() + i, sizeof(T));
    out.push_back(static_cast<Out>(v));
  }
}

// Appends the values of `tensor`, stored as T in its raw data or else in
// its typed `field`, to `out`.
template <typename T, typename Out, typename Field>
void ReadValues(const onnx::TensorProto& tensor, const Field& field, std::vector<Out>& out) {
  if (tensor.has_raw_data()) {
    ReadRaw<T>(tensor, out);
  } else {
    out.assign(field.begin(), field.end());
  }
}

// The values of `tensor`, read as Out, when its element type is one of
// `types` (of int64, int32, bool, float and double), or nullopt.
template <typename Out>
std::optional<std::vector<Out>> NumbersOf(const onnx::TensorProto& tensor,
                                          std::initializer_list<int32_t> types) {
  if (std::find(types.begin(), types.end(), tensor.data_type()) == types.end()) {
    return std::nullopt;
  }
  std::vector<Out> values;
  switch (tensor.data_type()) {
    case onnx::TensorProto::INT64:
      ReadValues<int64_t>(tensor, tensor.int64_data(), values);
      break;
    case onnx::TensorProto::INT32:
      ReadValues<int32_t>(tensor, tensor.int32_data(), values);
      break;
    case onnx::TensorProto::BOOL:
      ReadValues<uint8_t>(tensor, tensor.int32_data(), values);
      for (Out& v : values) v = v != 0;
      break;
    case onnx::TensorProto::FLOAT:
      ReadValues<float>(tensor, tensor.float_data(), values);
      break;
    case onnx::TensorProto::DOUBLE:
      ReadValues<double>(tensor, tensor.double_data(), values);
      break;
    default:
      return std::nullopt;
  }
  return values;
}

}  // namespace

std::optional<std::vector<int64_t>> IntValues(const onnx::TensorProto& tensor) {
  return NumbersOf<int64_t>(
      tensor, {onnx::TensorProto::INT64, onnx::TensorProto::INT32, onnx::TensorProto::BOOL});
}

std::optional<std::vector<double>> FloatValues(const onnx::TensorProto& tensor) {
  return NumbersOf<double>(tensor, {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE});
}

absl::StatusOr<std::string> ScatterIntoConstant(AdapterContext& ctx, onnx::TensorProto base,
                                                absl::Span<const int64_t> indices,
                                                const std::string& updates) {
  absl::StatusOr<std::string> base_name = ctx.rewriter.AddConstant(std::move(base));
  if (!base_name.ok()) return base_name.status();
  absl::StatusOr<std::string> index_name = ctx.rewriter.AddConstant(Int64Tensor(indices));
  if (!index_name.ok()) return index_name.status();
  onnx::NodeProto scatter;
  scatter.set_op_type("ScatterElements");
  scatter.set_name(ctx.rewriter.FreshName(absl::StrCat(ctx.node.name(), "_full")));
  scatter.add_input(*base_name);
  scatter.add_input(*index_name);
  scatter.add_input(updates);
  std::string full = ctx.rewriter.FreshName(absl::StrCat(updates, "_full"));
  scatter.add_output(full);
  ctx.rewriter.InsertBefore(std::move(scatter));
  ctx.changes.push_back({ChangeKind::kNodeInserted, absl::StrCat("ScatterElements spreading '",
                                                                 updates, "' over every axis")});
  return full;
}

namespace {

// Every change kind's report word, in ChangeKind order.
constexpr absl::string_view kChangeKindNames[] = {
    "version-bump",       "attribute-set",    "attribute-removed",  "attribute-renamed",
    "attribute-to-input", "input-added",      "input-removed",      "input-dropped",
    "input-replaced",     "input-set",        "input-to-attribute", "input-to-input",
    "output-added",       "output-removed",   "type-set",           "cast-inserted",
    "node-inserted",      "node-replaced",    "node-folded",        "function-expanded",
    "initializer-added",  "rounding-changed", "nan-changed",
};
static_assert(std::size(kChangeKindNames) == static_cast<size_t>(kLastChangeKind) + 1,
              "a word for every ChangeKind");

}  // namespace

absl::string_view ChangeKindName(ChangeKind kind) { return EnumWord(kChangeKindNames, kind); }

std::optional<ChangeKind> ParseChangeKind(absl::string_view word) {
  return ParseEnumWord<ChangeKind>(kChangeKindNames, word);
}

}  // namespace onnxconvert::adapters

