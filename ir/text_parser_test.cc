#include "ir/text_parser.h"

#include <string>

#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "ir/text_printer.h"
#include "absl/strings/str_cat.h"
#include <tuple>

namespace onnxconvert {
namespace {

// A node in ONNX text and the proto it stands for (protobuf text format).
struct NodeCase {
  std::string text;
  std::string proto;
};

class NodeSyntaxTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(NodeSyntaxTest, ParsesToProtoAndPrintsBack) {
  const NodeCase& c = GetParam();
  absl::StatusOr<onnx::NodeProto> node = ParseNodeText(c.text);
  ASSERT_TRUE(node.ok()) << node.status();
  onnx::NodeProto expected;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(c.proto, &expected));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*node, expected))
      << node->DebugString();
  EXPECT_EQ(PrintNodeText(*node), c.text);
}

INSTANTIATE_TEST_SUITE_P(
    Nodes, NodeSyntaxTest,
    ::testing::Values(
        NodeCase{"Y = Relu(X)", R"(input: "X" output: "Y" op_type: "Relu")"},
        NodeCase{"Y, Z = com.ms.Op(A, \"\", C)",
                 R"(input: "A" input: "" input: "C" output: "Y" output: "Z"
                    op_type: "Op" domain: "com.ms")"},
        NodeCase{"Y = \"\".Relu(X)",
                 R"(input: "X" output: "Y" op_type: "Relu" domain: "")"},
        NodeCase{"[n1] Y = Relu(\"input.1\")",
                 R"(name: "n1" input: "input.1" output: "Y" op_type: "Relu")"},
        NodeCase{"Y = local.F:v2(X)",
                 R"(input: "X" output: "Y" op_type: "F" domain: "local" overload: "v2")"},
        NodeCase{"Y = LeakyRelu <alpha = 0.1> (X)",
                 R"(input: "X" output: "Y" op_type: "LeakyRelu"
                    attribute { name: "alpha" f: 0.1 type: FLOAT })"},
        NodeCase{"Y = Op <i = -3, s = \"a\\\"b\", is = [1, 2], fs = [1.5, -inf], ss = [\"x\"]> (X)",
                 R"(input: "X" output: "Y" op_type: "Op"
                    attribute { name: "i" i: -3 type: INT }
                    attribute { name: "s" s: "a\"b" type: STRING }
                    attribute { name: "is" ints: 1 ints: 2 type: INTS }
                    attribute { name: "fs" floats: 1.5 floats: -inf type: FLOATS }
                    attribute { name: "ss" strings: "x" type: STRINGS })"},
        NodeCase{"Y = Transpose <perm: ints = []> (X)",
                 R"(input: "X" output: "Y" op_type: "Transpose"
                    attribute { name: "perm" type: INTS })"},
        NodeCase{"Y = Constant <value = int64[2] {1, -1}> ()",
                 R"(output: "Y" op_type: "Constant"
                    attribute { name: "value" type: TENSOR
                      t { dims: 2 data_type: 7 int64_data: 1 int64_data: -1 } })"},
        NodeCase{"Y = Constant <value = float[2] raw {1.0, 0.5}> ()",
                 R"(output: "Y" op_type: "Constant"
                    attribute { name: "value" type: TENSOR
                      t { dims: 2 data_type: 1 raw_data: "\000\000\200?\000\000\000?" } })"},
        NodeCase{"Y = Constant <value = float16[1] raw \"003c\"> ()",
                 R"(output: "Y" op_type: "Constant"
                    attribute { name: "value" type: TENSOR
                      t { dims: 1 data_type: 10 raw_data: "\000<" } })"},
        NodeCase{"Y = Elu <alpha: float = @a> (X)",
                 R"(input: "X" output: "Y" op_type: "Elu"
                    attribute { name: "alpha" ref_attr_name: "a" type: FLOAT })"},
        NodeCase{"Y = CastLike <t: type_proto = seq(float[N,?])> (X)",
                 R"(input: "X" output: "Y" op_type: "CastLike"
                    attribute { name: "t" type: TYPE_PROTO tp { sequence_type { elem_type {
                      tensor_type { elem_type: 1 shape { dim { dim_param: "N" } dim {} } } } } } })"},
        NodeCase{"@doc \"why\" Y = Relu(X)",
                 R"(input: "X" output: "Y" op_type: "Relu" doc_string: "why")"},
        NodeCase{"= Print(X)", R"(input: "X" op_type: "Print")"}));

TEST(TextParserTest, GraphWithInitializersValueInfoAndSubgraph) {
  constexpr absl::string_view kText =
      "<\n  ir_version: 8,\n  opset_import: [\"\" : 13, \"ai.onnx.ml\" : 2],\n"
      "  producer_name: \"t\",\n  metadata_props: [\"k\" : \"v\"]\n>\n"
      "g (bool C, float[N,4] X) => (float[N,4] Y)\n"
      "  <float[1] W = {2.0},\n   float[N,4] T>"
      " {\n  T = Mul(X, W)\n"
      "  Y = If <then_branch = then () => (float[N,4] A) {\n"
      "      A = Identity(T)\n    }, else_branch = else () => (float[N,4] B) {\n"
      "      B = Neg(T)\n    }> (C)\n}\n";
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kText);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->opset_import(1).domain(), "ai.onnx.ml");
  EXPECT_EQ(model->metadata_props(0).value(), "v");
  EXPECT_EQ(model->graph().initializer(0).float_data(0), 2.0f);
  EXPECT_EQ(model->graph().value_info(0).name(), "T");
  EXPECT_EQ(model->graph().node(1).attribute(0).g().node(0).op_type(), "Identity");
  EXPECT_EQ(PrintModelText(*model), kText);
}

TEST(TextParserTest, FunctionsWithAttributesAndDefaults) {
  constexpr absl::string_view kText =
      "<\n  domain: \"local\",\n  opset_import: [\"\" : 18]\n>\n"
      "Scale <factor, bias = 0.5> (X) => (Y) {\n"
      "  F = Constant <value_float: float = @factor> ()\n  Y = Mul(X, F)\n}\n";
  absl::StatusOr<onnx::FunctionProto> function = ParseFunctionText(kText);
  ASSERT_TRUE(function.ok()) << function.status();
  EXPECT_EQ(function->attribute(0), "factor");
  EXPECT_EQ(function->attribute_proto(0).name(), "bias");
  EXPECT_EQ(function->node(0).attribute(0).ref_attr_name(), "factor");
  EXPECT_EQ(PrintFunctionText(*function), kText);
}

TEST(TextParserTest, FieldsWithoutSyntaxSurviveAsRaw) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_training_info()->mutable_algorithm()->set_name("train");
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type("Relu");
  node->add_input("X");
  node->add_output("Y");
  auto* meta = node->add_metadata_props();
  meta->set_key("origin");
  meta->set_value("conv1");
  node->mutable_unknown_fields()->AddVarint(99, 7);
  std::string text = PrintModelText(model);
  EXPECT_TRUE(absl::StrContains(text, "@raw")) << text;
  absl::StatusOr<onnx::ModelProto> parsed = ParseModelText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->SerializeAsString(), model.SerializeAsString());
}

struct ErrorCase {
  std::string text;
  std::string message;
};

TEST(TextParserTest, ErrorsGiveLineAndColumn) {
  const ErrorCase cases[] = {
      {"Y = Relu(X", "line 1, column 11: expected ')', found the end of the text"},
      {"Y = Relu(X)\nZ", "line 2, column 1: expected the end of the text, found 'Z'"},
      {"Y = Op <a = > (X)", "line 1, column 13: expected an attribute value, found '>'"},
      {"Y = Op <a = []> (X)", "an empty list needs its type"},
      {"Y = Op <a = \"abc> (X)", "line 1, column 13: unterminated string"},
      {"Y = Op <a = \"\\q\"> (X)", "line 1, column 14: unknown escape"},
      {"Y = Op(X) $", "line 1, column 11: unexpected character"},
      {"Y = Constant <value = float[2] raw \"abc\"> ()", "even number of hex digits"},
      {"Y = Op <a = 99999999999999999999> (X)", "integer out of range"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<onnx::NodeProto> node = ParseNodeText(c.text);
    ASSERT_FALSE(node.ok()) << c.text;
    EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(node.status().message(), c.message))
        << c.text << " -> " << node.status().message();
  }
}

TEST(TextParserTest, DeepNestingIsRefusedNotOverflowed) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "Y = If <then_branch = g () => (Y) {";
  absl::StatusOr<onnx::NodeProto> node = ParseNodeText(text);
  ASSERT_FALSE(node.ok());
  EXPECT_TRUE(absl::StrContains(node.status().message(), "nested too deeply"));
}

// A model of graphs and types nested as deep as the parser takes them
// loads back from its bytes; one level more of either is refused, neither
// a stack overflow (which unbounded recursion hits at some 30,000 levels)
// nor a file the loader refuses.
TEST(TextParserTest, NestingTheParserTakesIsNestingTheLoaderTakes) {
  auto model_text = [](int graphs, int types) {
    std::string type = "float[N]";
    for (int i = 1; i < types; ++i) type = absl::StrCat("seq(", type, ")");
    std::string text = absl::StrCat("<ir_version: 10, opset_import: [\"\" : 18]>\nmain (bool c, ",
                                    type, " s) => (", type, " y) {\n");
    for (int i = 1; i < graphs; ++i) {
      absl::StrAppend(&text, "y = If (c) <then_branch = g", i, " () => (", type, " y) {\n");
    }
    absl::StrAppend(&text, "y = Identity (s)\n");
    for (int i = 1; i < graphs; ++i) {
      absl::StrAppend(&text, "}, else_branch = e", i, " () => (", type,
                      " y) { y = Identity (s) }>\n");
    }
    return absl::StrCat(text, "}\n");
  };
  absl::StatusOr<onnx::ModelProto> deepest = ParseModelText(model_text(16, 16));
  ASSERT_TRUE(deepest.ok()) << deepest.status();
  absl::StatusOr<onnx::ModelProto> loaded = ParseModel(deepest->SerializeAsString(), "deepest");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  for (auto [graphs, types, message] :
       {std::tuple{17, 1, "graphs nested too deeply"}, std::tuple{1, 17, "types nested too deeply"},
        std::tuple{1, 30000, "types nested too deeply"}}) {
    absl::StatusOr<onnx::ModelProto> model = ParseModelText(model_text(graphs, types));
    ASSERT_FALSE(model.ok()) << graphs << " graphs, " << types << " types";
    EXPECT_TRUE(absl::StrContains(model.status().message(), message)) << model.status();
  }
}

TEST(TextParserTest, TypesRoundTrip) {
  for (const char* text : {"float", "float[]", "int64[N,3,?]", "seq(string[1])",
                           "optional(seq(bool[\"batch size\"]))", "map(int64, float[2])",
                           "sparse_tensor(double[10,10])", "float8e8m0[1]", "int2[4]"}) {
    absl::StatusOr<onnx::TypeProto> type = ParseTypeText(text);
    ASSERT_TRUE(type.ok()) << text << ": " << type.status();
    EXPECT_EQ(PrintTypeText(*type), text);
  }
}

}  // namespace
}  // namespace onnxconvert
