// Function calls: model-local functions and the spec's function bodies of
// ops without a kernel, evaluated by expansion. A call's body is the
// function's nodes with every attribute reference (`alpha: float =
// @alpha`) replaced by the call's attribute or the default, instantiated
// once per calling node, and run in a scope of its own whose formal inputs
// borrow the caller's values: no renaming is needed, as nothing outside
// the function sees its names.
//
// Bodies that depend on the call (their input types) come from
// schema/context_bodies.h, built here for the types of the values at
// hand; they live in schema/ so that eval does not depend on converter/.

#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "eval/runner.h"
#include "ir/text_parser.h"
#include "schema/context_bodies.h"

namespace onnxconvert::eval {
namespace {

using AttrLookup = absl::FunctionRef<std::optional<onnx::AttributeProto>(absl::string_view)>;


// The call's attribute `name`, or null.
const onnx::AttributeProto* CallAttribute(const onnx::NodeProto& call, absl::string_view name) {
  for (const onnx::AttributeProto& a : call.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// Replaces the attribute references of `nodes` (and of their subgraphs'
// nodes) by what `lookup` gives; a reference to nothing is dropped, as the
// spec says.
void Substitute(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, AttrLookup lookup) {
  for (onnx::NodeProto& node : nodes) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.ref_attr_name().empty()) {
        if (attribute.has_g()) Substitute(*attribute.mutable_g()->mutable_node(), lookup);
        for (onnx::GraphProto& g : *attribute.mutable_graphs()) {
          Substitute(*g.mutable_node(), lookup);
        }
        *kept.Add() = std::move(attribute);
        continue;
      }
      if (std::optional<onnx::AttributeProto> given = lookup(attribute.ref_attr_name())) {
        given->set_name(attribute.name());
        given->clear_ref_attr_name();
        *kept.Add() = *std::move(given);
      }
    }
    node.mutable_attribute()->Swap(&kept);
  }
}

// A key for `pointer` in instance keys.
std::string PointerKey(const void* pointer) {
  return absl::StrCat(reinterpret_cast<uintptr_t>(pointer));
}

}  // namespace

const onnx::FunctionProto& Runner::LocalInstance(const onnx::FunctionProto& function,
                                                 const onnx::NodeProto& node) {
  std::string key = absl::StrCat("local\n", PointerKey(&function), "\n", PointerKey(&node));
  auto it = cache_.instances.find(key);
  if (it != cache_.instances.end()) return *it->second;
  auto instance = std::make_unique<onnx::FunctionProto>(function);
  Substitute(*instance->mutable_node(), [&](absl::string_view name) {
    std::optional<onnx::AttributeProto> found;
    if (const onnx::AttributeProto* given = CallAttribute(node, name)) {
      found = *given;
    } else {
      for (const onnx::AttributeProto& fallback : function.attribute_proto()) {
        if (fallback.name() == name) found = fallback;
      }
    }
    return found;
  });
  const onnx::FunctionProto& result = *instance;
  cache_.instances[key] = std::move(instance);
  return result;
}

absl::StatusOr<const onnx::FunctionProto*> Runner::SpecInstance(
    const onnx::NodeProto& node, const schema::OpSchema& schema,
    absl::Span<const Value* const> inputs, int64_t opset) {
  const schema::FunctionBody* body = schema.FunctionBodyFor(opset);
  if (body == nullptr && !schema.function_bodies.empty()) body = &schema.function_bodies.front();
  std::string key;
  std::string generated;
  int64_t body_opset = schema.since_version;
  if (body != nullptr) {
    key = absl::StrCat("spec\n", PointerKey(body->text.data()), "\n", PointerKey(&node));
    body_opset = body->opset;
  } else if (!schema.context_dependent_function_opsets.empty()) {
    std::vector<onnx::TypeProto> types;
    std::vector<std::string> signature;
    for (const Value* input : inputs) {
      types.push_back(input != nullptr ? input->Type() : onnx::TypeProto());
      signature.push_back(input != nullptr ? TypeString(*input) : "");
    }
    key = absl::StrCat("context\n", PointerKey(&schema), "\n", PointerKey(&node), "\n",
                       absl::StrJoin(signature, ";"));
    if (!cache_.instances.contains(key)) {
      std::vector<const onnx::TypeProto*> pointers;
      for (size_t i = 0; i < types.size(); ++i) {
        pointers.push_back(inputs[i] != nullptr ? &types[i] : nullptr);
      }
      absl::StatusOr<std::string> text = schema::ContextDependentBody(schema, node, pointers);
      if (absl::IsUnimplemented(text.status())) return nullptr;
      if (!text.ok()) {
        return Prefixed(text.status(), absl::StrCat("the function body of ", schema.Label()));
      }
      generated = *std::move(text);
    }
  } else {
    return nullptr;
  }
  if (auto it = cache_.instances.find(key); it != cache_.instances.end()) return it->second.get();
  absl::StatusOr<onnx::FunctionProto> parsed =
      ParseFunctionText(body != nullptr ? body->text : absl::string_view(generated));
  if (!parsed.ok()) {
    return absl::InternalError(absl::StrCat("the function body of ", schema.Label(),
                                            " does not parse: ", parsed.status().message()));
  }
  auto instance = std::make_unique<onnx::FunctionProto>(*std::move(parsed));
  bool imports_default = false;
  for (const onnx::OperatorSetIdProto& import : instance->opset_import()) {
    if (CanonicalDomain(import.domain()).empty()) imports_default = true;
  }
  if (!imports_default) {
    onnx::OperatorSetIdProto* import = instance->add_opset_import();
    import->set_domain("");
    import->set_version(body_opset);
  }
  instance->set_name(std::string(schema.name));
  instance->set_domain(std::string(schema.domain));
  Substitute(*instance->mutable_node(), [&](absl::string_view name) {
    std::optional<onnx::AttributeProto> found;
    if (const onnx::AttributeProto* given = CallAttribute(node, name)) {
      found = *given;
    } else if (const schema::AttrSpec* spec = schema.FindAttr(name)) {
      found = schema::DefaultAttribute(*spec, name);
    }
    return found;
  });
  const onnx::FunctionProto* result = instance.get();
  cache_.instances[key] = std::move(instance);
  return result;
}

absl::StatusOr<std::vector<Value>> Runner::CallFunction(const onnx::FunctionProto& body,
                                                        absl::Span<const Value* const> inputs,
                                                        const Context& caller, int depth) {
  if (depth + 1 > options_.max_depth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("subgraphs and functions nest deeper than ", options_.max_depth));
  }
  Context context{caller.opsets, caller.functions};
  for (const onnx::OperatorSetIdProto& import : body.opset_import()) {
    context.opsets[std::string(CanonicalDomain(import.domain()))] =
        import.version();
  }
  absl::StatusOr<const Plan*> plan = PlanForFunction(body, depth + 1);
  if (!plan.ok()) return Prefixed(plan.status(), BodyOfFunction(body).what);
  Scope scope(*this, nullptr, **plan);
  for (int i = 0; i < body.input_size(); ++i) {
    int slot = (*plan)->inputs[i];
    if (slot < 0) continue;
    scope.Borrow(slot, i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr);
  }
  absl::StatusOr<std::vector<Value>> outputs = RunBody(**plan, scope, context, depth + 1);
  if (!outputs.ok()) return Prefixed(outputs.status(), (*plan)->what);
  return outputs;
}

}  // namespace onnxconvert::eval
