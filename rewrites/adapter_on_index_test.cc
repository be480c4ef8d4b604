// One graph-editing API: a version adapter run through ir::GraphIndexRewriter
// (the rewriter's backend) changes the graph as it does inside a conversion
// (ir::NodeRewriter over the converter's step batch). One case per kind of
// edit: attributes from constant inputs, nodes inserted before and after
// with an output detached, a composition of several nodes.

#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "adapters/rewrites.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/graph_index.h"
#include "ir/graph_index_rewriter.h"
#include "ir/text_printer.h"
#include "schema/inference.h"
#include "schema/registry.h"
#include "tests/model_text.h"

namespace onnxconvert::rewrites {
namespace {

struct Case {
  const char* name;
  const char* model;
  const char* op;  // the node converted
  int64_t to_opset;
};

const Case kCases[] = {
    {"clip_bounds_to_attributes", R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[2,3] X) => (float[2,3] Y) <float lo = {-0.5}, float hi = {0.5}> {
  [clip] Y = Clip(X, lo, hi)
})",
     "Clip", 10},
    {"split_sizes_to_attribute", R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2,4] X) => (float[2,1] A, float[2,3] B) <int64[2] parts = {1, 3}> {
  [split] A, B = Split<axis: int = 1>(X, parts)
})",
     "Split", 12},
    {"softmax_axis_by_reshapes", R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2,3,4] X) => (float[2,3,4] Y) {
  [sm] Y = Softmax<axis: int = 1>(X)
})",
     "Softmax", 12},
    {"unsqueeze_axes_to_attribute", R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2,3] X) => (float[1,2,3] Y) <int64[1] axes = {0}> {
  [unsq] Y = Unsqueeze(X, axes)
})",
     "Unsqueeze", 12},
};

// The nodes of `graph` in ONNX text, a line each.
std::string NodesText(const onnx::GraphProto& graph) {
  std::string text;
  for (const onnx::NodeProto& node : graph.node()) text += PrintNodeText(node) + "\n";
  return text;
}

class AdapterOnIndexTest : public ::testing::TestWithParam<Case> {};

TEST_P(AdapterOnIndexTest, EditsAsTheConverterDoes) {
  const Case& c = GetParam();
  onnx::ModelProto model = testing::ModelFromText(c.model);

  converter::ConvertOptions options;
  options.target_opset = c.to_opset;
  absl::StatusOr<converter::ConversionResult> converted = converter::ConvertModel(model, options);
  ASSERT_TRUE(converted.ok()) << converted.status();

  const schema::Registry& registry = schema::Registry::Get();
  const int64_t from_opset = model.opset_import(0).version();
  const schema::OpSchema* from = registry.Lookup("", c.op, from_opset);
  const schema::OpSchema* to = registry.Lookup("", c.op, c.to_opset);
  ASSERT_NE(from, nullptr);
  ASSERT_NE(to, nullptr);
  const adapters::AdapterEntry* adapter =
      adapters::Rewrites().Find("", c.op, from->since_version, to->since_version);
  ASSERT_NE(adapter, nullptr) << c.op << " " << from->since_version << "->" << to->since_version;

  absl::StatusOr<schema::InferenceResult> types = schema::InferModel(model);
  ASSERT_TRUE(types.ok()) << types.status();
  absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(model.mutable_graph());
  ASSERT_TRUE(index.ok()) << index.status();
  std::vector<NodeId> nodes = (*index)->NodesOf("", c.op);
  ASSERT_EQ(nodes.size(), 1u);
  ir::GraphIndexRewriter rewrite(
      **index, nodes[0], [&](const GraphIndex& graph, absl::string_view value) {
        const schema::GraphTypes& graph_types = types->graphs.at(graph.graph());
        auto type = graph_types.types.find(value);
        return type == graph_types.types.end() ? nullptr : type->second;
      });
  std::vector<adapters::Change> changes;
  ir::Rewriter& rewriter = rewrite.rewriter();
  adapters::AdapterContext ctx{rewriter.anchor(), *from, *to, changes, c.to_opset, rewriter};
  ctx.row = adapter->row;
  ASSERT_TRUE(adapter->fn(ctx).ok());
  ASSERT_TRUE(rewrite.Finish().ok());
  ASSERT_TRUE((*index)->Commit().ok());

  EXPECT_EQ(NodesText(model.graph()), NodesText(converted->model.graph()));
  EXPECT_FALSE(changes.empty());
}

INSTANTIATE_TEST_SUITE_P(Cases, AdapterOnIndexTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace onnxconvert::rewrites
