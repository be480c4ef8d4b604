// ScanPlainNode and AttributesHoldGraphs on nodes written in text syntax,
// as protobuf encodes them, and on encodings protobuf would not write.

#include "converter/wire_scan.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "ir/wire.h"

namespace onnxconvert::converter {
namespace {

// `text`, a node, encoded.
std::string Encoded(absl::string_view text) {
  absl::StatusOr<onnx::NodeProto> node = ParseNodeText(text);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? node->SerializeAsString() : std::string();
}

// `bytes` with length-delimited field `number` holding `payload` appended.
std::string WithField(std::string bytes, uint32_t number, absl::string_view payload) {
  wire::AppendLengthDelimitedHeader(number, payload.size(), bytes);
  bytes.append(payload.data(), payload.size());
  return bytes;
}

struct PlainCase {
  std::string name;
  std::string bytes;
  bool plain;
  // When plain: the names read, "op domain | inputs | outputs".
  std::string read;
};

std::vector<PlainCase> PlainCases() {
  std::string relu = Encoded("Y = Relu(X)");
  return {
      {"Unattributed", relu, true, "Relu  | X | Y"},
      {"AbsentInputAndDomain", Encoded("Y, Z = ai.onnx.Dropout(X, , T)"), true,
       "Dropout ai.onnx | X,,T | Y,Z"},
      {"Attributed", Encoded("Y = Transpose <perm = [1, 0]> (X)"), true, "Transpose  | X | Y"},
      {"NamedWithDocString", WithField(relu, kNodeDocString, "doc"), true, "Relu  | X | Y"},
      // Fields ONNX added after 1.0 (overload, metadata) or unknown.
      {"Overload", WithField(relu, 8, "o"), false, ""},
      {"MetadataProps", WithField(relu, 9, ""), false, ""},
      // Protobuf keeps the last op type of two: left to protobuf.
      {"TwoOpTypes", WithField(relu, kNodeOpType, "Neg"), false, ""},
      // An attribute after a field that is not one.
      {"AttributesApart",
       WithField(WithField(Encoded("Y = LeakyRelu <alpha = 0.5> (X)"), kNodeDocString, "d"),
                 kNodeAttribute, ""),
       false, ""},
      {"LongAttributes",
       Encoded("Y = Transpose <perm = [" + absl::StrJoin(std::vector<int>(200, 100000), ", ") +
               "]> (X)"),
       false, ""},
      {"Truncated", relu.substr(0, relu.size() - 1), false, ""},
  };
}

class ScanPlainNodeTest : public ::testing::TestWithParam<PlainCase> {};

TEST_P(ScanPlainNodeTest, ReadsPlainNodesOnly) {
  const PlainCase& c = GetParam();
  PlainNode plain;
  ASSERT_EQ(ScanPlainNode(c.bytes, plain), c.plain);
  if (!c.plain) return;
  EXPECT_EQ(absl::StrCat(plain.op_type, " ", plain.domain, " | ", absl::StrJoin(plain.inputs, ","),
                         " | ", absl::StrJoin(plain.outputs, ",")),
            c.read);
}

INSTANTIATE_TEST_SUITE_P(Cases, ScanPlainNodeTest, ::testing::ValuesIn(PlainCases()),
                         [](const ::testing::TestParamInfo<PlainCase>& info) {
                           return info.param.name;
                         });

// The attribute fields read are the node's attributes, encoded as they came.
TEST(ScanPlainNodeTest, AttributesAreTheNodesAttributeFields) {
  absl::StatusOr<onnx::NodeProto> node =
      ParseNodeText("Y = Gemm <alpha = 0.5, transA = 1> (A, B)");
  ASSERT_TRUE(node.ok()) << node.status();
  std::string bytes = node->SerializeAsString();
  PlainNode plain;
  ASSERT_TRUE(ScanPlainNode(bytes, plain));
  onnx::NodeProto attributes;
  ASSERT_TRUE(attributes.ParseFromString(std::string(plain.attributes)));
  ASSERT_EQ(attributes.attribute_size(), 2);
  EXPECT_EQ(attributes.attribute(0).SerializeAsString(), node->attribute(0).SerializeAsString());
  EXPECT_EQ(attributes.attribute(1).SerializeAsString(), node->attribute(1).SerializeAsString());
  EXPECT_FALSE(AttributesHoldGraphs(plain.attributes));
}

struct GraphsCase {
  std::string name;
  std::string node;
  bool holds;
};

class AttributesHoldGraphsTest : public ::testing::TestWithParam<GraphsCase> {};

TEST_P(AttributesHoldGraphsTest, FindsGraphs) {
  const GraphsCase& c = GetParam();
  PlainNode plain;
  const std::string bytes = Encoded(c.node);  // what `plain` views
  ASSERT_TRUE(ScanPlainNode(bytes, plain)) << "the case's node is not plain";
  EXPECT_EQ(AttributesHoldGraphs(plain.attributes), c.holds);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttributesHoldGraphsTest,
    ::testing::Values(
        GraphsCase{"None", "Y = Relu(X)", false},
        GraphsCase{"Ints", "Y = Transpose <perm = [1, 0]> (X)", false},
        GraphsCase{"NegativeInts", "Y = Unsqueeze <axes = [-1, -300]> (X)", false},
        GraphsCase{"Float", "Y = LeakyRelu <alpha = 0.5> (X)", false},
        GraphsCase{"String", "Y = Pad <mode = \"edge\"> (X, P)", false},
        GraphsCase{"Tensor", "Y = Constant <value = float[2] {1.0, 2.0}> ()", false},
        GraphsCase{"Graph", "Y = If(C) <then_branch = g1 () => (float Z) { Z = Relu(X) }, "
                            "else_branch = g2 () => (float Z) { Z = Neg(X) }>",
                   true}),
    [](const ::testing::TestParamInfo<GraphsCase>& info) { return info.param.name; });

// Bytes that are not attribute fields, or not well formed, count as
// holding graphs: such a node is parsed.
TEST(AttributesHoldGraphsTest, MalformedAttributesCountAsGraphs) {
  std::string attribute;
  wire::AppendLengthDelimitedHeader(kNodeAttribute, 10, attribute);
  attribute.append("abc");  // shorter than said
  EXPECT_TRUE(AttributesHoldGraphs(attribute));
  EXPECT_TRUE(AttributesHoldGraphs(WithField("", kNodeInput, "X")));
  // An attribute cut inside a varint, a fixed32 and a length.
  for (absl::string_view inner : {absl::string_view("\x18\x80", 2), absl::string_view("\x15\x00\x00", 3),
                                  absl::string_view("\x22\x05" "ab", 4)}) {
    EXPECT_TRUE(AttributesHoldGraphs(WithField("", kNodeAttribute, inner)));
  }
}

}  // namespace
}  // namespace onnxconvert::converter

namespace onnxconvert::converter {
namespace {

struct ScanCase {
  std::string name;
  std::string bytes;
  // "name domain | inputs | outputs | subgraphs", or the error.
  std::string read;
};

std::vector<ScanCase> ScanCases() {
  std::string relu = Encoded("[n1] Y = Relu(X)");
  std::string unknown_varint = relu;
  wire::AppendVarint((30 << 3) | wire::kVarint, unknown_varint);  // a two-byte tag
  wire::AppendVarint(5, unknown_varint);
  return {
      {"Flat", Encoded("[n1] Y, Z = ai.onnx.Split <axis = -1> (X, \"\", S)"), "n1 ai.onnx | X,,S | Y,Z | 0"},
      {"UnknownFields", WithField(WithField(relu, 9, "meta"), 40, "far"), "n1  | X | Y | 0"},
      {"TwoByteTag", unknown_varint, "n1  | X | Y | 0"},
      // The outer values a subgraph reads are inputs after the node's own.
      {"Subgraph",
       Encoded("[i] Y = If(C) <then_branch = g1 () => (float Z) { Z = Relu(X) }, "
               "else_branch = g2 () => (float Z) { Z = Neg(W) }>"),
       "i  | C,X,W | Y | 1"},
      {"Truncated", relu.substr(0, relu.size() - 1), "error"},
  };
}

class ScanNodeTest : public ::testing::TestWithParam<ScanCase> {};

TEST_P(ScanNodeTest, ReadsNamesAndSubgraphs) {
  const ScanCase& c = GetParam();
  NodeNames names;
  absl::Status status = ScanNode(c.bytes, names);
  if (!status.ok()) {
    EXPECT_EQ("error", c.read) << status;
    return;
  }
  EXPECT_EQ(absl::StrCat(names.name, " ", names.domain, " | ", absl::StrJoin(names.inputs, ","),
                         " | ", absl::StrJoin(names.outputs, ","), " | ", names.subgraphs),
            c.read);
}

INSTANTIATE_TEST_SUITE_P(Cases, ScanNodeTest, ::testing::ValuesIn(ScanCases()),
                         [](const ::testing::TestParamInfo<ScanCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace onnxconvert::converter
