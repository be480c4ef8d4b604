// NodeFieldWriter: node fields written in order, runs as read with one copy.

#include "converter/node_writer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "converter/wire_scan.h"
#include "ir/wire.h"

namespace onnxconvert::converter {
namespace {

// Records each piece appended: where it lies, and its bytes.
class RecordingSink : public ModelSink {
 public:
  absl::Status AppendNodes(absl::string_view bytes) override {
    pieces.push_back({bytes.data(), std::string(bytes)});
    return absl::OkStatus();
  }
  absl::Status Finish(absl::string_view, absl::Span<const absl::string_view>,
                      absl::string_view) override {
    return absl::OkStatus();
  }
  absl::Status WriteWhole(const onnx::ModelProto&) override { return absl::OkStatus(); }

  // All the bytes appended, in order.
  std::string Bytes() const {
    std::string all;
    for (const Piece& piece : pieces) all += piece.bytes;
    return all;
  }

  struct Piece {
    const char* data;
    std::string bytes;
  };
  std::vector<Piece> pieces;
};

// A node of op type `op` whose field takes `size` bytes or a little more.
onnx::NodeProto Node(const std::string& op, size_t size) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_doc_string(std::string(size, 'd'));
  return node;
}

struct WriteCase {
  std::string name;
  // Per node: its payload size, and whether it is added as read (else
  // encoded anew).
  std::vector<std::pair<size_t, bool>> nodes;
  // The pieces the sink gets: "run" for one handed over as it lies in the
  // model, "block" for one gathered.
  std::vector<std::string> pieces;
};

class NodeFieldWriterTest : public ::testing::TestWithParam<WriteCase> {};

// Whatever the mix, the sink gets every field in order; a long run of
// fields as read, lying in a row in the model, goes to it as it lies.
TEST_P(NodeFieldWriterTest, WritesEveryFieldInOrder) {
  const WriteCase& c = GetParam();
  std::string model;  // the fields as read, in a row
  std::vector<onnx::NodeProto> nodes;
  std::vector<std::string> encoded;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    nodes.push_back(Node(absl::StrCat("Op", i), c.nodes[i].first));
    std::string& field = encoded.emplace_back();
    wire::AppendMessageField(kGraphNode, nodes.back(), field);
    if (c.nodes[i].second) model += field;
  }
  RecordingSink sink;
  NodeFieldWriter writer(sink);
  std::string expected;
  size_t at = 0;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    expected += encoded[i];
    if (c.nodes[i].second) {
      ASSERT_TRUE(writer.AddAsRead(absl::string_view(model).substr(at, encoded[i].size())).ok());
      at += encoded[i].size();
    } else {
      ASSERT_TRUE(writer.AddEncoded(nodes[i]).ok());
    }
  }
  ASSERT_TRUE(writer.Flush().ok());
  EXPECT_EQ(sink.Bytes(), expected);
  std::vector<std::string> pieces;
  for (const RecordingSink::Piece& piece : sink.pieces) {
    bool lies_in_model = piece.data >= model.data() && piece.data < model.data() + model.size();
    pieces.push_back(lies_in_model ? "run" : "block");
  }
  EXPECT_EQ(pieces, c.pieces);
}

constexpr size_t kLong = NodeFieldWriter::kDirectRunBytes;

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeFieldWriterTest,
    ::testing::Values(
        WriteCase{"ShortFieldsGathered", {{10, true}, {20, false}, {30, true}}, {"block"}},
        WriteCase{"ALongRunAsItLies", {{kLong / 2, true}, {kLong / 2, true}}, {"run"}},
        WriteCase{"ARunAfterAGatheredBlock",
                  {{10, false}, {kLong / 2, true}, {kLong / 2, true}, {10, false}},
                  {"block", "run", "block"}},
        WriteCase{"ABlockFullIsWritten",
                  {{NodeFieldWriter::kBlockBytes / 2, false},
                   {NodeFieldWriter::kBlockBytes / 2, false},
                   {10, true}},
                  {"block", "block"}},
        WriteCase{"NothingAdded", {}, {}}),
    [](const ::testing::TestParamInfo<WriteCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::converter
