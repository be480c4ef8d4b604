// The early opsets' changes (1 -> 9): attributes renamed or retyped (Pad's
// paddings, Cast's `to`, LpPool's `p`), defaults spelled out where the
// versions write them differently (Concat's axis, Selu's constants,
// GRU's direction), legacy hints dropped or supplied (consumed_inputs),
// and inputs or outputs an older version requires (Gemm's C,
// OptionalHasElement's input, GRU's Y_h), and Constant-1's float-only
// values (others become initializers).

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"

namespace onnxconvert::adapters {
namespace {

bool Up(const AdapterContext& ctx) { return ctx.to.since_version > ctx.from.since_version; }

// consumed_inputs, a memory-reuse hint of opset 1, means nothing later:
// dropped going up, supplied empty where a version requires it.
void LegacyHints(AdapterContext& ctx) {
  if (ctx.to.FindAttr("consumed_inputs") == nullptr) {
    if (FindAttribute(ctx.node, "consumed_inputs") != nullptr) {
      RemoveAttribute(ctx.node, "consumed_inputs");
      ctx.changes.push_back(
          {ChangeKind::kAttributeRemoved, "consumed_inputs (a legacy hint) dropped"});
    }
    return;
  }
  const schema::AttrSpec* spec = ctx.to.FindAttr("consumed_inputs");
  if (spec->required && FindAttribute(ctx.node, "consumed_inputs") == nullptr) {
    AddIntsAttribute(ctx.node, "consumed_inputs", {});
    ctx.changes.push_back({ChangeKind::kAttributeSet, "consumed_inputs = [] (a legacy hint)"});
  }
}

}  // namespace

absl::Status OnlyLegacyHints(AdapterContext& ctx) {
  LegacyHints(ctx);
  return absl::OkStatus();
}

// Pad-1's `paddings` is Pad-2's `pads`.
absl::Status PadPaddings(AdapterContext& ctx) {
  const char* from = Up(ctx) ? "paddings" : "pads";
  const char* to = Up(ctx) ? "pads" : "paddings";
  for (onnx::AttributeProto& attribute : *ctx.node.mutable_attribute()) {
    if (attribute.name() == from) {
      attribute.set_name(to);
      ctx.changes.push_back({ChangeKind::kAttributeRenamed, absl::StrCat(from, " -> ", to)});
    }
  }
  return absl::OkStatus();
}

// Cast-1 names its target type ("FLOAT"); Cast-6 numbers it (1).
absl::Status CastTypeName(AdapterContext& ctx) {
  for (onnx::AttributeProto& attribute : *ctx.node.mutable_attribute()) {
    if (attribute.name() != "to") continue;
    if (Up(ctx)) {
      onnx::TensorProto::DataType type;
      if (!onnx::TensorProto::DataType_Parse(attribute.s(), &type)) {
        return absl::FailedPreconditionError(
            absl::StrCat("'", attribute.s(), "' names no tensor element type"));
      }
      attribute.clear_s();
      attribute.set_type(onnx::AttributeProto::INT);
      attribute.set_i(type);
    } else {
      if (!onnx::TensorProto::DataType_IsValid(static_cast<int>(attribute.i()))) {
        return absl::FailedPreconditionError(absl::StrCat(attribute.i(), " is no element type"));
      }
      std::string name =
          onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(attribute.i()));
      attribute.clear_i();
      attribute.set_type(onnx::AttributeProto::STRING);
      attribute.set_s(name);
    }
    ctx.changes.push_back({ChangeKind::kAttributeSet, "to written as the version spells types"});
  }
  return absl::OkStatus();
}

// LpPool-1's and GlobalLpPool-1's `p` is a float; version 2's an int.
absl::Status LpPoolOrder(AdapterContext& ctx) {
  for (onnx::AttributeProto& attribute : *ctx.node.mutable_attribute()) {
    if (attribute.name() != "p") continue;
    if (Up(ctx)) {
      float p = attribute.f();
      if (p != std::floor(p)) {
        return absl::FailedPreconditionError(
            absl::StrCat("p = ", p, " is not a whole number, as ", ctx.to.Label(), " needs"));
      }
      attribute.clear_f();
      attribute.set_type(onnx::AttributeProto::INT);
      attribute.set_i(static_cast<int64_t>(p));
    } else {
      int64_t p = attribute.i();
      attribute.clear_i();
      attribute.set_type(onnx::AttributeProto::FLOAT);
      attribute.set_f(static_cast<float>(p));
    }
    ctx.changes.push_back({ChangeKind::kAttributeSet, "p written as the version types it"});
  }
  LegacyHints(ctx);
  return absl::OkStatus();
}

namespace {

// Sets attribute `name` to the default the source version gives it, when
// the node leaves it unset (the versions default it differently, or spell
// the same default differently).
void SpellOutDefault(AdapterContext& ctx, absl::string_view name) {
  if (FindAttribute(ctx.node, name) != nullptr) return;
  const schema::AttrSpec* spec = ctx.from.FindAttr(name);
  if (spec == nullptr || !spec->has_default) return;
  onnx::AttributeProto* attribute = ctx.node.add_attribute();
  attribute->set_name(std::string(name));
  attribute->set_type(spec->type);
  switch (spec->type) {
    case onnx::AttributeProto::INT: attribute->set_i(spec->default_value.i); break;
    case onnx::AttributeProto::FLOAT: attribute->set_f(spec->default_value.f); break;
    case onnx::AttributeProto::STRING: attribute->set_s(std::string(spec->default_value.s)); break;
    default: break;
  }
  ctx.changes.push_back({ChangeKind::kAttributeSet, absl::StrCat(name, " made explicit")});
}

}  // namespace

absl::Status SeluConstants(AdapterContext& ctx) {
  SpellOutDefault(ctx, "alpha");
  SpellOutDefault(ctx, "gamma");
  LegacyHints(ctx);
  return absl::OkStatus();
}

absl::Status ConcatAxis(AdapterContext& ctx) {
  if (FindAttribute(ctx.node, "axis") == nullptr) {
    AddIntAttribute(ctx.node, "axis", 1);  // Concat-1's default
    ctx.changes.push_back({ChangeKind::kAttributeSet, "axis = 1 made explicit"});
  }
  return absl::OkStatus();
}

// GRU-1 spells the default direction "foward"; from 3 it is "forward".
absl::Status GruDirection(AdapterContext& ctx) {
  const onnx::AttributeProto* direction = FindAttribute(ctx.node, "direction");
  if (direction != nullptr && (direction->s() == "foward" || direction->s() == "forward")) {
    SetStringAttribute(ctx.node, "direction", Up(ctx) ? "forward" : "foward");
  }
  if (!Up(ctx) && ctx.node.output_size() < 2) {
    while (ctx.node.output_size() < 1) ctx.node.add_output("");
    ctx.node.add_output(ctx.rewriter.FreshName(absl::StrCat(ctx.node.name(), "_Y_h")));
    ctx.changes.push_back({ChangeKind::kOutputAdded, "Y_h, which GRU-1 requires"});
  }
  return absl::OkStatus();
}

// Clip-1 without min or max leaves that side unbounded; Clip-6 defaults
// them to the float limits: the same clipping.
absl::Status ClipBounds(AdapterContext& ctx) { return OnlyLegacyHints(ctx); }

// Gemm-9 requires C; without it Gemm-11 adds nothing: C = 0.
absl::Status GemmZeroC(AdapterContext& ctx) {
  if (ctx.node.input_size() >= 3 && !ctx.node.input(2).empty()) return absl::OkStatus();
  const onnx::TypeProto* type = ctx.rewriter.TypeOf(ctx.node.input(0));
  int32_t elem = type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
  onnx::TensorProto zero;
  zero.set_data_type(elem);
  if (elem == onnx::TensorProto::FLOAT) zero.add_float_data(0);
  else if (elem == onnx::TensorProto::DOUBLE) zero.add_double_data(0);
  else if (elem == onnx::TensorProto::INT32) zero.add_int32_data(0);
  else if (elem == onnx::TensorProto::INT64) zero.add_int64_data(0);
  else {
    return absl::FailedPreconditionError(absl::StrCat(
        ctx.to.Label(), " requires C, and the element type of '", ctx.node.input(0),
        "' for a zero C is ", elem == 0 ? "unknown" : "not float, double, int32 or int64"));
  }
  absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(std::move(zero));
  if (!name.ok()) return name.status();
  while (ctx.node.input_size() < 3) ctx.node.add_input("");
  ctx.node.set_input(2, *name);
  ctx.changes.push_back({ChangeKind::kInputAdded, absl::StrCat("C = 0 ('", *name, "')")});
  return absl::OkStatus();
}

// OptionalHasElement-18 without an input is false; version 15 requires
// the input: the node becomes a Constant false.
absl::Status OptionalHasNoElement(AdapterContext& ctx) {
  if (ctx.node.input_size() > 0 && !ctx.node.input(0).empty()) return absl::OkStatus();
  ctx.node.set_op_type("Constant");
  ctx.node.clear_input();
  onnx::TensorProto value;
  value.set_data_type(onnx::TensorProto::BOOL);
  value.add_int32_data(0);
  onnx::AttributeProto* attribute = ctx.node.add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  *attribute->mutable_t() = std::move(value);
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced, "OptionalHasElement of nothing -> Constant false"});
  return absl::OkStatus();
}

// Constant-11's sparse_value has no place in Constant-9.
absl::Status ConstantDenseOnly(AdapterContext& ctx) {
  if (FindAttribute(ctx.node, "sparse_value") != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("sparse_value is set, which ", ctx.to.Label(), " cannot express"));
  }
  return absl::OkStatus();
}

// Constant-1 holds float16, float or double only; from 9 it holds any
// tensor. Another value becomes a constant of the graph (an initializer,
// listed as a graph input too below IR version 4), which an Identity
// passes on under the node's output name.
absl::Status ConstantAsInitializer(AdapterContext& ctx) {
  const onnx::AttributeProto* value = FindAttribute(ctx.node, "value");
  if (value == nullptr || !value->has_t()) return absl::OkStatus();
  switch (value->t().data_type()) {
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
      return absl::OkStatus();
    default:
      break;
  }
  onnx::TensorProto tensor = value->t();
  std::string type = onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(tensor.data_type()));
  absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(std::move(tensor));
  if (!name.ok()) return name.status();
  RemoveAttribute(ctx.node, "value");
  ctx.node.set_op_type("Identity");
  ctx.node.clear_input();
  ctx.node.add_input(*name);
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced,
       absl::StrCat("Constant of ", type, " -> initializer '", *name, "' through an Identity")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
