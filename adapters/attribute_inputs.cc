// Attributes that became inputs: the axes of reductions (ReduceSum at 13,
// the other reductions at 18), of Squeeze and Unsqueeze (13), and Split's
// `split` (13). Upgrading moves the attribute into a new constant input;
// downgrading moves a constant input back into the attribute, and refuses
// when the input is not a constant.

#include <cstring>

#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

// Where the attribute goes: its name and the input slot that replaces it.
struct MovedAttribute {
  const char* op;
  int older;        // since_version with the attribute
  int newer;        // since_version with the input
  const char* attribute;
  int input;
};

constexpr MovedAttribute kMoved[] = {
    {"ReduceSum", 11, 13, "axes", 1},       {"Squeeze", 11, 13, "axes", 1},
    {"Unsqueeze", 11, 13, "axes", 1},       {"Split", 11, 13, "split", 1},
    {"ReduceMean", 13, 18, "axes", 1},      {"ReduceMax", 13, 18, "axes", 1},
    {"ReduceMin", 13, 18, "axes", 1},       {"ReduceProd", 13, 18, "axes", 1},
    {"ReduceL1", 13, 18, "axes", 1},        {"ReduceL2", 13, 18, "axes", 1},
    {"ReduceLogSum", 13, 18, "axes", 1},    {"ReduceLogSumExp", 13, 18, "axes", 1},
    {"ReduceSumSquare", 13, 18, "axes", 1},
};

const MovedAttribute& Find(const AdapterContext& ctx) {
  for (const MovedAttribute& moved : kMoved) {
    if (ctx.from.name == moved.op) return moved;
  }
  return kMoved[0];  // unreachable: only registered ops get here
}

absl::Status AttributeToInput(AdapterContext& ctx) {
  const MovedAttribute& moved = Find(ctx);
  auto& attributes = *ctx.node.mutable_attribute();
  for (int i = 0; i < attributes.size(); ++i) {
    if (attributes[i].name() != moved.attribute) continue;
    onnx::TensorProto value;
    value.set_data_type(onnx::TensorProto::INT64);
    value.add_dims(attributes[i].ints_size());
    for (int64_t v : attributes[i].ints()) value.add_int64_data(v);
    absl::StatusOr<std::string> name = ctx.add_constant(std::move(value));
    if (!name.ok()) return name.status();
    while (ctx.node.input_size() < moved.input) ctx.node.add_input("");
    if (ctx.node.input_size() == moved.input) {
      ctx.node.add_input(*name);
    } else {
      ctx.node.set_input(moved.input, *name);
    }
    attributes.DeleteSubrange(i, 1);
    ctx.changes.push_back({"attribute-to-input",
                           absl::StrCat(moved.attribute, " moved to input '", *name, "'")});
    break;
  }
  return absl::OkStatus();
}

absl::Status InputToAttribute(AdapterContext& ctx) {
  const MovedAttribute& moved = Find(ctx);
  if (ctx.node.input_size() <= moved.input || ctx.node.input(moved.input).empty()) {
    return absl::OkStatus();  // absent in both forms
  }
  const std::string name = ctx.node.input(moved.input);  // a copy: the input is deleted below
  const onnx::TensorProto* value = ctx.constant_of(name);
  if (value == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "input '", name, "' (", moved.attribute, ") is not a constant, and ", ctx.to.Label(),
        " needs it as an attribute"));
  }
  onnx::AttributeProto* attribute = ctx.node.add_attribute();
  attribute->set_name(moved.attribute);
  attribute->set_type(onnx::AttributeProto::INTS);
  if (value->has_raw_data()) {
    const std::string& raw = value->raw_data();
    for (size_t i = 0; i + 8 <= raw.size(); i += 8) {
      int64_t v;
      std::memcpy(&v, raw.data() + i, 8);
      attribute->add_ints(v);
    }
  } else {
    for (int64_t v : value->int64_data()) attribute->add_ints(v);
  }
  ctx.node.mutable_input()->DeleteSubrange(moved.input, ctx.node.input_size() - moved.input);
  ctx.changes.push_back({"input-to-attribute",
                         absl::StrCat("input '", name, "' moved to attribute ", moved.attribute)});
  return absl::OkStatus();
}

}  // namespace

void RegisterAttributeInputAdapters(RewriteTable& table) {
  for (const MovedAttribute& moved : kMoved) {
    table.Register("", moved.op, moved.older, moved.newer, AttributeToInput,
                   absl::StrCat(moved.attribute, " attribute to input"));
    table.Register("", moved.op, moved.newer, moved.older, InputToAttribute,
                   absl::StrCat(moved.attribute, " input to attribute"));
  }
}

}  // namespace onnxconvert::adapters
