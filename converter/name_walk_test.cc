// WalkNames: the names a graph's serialized nodes define and use, walked
// before its windows.

#include "converter/name_walk.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "base/op_key.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "ir/wire.h"

namespace onnxconvert::converter {
namespace {

// A graph in ONNX text, walked as the windows walk it.
struct Walk {
  onnx::ModelProto model;
  std::string payload;
  std::vector<uint32_t> checkpoints;
  absl::flat_hash_set<std::string> graph_level;
  absl::flat_hash_set<std::string> functions;
  WalkedGraph graph;

  explicit Walk(absl::string_view text) {
    absl::StatusOr<onnx::ModelProto> parsed = ParseModelText(text);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (parsed.ok()) model = *std::move(parsed);
    payload = model.graph().SerializeAsString();
    wire::FieldReader reader(payload);
    wire::Field field;
    bool found;
    while (reader.Next(field, found).ok() && found) {
      if (field.number != 1) continue;  // GraphProto.node
      if (graph.node_count++ % kCheckpointNodes == 0) {
        checkpoints.push_back(static_cast<uint32_t>(field.whole.data() - payload.data()));
      }
    }
    for (const auto& input : model.graph().input()) graph_level.insert(input.name());
    for (const auto& tensor : model.graph().initializer()) graph_level.insert(tensor.name());
    for (const auto& function : model.functions()) {
      functions.insert(OpKey(function.domain(), function.name()));
    }
    graph.payload = payload;
    graph.checkpoints = checkpoints;
    graph.graph_level = &graph_level;
    graph.functions = &functions;
    for (const auto& output : model.graph().output()) graph.outputs.push_back(output.name());
  }
};

// The bits as the windows read them, from the back: "1" for a last use or
// an unused output, a space between nodes' inputs and outputs, "|" between
// nodes.
std::string Bits(std::vector<bool> uses, const onnx::GraphProto& graph) {
  std::string out;
  for (const onnx::NodeProto& node : graph.node()) {
    if (!out.empty()) out += "|";
    for (int i = 0; i < node.input_size(); ++i, uses.pop_back()) out += uses.back() ? "1" : "0";
    out += " ";
    for (int i = 0; i < node.output_size(); ++i, uses.pop_back()) out += uses.back() ? "1" : "0";
  }
  return uses.empty() ? out : out + " (bits left over)";
}

struct WalkCase {
  std::string name;
  std::string model;
  std::string bits;   // when it walks
  std::string error;  // a part of the Unimplemented message, when it does not
};

class WalkNamesTest : public ::testing::TestWithParam<WalkCase> {};

TEST_P(WalkNamesTest, Walks) {
  const WalkCase& c = GetParam();
  Walk walk(c.model);
  NameGenerator names(walk.model);
  absl::StatusOr<std::vector<bool>> uses = WalkNames(walk.graph, names);
  if (!c.error.empty()) {
    ASSERT_EQ(uses.status().code(), absl::StatusCode::kUnimplemented) << uses.status();
    EXPECT_TRUE(absl::StrContains(uses.status().message(), c.error)) << uses.status();
    return;
  }
  ASSERT_TRUE(uses.ok()) << uses.status();
  EXPECT_EQ(Bits(*std::move(uses), walk.model.graph()), c.bits);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WalkNamesTest,
    ::testing::Values(
        // Per node: its inputs' last uses, then its outputs never used (the
        // second output of Split, say).
        WalkCase{"LastUsesAndUnusedOutputs",
                 R"(<ir_version: 7, opset_import: ["" : 13]>
                    g (float[4] X) => (float[2] Y) {
                      A = Relu(X)
                      B = Neg(A)
                      C, D = Split(B)
                      Y = Add(A, C) })",
                 "1 0|0 0|1 10|11 0"},
        WalkCase{"AbsentInputsAndUnnamedOutputs",
                 R"(<ir_version: 7, opset_import: ["" : 13]>
                    g (float[4] X) => (float[4] Y) {
                      Y, "" = Dropout(X, "", "") })",
                 "100 10"},
        WalkCase{"CallsOfTheModelsFunctions",
                 R"(<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
                    g (float[4] X) => (float[4] Y) { A = local.F(X) Y = Relu(A) }
                    <domain: "local", opset_import: ["" : 13]>
                    F (I) => (O) { O = Neg(I) })",
                 "1 0|1 0"},
        WalkCase{"DefinedTwice",
                 R"(<ir_version: 7, opset_import: ["" : 13]>
                    g (float[4] X) => (float[4] Y) { Y = Relu(X) Y = Neg(X) })",
                 "", "two values have one name"},
        WalkCase{"AnOutputIsAGraphInput",
                 R"(<ir_version: 7, opset_import: ["" : 13]>
                    g (float[4] X) => (float[4] Y) { X = Relu(X) Y = Neg(X) })",
                 "", "a value is defined twice"},
        WalkCase{"OtherDomains",
                 R"(<ir_version: 8, opset_import: ["" : 13, "com.vendor" : 1]>
                    g (float[4] X) => (float[4] Y) { A = com.vendor.F(X) Y = Relu(A) })",
                 "", "a node of domain 'com.vendor'"},
        // A call of the model's functions within a subgraph is taken; a
        // node of another domain there is refused.
        WalkCase{"CallsWithinSubgraphs",
                 R"(<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
                    g (bool C) => (float[4] Y) {
                      Y = If(C) <then_branch = t () => (float[4] A) {
                                   K = Constant <value = float[4] {1, 2, 3, 4}> ()
                                   A = local.F(K) },
                                 else_branch = e () => (float[4] B) {
                                   B = Constant <value = float[4] {4, 3, 2, 1}> () }> }
                    <domain: "local", opset_import: ["" : 13]>
                    F (I) => (O) { O = Neg(I) })",
                 "1 0"},
        WalkCase{"OtherDomainsWithinSubgraphs",
                 R"(<ir_version: 8, opset_import: ["" : 13, "local" : 1, "com.vendor" : 1]>
                    g (bool C, float[4] X) => (float[4] Y) {
                      Y = If(C) <then_branch = t () => (float[4] A) { A = local.F(X) },
                                 else_branch = e () => (float[4] B) { B = com.vendor.F(X) }> }
                    <domain: "local", opset_import: ["" : 13]>
                    F (I) => (O) { O = Neg(I) })",
                 "", "a node of domain 'com.vendor' in a subgraph"}),
    [](const ::testing::TestParamInfo<WalkCase>& info) { return info.param.name; });

// Every name the nodes hold, subgraphs' too, is reserved: no fresh name
// takes one.
TEST(WalkNamesTest, ReservesEveryName) {
  Walk walk(R"(<ir_version: 7, opset_import: ["" : 13]>
      g (bool C, float[4] X) => (float[4] Y) {
        T__0 = Relu(X)
        Y = If(C) <then_branch = t () => (float[4] A) { A = Neg(T__0) },
                   else_branch = e () => (float[4] B) { U__0 = Abs(T__0) B = Neg(U__0) }> })");
  NameGenerator names(onnx::ModelProto{});  // knowing none of them
  ASSERT_TRUE(WalkNames(walk.graph, names).ok());
  EXPECT_EQ(names.FreshName("T"), "T__1");
  EXPECT_EQ(names.FreshName("U"), "U__1");
}

}  // namespace
}  // namespace onnxconvert::converter
