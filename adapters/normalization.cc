// BatchNormalization 9 <-> 14 (training_mode replaced the inference-only
// form) and GroupNormalization 18 <-> 21 (scale and bias became per channel
// instead of per group).

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/compositions.h"
#include "adapters/families.h"

namespace onnxconvert::adapters {
absl::Status BatchNormInferenceOnly(AdapterContext& ctx) {
  const onnx::AttributeProto* training = FindAttribute(ctx.node, "training_mode");
  if (training != nullptr && training->i() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("training_mode is set (running statistics as outputs), which ",
                     ctx.to.Label(), " cannot express: it normalizes in inference only"));
  }
  if (ctx.node.output_size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the node uses the training outputs, which mean different things in ", ctx.from.Label(),
        " and ", ctx.to.Label()));
  }
  if (training != nullptr) {
    RemoveAttribute(ctx.node, "training_mode");
    ctx.changes.push_back({ChangeKind::kAttributeRemoved, "training_mode = 0 dropped"});
  }
  return absl::OkStatus();
}

namespace {

// A 1-D constant of `like`'s element type holding `values`.
onnx::TensorProto FloatTensorLike(const onnx::TensorProto& like, const std::vector<double>& values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(like.data_type());
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (double v : values) {
    if (like.data_type() == onnx::TensorProto::FLOAT) tensor.add_float_data(static_cast<float>(v));
    else tensor.add_double_data(v);
  }
  return tensor;
}

// Rewrites scale (input 1) and bias (input 2) between per-group values
// (version 18) and per-channel values (version 21).
// Whether `values` (one per channel) hold one value per group.
bool OnePerGroup(const std::vector<double>& values, int64_t groups, int64_t per_group) {
  if (static_cast<int64_t>(values.size()) != groups * per_group) return false;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t c = 0; c < per_group; ++c) {
      if (values[g * per_group + c] != values[g * per_group]) return false;
    }
  }
  return true;
}

}  // namespace

absl::Status GroupNormAffine(AdapterContext& ctx) {
  bool up = ctx.to.since_version > ctx.from.since_version;
  const onnx::AttributeProto* groups_attribute = FindAttribute(ctx.node, "num_groups");
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, ctx.node.input(0));
  if (groups_attribute == nullptr || shape == nullptr || shape->dim_size() < 2 ||
      !shape->dim(1).has_dim_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the channel count of '", ctx.node.input(0), "' is unknown, so scale and bias cannot be ",
        up ? "spread to channels" : "gathered to groups"));
  }
  int64_t groups = groups_attribute->i();
  int64_t channels = shape->dim(1).dim_value();
  if (groups <= 0 || channels % groups != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(channels, " channels do not divide into ", groups, " groups"));
  }
  int64_t per_group = channels / groups;
  if (!up) {
    for (int input : {1, 2}) {
      const onnx::TensorProto* constant = ctx.rewriter.ConstantOf(ctx.node.input(input));
      std::optional<std::vector<double>> values =
          constant != nullptr ? FloatValues(*constant) : std::nullopt;
      // Per-channel values: the affine step after a per-group identity.
      if (!values || !OnePerGroup(*values, groups, per_group)) {
        return GroupNormPerChannelAfter(ctx, groups);
      }
    }
  }
  for (int input : {1, 2}) {
    const std::string name = ctx.node.input(input);
    const onnx::TensorProto* constant = ctx.rewriter.ConstantOf(name);
    std::optional<std::vector<double>> values =
        constant != nullptr ? FloatValues(*constant) : std::nullopt;
    if (!values) {
      return absl::FailedPreconditionError(absl::StrCat(
          "input '", name, "' is not a float constant, so it cannot be rewritten ",
          up ? "per channel" : "per group"));
    }
    std::vector<double> rewritten;
    if (up) {
      if (static_cast<int64_t>(values->size()) != groups) {
        return absl::FailedPreconditionError(
            absl::StrCat("input '", name, "' has ", values->size(), " values for ", groups,
                         " groups"));
      }
      for (double v : *values) rewritten.insert(rewritten.end(), per_group, v);
    } else {
      if (static_cast<int64_t>(values->size()) != channels) {
        return absl::FailedPreconditionError(
            absl::StrCat("input '", name, "' has ", values->size(), " values for ", channels,
                         " channels"));
      }
      for (int64_t g = 0; g < groups; ++g) {
        for (int64_t c = 0; c < per_group; ++c) {
          if ((*values)[g * per_group + c] != (*values)[g * per_group]) {
            return absl::FailedPreconditionError(absl::StrCat(
                "input '", name, "' differs within group ", g, ", which ", ctx.to.Label(),
                " cannot express (it has one value per group)"));
          }
        }
        rewritten.push_back((*values)[g * per_group]);
      }
    }
    absl::StatusOr<std::string> added =
        ctx.rewriter.AddConstant(FloatTensorLike(*constant, rewritten));
    if (!added.ok()) return added.status();
    ctx.node.set_input(input, *added);
    ctx.changes.push_back({ChangeKind::kInitializerAdded,
                           absl::StrCat("'", name, "' as ", up ? "per-channel" : "per-group",
                                        " values '", *added, "'")});
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
