// Attributes later versions added, which a downgrade drops when the node
// leaves them at their neutral value: Cast's and CastLike's `saturate` (19;
// it matters only for float8 targets, which older versions lack), the
// pools' `dilations` (AveragePool 19, LpPool 18) and LpPool's `ceil_mode`
// (18), GridSample's mode names (20 renamed bilinear/bicubic to
// linear/cubic), and Constant's value_* shorthands (12).

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

// Drops `name` when it holds a neutral value (every int equal to
// `neutral`), else refuses naming it.
absl::Status DropIfNeutral(AdapterContext& ctx, absl::string_view name, int64_t neutral) {
  const onnx::AttributeProto* attribute = FindAttribute(ctx.node, name);
  if (attribute == nullptr) return absl::OkStatus();
  bool is_neutral = attribute->type() == onnx::AttributeProto::INTS
                        ? std::all_of(attribute->ints().begin(), attribute->ints().end(),
                                      [&](int64_t v) { return v == neutral; })
                        : attribute->i() == neutral;
  if (!is_neutral) {
    return absl::FailedPreconditionError(absl::StrCat(
        "attribute '", name, "' is set to a value ", ctx.to.Label(), " cannot express"));
  }
  RemoveAttribute(ctx.node, name);
  ctx.changes.push_back({"attribute-removed", absl::StrCat(name, " (neutral) dropped")});
  return absl::OkStatus();
}

absl::Status DropSaturate(AdapterContext& ctx) {
  if (FindAttribute(ctx.node, "saturate") == nullptr) return absl::OkStatus();
  // A float8 target is refused by the type check of the older version,
  // which the converter runs after every rewrite.
  RemoveAttribute(ctx.node, "saturate");
  ctx.changes.push_back({"attribute-removed", "saturate dropped: the target is not float8"});
  return absl::OkStatus();
}

absl::Status DropPoolDilations(AdapterContext& ctx) {
  if (absl::Status status = DropIfNeutral(ctx, "dilations", 1); !status.ok()) return status;
  if (ctx.from.name == "LpPool") return DropIfNeutral(ctx, "ceil_mode", 0);
  return absl::OkStatus();
}

// GridSample's interpolation modes, by name at 16 and at 20.
constexpr std::pair<const char*, const char*> kGridSampleModes[] = {
    {"bilinear", "linear"}, {"bicubic", "cubic"}, {"nearest", "nearest"}};

absl::Status GridSampleModes(AdapterContext& ctx) {
  bool down = ctx.to.since_version < ctx.from.since_version;
  if (down) {
    int64_t rank = RankOf(ctx, ctx.node.input(0));
    if (rank != 4) {
      return absl::FailedPreconditionError(absl::StrCat(
          ctx.to.Label(), " samples 4-D inputs only; '", ctx.node.input(0), "' has ",
          rank < 0 ? std::string("an unknown rank") : absl::StrCat("rank ", rank)));
    }
  }
  const onnx::AttributeProto* mode = FindAttribute(ctx.node, "mode");
  if (mode == nullptr) return absl::OkStatus();  // the defaults correspond
  for (const auto& [old_name, new_name] : kGridSampleModes) {
    if (mode->s() != (down ? new_name : old_name)) continue;
    std::string renamed = down ? old_name : new_name;
    ctx.changes.push_back({"attribute-set", absl::StrCat("mode '", mode->s(), "' -> '", renamed,
                                                         "'")});
    SetStringAttribute(ctx.node, "mode", renamed);
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat("mode '", mode->s(), "' has no equivalent in ", ctx.to.Label()));
}

// Constant<value_int = 3> -> Constant<value = int64 scalar 3>, and likewise
// for the other shorthands.
absl::Status ConstantShorthandToValue(AdapterContext& ctx) {
  for (onnx::AttributeProto& attribute : *ctx.node.mutable_attribute()) {
    const std::string& name = attribute.name();
    if (name == "value" || name == "sparse_value") return absl::OkStatus();
    onnx::TensorProto tensor;
    if (name == "value_int") {
      tensor.set_data_type(onnx::TensorProto::INT64);
      tensor.add_int64_data(attribute.i());
    } else if (name == "value_ints") {
      tensor.set_data_type(onnx::TensorProto::INT64);
      tensor.add_dims(attribute.ints_size());
      for (int64_t v : attribute.ints()) tensor.add_int64_data(v);
    } else if (name == "value_float") {
      tensor.set_data_type(onnx::TensorProto::FLOAT);
      tensor.add_float_data(attribute.f());
    } else if (name == "value_floats") {
      tensor.set_data_type(onnx::TensorProto::FLOAT);
      tensor.add_dims(attribute.floats_size());
      for (float v : attribute.floats()) tensor.add_float_data(v);
    } else if (name == "value_string") {
      tensor.set_data_type(onnx::TensorProto::STRING);
      tensor.add_string_data(attribute.s());
    } else if (name == "value_strings") {
      tensor.set_data_type(onnx::TensorProto::STRING);
      tensor.add_dims(attribute.strings_size());
      for (const std::string& v : attribute.strings()) tensor.add_string_data(v);
    } else {
      continue;
    }
    ctx.changes.push_back({"attribute-set", absl::StrCat(name, " written as value")});
    onnx::AttributeProto value;
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    *value.mutable_t() = std::move(tensor);
    attribute = std::move(value);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterAddedAttributeAdapters(RewriteTable& table) {
  table.Register("", "Cast", 19, 13, DropSaturate, "saturate dropped");
  table.Register("", "CastLike", 19, 15, DropSaturate, "saturate dropped");
  table.Register("", "AveragePool", 19, 11, DropPoolDilations, "unit dilations dropped");
  table.Register("", "LpPool", 18, 11, DropPoolDilations, "unit dilations, no ceil_mode");
  table.Register("", "GridSample", 20, 16, GridSampleModes, "mode names");
  table.Register("", "GridSample", 16, 20, GridSampleModes, "mode names");
  table.Register("", "Constant", 12, 11, ConstantShorthandToValue, "value_* to value");
}

}  // namespace onnxconvert::adapters
