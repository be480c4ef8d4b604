// Attributes later versions added, which a downgrade drops when the node
// leaves them at a neutral value that is not their default (pools'
// dilations; saturate, which no value makes matter there) or expresses
// otherwise where a composition can (select_last_index),
// GridSample's mode names (20 renamed bilinear/bicubic to linear/cubic),
// Constant's value_* shorthands (12) and RoiAlign's pixel mode (16).

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/compositions.h"
#include "adapters/families.h"
#include "adapters/rewrites.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

// An attribute a later version added, and the value at which the older
// version behaves the same.
struct AddedAttribute {
  const char* op;
  int newer;  // since_version that has the attribute
  int older;  // since_version it is dropped for
  const char* name;
  int64_t neutral_int;      // every int of a list
  bool irrelevant = false;  // no value changes inference results
  // The composition expressing any other value, or null to refuse it.
  AdapterFn otherwise = nullptr;
};

// Only attributes whose neutral value is not their default (or any value
// of which is neutral) are listed: one written with its default is dropped
// for every op by DropDefaultedAttributes.
constexpr AddedAttribute kAddedAttributes[] = {
    {"AveragePool", 19, 11, "dilations", 1},
    {"LpPool", 18, 11, "dilations", 1},
    {"MaxPool", 10, 8, "dilations", 1},
    {"Cast", 19, 13, "saturate", 0, /*irrelevant=*/true},
    {"CastLike", 19, 15, "saturate", 0, /*irrelevant=*/true},
    // The default (0) is dropped before adapters run; 1 is composed.
    {"ArgMax", 12, 11, "select_last_index", 0, false, ArgSelectLastIndex},
    {"ArgMin", 12, 11, "select_last_index", 0, false, ArgSelectLastIndex},
    // attribute_compositions.cc
    {"MaxPool", 10, 8, "ceil_mode", 0, false, CeilModeAsEndPads},
    {"AveragePool", 10, 7, "ceil_mode", 0, false, CeilModeAsEndPads},
    {"TopK", 11, 10, "largest", 1, false, SmallestByNegation},
    {"Reshape", 14, 13, "allowzero", 0, false, AllowZeroShape},
    {"GatherND", 12, 11, "batch_dims", 0, false, BatchDimsAsIndices},
};

// Whether `attribute` holds `row`'s neutral value (every int of a list).
bool IsNeutral(const onnx::AttributeProto& attribute, const AddedAttribute& row) {
  if (row.irrelevant) return true;
  if (attribute.type() == onnx::AttributeProto::INTS) {
    return std::all_of(attribute.ints().begin(), attribute.ints().end(),
                       [&](int64_t v) { return v == row.neutral_int; });
  }
  return attribute.i() == row.neutral_int;
}

// Drops the attributes the older version lacks when neutral; refuses
// naming the first that is not. (Saturate matters only for float8 targets,
// which the older versions' type check refuses.)
absl::Status DropNeutralAttributes(AdapterContext& ctx) {
  for (const AddedAttribute& row : kAddedAttributes) {
    if (ctx.from.name != row.op || ctx.from.since_version != row.newer ||
        ctx.to.since_version != row.older) {
      continue;
    }
    const onnx::AttributeProto* attribute = FindAttribute(ctx.node, row.name);
    if (attribute == nullptr) continue;
    if (!IsNeutral(*attribute, row) && row.otherwise != nullptr) {
      OC_RETURN_IF_ERROR(row.otherwise(ctx));
      continue;
    }
    if (!IsNeutral(*attribute, row)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "attribute '", row.name, "' is set to a value ", ctx.to.Label(), " cannot express"));
    }
    RemoveAttribute(ctx.node, row.name);
    ctx.changes.push_back(
        {ChangeKind::kAttributeRemoved, absl::StrCat(row.name, " (neutral) dropped")});
  }
  return absl::OkStatus();
}

// A value a later version added to a STRING attribute.
struct AddedValue {
  const char* op;
  int newer;  // since_version that accepts the value
  int older;
  const char* attribute;
  const char* value;
};

constexpr AddedValue kAddedValues[] = {
    {"Pad", 19, 18, "mode", "wrap"},
    {"Resize", 19, 18, "coordinate_transformation_mode", "half_pixel_symmetric"},
};

// Refuses a node that uses a value the older version does not know.
absl::Status RefuseAddedValues(AdapterContext& ctx) {
  for (const AddedValue& row : kAddedValues) {
    if (ctx.from.name != row.op || ctx.from.since_version != row.newer) continue;
    const onnx::AttributeProto* attribute = FindAttribute(ctx.node, row.attribute);
    if (attribute != nullptr && attribute->s() == row.value) {
      return absl::FailedPreconditionError(absl::StrCat(row.attribute, " '", row.value,
                                                        "' is new in ", ctx.from.Label(), "; ",
                                                        ctx.to.Label(), " cannot express it"));
    }
  }
  return absl::OkStatus();
}

// GridSample's interpolation modes, by name at 16 and at 20.
constexpr std::pair<const char*, const char*> kGridSampleModes[] = {
    {"bilinear", "linear"}, {"bicubic", "cubic"}, {"nearest", "nearest"}};

}  // namespace

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
    ctx.changes.push_back(
        {ChangeKind::kAttributeSet, absl::StrCat("mode '", mode->s(), "' -> '", renamed, "'")});
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
    std::optional<onnx::TensorProto> tensor = ShorthandTensor(attribute);
    if (!tensor) continue;
    ctx.changes.push_back(
        {ChangeKind::kAttributeSet, absl::StrCat(attribute.name(), " written as value")});
    onnx::AttributeProto value;
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    *value.mutable_t() = *std::move(tensor);
    attribute = std::move(value);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

// RoiAlign-16 added coordinate_transformation_mode, defaulting to
// half_pixel (sample points shifted by -0.5); the earlier versions do what
// output_half_pixel does (no shift). Up: that is written out; down: only
// output_half_pixel is expressible.
absl::Status RoiAlignPixelMode(AdapterContext& ctx) {
  constexpr const char* kName = "coordinate_transformation_mode";
  const onnx::AttributeProto* mode = FindAttribute(ctx.node, kName);
  if (ctx.to.since_version > ctx.from.since_version) {
    if (mode != nullptr) return absl::OkStatus();
    SetStringAttribute(ctx.node, kName, "output_half_pixel");
    ctx.changes.push_back(
        {ChangeKind::kAttributeSet,
         absl::StrCat(kName, " = output_half_pixel, what ", ctx.from.Label(), " does")});
    return absl::OkStatus();
  }
  std::string value = mode != nullptr ? mode->s() : "half_pixel";
  if (value != "output_half_pixel") {
    return absl::FailedPreconditionError(
        absl::StrCat(kName, " is ", value, mode != nullptr ? "" : " (the default)", ", which ",
                     ctx.to.Label(), " cannot express: it does only what 'output_half_pixel' "
                     "does (no shift, and regions at least 1 wide)"));
  }
  RemoveAttribute(ctx.node, kName);
  ctx.changes.push_back(
      {ChangeKind::kAttributeRemoved,
       absl::StrCat(kName, " = output_half_pixel, what ", ctx.to.Label(), " does")});
  return absl::OkStatus();
}

void RegisterAddedAttributeAdapters(RewriteTable& table) {
  absl::flat_hash_set<std::string> registered;
  for (const AddedAttribute& row : kAddedAttributes) {
    if (!registered.insert(absl::StrCat(row.op, "/", row.newer, "/", row.older)).second) continue;
    table.Register("", row.op, row.newer, row.older, DropNeutralAttributes,
                   "neutral added attributes dropped");
  }
  for (const AddedValue& row : kAddedValues) {
    table.Register("", row.op, row.newer, row.older, RefuseAddedValues,
                   absl::StrCat("no ", row.attribute, " '", row.value, "'"));
  }
}

}  // namespace onnxconvert::adapters
