#include "converter/expand.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/context_bodies.h"
#include "converter/converter.h"
#include "ir/text_parser.h"

namespace onnxconvert::converter {
namespace {

constexpr int kMaxDepth = 16;

using NameMap = absl::flat_hash_map<std::string, std::string>;
using FreshName = absl::FunctionRef<std::string(absl::string_view)>;

// The attribute a schema default stands for, named `name`.

// Replaces attribute references (`alpha: float = @alpha`) in `node` by the
// calling node's attribute or the schema's default; a reference to neither
// is dropped, as the spec says.
void SubstituteAttributes(onnx::NodeProto& node, const onnx::NodeProto& call,
                          const schema::OpSchema& schema) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (!attribute.has_ref_attr_name()) {
      *kept.Add() = std::move(attribute);
      continue;
    }
    const std::string& ref = attribute.ref_attr_name();
    const onnx::AttributeProto* given = nullptr;
    for (const onnx::AttributeProto& a : call.attribute()) {
      if (a.name() == ref) given = &a;
    }
    if (given != nullptr) {
      onnx::AttributeProto* copy = kept.Add();
      *copy = *given;
      copy->set_name(attribute.name());
    } else if (const schema::AttrSpec* spec = schema.FindAttr(ref)) {
      if (auto fallback = schema::DefaultAttribute(*spec, attribute.name())) *kept.Add() = *fallback;
    }
  }
  node.mutable_attribute()->Swap(&kept);
}

// Renames the values of `nodes` (and their subgraphs) apart: inputs through
// `names`, every output to a fresh name unless `names` already maps it.
void RenameApart(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, NameMap& names,
                 FreshName fresh_name, int depth);

void RenameGraph(onnx::GraphProto& graph, NameMap names, FreshName fresh_name, int depth) {
  auto rename_defined = [&](std::string* name) {
    if (name->empty()) return;
    std::string fresh = fresh_name(*name);
    names[*name] = fresh;
    *name = fresh;
  };
  for (auto& input : *graph.mutable_input()) rename_defined(input.mutable_name());
  for (auto& tensor : *graph.mutable_initializer()) rename_defined(tensor.mutable_name());
  RenameApart(*graph.mutable_node(), names, fresh_name, depth);
  for (auto& output : *graph.mutable_output()) {
    auto it = names.find(output.name());
    if (it != names.end()) output.set_name(it->second);
  }
  for (auto& value : *graph.mutable_value_info()) {
    auto it = names.find(value.name());
    if (it != names.end()) value.set_name(it->second);
  }
}

void RenameApart(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, NameMap& names,
                 FreshName fresh_name, int depth) {
  for (onnx::NodeProto& node : nodes) {
    for (std::string& input : *node.mutable_input()) {
      auto it = names.find(input);
      if (it != names.end()) input = it->second;
    }
    if (depth < kMaxDepth) {
      for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
        if (attribute.has_g()) RenameGraph(*attribute.mutable_g(), names, fresh_name, depth + 1);
        for (auto& graph : *attribute.mutable_graphs()) {
          RenameGraph(graph, names, fresh_name, depth + 1);
        }
      }
    }
    for (std::string& output : *node.mutable_output()) {
      if (output.empty()) continue;
      auto it = names.find(output);
      if (it == names.end()) it = names.emplace(output, fresh_name(output)).first;
      output = it->second;
    }
    if (!node.name().empty()) node.set_name(fresh_name(node.name()));
  }
}

// The body's nodes bound to the call: formal inputs and outputs become the
// call's values, attribute references its attributes, the rest fresh names.
absl::StatusOr<onnx::FunctionProto> Instantiate(const onnx::NodeProto& call,
                                                const schema::OpSchema& schema,
                                                const schema::FunctionBody& body,
                                                FreshName fresh_name) {
  absl::StatusOr<onnx::FunctionProto> function = ParseFunctionText(body.text);
  if (!function.ok()) {
    return absl::InternalError(absl::StrCat("the function body of ", schema.Label(),
                                            " does not parse: ", function.status().message()));
  }
  NameMap names;
  for (int i = 0; i < function->input_size(); ++i) {
    names[function->input(i)] = i < call.input_size() ? call.input(i) : "";
  }
  for (int i = 0; i < function->output_size(); ++i) {
    bool used = i < call.output_size() && !call.output(i).empty();
    names[function->output(i)] = used ? call.output(i) : fresh_name(function->output(i));
  }
  for (onnx::NodeProto& node : *function->mutable_node()) {
    SubstituteAttributes(node, call, schema);
    if (node.name().empty()) node.set_name(absl::StrCat(call.name(), "_", node.op_type()));
  }
  RenameApart(*function->mutable_node(), names, fresh_name, 0);
  return function;
}

// A model whose graph is the instantiated body, with the call's inputs as
// graph inputs (typed where known; constants kept as initializers).
onnx::ModelProto BodyModel(const onnx::NodeProto& call, const onnx::FunctionProto& function,
                           int64_t body_opset,
                           absl::FunctionRef<const onnx::TypeProto*(absl::string_view)> type_of,
                           absl::FunctionRef<const onnx::TensorProto*(absl::string_view)>
                               constant_of) {
  onnx::ModelProto model;
  model.set_ir_version(std::max<int64_t>(MinIrVersionForOpset(body_opset), 8));
  for (const auto& opset : function.opset_import()) {
    if (!CanonicalDomain(opset.domain()).empty()) *model.add_opset_import() = opset;
  }
  onnx::OperatorSetIdProto* own = model.add_opset_import();
  own->set_domain("");
  own->set_version(body_opset);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("expansion");
  absl::flat_hash_set<std::string> seen;
  for (const std::string& input : call.input()) {
    if (input.empty() || !seen.insert(input).second) continue;
    if (const onnx::TensorProto* constant = constant_of(input)) {
      onnx::TensorProto* tensor = graph.add_initializer();
      *tensor = *constant;
      tensor->set_name(input);  // a Constant node's value may be unnamed
      continue;
    }
    onnx::ValueInfoProto* value = graph.add_input();
    value->set_name(input);
    if (const onnx::TypeProto* type = type_of(input)) *value->mutable_type() = *type;
  }
  for (const onnx::NodeProto& node : function.node()) *graph.add_node() = node;
  for (const std::string& output : call.output()) {
    if (!output.empty()) graph.add_output()->set_name(output);
  }
  return model;
}

}  // namespace

absl::StatusOr<Expansion> ExpandFunctionNode(
    const onnx::NodeProto& node, const schema::OpSchema& schema, int64_t model_opset,
    int64_t target_opset, absl::FunctionRef<const onnx::TypeProto*(absl::string_view)> type_of,
    absl::FunctionRef<const onnx::TensorProto*(absl::string_view)> constant_of,
    FreshName fresh_name) {
  schema::FunctionBody generated{schema.since_version, ""};
  std::string generated_text;
  const schema::FunctionBody* body = schema.FunctionBodyFor(model_opset);
  if (body == nullptr && !schema.function_bodies.empty()) body = &schema.function_bodies.front();
  if (body == nullptr) {
    // A body that depends on the call: built for this node's input types.
    std::vector<const onnx::TypeProto*> input_types;
    for (const std::string& input : node.input()) {
      input_types.push_back(input.empty() ? nullptr : type_of(input));
    }
    absl::StatusOr<std::string> text = schema::ContextDependentBody(schema, node, input_types);
    if (!text.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(schema.name, " does not exist before opset ", schema.since_version,
                       " and its function body depends on the input types: ",
                       text.status().message()));
    }
    generated_text = *std::move(text);
    generated.text = generated_text;
    body = &generated;
  }
  OC_ASSIGN_OR_RETURN(onnx::FunctionProto function,
                      Instantiate(node, schema, *body, fresh_name));
  onnx::ModelProto model = BodyModel(node, function, body->opset, type_of, constant_of);
  absl::flat_hash_set<std::string> given;
  for (const auto& tensor : model.graph().initializer()) given.insert(tensor.name());

  ConvertOptions options;
  options.target_opset = target_opset;
  absl::StatusOr<ConversionResult> converted = ConvertModel(model, options);
  if (!converted.ok()) {
    return absl::Status(converted.status().code(),
                        absl::StrCat("expanding ", schema.Label(), " into its function body (opset ",
                                     body->opset, "): ", converted.status().message()));
  }
  onnx::GraphProto& graph = *converted->model.mutable_graph();
  // Names the conversion of the body created are unique there, not in the
  // model: rename them apart once more.
  absl::flat_hash_set<std::string> kept(given.begin(), given.end());
  for (const auto& input : graph.input()) kept.insert(input.name());
  for (const auto& output : graph.output()) kept.insert(output.name());
  for (const auto& n : function.node()) {
    for (const std::string& output : n.output()) kept.insert(output);
  }
  NameMap names;
  Expansion expansion;
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
    if (given.contains(tensor.name())) continue;
    if (!kept.contains(tensor.name())) {
      std::string fresh = fresh_name(tensor.name());
      names[tensor.name()] = fresh;
      tensor.set_name(fresh);
    }
    expansion.initializers.push_back(std::move(tensor));
  }
  for (const std::string& name : kept) names.emplace(name, name);
  RenameApart(*graph.mutable_node(), names, fresh_name, 0);
  for (onnx::NodeProto& n : *graph.mutable_node()) expansion.nodes.push_back(std::move(n));
  return expansion;
}

}  // namespace onnxconvert::converter
