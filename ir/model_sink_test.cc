#include "ir/model_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "proto/onnx.pb.h"
#include "tests/test_files.h"

namespace onnxconvert {
namespace {

// A model whose fields fall before its graph (ir_version), inside it (two
// nodes, then the graph's name) and after it (opset_import).
onnx::ModelProto SmallModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::GraphProto* graph = model.mutable_graph();
  for (const char* name : {"first", "second"}) {
    onnx::NodeProto* node = graph->add_node();
    node->set_name(name);
    node->set_op_type("Relu");
    node->add_input(std::string(name) + "_in");
    node->add_output(std::string(name) + "_out");
  }
  graph->set_name("g");
  model.add_opset_import()->set_version(13);
  return model;
}

struct SinkCase {
  std::string name;
  size_t expected_bytes;  // told to Expect; 0: not told
};

class StringModelSinkTest : public ::testing::TestWithParam<SinkCase> {};

TEST_P(StringModelSinkTest, GivesTheModelsBytes) {
  onnx::ModelProto model = SmallModel();
  onnx::ModelProto head;
  head.set_ir_version(model.ir_version());
  onnx::ModelProto tail;
  *tail.mutable_opset_import() = model.opset_import();
  onnx::GraphProto rest;
  rest.set_name(model.graph().name());

  StringModelSink sink;
  if (GetParam().expected_bytes > 0) sink.Expect(GetParam().expected_bytes);
  for (const onnx::NodeProto& node : model.graph().node()) {
    onnx::GraphProto one;
    *one.add_node() = node;  // the node field: tag, length, node
    ASSERT_TRUE(sink.AppendNodes(one.SerializeAsString()).ok());
  }
  std::string rest_bytes = rest.SerializeAsString();
  std::vector<absl::string_view> graph_rest = {rest_bytes};
  ASSERT_TRUE(
      sink.Finish(head.SerializeAsString(), graph_rest, tail.SerializeAsString()).ok());
  EXPECT_EQ(sink.bytes(), model.SerializeAsString());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StringModelSinkTest,
    ::testing::Values(// The node bytes grow as they come; the model is built anew.
                      SinkCase{"not_told", 0},
                      // Room reserved: the model is built in place.
                      SinkCase{"told", 1 << 10}),
    [](const ::testing::TestParamInfo<SinkCase>& info) { return info.param.name; });

// The offset in a mapped file of a piece of its bytes, and -1 for a piece
// reaching past it or lying elsewhere.
TEST(MappedFileTest, OffsetOfAPieceWithinItsBytes) {
  std::filesystem::path dir = testing::FreshTestDir("mapped_offset");
  testing::WriteTestFile(dir / "ten", "0123456789");
  absl::StatusOr<MappedFile> file = MappedFile::Open((dir / "ten").string());
  ASSERT_TRUE(file.ok()) << file.status();
  absl::string_view bytes = file->bytes();
  std::string elsewhere = "0123";
  struct Case {
    absl::string_view piece;
    int64_t offset;
  };
  const Case cases[] = {
      {bytes, 0},         {bytes.substr(3, 4), 3}, {bytes.substr(10), 10},
      {absl::string_view(bytes.data() + 8, 3), -1}, {elsewhere, -1},
  };
  for (const Case& c : cases) EXPECT_EQ(file->OffsetOf(c.piece), c.offset) << c.piece;
}

// CopyBetweenFiles copies a piece of one file to the end of another: in
// the kernel, or through memory where the kernel refuses (a target opened
// for appending); a piece past the source's end is false.
TEST(CopyBetweenFilesTest, CopiesInTheKernelOrThroughMemory) {
  std::filesystem::path dir = testing::FreshTestDir("copy_between_files");
  std::string content(300000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 % 251);
  testing::WriteTestFile(dir / "from", content);
  struct Case {
    const char* name;
    int flags;  // of the target, besides O_WRONLY | O_CREAT | O_TRUNC
    int64_t offset;
    size_t length;
    bool copied;
  };
  const Case cases[] = {
      {"kernel", 0, 1000, 200000, true},
      {"through_memory", O_APPEND, 1000, 200000, true},
      {"whole", 0, 0, 300000, true},
      {"past_the_end", 0, 200000, 200000, false},
  };
  int from = ::open((dir / "from").c_str(), O_RDONLY);
  ASSERT_GE(from, 0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = (dir / c.name).string();
    int to = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | c.flags, 0644);
    ASSERT_GE(to, 0);
    ASSERT_EQ(::write(to, "head", 4), 4);
    EXPECT_EQ(CopyBetweenFiles(from, c.offset, to, c.length), c.copied);
    ::close(to);
    if (c.copied) {
      EXPECT_TRUE(testing::ReadTestFile(path) == "head" + content.substr(c.offset, c.length));
    }
  }
  ::close(from);
}

// Release drops the pages of a piece of the mapping, which read the same
// afterwards (from the file); a piece not of the mapping is left alone.
TEST(MappedFileTest, ReleasedPagesReadTheSameAgain) {
  std::filesystem::path dir = testing::FreshTestDir("mapped_release");
  std::string content;
  for (int i = 0; i < 5 * 4096; ++i) content.push_back(static_cast<char>('a' + i % 26));
  testing::WriteTestFile(dir / "pages", content);
  absl::StatusOr<MappedFile> file = MappedFile::Open((dir / "pages").string());
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->bytes(), content);
  std::string elsewhere = content;
  const absl::string_view pieces[] = {file->bytes().substr(100, 3 * 4096),
                                      file->bytes(), file->bytes().substr(4096, 10),
                                      elsewhere};
  for (absl::string_view piece : pieces) {
    file->Release(piece);
    EXPECT_EQ(file->bytes(), content);
  }
  EXPECT_EQ(elsewhere, content);
}

// FileModelSink writes the model a whole serialization gives, whether the
// pieces around the nodes come from memory or lie in its source file
// (copied by the kernel when large: here a 100 KiB initializer, then listed
// by copied()).
TEST(FileModelSinkTest, PiecesFromTheSourceFileAreWrittenAsTheyCame) {
  onnx::ModelProto model = SmallModel();
  onnx::TensorProto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("W");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(25600);
  weight->set_raw_data(std::string(102400, '\x3f'));
  onnx::ModelProto head;
  head.set_ir_version(model.ir_version());
  onnx::ModelProto tail;
  *tail.mutable_opset_import() = model.opset_import();
  onnx::GraphProto initializer;
  *initializer.add_initializer() = *weight;
  onnx::GraphProto name;
  name.set_name(model.graph().name());
  std::string initializer_field = initializer.SerializeAsString();
  std::string name_field = name.SerializeAsString();

  std::filesystem::path dir = testing::FreshTestDir("file_sink_source");
  // The source: other bytes, then the initializer's field as it came.
  testing::WriteTestFile(dir / "source", "other bytes" + initializer_field);
  absl::StatusOr<MappedFile> source = MappedFile::Open((dir / "source").string());
  ASSERT_TRUE(source.ok()) << source.status();
  absl::string_view mapped_field = source->bytes().substr(11);
  ASSERT_EQ(mapped_field, initializer_field);

  struct Case {
    const char* name;
    const MappedFile* source;
    absl::string_view field;  // the initializer's field: mapped or in memory
  };
  const Case cases[] = {
      {"no_source", nullptr, initializer_field},
      {"field_in_source", &*source, mapped_field},
      {"field_elsewhere", &*source, initializer_field},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string out = (dir / c.name).string();
    FileModelSink sink(out, /*durable=*/false, c.source);
    for (const onnx::NodeProto& node : model.graph().node()) {
      onnx::GraphProto one;
      *one.add_node() = node;
      ASSERT_TRUE(sink.AppendNodes(one.SerializeAsString()).ok());
    }
    std::vector<absl::string_view> graph_rest = {name_field, c.field};
    ASSERT_TRUE(
        sink.Finish(head.SerializeAsString(), graph_rest, tail.SerializeAsString()).ok());
    std::string expected = model.SerializeAsString();
    EXPECT_EQ(testing::ReadTestFile(out), expected);
    // The pieces copied from the source are listed where they stand.
    std::vector<FileModelSink::CopiedPiece> copied = sink.copied();
    if (c.field.data() != mapped_field.data()) {
      EXPECT_TRUE(copied.empty());
      continue;
    }
    ASSERT_EQ(copied.size(), 1u);
    EXPECT_EQ(copied[0].offset, static_cast<int64_t>(expected.find(initializer_field)));
    EXPECT_EQ(copied[0].source_offset, 11);
    EXPECT_EQ(copied[0].length, static_cast<int64_t>(initializer_field.size()));
  }
}

}  // namespace
}  // namespace onnxconvert
