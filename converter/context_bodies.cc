// Function bodies that depend on the call, written per op from the spec's
// definitions (onnx docs/Operators.md, and the corpus's *_expanded cases,
// which show the spec's expansions). Each builder returns ONNX text.

#include "converter/context_bodies.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onnxconvert::converter {
namespace {

// What a builder sees of the call.
struct Call {
  const schema::OpSchema& schema;
  const onnx::NodeProto& node;
  absl::Span<const onnx::TypeProto* const> input_types;

  // The call's attribute `name`, or null.
  const onnx::AttributeProto* Attr(absl::string_view name) const {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  // The FLOAT attribute `name`, or the schema's default.
  float Float(absl::string_view name) const {
    if (const onnx::AttributeProto* a = Attr(name)) return a->f();
    const schema::AttrSpec* spec = schema.FindAttr(name);
    return spec != nullptr ? spec->default_value.f : 0.0f;
  }
};

// The header every body starts with: the op's own opset and signature.
std::string Header(const Call& call, absl::string_view inputs, absl::string_view outputs) {
  return absl::StrFormat("<domain: \"\", opset_import: [\"\" : %d]>\n%s (%s) => (%s)\n",
                         call.schema.since_version, call.schema.name, inputs, outputs);
}

// Celu(X) = alpha * Elu(X / alpha) (float only).
absl::StatusOr<std::string> CeluBody(const Call& call) {
  return absl::StrCat(Header(call, "X", "Y"), "{\n",
                      absl::StrFormat("  alpha = Constant <value_float: float = %.9g> ()\n",
                                      call.Float("alpha")),
                      "  X_alpha = Div (X, alpha)\n"
                      "  Elu_result = Elu <alpha: float = 1.0> (X_alpha)\n"
                      "  Y = Mul (alpha, Elu_result)\n"
                      "}");
}

// Builders by op name and since_version.
struct Entry {
  const char* op;
  int since_version;
  absl::StatusOr<std::string> (*build)(const Call&);
};

constexpr Entry kBuilders[] = {
    {"Celu", 12, CeluBody},
};

}  // namespace

absl::StatusOr<std::string> ContextDependentBody(
    const schema::OpSchema& schema, const onnx::NodeProto& node,
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

}  // namespace onnxconvert::converter
