#include "tests/hostile/hostile_models.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ir/text_parser.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::testing {
namespace {

constexpr const char* kInt64Max = "9223372036854775807";

// The serialized model of `text` (ONNX text that must parse).
std::string ModelBytes(const std::string& text) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text);
  if (!model.ok()) return absl::StrCat("unparsable: ", model.status().message());
  return model->SerializeAsString();
}

// A model of opset `opset` whose main graph is `signature` { `body` }.
std::string Model(int opset, const std::string& signature, const std::string& body) {
  return ModelBytes(absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", opset, "]>\nmain ",
                                 signature, "\n{\n", body, "\n}\n"));
}

// A node of each op the issue names, with no outputs at all.
void AddZeroOutputNodes(std::vector<HostileModel>& out) {
  const struct {
    const char* op;
    const char* inputs;
  } kNodes[] = {
      {"ArgMin", "X"},     {"ArgMax", "X"}, {"ReduceSum", "X"}, {"Transpose", "X"},
      {"Shape", "X"},      {"Gather", "X, I"}, {"MatMul", "X, XT"}, {"Flatten", "X"},
      {"Cast <to = 7>", "X"}, {"Resize", "X, , S"}, {"Sub", "X, X"},
  };
  for (const auto& node : kNodes) {
    std::string op = node.op;
    out.push_back({absl::StrCat("zero_outputs_", op.substr(0, op.find(' '))),
                   "a node with no outputs",
                   Model(13,
                         "(float[2,3] X, float[3,2] XT, int64[2] I, float[2] S) => (float[2,3] Y)",
                         absl::StrCat(" = ", op, " (", node.inputs, ")\n Y = Identity (X)"))});
  }
}

// Call-dependent bodies built from an input of rank 0.
void AddLowRankBodies(std::vector<HostileModel>& out) {
  out.push_back({"nll_loss_rank0", "NegativeLogLikelihoodLoss of a rank-0 input (down to 7)",
                 Model(13, "(float[] X, int64[] T) => (float L)",
                       "L = NegativeLogLikelihoodLoss (X, T)")});
  out.push_back({"softmax_ce_rank1", "SoftmaxCrossEntropyLoss of a rank-1 input",
                 Model(13, "(float[3] X, int64[3] T) => (float L)",
                       "L = SoftmaxCrossEntropyLoss (X, T)")});
  out.push_back({"attention_mask_rank0", "Attention-24 with a rank-0 mask",
                 Model(24, "(float[1,2,4,8] Q, float[1,2,4,8] K, float[1,2,4,8] V, float[] M) "
                           "=> (float[1,2,4,8] Y)",
                       "Y = Attention (Q, K, V, M)")});
  out.push_back({"nll_loss_huge_classes", "NegativeLogLikelihoodLoss of 2^62 declared classes",
                 Model(13, "(float[2,4611686018427387904] X, int64[2] T) => (float L)",
                       "L = NegativeLogLikelihoodLoss <reduction = \"sum\"> (X, T)")});
}

// One string tensor of `count` empty strings: 2 bytes each on the wire,
// tens of bytes each once parsed.
HostileModel StringAmplifier(int count) {
  HostileModel amplifier = {absl::StrCat("strings_", count),
                            "a string tensor of many empty strings", ""};
  const std::string text = absl::StrCat(
      "<ir_version: 8, opset_import: [13]>\nmain () => (string Y) <string[", count,
      "] S = {}>\n{\n  Y = Identity (S)\n}\n");
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text);
  if (!model.ok()) {
    amplifier.bytes = ModelBytes(text);  // says why it does not parse
    return amplifier;
  }
  onnx::TensorProto* strings = model->mutable_graph()->mutable_initializer(0);
  strings->mutable_string_data()->Reserve(count);
  for (int i = 0; i < count; ++i) strings->add_string_data();
  amplifier.bytes = model->SerializeAsString();
  return amplifier;
}

// Appends a varint.
void Varint(uint64_t value, std::string& out) {
  for (; value >= 0x80; value >>= 7) out.push_back(static_cast<char>((value & 0x7f) | 0x80));
  out.push_back(static_cast<char>(value));
}

// Appends the tag and length of length-delimited field `number`.
void Header(int number, uint64_t length, std::string& out) {
  Varint(static_cast<uint64_t>(number) << 3 | 2, out);
  Varint(length, out);
}

// The bytes of a model whose one graph input has a type of `depth`
// sequences around a float tensor, written on the wire directly: protobuf's
// own objects of that depth overflow the stack when freed.
std::string DeepSequenceModel(int depth) {
  const std::string tensor = "\x0a\x02\x08\x01";  // TypeProto{tensor_type{elem_type: 1}}
  // lengths[k]: the bytes of the TypeProto k levels out from the tensor.
  std::vector<uint64_t> lengths = {tensor.size()};
  auto header_size = [](int number, uint64_t length) {
    std::string h;
    Header(number, length, h);
    return h.size();
  };
  for (int k = 1; k <= depth; ++k) {
    uint64_t sequence = header_size(1, lengths.back()) + lengths.back();  // Sequence{elem_type}
    lengths.push_back(header_size(4, sequence) + sequence);  // TypeProto{sequence_type}
  }
  std::string type;
  type.reserve(lengths.back());
  for (int k = depth; k >= 1; --k) {
    uint64_t sequence = header_size(1, lengths[k - 1]) + lengths[k - 1];
    Header(4, sequence, type);
    Header(1, lengths[k - 1], type);
  }
  type += tensor;
  std::string value_info = "\x0a\x01X";  // name: "X"
  Header(2, type.size(), value_info);
  value_info += type;
  std::string graph;
  Header(11, value_info.size(), graph);  // input
  graph += value_info;
  std::string model = "\x08\x08\x42\x02\x10\x0d";  // ir_version 8, opset_import {version 13}
  Header(7, graph.size(), model);
  return model + graph;
}

// Types nested `depth` deep, as text for `parse` and as a model's bytes.
void AddDeepTypes(std::vector<HostileModel>& out) {
  for (int depth : {1000, 30000}) {
    std::string text;
    text.reserve(depth * 5 + 200);
    for (int i = 0; i < depth; ++i) text += "seq(";
    text += "float";
    text += std::string(depth, ')');
    out.push_back({absl::StrCat("seq_text_", depth), "seq(seq(...)) types nested deep, in text",
                   absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\nmain (", text,
                                " X) => (", text, " Y) { Y = Identity (X) }\n"),
                   /*text=*/true});
    out.push_back({absl::StrCat("seq_model_", depth), "seq(seq(...)) types nested deep",
                   DeepSequenceModel(depth)});
  }
}

// Shape inference on sizes and attribute values at the edge of int64.
void AddOverflows(std::vector<HostileModel>& out) {
  const std::string max = kInt64Max;
  const struct {
    const char* name;
    int opset;
    std::string signature;
    std::string body;
  } kCases[] = {
      {"conv_pads", 13, "(float[1,1,3,3] X, float[1,1,2,2] W) => (float Y)",
       absl::StrCat("Y = Conv <pads = [", max, ", 0, ", max, ", 0]> (X, W)")},
      {"conv_strides", 13, absl::StrCat("(float[1,1,", max, ",3] X, float[1,1,2,2] W) => (float Y)"),
       absl::StrCat("Y = Conv <strides = [", max, ", 1], dilations = [", max, ", 1]> (X, W)")},
      {"conv_transpose", 13, absl::StrCat("(float[1,1,", max, ",3] X, float[1,1,2,2] W) => (float Y)"),
       absl::StrCat("Y = ConvTranspose <strides = [", max, ", 1], output_padding = [", max,
                    ", 0]> (X, W)")},
      {"pad", 13, absl::StrCat("(float[", max, ",3] X) => (float Y)"),
       absl::StrCat("P = Constant <value = int64[4] {", max, ", 0, ", max, ", 0}> ()\n Y = Pad (X, P)")},
      {"range", 13, "(int64 A) => (int64 Y)",
       absl::StrCat("S = Constant <value = int64 {-9223372036854775807}> ()\n L = Constant <value = "
                    "int64 {", max, "}> ()\n D = Constant <value = int64 {1}> ()\n Y = Range (S, L, D)")},
      {"reshape", 13, absl::StrCat("(float[", max, ",", max, "] X) => (float Y)"),
       "S = Constant <value = int64[1] {-1}> ()\n Y = Reshape (X, S)"},
      {"tile", 13, absl::StrCat("(float[", max, ",3] X) => (float Y)"),
       absl::StrCat("R = Constant <value = int64[2] {", max, ", ", max, "}> ()\n Y = Tile (X, R)")},
      {"broadcast", 13, absl::StrCat("(float[", max, ",1] X, float[1,", max, "] Z) => (float Y)"),
       "Y = Add (X, Z)"},
      {"flatten", 13, absl::StrCat("(float[", max, ",", max, ",2] X) => (float Y)"),
       "Y = Flatten <axis = 2> (X)"},
      {"depth_to_space", 13, absl::StrCat("(float[1,4,", max, ",2] X) => (float Y)"),
       absl::StrCat("Y = DepthToSpace <blocksize = ", max, "> (X)")},
      {"concat", 13, absl::StrCat("(float[", max, "] X) => (float Y)"),
       "Y = Concat <axis = 0> (X, X, X)"},
      {"resize_scales", 13, absl::StrCat("(float[", max, ",2] X) => (float Y)"),
       "S = Constant <value = float[2] {1e30, 1e30}> ()\n Y = Resize (X, , S)"},
      {"max_pool", 13, "(float[1,1,3,3] X) => (float Y)",
       absl::StrCat("Y = MaxPool <kernel_shape = [", max, ", 1], pads = [", max, ", 0, ", max,
                    ", 0]> (X)")},
      {"slice", 13, absl::StrCat("(float[", max, "] X) => (float Y)"),
       absl::StrCat("B = Constant <value = int64[1] {-9223372036854775807}> ()\n E = Constant <value = "
                    "int64[1] {", max, "}> ()\n A = Constant <value = int64[1] {0}> ()\n "
                    "T = Constant <value = int64[1] {-9223372036854775807}> ()\n Y = Slice (X, B, E, A, T)")},
      {"huge_shape", 13, absl::StrCat("(float[", max, ",", max, ",", max, "] X) => (float Y)"),
       "Y = Relu (X)"},
  };
  for (const auto& c : kCases) {
    out.push_back({absl::StrCat("overflow_", c.name), "shape arithmetic past int64",
                   Model(c.opset, c.signature, c.body)});
  }
}

// Tensors and functions onnx.checker refuses.
void AddCheckerParity(std::vector<HostileModel>& out) {
  auto with_tensor = [&](const std::string& name, auto fill) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    onnx::TensorProto* tensor = graph->add_initializer();
    tensor->set_name("T");
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    fill(*tensor);
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Identity");
    node->add_input("T");
    node->add_output("Y");
    graph->add_output()->set_name("Y");
    out.push_back({absl::StrCat("checker_", name), "a tensor onnx.checker refuses",
                   model.SerializeAsString()});
  };
  with_tensor("unknown_data_type", [](onnx::TensorProto& t) {
    t.set_data_type(99);
    t.add_dims(1);
    t.set_raw_data(std::string(4, '\0'));
  });
  with_tensor("negative_dim", [](onnx::TensorProto& t) {
    t.add_dims(-4);
    t.add_float_data(1);
  });
  with_tensor("raw_data_short", [](onnx::TensorProto& t) {
    t.add_dims(1000000);
    t.set_raw_data(std::string(4, '\0'));
  });
  with_tensor("float_data_long", [](onnx::TensorProto& t) {
    t.add_dims(1);
    for (int i = 0; i < 5; ++i) t.add_float_data(i);
  });
  with_tensor("dims_overflow", [](onnx::TensorProto& t) {
    t.add_dims(int64_t{1} << 40);
    t.add_dims(int64_t{1} << 40);
    t.add_float_data(1);
  });
  // Sparse: an initializer of 4 elements whose indices are out of range,
  // negative, unsorted or miscounted.
  const struct {
    const char* name;
    std::vector<int64_t> indices;
    int values;
  } kSparse[] = {{"sparse_out_of_range", {1, 9}, 2},
                 {"sparse_negative", {-1, 2}, 2},
                 {"sparse_unsorted", {3, 1}, 2},
                 {"sparse_miscounted", {0, 1, 2}, 2}};
  for (const auto& s : kSparse) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    onnx::SparseTensorProto* sparse = graph->add_sparse_initializer();
    sparse->add_dims(4);
    onnx::TensorProto* values = sparse->mutable_values();
    values->set_name("T");
    values->set_data_type(onnx::TensorProto::FLOAT);
    values->add_dims(s.values);
    for (int i = 0; i < s.values; ++i) values->add_float_data(1);
    onnx::TensorProto* indices = sparse->mutable_indices();
    indices->set_data_type(onnx::TensorProto::INT64);
    indices->add_dims(static_cast<int64_t>(s.indices.size()));
    for (int64_t i : s.indices) indices->add_int64_data(i);
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Identity");
    node->add_input("T");
    node->add_output("Y");
    graph->add_output()->set_name("Y");
    out.push_back({absl::StrCat("checker_", s.name), "a sparse tensor onnx.checker refuses",
                   model.SerializeAsString()});
  }
  const std::string functions = R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
main (float[2] X) => (float[2] Y) { Y = local.f (X) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
f (x) => (y) { y = local.REPLACE (x) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
g (x) => (y) { y = local.f (x) }
)";
  out.push_back({"checker_function_calls_itself", "a model-local function that calls itself",
                 ModelBytes(absl::StrReplaceAll(functions, {{"REPLACE", "f"}}))});
  out.push_back({"checker_functions_call_each_other",
                 "model-local functions that call each other",
                 ModelBytes(absl::StrReplaceAll(functions, {{"REPLACE", "g"}}))});
}

// Malformed headers and bytes.
void AddMalformed(std::vector<HostileModel>& out) {
  onnx::ModelProto model;
  model.set_ir_version(-5);
  model.add_opset_import()->set_version(13);
  out.push_back({"ir_version_negative", "ir_version = -5", model.SerializeAsString()});
  model.set_ir_version(8);
  model.set_producer_name("\xff\xfe producer");
  model.mutable_graph()->set_name("main");
  out.push_back({"producer_not_utf8", "invalid UTF-8 in producer_name", model.SerializeAsString()});
  std::string valid = Model(13, "(float[2] X) => (float[2] Y)", "Y = Relu (X)");
  out.push_back({"truncated", "a model cut short", valid.substr(0, valid.size() / 2)});
  out.push_back({"length_2_64", "a length prefix of 2^64 - 1",
                 std::string("\x3a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)});
  std::string nested;
  for (int i = 0; i < 50000; ++i) nested += std::string("\x3a\x02", 2);
  out.push_back({"nested_50k", "50,000 messages nested", nested});
  onnx::ModelProto external;
  external.set_ir_version(8);
  external.add_opset_import()->set_version(13);
  onnx::TensorProto* tensor = external.mutable_graph()->add_initializer();
  tensor->set_name("W");
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(1);
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = tensor->add_external_data();
  location->set_key("location");
  location->set_value("linked.bin");
  out.push_back({"external_hard_link",
                 "external data through a hard link to a file outside the model's directory",
                 external.SerializeAsString(), false, "linked.bin"});
  location->set_value("../../../../../../etc/passwd");
  out.push_back({"external_dotdot", "external data outside the model's directory",
                 external.SerializeAsString()});
}

// The classes of models that are invalid, by the start of their names.
constexpr const char* kInvalidClasses[] = {
    "zero_outputs_", "checker_", "seq_model_", "ir_version_", "truncated",
    "length_",       "nested_",  "external_",
};

}  // namespace

std::vector<HostileModel> HostileModels(int strings) {
  std::vector<HostileModel> out;
  AddZeroOutputNodes(out);
  AddLowRankBodies(out);
  out.push_back(StringAmplifier(strings));
  AddDeepTypes(out);
  AddOverflows(out);
  AddCheckerParity(out);
  AddMalformed(out);
  for (HostileModel& model : out) {
    for (const char* prefix : kInvalidClasses) {
      model.invalid |= absl::StartsWith(model.name, prefix);
    }
  }
  return out;
}

}  // namespace onnxconvert::testing
