// A step whose target version lacks an element type the node uses casts the
// node's inputs to a wider type the target allows that holds every value
// exactly, and its outputs back, instead of refusing (the default; refused
// with --no-casts). A cast that could lose a value is refused, naming the
// values at risk.

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "schema/registry.h"
#include "schema/type_strings.h"

namespace onnxconvert::adapters {
namespace {

using onnx::TensorProto;

// Wider element types that hold every value of a type exactly, nearest
// first.
struct Widening {
  int32_t from;
  std::vector<int32_t> to;
};

const std::vector<Widening>& Widenings() {
  static const auto* table = new std::vector<Widening>{
      {TensorProto::BOOL, {TensorProto::INT32, TensorProto::INT64, TensorProto::FLOAT}},
      // Integers of 16 bits or fewer fit in float's 24-bit significand: the
      // carrier of ops whose older versions take floats only (Max-8, Less-7).
      {TensorProto::INT8, {TensorProto::INT16, TensorProto::INT32, TensorProto::INT64,
                           TensorProto::FLOAT, TensorProto::DOUBLE}},
      {TensorProto::UINT8, {TensorProto::INT16, TensorProto::UINT16, TensorProto::INT32,
                            TensorProto::INT64, TensorProto::FLOAT, TensorProto::DOUBLE}},
      {TensorProto::INT16, {TensorProto::INT32, TensorProto::INT64, TensorProto::FLOAT,
                            TensorProto::DOUBLE}},
      {TensorProto::UINT16, {TensorProto::INT32, TensorProto::UINT32, TensorProto::INT64,
                             TensorProto::FLOAT, TensorProto::DOUBLE}},
      {TensorProto::INT32, {TensorProto::INT64, TensorProto::DOUBLE}},
      {TensorProto::UINT32, {TensorProto::INT64, TensorProto::UINT64, TensorProto::DOUBLE}},
      {TensorProto::FLOAT16, {TensorProto::FLOAT, TensorProto::DOUBLE}},
      {TensorProto::BFLOAT16, {TensorProto::FLOAT, TensorProto::DOUBLE}},
      {TensorProto::FLOAT, {TensorProto::DOUBLE}},
  };
  return *table;
}

// What an element type holds exactly, for a refusal naming what a cast to
// it could lose; the rows of the lossy carriers come first, nearest first.
struct ExactRange {
  int32_t type;
  const char* holds;
};

constexpr ExactRange kExactRanges[] = {
    {TensorProto::DOUBLE, "integers only up to ±2^53 and 53-bit fractions"},
    {TensorProto::INT64, "integers in [-2^63, 2^63 - 1], no fractions"},
    {TensorProto::FLOAT, "integers only up to ±2^24 and 24-bit fractions"},
    {TensorProto::INT32, "integers in [-2^31, 2^31 - 1], no fractions"},
    {TensorProto::UINT64, "integers in [0, 2^64 - 1], no negatives or fractions"},
    {TensorProto::UINT32, "integers in [0, 2^32 - 1], no negatives or fractions"},
    {TensorProto::FLOAT16, "values only within ±65504, integers up to ±2048"},
    {TensorProto::BFLOAT16, "integers only up to ±256 and 8-bit fractions"},
    {TensorProto::INT16, "integers in [-32768, 32767], no fractions"},
    {TensorProto::UINT16, "integers in [0, 65535], no negatives or fractions"},
    {TensorProto::INT8, "integers in [-128, 127], no fractions"},
    {TensorProto::UINT8, "integers in [0, 255], no negatives or fractions"},
    {TensorProto::BOOL, "only 0 and 1"},
};

// The allowed types of formal `slot` of `schema`'s inputs (or outputs) and,
// in `param`, its type parameter; empty for a concrete type.
absl::Span<const absl::string_view> Allowed(const schema::OpSchema& schema,
                                            absl::Span<const schema::FormalParam> formals,
                                            int slot, absl::string_view* param) {
  const schema::FormalParam* formal = schema::FormalFor(formals, slot);
  if (formal == nullptr || schema.FindConstraint(formal->type_str) == nullptr) return {};
  *param = formal->type_str;
  return schema.AllowedTypes(*formal);
}

std::string TensorTypeString(int32_t elem) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem);
  return schema::TypeString(type);
}

}  // namespace

namespace {

// Whether `type` (an element type) is among `allowed` type strings.
bool Contains(absl::Span<const absl::string_view> allowed, int32_t type) {
  std::string name = TensorTypeString(type);
  return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

// The types that hold every value of `type` exactly: itself, then wider.
std::vector<int32_t> ExactHolders(int32_t type) {
  std::vector<int32_t> holders = {type};
  for (const Widening& widening : Widenings()) {
    if (widening.from == type) holders.insert(holders.end(), widening.to.begin(), widening.to.end());
  }
  return holders;
}

// The type of `allowed` holding every one of `types` exactly, nearest to
// the first, or 0.
int32_t CommonCarrier(const std::vector<int32_t>& types,
                      absl::Span<const absl::string_view> allowed) {
  for (int32_t candidate : ExactHolders(types.front())) {
    if (!Contains(allowed, candidate)) continue;
    bool holds_all = true;
    for (int32_t type : types) {
      std::vector<int32_t> holders = ExactHolders(type);
      holds_all &= std::find(holders.begin(), holders.end(), candidate) != holders.end();
    }
    if (holds_all) return candidate;
  }
  return 0;
}

// The type parameter formal `slot` binds to, or "" (a concrete type).
std::string ParamOf(const schema::OpSchema& schema,
                    absl::Span<const schema::FormalParam> formals, int slot) {
  absl::string_view param;
  absl::Span<const absl::string_view> allowed = Allowed(schema, formals, slot, &param);
  return allowed.empty() ? "" : std::string(param);
}

// The values a cast of `type` to the nearest lossy type among `allowed`
// would put at risk, as ": a cast to X holds ..." (or "").
std::string LossText(int32_t type, absl::Span<const absl::string_view> allowed) {
  for (const ExactRange& range : kExactRanges) {
    if (range.type == type || !Contains(allowed, range.type)) continue;
    return absl::StrCat(": a cast to ", TensorTypeString(range.type), " would hold ",
                        range.holds, ", and values of ", TensorTypeString(type),
                        " outside that would be lost");
  }
  return "";
}

}  // namespace

onnx::NodeProto CastNode(const AdapterContext& ctx, const std::string& in, const std::string& out,
                         int32_t to) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(ctx.rewriter.FreshName(
      absl::StrCat(ctx.node.name().empty() ? "cast" : ctx.node.name(), "_cast")));
  cast.add_input(in);
  cast.add_output(out);
  onnx::AttributeProto* attribute = cast.add_attribute();
  attribute->set_name("to");
  if (ctx.to_opset < 6) {  // Cast-1 names the type
    attribute->set_type(onnx::AttributeProto::STRING);
    attribute->set_s(TensorProto::DataType_Name(static_cast<TensorProto::DataType>(to)));
  } else {
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(to);
  }
  return cast;
}

int32_t ElemOf(const AdapterContext& ctx, const std::string& value) {
  const onnx::TypeProto* type = value.empty() ? nullptr : ctx.rewriter.TypeOf(value);
  return type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

namespace {

// InsertCasts, or with `apply` false only whether it would succeed (the
// node unchanged; output types not known are taken to fit).
absl::Status Casts(AdapterContext& ctx, bool apply) {
  const schema::OpSchema* cast = schema::Registry::Get().Lookup("", "Cast", ctx.to_opset);
  // Type parameter -> the element types of the values bound to it.
  std::map<std::string, std::vector<int32_t>> bound;
  for (int i = 0; i < ctx.node.input_size(); ++i) {
    std::string param = ParamOf(ctx.to, ctx.to.inputs, i);
    int32_t elem = ElemOf(ctx, ctx.node.input(i));
    if (!param.empty() && elem != 0) bound[param].push_back(elem);
  }
  // Type parameter -> the carrier its inputs are cast to.
  std::map<std::string, int32_t> carriers;
  for (const auto& binding : bound) {
    // Named, not bound: clang 14 (the fuzzing build) cannot capture a
    // structured binding in the lambda below.
    const auto& param = binding.first;
    const auto& types = binding.second;
    absl::string_view unused;
    absl::Span<const absl::string_view> allowed;
    for (int i = 0; i < ctx.node.input_size(); ++i) {
      if (ParamOf(ctx.to, ctx.to.inputs, i) == param) {
        allowed = Allowed(ctx.to, ctx.to.inputs, i, &unused);
        break;
      }
    }
    bool same = std::all_of(types.begin(), types.end(), [&](int32_t t) { return t == types[0]; });
    if (same && Contains(allowed, types[0])) continue;
    int32_t carrier = CommonCarrier(types, allowed);
    if (carrier == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the inputs bound to ", param, " are ", TensorTypeString(types[0]),
          types.size() > 1 ? " and others" : "", ", and no type ", ctx.to.Label(), " allows for ",
          param, " holds their values exactly", LossText(types[0], allowed)));
    }
    carriers[param] = carrier;
  }
  if (carriers.empty()) return CheckTypesAllowed(ctx);
  auto cast_allows = [&](int32_t from, int32_t to) {
    if (cast == nullptr) return false;
    absl::string_view unused;
    return Contains(Allowed(*cast, cast->inputs, 0, &unused), from) &&
           Contains(Allowed(*cast, cast->outputs, 0, &unused), to);
  };
  for (int i = 0; i < ctx.node.input_size(); ++i) {
    auto it = carriers.find(ParamOf(ctx.to, ctx.to.inputs, i));
    int32_t elem = ElemOf(ctx, ctx.node.input(i));
    if (it == carriers.end() || ctx.node.input(i).empty() || elem == it->second) continue;
    if (!cast_allows(elem, it->second)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", ctx.node.input(i), "' would need a cast from ", TensorTypeString(elem), " to ",
          TensorTypeString(it->second), ", which Cast at opset ", ctx.to_opset, " cannot do"));
    }
    if (!apply) continue;
    std::string cast_name = ctx.rewriter.FreshName(absl::StrCat(ctx.node.input(i), "_cast"));
    ctx.rewriter.InsertBefore(CastNode(ctx, ctx.node.input(i), cast_name, it->second));
    ctx.changes.push_back({ChangeKind::kCastInserted, absl::StrCat("'", ctx.node.input(i), "' to ",
                                                                   TensorTypeString(it->second))});
    ctx.node.set_input(i, cast_name);
  }
  for (int i = 0; i < ctx.node.output_size(); ++i) {
    auto it = carriers.find(ParamOf(ctx.to, ctx.to.outputs, i));
    if (it == carriers.end() || ctx.node.output(i).empty()) continue;
    const std::string original = ctx.node.output(i);
    int32_t elem = ElemOf(ctx, original);
    if (elem == it->second || (!apply && elem == 0)) continue;
    if (elem == 0 || !cast_allows(it->second, elem)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "output '", original, "' cannot be cast back from ", TensorTypeString(it->second),
          elem == 0 ? ": its type is unknown" : absl::StrCat(" to ", TensorTypeString(elem),
                                                             " at opset ", ctx.to_opset)));
    }
    if (!apply) continue;
    ctx.rewriter.InsertAfter(CastNode(ctx, ctx.rewriter.DetachOutput(i), original, elem));
    ctx.changes.push_back({ChangeKind::kCastInserted,
                           absl::StrCat("'", original, "' back to ", TensorTypeString(elem))});
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InsertCasts(AdapterContext& ctx) { return Casts(ctx, /*apply=*/true); }

absl::Status CastsWouldFit(AdapterContext& ctx) { return Casts(ctx, /*apply=*/false); }

}  // namespace onnxconvert::adapters
