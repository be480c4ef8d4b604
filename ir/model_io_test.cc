#include "ir/model_io.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/external_data.h"
#include "ir/tensor_util.h"
#include <cstring>

namespace onnxconvert {
namespace {
namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(base ? base : "/tmp") / ("model_io_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

onnx::TensorProto FloatTensor(const std::string& name, int count) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(count);
  for (int i = 0; i < count; ++i) tensor.add_float_data(0.5f * i);
  return tensor;
}

onnx::ModelProto SmallModel() {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("g");
  *graph->add_initializer() = FloatTensor("big", 1000);
  *graph->add_initializer() = FloatTensor("small", 2);
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("Add");
  node->add_input("big");
  node->add_input("small");
  node->add_output("Y");
  return model;
}

onnx::TensorProto ExternalTensor(const std::string& location, int64_t offset,
                                 int64_t length) {
  onnx::TensorProto tensor;
  tensor.set_name("W");
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(length / 4);
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair<std::string, std::string>{"location", location},
                            {"offset", std::to_string(offset)},
                            {"length", std::to_string(length)}}) {
    auto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  return tensor;
}

TEST(ModelIoTest, BytesRoundTrip) {
  std::string bytes = SmallModel().SerializeAsString();
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "mem");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->SerializeAsString(), bytes);
}

struct MalformedCase {
  std::string name;
  std::string bytes;
  std::string expected;  // a substring of the error
};

std::vector<MalformedCase> MalformedCases() {
  std::string good = SmallModel().SerializeAsString();
  std::vector<MalformedCase> cases = {
      {"empty", "", "empty"},
      {"truncated", good.substr(0, good.size() - 7), "at byte"},
      {"wrong_wire_type", std::string("\x08\x0a\x38\x05", 4),
       "wrong wire type 0 for field 7 (graph), expected 2, at byte 2 (ModelProto)"},
      {"nested_wrong_wire_type",
       // graph { node { op_type(4) as varint } }
       std::string("\x3a\x04\x0a\x02\x20\x01", 6),
       "(ModelProto > graph > node[0])"},
      {"length_past_end", std::string("\x3a\x7f\x00", 3), "runs past the end"},
      {"invalid_wire_type", std::string("\x0f\x00", 2), "invalid wire type 7"},
      {"group", std::string("\x93\x03", 2), "groups"},
      {"field_zero", std::string("\x00\x01", 2), "invalid field number 0"},
  };
  std::mt19937 rng(1234);
  for (int seed = 0; seed < 20; ++seed) {
    std::string random(16 + 31 * seed, '\0');
    for (char& c : random) c = static_cast<char>(rng());
    cases.push_back({"random" + std::to_string(seed), random, "not a valid ONNX model"});
  }
  return cases;
}

TEST(ModelIoTest, MalformedBytesGiveOffsetAndPath) {
  for (const MalformedCase& c : MalformedCases()) {
    absl::StatusOr<onnx::ModelProto> model = ParseModel(c.bytes, "m.onnx");
    if (absl::StartsWith(c.name, "random") && model.ok()) continue;  // valid by chance
    ASSERT_FALSE(model.ok()) << c.name;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(absl::StartsWith(model.status().message(), "m.onnx: ")) << c.name;
    EXPECT_TRUE(absl::StrContains(model.status().message(), c.expected))
        << c.name << ": " << model.status().message();
  }
}

TEST(ModelIoTest, RandomBytesAreMostlyRejected) {
  int rejected = 0;
  for (const MalformedCase& c : MalformedCases()) {
    if (!absl::StartsWith(c.name, "random")) continue;
    rejected += !ParseModel(c.bytes, "r").ok();
  }
  EXPECT_GE(rejected, 18);
}

TEST(ModelIoTest, SizeLimit) {
  fs::path dir = TempDir("size");
  WriteFile(dir / "m.onnx", SmallModel().SerializeAsString());
  LoadOptions options;
  options.max_model_bytes = 100;
  absl::StatusOr<LoadedModel> loaded = LoadModel((dir / "m.onnx").string(), options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "over the limit of 100"));
}

TEST(ModelIoTest, MissingFileIsNotFound) {
  absl::StatusOr<LoadedModel> loaded = LoadModel("/nonexistent/m.onnx");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StartsWith(loaded.status().message(), "/nonexistent/m.onnx: "));
}

struct ExternalCase {
  std::string name;
  std::string location;
  int64_t offset;
  int64_t length;
  std::string expected;  // "" when the reference is good
};

TEST(ModelIoTest, ExternalReferencesAreConfinedAndChecked) {
  const ExternalCase cases[] = {
      {"good", "weights.bin", 0, 16, ""},
      {"good_offset", "weights.bin", 8, 8, ""},
      {"absolute", "/etc/passwd", 0, 16, "must be a relative path"},
      {"dotdot", "../outside.bin", 0, 16, "must not contain '..'"},
      {"inner_dotdot", "sub/../../outside.bin", 0, 16, "must not contain '..'"},
      {"symlink_out", "link.bin", 0, 16, "resolves outside the model's directory"},
      {"missing", "absent.bin", 0, 16, "not found"},
      {"past_end", "weights.bin", 8, 16, "exceeds the file's 16 bytes"},
      {"directory", "sub", 0, 0, "not a regular file"},
  };
  for (const ExternalCase& c : cases) {
    fs::path dir = TempDir("ext_" + c.name);
    fs::create_directories(dir / "sub");
    WriteFile(dir / "weights.bin", std::string(16, '\x01'));
    WriteFile(dir.parent_path() / "outside.bin", std::string(16, '\x02'));
    fs::create_symlink(dir.parent_path() / "outside.bin", dir / "link.bin");
    onnx::ModelProto model = SmallModel();
    *model.mutable_graph()->add_initializer() = ExternalTensor(c.location, c.offset, c.length);
    std::string path = (dir / "m.onnx").string();
    WriteFile(path, model.SerializeAsString());
    absl::StatusOr<LoadedModel> loaded = LoadModel(path);
    if (c.expected.empty()) {
      EXPECT_TRUE(loaded.ok()) << c.name << ": " << loaded.status();
      continue;
    }
    ASSERT_FALSE(loaded.ok()) << c.name;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(absl::StartsWith(loaded.status().message(), path)) << c.name;
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), "tensor 'W'")) << c.name;
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), c.expected))
        << c.name << ": " << loaded.status().message();
  }
}

TEST(ModelIoTest, SaveWithThresholdThenLoadGivesTheSameTensors) {
  fs::path dir = TempDir("save_external");
  onnx::ModelProto model = SmallModel();
  SaveOptions options;
  options.external_data_threshold = 1024;
  std::string path = (dir / "m.onnx").string();
  ASSERT_TRUE(SaveModel(model, path, options).ok());
  EXPECT_TRUE(fs::exists(dir / "m.onnx.data"));
  EXPECT_EQ(model.SerializeAsString(), SmallModel().SerializeAsString());  // not modified

  absl::StatusOr<LoadedModel> refs = LoadModel(path);
  ASSERT_TRUE(refs.ok()) << refs.status();
  EXPECT_TRUE(IsExternal(refs->model.graph().initializer(0)));
  EXPECT_FALSE(IsExternal(refs->model.graph().initializer(1)));

  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> loaded = LoadModel(path, load);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const onnx::TensorProto& big = loaded->model.graph().initializer(0);
  ASSERT_EQ(big.raw_data().size(), 4000u);
  for (int i = 0; i < 1000; ++i) {
    float value;
    std::memcpy(&value, big.raw_data().data() + 4 * i, 4);
    ASSERT_EQ(value, 0.5f * i) << i;
  }
  EXPECT_EQ(loaded->model.graph().initializer(1).float_data_size(), 2);
}

TEST(ModelIoTest, SavingElsewhereCarriesExternalDataOver) {
  fs::path from = TempDir("carry_from");
  fs::path to = TempDir("carry_to");
  WriteFile(from / "weights.bin", std::string("0123456789abcdef"));
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_initializer() = ExternalTensor("weights.bin", 4, 8);
  SaveOptions options;
  options.source_base_dir = from.string();
  ASSERT_TRUE(SaveModel(model, (to / "m.onnx").string(), options).ok());
  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> loaded = LoadModel((to / "m.onnx").string(), load);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->model.graph().initializer(2).raw_data(), "456789ab");
}

TEST(ModelIoTest, FailedSaveLeavesNothingBehind) {
  fs::path dir = TempDir("readonly");
  fs::path sub = dir / "missing_dir";
  absl::Status status = SaveModel(SmallModel(), (sub / "m.onnx").string());
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(fs::exists(sub));
  // An existing target is replaced whole or not at all.
  std::string path = (dir / "m.onnx").string();
  WriteFile(path, "old");
  ASSERT_TRUE(SaveModel(SmallModel(), path).ok());
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);  // no temp files left
}

}  // namespace
}  // namespace onnxconvert
