#include "schema/context_bodies.h"

#include <string>
#include <vector>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "schema/registry.h"
#include "tests/adapter_cases.h"

namespace onnxconvert::converter {
namespace {

using adapters::ConversionCase;
using adapters::ConversionCaseTest;

// The cases of converter/testdata/context_bodies.cases: one call of an op
// whose function body depends on the call, converted below the op's
// introduction (expanded into its body), or refused naming what the body
// needs; each a test named after its case.
std::vector<ConversionCase> FileCases() { return adapters::CasesInFolder("converter/testdata"); }

INSTANTIATE_TEST_SUITE_P(ContextBodies, ConversionCaseTest, ::testing::ValuesIn(FileCases()),
                         adapters::CaseName);

// A one-node graph at opset `from` (at the least IR version it needs) whose
// body is built directly, not through a conversion.
ConversionCase DirectCase(std::string name, int64_t from, std::string graph) {
  ConversionCase c;
  c.name = std::move(name);
  c.from = from;
  c.graph = std::move(graph);
  c.ir_version = MinIrVersionForOpset(from);
  return c;
}

// The body for `c`'s node, built directly for its input types.
absl::StatusOr<std::string> BodyFor(const ConversionCase& c) {
  onnx::ModelProto model = adapters::CaseModel(c);
  const onnx::NodeProto& node = model.graph().node(0);
  const schema::OpSchema* schema = schema::Registry::Get().Lookup("", node.op_type(), c.from);
  if (schema == nullptr) return absl::NotFoundError(node.op_type());
  std::vector<const onnx::TypeProto*> types;
  for (const std::string& input : node.input()) {
    const onnx::TypeProto* type = nullptr;
    for (const onnx::ValueInfoProto& value : model.graph().input()) {
      if (value.name() == input) type = &value.type();
    }
    types.push_back(type);
  }
  return schema::ContextDependentBody(*schema, node, types);
}

// Bodies the converter reaches only through an adapter to an older version
// (or not at all): built directly, each must parse and import its op's
// opset; so must the body of every case the case file expands.
TEST(ContextBodiesTest, EveryVersionHasABodyThatParses) {
  std::vector<ConversionCase> cases = {
      DirectCase("attention_24_nonpad_short_mask", 24,
                 "g (float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,10] V, float[2,3,4,4] M, "
                 "int64[2] N) => (float[2,3,4,10] Y) {\n"
                 "  Y = Attention(Q, K, V, M, \"\", \"\", N)\n}"),
      DirectCase("group_normalization_21", 21,
                 "g (float[3,4,2,2] X, float[4] S, float[4] B) => (float[3,4,2,2] Y) {\n"
                 "  Y = GroupNormalization <num_groups = 2> (X, S, B)\n}"),
  };
  int expanded = 0;
  for (const ConversionCase& c : FileCases()) {
    ASSERT_EQ(c.file_error, "") << c.name;
    if (c.expanded_op.empty()) continue;
    cases.push_back(c);
    ++expanded;
  }
  EXPECT_GT(expanded, 0);
  for (const ConversionCase& c : cases) {
    absl::StatusOr<std::string> text = BodyFor(c);
    ASSERT_TRUE(text.ok()) << c.name << ": " << text.status();
    absl::StatusOr<onnx::FunctionProto> function = ParseFunctionText(*text);
    ASSERT_TRUE(function.ok()) << c.name << ": " << function.status() << "\n" << *text;
    EXPECT_EQ(function->name(), adapters::CaseModel(c).graph().node(0).op_type()) << c.name;
    if (!c.expanded_op.empty()) {
      EXPECT_EQ(function->name(), c.expanded_op) << c.name;
    }
    ASSERT_EQ(function->opset_import_size(), 1) << c.name;
    EXPECT_EQ(function->opset_import(0).version(), c.from) << c.name;
    EXPECT_GT(function->node_size(), 0) << c.name;
  }
}

TEST(ContextBodiesTest, OpsWithoutABodyAreUnimplemented) {
  const schema::OpSchema* bernoulli = schema::Registry::Get().Exact("", "Bernoulli", 22);
  ASSERT_NE(bernoulli, nullptr);
  onnx::NodeProto node;
  node.set_op_type("Bernoulli");
  absl::StatusOr<std::string> body = schema::ContextDependentBody(*bernoulli, node, {});
  EXPECT_EQ(body.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace onnxconvert::converter
