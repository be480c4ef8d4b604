#include "bench/synthetic_models.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"

namespace onnxconvert::bench {
namespace {

onnx::NodeProto* AddNode(onnx::GraphProto& graph, const char* op, std::string name,
                         std::initializer_list<std::string> inputs, std::string output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(std::move(name));
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(std::move(output));
  return node;
}

void AddAxes(onnx::NodeProto* node) {
  onnx::AttributeProto* axes = node->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(0);
}

void SetType(onnx::ValueInfoProto* value, const std::string& name) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_param("N");
  tensor->mutable_shape()->add_dim()->set_dim_value(16);
}

// Adds the five nodes of block `p` to `graph`, from `input` to `output`.
void AddBlock(onnx::GraphProto& graph, const std::string& p, const std::string& input,
              const std::string& output) {
  AddNode(graph, "MatMul", p + "_matmul", {input, "W"}, p + "_mm");
  AddNode(graph, "Add", p + "_add", {p + "_mm", "B"}, p + "_add");
  AddNode(graph, "Relu", p + "_relu", {p + "_add"}, p + "_relu");
  AddAxes(AddNode(graph, "Unsqueeze", p + "_unsqueeze", {p + "_relu"}, p + "_unsq"));
  AddAxes(AddNode(graph, "Squeeze", p + "_squeeze", {p + "_unsq"}, output));
}

// Block `p` from `input` to `output` as an If on "c".
void AddIfBlock(onnx::GraphProto& graph, const std::string& p, const std::string& input,
                const std::string& output) {
  onnx::NodeProto* node = AddNode(graph, "If", p + "_if", {"c"}, output);
  onnx::AttributeProto* then_branch = node->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& then_graph = *then_branch->mutable_g();
  then_graph.set_name(p + "_then");
  AddBlock(then_graph, p + "_t", input, p + "_then_out");
  SetType(then_graph.add_output(), p + "_then_out");
  onnx::AttributeProto* else_branch = node->add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& else_graph = *else_branch->mutable_g();
  else_graph.set_name(p + "_else");
  AddNode(else_graph, "Relu", p + "_e_relu", {input}, p + "_else_out");
  SetType(else_graph.add_output(), p + "_else_out");
}

// Sets `value` to scalar `name` of element type `type`.
void SetScalarType(onnx::ValueInfoProto* value, const std::string& name,
                   onnx::TensorProto::DataType type) {
  value->set_name(name);
  value->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  value->mutable_type()->mutable_tensor_type()->mutable_shape();
}

// Block `p` from `input` to `output` as the body of a Loop of "n"
// iterations (the graph's int64 input), carrying the chain's value.
void AddLoopBlock(onnx::GraphProto& graph, const std::string& p, const std::string& input,
                  const std::string& output) {
  onnx::NodeProto* node = AddNode(graph, "Loop", p + "_loop", {"n", "", input}, output);
  onnx::AttributeProto* body_attribute = node->add_attribute();
  body_attribute->set_name("body");
  body_attribute->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& body = *body_attribute->mutable_g();
  body.set_name(p + "_body");
  SetScalarType(body.add_input(), p + "_i", onnx::TensorProto::INT64);
  SetScalarType(body.add_input(), p + "_c", onnx::TensorProto::BOOL);
  SetType(body.add_input(), p + "_x");
  AddNode(body, "Identity", p + "_keep", {p + "_c"}, p + "_c_out");
  AddBlock(body, p + "_l", p + "_x", p + "_y");
  SetScalarType(body.add_output(), p + "_c_out", onnx::TensorProto::BOOL);
  SetType(body.add_output(), p + "_y");
}

// Block `p` from `input` to `output` as a call of the function local.Block
// (MakeBlockFunction), the output typed by the graph.
void AddCallBlock(onnx::GraphProto& graph, const std::string& p, const std::string& input,
                  const std::string& output) {
  AddNode(graph, "Block", p + "_call", {input, "W", "B"}, output)->set_domain("local");
  SetType(graph.add_value_info(), output);
}

// The function local.Block(X, W, B) => (Y): the five nodes of a block.
void AddBlockFunction(onnx::ModelProto& model) {
  onnx::FunctionProto& function = *model.add_functions();
  function.set_domain("local");
  function.set_name("Block");
  for (const char* input : {"x", "W", "B"}) function.add_input(input);
  function.add_output("y");
  function.add_opset_import()->set_version(12);
  onnx::GraphProto body;
  AddBlock(body, "f", "x", "y");
  *function.mutable_node() = std::move(*body.mutable_node());
}

using AddBlockFn = void (*)(onnx::GraphProto&, const std::string&, const std::string&,
                           const std::string&);

// What adds a block held as `kind` says.
AddBlockFn BlockHolder(ChainKind kind) {
  switch (kind) {
    case ChainKind::kIf: return AddIfBlock;
    case ChainKind::kLoop: return AddLoopBlock;
    case ChainKind::kCall: return AddCallBlock;
    case ChainKind::kPlain: break;
  }
  return AddBlock;
}

// The chain of `blocks` blocks, every `every`-th (0: none) held as `kind`
// says.
onnx::ModelProto MakeChain(int64_t blocks, int64_t every, ChainKind kind) {
  onnx::ModelProto model;
  model.set_ir_version(kind == ChainKind::kCall ? 8 : 7);
  model.set_producer_name("onnx-convert-bench");
  model.add_opset_import()->set_version(12);
  if (kind == ChainKind::kCall) {
    onnx::OperatorSetIdProto& local = *model.add_opset_import();
    local.set_domain("local");
    local.set_version(1);
    AddBlockFunction(model);
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("chain");
  for (const char* name : {"W", "B"}) {
    onnx::TensorProto* tensor = graph.add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    if (name[0] == 'W') tensor->add_dims(16);
    tensor->add_dims(16);
    tensor->set_raw_data(std::string(4 * (name[0] == 'W' ? 256 : 16), '\0'));
  }
  SetType(graph.add_input(), "x0");
  if (every > 0 && kind == ChainKind::kIf) {
    SetScalarType(graph.add_input(), "c", onnx::TensorProto::BOOL);
  }
  if (every > 0 && kind == ChainKind::kLoop) {
    SetScalarType(graph.add_input(), "n", onnx::TensorProto::INT64);
  }
  std::string current = "x0";
  for (int64_t b = 0; b < blocks; ++b) {
    std::string p = absl::StrCat("b", b);
    std::string next = absl::StrCat("x", b + 1);
    if (every > 0 && b % every == every - 1) {
      BlockHolder(kind)(graph, p, current, next);
    } else {
      AddBlock(graph, p, current, next);
    }
    current = next;
  }
  SetType(graph.add_output(), current);
  return model;
}

}  // namespace

onnx::ModelProto MakeChainModel(int64_t nodes) {
  return MakeChain(std::max<int64_t>(1, nodes / 5), 0, ChainKind::kPlain);
}

onnx::ModelProto MakeIfChainModel(int64_t nodes, int64_t every) {
  // An If block holds 7 nodes where a plain one has 5.
  int64_t blocks = std::max<int64_t>(1, nodes * every / (5 * every + 2));
  return MakeChain(blocks, every, ChainKind::kIf);
}

onnx::ModelProto MakeLoopChainModel(int64_t nodes, int64_t every) {
  // A Loop block holds 7 nodes where a plain one has 5.
  int64_t blocks = std::max<int64_t>(1, nodes * every / (5 * every + 2));
  return MakeChain(blocks, every, ChainKind::kLoop);
}

onnx::ModelProto MakeCallChainModel(int64_t nodes, int64_t every) {
  // A block of the function's stands for its 5 nodes in 1 call.
  int64_t blocks = std::max<int64_t>(1, nodes * every / (5 * every - 4));
  return MakeChain(blocks, every, ChainKind::kCall);
}

onnx::ModelProto MakeChainModelOf(ChainKind kind, int64_t nodes) {
  switch (kind) {
    case ChainKind::kIf: return MakeIfChainModel(nodes);
    case ChainKind::kLoop: return MakeLoopChainModel(nodes);
    case ChainKind::kCall: return MakeCallChainModel(nodes);
    case ChainKind::kPlain: break;
  }
  return MakeChainModel(nodes);
}

std::optional<ChainKind> ChainKindNamed(absl::string_view arg) {
  if (arg == "if") return ChainKind::kIf;
  if (arg == "loop") return ChainKind::kLoop;
  if (arg == "fn") return ChainKind::kCall;
  return std::nullopt;
}

const std::string& SerializedChainModel(int64_t nodes) {
  static auto* cache = new std::map<int64_t, std::string>();
  auto [it, inserted] = cache->try_emplace(nodes);
  if (inserted) it->second = MakeChainModel(nodes).SerializeAsString();
  return it->second;
}

}  // namespace onnxconvert::bench
