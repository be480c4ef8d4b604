#include "ir/external_data.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/tensor_util.h"
#include "tests/test_files.h"

namespace onnxconvert {
namespace {
namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  return testing::FreshTestDir("external_data/" + name);
}

using Entries = std::vector<std::pair<std::string, std::string>>;

onnx::TensorProto TensorWithEntries(const Entries& entries) {
  onnx::TensorProto tensor;
  tensor.set_name("W");
  tensor.set_data_type(onnx::TensorProto::UINT8);
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : entries) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  return tensor;
}

onnx::TensorProto ExternalTensor(const std::string& location, int64_t offset,
                                 int64_t length) {
  return TensorWithEntries({{"location", location},
                            {"offset", std::to_string(offset)},
                            {"length", std::to_string(length)}});
}

TEST(ExternalDataTest, ParsesEntries) {
  absl::StatusOr<ExternalDataInfo> info = ParseExternalDataInfo(
      TensorWithEntries({{"location", "w.bin"},
                         {"offset", "4096"},
                         {"length", "12"},
                         {"checksum", "abc"},
                         {"basepath", "ignored"}}));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->location, "w.bin");
  EXPECT_EQ(info->offset, 4096);
  EXPECT_EQ(info->length, 12);
  EXPECT_EQ(info->checksum, "abc");

  info = ParseExternalDataInfo(TensorWithEntries({{"location", "w.bin"}}));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->offset, 0);
  EXPECT_FALSE(info->length.has_value());
}

TEST(ExternalDataTest, RejectsMalformedEntries) {
  const struct {
    Entries entries;
    std::string expected;
  } cases[] = {
      {{}, "tensor 'W': external data has no location"},
      {{{"location", ""}}, "has no location"},
      {{{"location", "a"}, {"offset", "-1"}},
       "external data offset '-1' is not a non-negative decimal integer"},
      {{{"location", "a"}, {"offset", "+5"}}, "offset '+5'"},
      {{{"location", "a"}, {"length", "12abc"}}, "length '12abc'"},
      {{{"location", "a"}, {"length", " 1"}}, "length ' 1'"},
      {{{"location", "a"}, {"length", ""}}, "length ''"},
      {{{"location", "a"}, {"offset", "9223372036854775808"}},
       "offset '9223372036854775808'"},
      {{{"location", "a"}, {"location", "b"}},
       "external data key 'location' appears twice"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<ExternalDataInfo> info =
        ParseExternalDataInfo(TensorWithEntries(c.entries));
    ASSERT_FALSE(info.ok()) << c.expected;
    EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(info.status().message(), c.expected))
        << info.status().message();
  }
}

TEST(ExternalDataTest, SetExternalDataInfoWritesEntries) {
  onnx::TensorProto tensor;
  tensor.add_external_data()->set_key("stale");
  SetExternalDataInfo({"d/w.bin", 64, 12, ""}, tensor);
  EXPECT_EQ(tensor.data_location(), onnx::TensorProto::EXTERNAL);
  ASSERT_EQ(tensor.external_data_size(), 3);
  absl::StatusOr<ExternalDataInfo> info = ParseExternalDataInfo(tensor);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->location, "d/w.bin");
  EXPECT_EQ(info->offset, 64);
  EXPECT_EQ(info->length, 12);
}

TEST(ExternalDataTest, RelativeLocations) {
  const struct {
    std::string location;
    std::string expected;  // "" when accepted
  } cases[] = {
      {"w.bin", ""},
      {"sub/w.bin", ""},
      {"./w.bin", ""},
      {"..w.bin", ""},
      {"a..b/c", ""},
      {"", "is empty"},
      {"/etc/passwd", "is absolute"},
      {"..", "has a '..' component"},
      {"../w.bin", "has a '..' component"},
      {"sub/../../w.bin", "has a '..' component"},
      {"sub/..", "has a '..' component"},
      {"sub\\..\\w.bin", "contains a backslash"},
      {std::string("w.bin\0../x", 10), "contains a NUL character"},
  };
  for (const auto& c : cases) {
    absl::Status status = CheckRelativeLocation(c.location);
    if (c.expected.empty()) {
      EXPECT_TRUE(status.ok()) << c.location << ": " << status;
    } else {
      EXPECT_TRUE(absl::StrContains(status.message(), c.expected))
          << c.location << ": " << status;
    }
  }
}

// A model directory with weights (16 bytes), a subdirectory, symlinks
// inside and outside it, and a hard link to a file outside it.
struct Sandbox {
  fs::path dir;
  fs::path outside;
};

Sandbox MakeSandbox(const std::string& name) {
  Sandbox box{FreshDir(name) / "model", FreshDir(name + "_outside")};
  fs::create_directories(box.dir / "sub");
  testing::WriteTestFile(box.dir / "weights.bin", "0123456789abcdef");
  testing::WriteTestFile(box.dir / "sub" / "inner.bin", "inner");
  testing::WriteTestFile(box.outside / "secret.bin", "secret-secret-secret");
  fs::create_symlink(box.outside / "secret.bin", box.dir / "escape.bin");
  fs::create_symlink(box.outside, box.dir / "escape_dir");
  fs::create_symlink(box.dir / "weights.bin", box.dir / "alias.bin");
  fs::create_symlink("sub", box.dir / "sub_alias");
  fs::create_symlink(box.dir / "missing.bin", box.dir / "dangling.bin");
  // A second name, inside the model's directory, of a file outside it.
  fs::create_hard_link(box.outside / "secret.bin", box.dir / "hard_link.bin");
  return box;
}

TEST(ExternalDataTest, CheckExternalReference) {
  Sandbox box = MakeSandbox("check");
  const struct {
    std::string name;
    onnx::TensorProto tensor;
    absl::StatusCode code;
    std::string expected;
  } cases[] = {
      {"whole", ExternalTensor("weights.bin", 0, 16), absl::StatusCode::kOk, ""},
      {"tail", ExternalTensor("weights.bin", 8, 8), absl::StatusCode::kOk, ""},
      {"to_end", TensorWithEntries({{"location", "weights.bin"}, {"offset", "3"}}),
       absl::StatusCode::kOk, ""},
      {"empty_at_end", ExternalTensor("weights.bin", 16, 0), absl::StatusCode::kOk, ""},
      {"subdir", ExternalTensor("sub/inner.bin", 0, 5), absl::StatusCode::kOk, ""},
      {"symlink_inside", ExternalTensor("alias.bin", 0, 16), absl::StatusCode::kOk, ""},
      {"dir_symlink_inside", ExternalTensor("sub_alias/inner.bin", 0, 5),
       absl::StatusCode::kOk, ""},
      {"absolute", ExternalTensor((box.dir / "weights.bin").string(), 0, 16),
       absl::StatusCode::kInvalidArgument, "is absolute"},
      {"dotdot", ExternalTensor("../model/weights.bin", 0, 16),
       absl::StatusCode::kInvalidArgument, "has a '..' component"},
      {"symlink_escape", ExternalTensor("escape.bin", 0, 6),
       absl::StatusCode::kInvalidArgument, "resolves outside the model's directory"},
      {"dir_symlink_escape", ExternalTensor("escape_dir/secret.bin", 0, 6),
       absl::StatusCode::kInvalidArgument, "resolves outside the model's directory"},
      {"hard_link", ExternalTensor("hard_link.bin", 0, 6), absl::StatusCode::kInvalidArgument,
       "is a hard link (the file has 2 names)"},
      {"missing", ExternalTensor("absent.bin", 0, 1), absl::StatusCode::kNotFound,
       "external data file 'absent.bin' does not exist"},
      {"dangling", ExternalTensor("dangling.bin", 0, 1), absl::StatusCode::kNotFound,
       "does not exist"},
      {"directory", ExternalTensor("sub", 0, 0), absl::StatusCode::kInvalidArgument,
       "is not a regular file"},
      {"offset_past_end", ExternalTensor("weights.bin", 17, 0),
       absl::StatusCode::kOutOfRange,
       "external data 'weights.bin': offset 17 + length 0 is past the end of the "
       "file (16 bytes)"},
      {"length_past_end", ExternalTensor("weights.bin", 8, 9),
       absl::StatusCode::kOutOfRange, "offset 8 + length 9 is past the end"},
      {"huge_length", ExternalTensor("weights.bin", 1, 9223372036854775807),
       absl::StatusCode::kOutOfRange, "is past the end"},
  };
  for (const auto& c : cases) {
    absl::Status status = CheckExternalReference(c.tensor, box.dir.string());
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << status;
    if (c.code == absl::StatusCode::kOk) continue;
    EXPECT_TRUE(absl::StartsWith(status.message(), "tensor 'W': ")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), c.expected))
        << c.name << ": " << status.message();
  }
}

TEST(ExternalDataTest, ReadsExactlyTheDeclaredBytes) {
  Sandbox box = MakeSandbox("read");
  const struct {
    onnx::TensorProto tensor;
    std::string expected;
  } cases[] = {
      {ExternalTensor("weights.bin", 0, 16), "0123456789abcdef"},
      {ExternalTensor("weights.bin", 4, 3), "456"},
      {ExternalTensor("weights.bin", 16, 0), ""},
      {TensorWithEntries({{"location", "weights.bin"}, {"offset", "10"}}), "abcdef"},
      {ExternalTensor("sub_alias/inner.bin", 1, 3), "nne"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::string> bytes = ReadExternalData(c.tensor, box.dir.string());
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, c.expected);
  }
  EXPECT_FALSE(ReadExternalData(ExternalTensor("escape.bin", 0, 6), box.dir.string()).ok());
}

TEST(ExternalDataTest, StreamsLargeRangesInBoundedChunks) {
  fs::path dir = FreshDir("stream");
  std::string content(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  testing::WriteTestFile(dir / "big.bin", content);
  FileRange range{(dir / "big.bin").string(), 5, static_cast<int64_t>(content.size()) - 5};
  std::string collected;
  size_t chunks = 0, largest = 0;
  ASSERT_TRUE(StreamFileRange(range, [&](std::string_view chunk) {
                ++chunks;
                largest = std::max(largest, chunk.size());
                collected.append(chunk);
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(collected, content.substr(5));
  EXPECT_GE(chunks, 4u);
  EXPECT_LE(largest, size_t{1} << 20);
  // The sink's error stops the stream.
  int calls = 0;
  absl::Status status = StreamFileRange(range, [&](std::string_view) {
    ++calls;
    return absl::DataLossError("disk full");
  });
  EXPECT_EQ(status.message(), "disk full");
  EXPECT_EQ(calls, 1);
  // A range the file no longer holds fails instead of returning short data.
  range.length = static_cast<int64_t>(content.size()) + 10;
  EXPECT_EQ(StreamFileRange(range, [](std::string_view) { return absl::OkStatus(); }).code(),
            absl::StatusCode::kDataLoss);
}

onnx::TensorProto Named(const std::string& name) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  return tensor;
}

// A model with a tensor in every place ONNX allows one.
onnx::ModelProto ModelWithTensorsEverywhere() {
  onnx::ModelProto model;
  onnx::GraphProto* graph = model.mutable_graph();
  *graph->add_initializer() = Named("init");
  onnx::SparseTensorProto* sparse = graph->add_sparse_initializer();
  *sparse->mutable_values() = Named("sparse_values");
  *sparse->mutable_indices() = Named("sparse_indices");
  graph->add_input()->set_name("x");  // no tensor inside
  onnx::NodeProto* constant = graph->add_node();
  constant->set_op_type("Constant");
  *constant->add_attribute()->mutable_t() = Named("attr_t");
  onnx::AttributeProto* lists = constant->add_attribute();
  *lists->add_tensors() = Named("attr_tensors0");
  *lists->add_tensors() = Named("attr_tensors1");
  *lists->mutable_sparse_tensor()->mutable_values() = Named("attr_sparse");
  *lists->add_sparse_tensors()->mutable_indices() = Named("attr_sparse_list");
  onnx::NodeProto* if_node = graph->add_node();
  onnx::GraphProto* then_branch = if_node->add_attribute()->mutable_g();
  *then_branch->add_initializer() = Named("then_init");
  *then_branch->add_node()->add_attribute()->mutable_g()->add_initializer() =
      Named("nested_init");
  *if_node->add_attribute()->add_graphs()->add_initializer() = Named("graphs_init");
  onnx::FunctionProto* function = model.add_functions();
  *function->add_node()->add_attribute()->mutable_t() = Named("function_node_t");
  *function->add_attribute_proto()->mutable_t() = Named("function_default_t");
  onnx::TrainingInfoProto* training = model.add_training_info();
  *training->mutable_initialization()->add_initializer() = Named("training_init");
  *training->mutable_algorithm()->add_node()->add_attribute()->mutable_t() =
      Named("training_algo_t");
  return model;
}

TEST(ExternalDataTest, ForEachTensorVisitsEveryPlace) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"graph.node[0].attribute[0].t", "attr_t"},
      {"graph.node[0].attribute[1].tensors[0]", "attr_tensors0"},
      {"graph.node[0].attribute[1].tensors[1]", "attr_tensors1"},
      {"graph.node[0].attribute[1].sparse_tensor.values", "attr_sparse"},
      {"graph.node[0].attribute[1].sparse_tensors[0].indices", "attr_sparse_list"},
      {"graph.node[1].attribute[0].g.node[0].attribute[0].g.initializer[0]",
       "nested_init"},
      {"graph.node[1].attribute[0].g.initializer[0]", "then_init"},
      {"graph.node[1].attribute[1].graphs[0].initializer[0]", "graphs_init"},
      {"graph.initializer[0]", "init"},
      {"graph.sparse_initializer[0].values", "sparse_values"},
      {"graph.sparse_initializer[0].indices", "sparse_indices"},
      {"training_info[0].initialization.initializer[0]", "training_init"},
      {"training_info[0].algorithm.node[0].attribute[0].t", "training_algo_t"},
      {"functions[0].node[0].attribute[0].t", "function_node_t"},
      {"functions[0].attribute_proto[0].t", "function_default_t"},
  };
  onnx::ModelProto model = ModelWithTensorsEverywhere();
  std::vector<std::pair<std::string, std::string>> visited;
  ASSERT_TRUE(ForEachTensor(model, [&](const onnx::TensorProto& tensor,
                                       const TensorPath& path) {
                visited.emplace_back(path.ToString(), tensor.name());
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(visited, expected);

  ASSERT_TRUE(ForEachMutableTensor(model, [](onnx::TensorProto& tensor,
                                             const TensorPath&) {
                tensor.set_doc_string("seen");
                return absl::OkStatus();
              }).ok());
  int seen = 0;
  ASSERT_TRUE(ForEachTensor(model, [&](const onnx::TensorProto& tensor,
                                       const TensorPath&) {
                seen += tensor.doc_string() == "seen";
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(seen, static_cast<int>(expected.size()));
}

TEST(ExternalDataTest, ForEachTensorStopsAtTheFirstError) {
  onnx::ModelProto model = ModelWithTensorsEverywhere();
  int calls = 0;
  absl::Status status = ForEachTensor(
      model, [&](const onnx::TensorProto&, const TensorPath&) {
        return ++calls == 3 ? absl::CancelledError("third") : absl::OkStatus();
      });
  EXPECT_EQ(status.message(), "third");
  EXPECT_EQ(calls, 3);
}

TEST(ExternalDataTest, ForEachTensorRefusesNestingPastTheLimit) {
  onnx::ModelProto model;
  onnx::GraphProto* graph = model.mutable_graph();
  for (int i = 0; i < 20; ++i) graph = graph->add_node()->add_attribute()->mutable_g();
  *graph->add_initializer() = Named("deep");
  auto count = [](const onnx::TensorProto&, const TensorPath&) {
    return absl::OkStatus();
  };
  EXPECT_TRUE(ForEachTensor(model, count, /*max_depth=*/100).ok());
  absl::Status status = ForEachTensor(model, count, /*max_depth=*/10);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "nested deeper than 10"));
}

// Every message of onnx.proto, by the schema: those that hold a tensor,
// directly or through their fields, and no other.
TEST(ExternalDataTest, TensorHoldingTypesComeFromTheSchema) {
  const std::set<std::string> holders = {
      "ModelProto",    "GraphProto",    "NodeProto",         "AttributeProto",
      "FunctionProto", "TensorProto",   "SparseTensorProto", "TrainingInfoProto"};
  const google::protobuf::FileDescriptor& file = *onnx::ModelProto::descriptor()->file();
  ASSERT_GE(file.message_type_count(), 13);  // the 13 of the table this replaces, at least
  for (int i = 0; i < file.message_type_count(); ++i) {
    const google::protobuf::Descriptor& type = *file.message_type(i);
    EXPECT_EQ(CanHoldTensors(type), holders.contains(type.name())) << type.name();
  }
}

onnx::ModelProto ModelWithExternal(const std::vector<onnx::TensorProto>& tensors) {
  onnx::ModelProto model;
  for (const onnx::TensorProto& tensor : tensors) {
    *model.mutable_graph()->add_initializer() = tensor;
  }
  *model.mutable_graph()->add_initializer() = Named("inline");
  return model;
}

TEST(ExternalDataTest, CheckExternalReferencesNamesTheTensorAndItsPlace) {
  Sandbox box = MakeSandbox("check_model");
  onnx::ModelProto model = ModelWithExternal(
      {ExternalTensor("weights.bin", 0, 8), ExternalTensor("absent.bin", 0, 1)});
  absl::Status status = CheckExternalReferences(model, box.dir.string(), 1 << 20);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StartsWith(status.message(),
                               "tensor 'W' (graph.initializer[1]): external data "
                               "file 'absent.bin' does not exist"))
      << status;
}

TEST(ExternalDataTest, LoadExternalDataRespectsTheBudget) {
  Sandbox box = MakeSandbox("load_budget");
  onnx::ModelProto model = ModelWithExternal(
      {ExternalTensor("weights.bin", 0, 10), ExternalTensor("weights.bin", 10, 6)});
  const struct {
    int64_t budget;
    absl::StatusCode code;
  } cases[] = {{16, absl::StatusCode::kOk},
               {15, absl::StatusCode::kResourceExhausted},
               {9, absl::StatusCode::kResourceExhausted}};
  for (const auto& c : cases) {
    onnx::ModelProto copy = model;
    EXPECT_EQ(CheckExternalReferences(copy, box.dir.string(), c.budget).code(), c.code)
        << c.budget;
    absl::Status status = LoadExternalData(copy, box.dir.string(), c.budget);
    EXPECT_EQ(status.code(), c.code) << c.budget << ": " << status;
    if (!status.ok()) {
      EXPECT_TRUE(absl::StrContains(status.message(), "more than the limit of"));
      continue;
    }
    EXPECT_EQ(copy.graph().initializer(0).raw_data(), "0123456789");
    EXPECT_EQ(copy.graph().initializer(1).raw_data(), "abcdef");
    EXPECT_FALSE(IsExternal(copy.graph().initializer(1)));
    EXPECT_EQ(copy.graph().initializer(1).external_data_size(), 0);
  }
}

}  // namespace
}  // namespace onnxconvert
