#include "ir/model_io.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/external_data.h"
#include "ir/tensor_util.h"
#include "tests/test_files.h"

namespace onnxconvert {
namespace {
namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  return testing::FreshTestDir("model_io/" + name);
}

std::set<std::string> ListDir(const fs::path& dir) {
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
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
  tensor.set_data_type(onnx::TensorProto::UINT8);
  tensor.add_dims(length);
  SetExternalDataInfo({location, offset, length, ""}, tensor);
  return tensor;
}

// ---------------------------------------------------------------------------
// Parsing.

TEST(ParseModelTest, BytesRoundTrip) {
  onnx::ModelProto with_unknown = SmallModel();
  with_unknown.mutable_unknown_fields()->AddVarint(1000, 7);
  with_unknown.mutable_graph()->mutable_node(0)->mutable_unknown_fields()
      ->AddLengthDelimited(99, "future field");
  onnx::ModelProto with_external = SmallModel();
  *with_external.mutable_graph()->add_initializer() =
      ExternalTensor("w.bin", 0, 4);
  onnx::ModelProto header_only;
  header_only.set_ir_version(13);
  const struct {
    std::string name;
    std::string bytes;
  } cases[] = {
      {"small", SmallModel().SerializeAsString()},
      {"unknown_fields", with_unknown.SerializeAsString()},
      {"external_reference", with_external.SerializeAsString()},
      {"header_only", header_only.SerializeAsString()},
      {"invalid_utf8_name",
       [] {
         onnx::ModelProto model = SmallModel();
         model.set_producer_name(std::string("\xff\xfe", 2));
         return model.SerializeAsString();
       }()},
  };
  for (const auto& c : cases) {
    absl::StatusOr<onnx::ModelProto> model = ParseModel(c.bytes, c.name);
    ASSERT_TRUE(model.ok()) << c.name << ": " << model.status();
    EXPECT_EQ(model->SerializeAsString(), c.bytes) << c.name;
  }
}

std::string Bytes(std::initializer_list<int> values) {
  std::string bytes;
  for (int v : values) bytes.push_back(static_cast<char>(v));
  return bytes;
}

// Bytes ParseModel reads, and what it should make of them: the canonical
// bytes of the model, or the error message.
struct BytesCase {
  std::string name;
  std::string bytes;
  std::string expected;
};

// Encodings protobuf accepts but never writes: parsing keeps their meaning,
// serializing writes the canonical form. The corpus holds none of them.
TEST(ParseModelTest, NonCanonicalEncodingsComeBackCanonical) {
  const BytesCase cases[] = {
      {"fields_out_of_order", Bytes({0x42, 0x02, 0x10, 0x0f, 0x08, 0x0a}),
       Bytes({0x08, 0x0a, 0x42, 0x02, 0x10, 0x0f})},
      {"singular_field_twice", Bytes({0x08, 0x01, 0x08, 0x02}),
       Bytes({0x08, 0x02})},
      {"overlong_varint", Bytes({0x08, 0x8a, 0x00}), Bytes({0x08, 0x0a})},
      {"unpacked_float_data",  // graph { initializer { float_data: 1, 2 } }
       Bytes({0x3a, 0x0c, 0x2a, 0x0a, 0x25, 0, 0, 0x80, 0x3f, 0x25, 0, 0, 0, 0x40}),
       Bytes({0x3a, 0x0c, 0x2a, 0x0a, 0x22, 0x08, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})},
      {"unknown_field_in_the_middle",
       Bytes({0x08, 0x0a, 0xa0, 0x06, 0x01, 0x3a, 0x00}),
       Bytes({0x08, 0x0a, 0x3a, 0x00, 0xa0, 0x06, 0x01})},
      {"unknown_enum_value_moves_last",  // data_location = 5, metadata_props
       Bytes({0x3a, 0x0c, 0x2a, 0x0a, 0x70, 0x05, 0x82, 0x01, 0x05, 0x0a, 0x01, 'k',
              0x12, 0x00}),
       Bytes({0x3a, 0x0c, 0x2a, 0x0a, 0x82, 0x01, 0x05, 0x0a, 0x01, 'k', 0x12, 0x00,
              0x70, 0x05})},
  };
  for (const auto& c : cases) {
    absl::StatusOr<onnx::ModelProto> model = ParseModel(c.bytes, c.name);
    ASSERT_TRUE(model.ok()) << c.name << ": " << model.status();
    EXPECT_EQ(model->SerializeAsString(), c.expected) << c.name;
    absl::StatusOr<onnx::ModelProto> again = ParseModel(c.expected, c.name);
    ASSERT_TRUE(again.ok()) << c.name;
    EXPECT_EQ(again->SerializeAsString(), c.expected) << c.name;
  }
}

TEST(ParseModelTest, MalformedBytesGiveSourceOffsetAndPath) {
  const BytesCase cases[] = {
      {"empty", "", "m.onnx: not a valid ONNX model: the input is empty"},
      {"wrong_wire_type", std::string("\x08\x0a\x38\x05", 4),
       "m.onnx: not a valid ONNX model: field ModelProto.graph (7) has wire "
       "type varint, its declared type needs length-delimited at byte 2 "
       "(ModelProto)"},
      {"nested_wrong_wire_type", std::string("\x3a\x04\x0a\x02\x20\x01", 6),
       "m.onnx: not a valid ONNX model: field NodeProto.op_type (4) has wire "
       "type varint, its declared type needs length-delimited at byte 4 "
       "(ModelProto.graph > GraphProto.node[0])"},
      {"length_past_end", std::string("\x3a\x7f\x00", 3),
       "m.onnx: not a valid ONNX model: length 127 of ModelProto.graph runs "
       "past the end of its message (1 bytes left) at byte 0 (ModelProto)"},
      {"group", std::string("\x93\x03", 2),
       "m.onnx: not a valid ONNX model: group tag (start-group) for field 50; "
       "ONNX does not use groups at byte 0 (ModelProto)"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<onnx::ModelProto> model = ParseModel(c.bytes, "m.onnx");
    ASSERT_FALSE(model.ok()) << c.name;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(model.status().message(), c.expected) << c.name;
  }
}

// Sizes at which SmallModel()'s serialization ends a top-level field: the
// only truncations that are still a valid (shorter) model.
std::set<size_t> TopLevelBoundaries() {
  onnx::ModelProto model = SmallModel();
  onnx::ModelProto partial;
  std::set<size_t> sizes;
  partial.set_ir_version(model.ir_version());
  sizes.insert(partial.ByteSizeLong());
  *partial.mutable_graph() = model.graph();
  sizes.insert(partial.ByteSizeLong());
  return sizes;
}

TEST(ParseModelTest, TruncatedFileIsRejectedAtEveryCut) {
  std::string good = SmallModel().SerializeAsString();
  std::set<size_t> boundaries = TopLevelBoundaries();
  fs::path dir = FreshDir("truncated");
  int rejected = 0;
  for (size_t cut = 1; cut < good.size(); ++cut) {
    std::string path = (dir / "cut.onnx").string();
    testing::WriteTestFile(path, good.substr(0, cut));
    absl::StatusOr<LoadedModel> loaded = LoadModel(path);
    EXPECT_EQ(loaded.ok(), boundaries.count(cut) == 1) << cut;
    if (loaded.ok()) continue;
    ++rejected;
    EXPECT_TRUE(absl::StartsWith(loaded.status().message(),
                                 path + ": not a valid ONNX model: "))
        << loaded.status();
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), " at byte "));
  }
  EXPECT_EQ(rejected, static_cast<int>(good.size() - 1 - boundaries.size()));
}

TEST(ParseModelTest, RandomBytesGiveOneLineErrors) {
  int rejected = 0;
  const uint32_t kSeeds[] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233};
  for (uint32_t seed : kSeeds) {
    std::mt19937 rng(seed);
    std::string bytes(64 + rng() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "random.onnx");
    if (model.ok()) continue;  // valid by chance
    ++rejected;
    EXPECT_TRUE(absl::StartsWith(model.status().message(),
                                 "random.onnx: not a valid ONNX model: "))
        << model.status();
    EXPECT_TRUE(absl::StrContains(model.status().message(), " at byte "));
    EXPECT_FALSE(absl::StrContains(model.status().message(), "\n"));
  }
  EXPECT_GE(rejected, 11);
}

TEST(ParseModelTest, SizeLimit) {
  std::string bytes = SmallModel().SerializeAsString();
  LoadOptions options;
  options.max_model_bytes = static_cast<int64_t>(bytes.size()) - 1;
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "m.onnx", options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(model.status().message(),
            absl::StrCat("m.onnx: the model is ", bytes.size(),
                         " bytes, over the limit of ", bytes.size() - 1,
                         " bytes"));
  options.max_model_bytes = static_cast<int64_t>(bytes.size());
  EXPECT_TRUE(ParseModel(bytes, "m.onnx", options).ok());
}

// ---------------------------------------------------------------------------
// Loading files.

TEST(LoadModelTest, LoadsFromFile) {
  fs::path dir = FreshDir("load");
  std::string path = (dir / "m.onnx").string();
  std::string bytes = SmallModel().SerializeAsString();
  testing::WriteTestFile(path, bytes);
  absl::StatusOr<LoadedModel> loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->path, path);
  EXPECT_EQ(loaded->base_dir, dir.string());
  EXPECT_EQ(loaded->model.SerializeAsString(), bytes);
}

TEST(LoadModelTest, OversizedFileIsRefusedBeforeReading) {
  fs::path dir = FreshDir("oversized");
  std::string path = (dir / "huge.onnx").string();
  // A sparse 3 GiB file: reading it would take seconds and 3 GiB of memory.
  testing::WriteTestFile(path, "");
  fs::resize_file(path, uintmax_t{3} << 30);
  absl::StatusOr<LoadedModel> loaded = LoadModel(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(
      loaded.status().message(),
      absl::StrCat(path, ": the model is 3221225472 bytes, over the limit of "
                         "2147483647 bytes (protobuf cannot hold 2 GiB")))
      << loaded.status();

  LoadOptions options;
  options.max_model_bytes = 100;
  testing::WriteTestFile(path, SmallModel().SerializeAsString());
  loaded = LoadModel(path, options);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(),
                                "over the limit of 100 bytes"));
}

TEST(LoadModelTest, FilesThatAreNotModels) {
  fs::path dir = FreshDir("not_models");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  const struct {
    std::string path;
    absl::StatusCode code;
    std::string expected;
  } cases[] = {
      {(dir / "absent.onnx").string(), absl::StatusCode::kNotFound,
       "open failed: No such file or directory"},
      {dir.string(), absl::StatusCode::kFailedPrecondition, "not a regular file"},
      {(dir / "fifo").string(), absl::StatusCode::kFailedPrecondition,
       "not a regular file"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.path);
    ASSERT_FALSE(loaded.ok()) << c.path;
    EXPECT_EQ(loaded.status().code(), c.code) << loaded.status();
    EXPECT_EQ(loaded.status().message(), c.path + ": " + c.expected);
  }
}

TEST(LoadModelTest, ExternalReferencesAreConfinedAndChecked) {
  const struct {
    std::string name;
    std::string location;
    int64_t offset;
    int64_t length;
    std::string expected;  // "" when the reference is good
  } cases[] = {
      {"good", "weights.bin", 0, 16, ""},
      {"good_offset", "weights.bin", 8, 8, ""},
      {"absolute", "/etc/passwd", 0, 16, "is absolute"},
      {"dotdot", "../outside.bin", 0, 16, "has a '..' component"},
      {"inner_dotdot", "sub/../../outside.bin", 0, 16, "has a '..' component"},
      {"symlink_out", "link.bin", 0, 16, "resolves outside the model's directory"},
      {"dir_symlink_out", "linkdir/outside.bin", 0, 16,
       "resolves outside the model's directory"},
      {"missing", "absent.bin", 0, 16,
       "external data file 'absent.bin' does not exist"},
      {"past_end", "weights.bin", 8, 16,
       "external data 'weights.bin': offset 8 + length 16 is past the end of "
       "the file (16 bytes)"},
      {"offset_past_end", "weights.bin", 32, 0, "offset 32 + length 0"},
  };
  for (const auto& c : cases) {
    fs::path root = FreshDir("ext_" + c.name);
    fs::path dir = root / "model";
    fs::create_directories(dir / "sub");
    testing::WriteTestFile(dir / "weights.bin", std::string(16, '\x01'));
    testing::WriteTestFile(root / "outside.bin", std::string(16, '\x02'));
    fs::create_symlink(root / "outside.bin", dir / "link.bin");
    fs::create_symlink(root, dir / "linkdir");
    onnx::ModelProto model = SmallModel();
    *model.mutable_graph()->add_initializer() =
        ExternalTensor(c.location, c.offset, c.length);
    std::string path = (dir / "m.onnx").string();
    testing::WriteTestFile(path, model.SerializeAsString());
    absl::StatusOr<LoadedModel> loaded = LoadModel(path);
    if (c.expected.empty()) {
      EXPECT_TRUE(loaded.ok()) << c.name << ": " << loaded.status();
      continue;
    }
    ASSERT_FALSE(loaded.ok()) << c.name;
    EXPECT_TRUE(absl::StartsWith(
        loaded.status().message(),
        absl::StrCat(path, ": tensor 'W' (graph.initializer[2]): ")))
        << loaded.status();
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), c.expected))
        << c.name << ": " << loaded.status().message();
    // Verification can be turned off; loading the data cannot skip it.
    LoadOptions unchecked;
    unchecked.verify_external_data = false;
    EXPECT_TRUE(LoadModel(path, unchecked).ok()) << c.name;
    LoadOptions load;
    load.load_external_data = true;
    load.verify_external_data = false;
    EXPECT_FALSE(LoadModel(path, load).ok()) << c.name;
  }
}

TEST(LoadModelTest, ExternalDataBudget) {
  fs::path dir = FreshDir("budget");
  testing::WriteTestFile(dir / "weights.bin", std::string(64, 'x'));
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_initializer() = ExternalTensor("weights.bin", 0, 64);
  std::string path = (dir / "m.onnx").string();
  testing::WriteTestFile(path, model.SerializeAsString());
  for (bool load : {false, true}) {
    LoadOptions options;
    options.load_external_data = load;
    options.max_external_data_bytes = 63;
    absl::StatusOr<LoadedModel> loaded = LoadModel(path, options);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kResourceExhausted);
    options.max_external_data_bytes = 64;
    loaded = LoadModel(path, options);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->model.graph().initializer(2).raw_data().size(),
              load ? 64u : 0u);
  }
}

// ---------------------------------------------------------------------------
// Saving.

TEST(SaveModelTest, WritesTheSameBytesAsProtobuf) {
  fs::path dir = FreshDir("same_bytes");
  onnx::ModelProto model = SmallModel();
  model.mutable_unknown_fields()->AddVarint(1000, 7);
  *model.mutable_graph()->add_initializer() = ExternalTensor("w.bin", 0, 4);
  std::string path = (dir / "m.onnx").string();
  ASSERT_TRUE(SaveModel(model, path).ok());
  EXPECT_EQ(testing::ReadTestFile(path), model.SerializeAsString());
  EXPECT_EQ(ListDir(dir), std::set<std::string>{"m.onnx"});
}

// A tensor of `type` holding `values` in its typed field, and the raw
// little-endian bytes the same values take (built independently).
struct TypedCase {
  onnx::TensorProto tensor;
  std::string raw;
};

template <typename Raw, typename Values, typename Add>
TypedCase MakeTyped(const std::string& name, int32_t type, const Values& values,
                    Add add) {
  TypedCase c;
  c.tensor.set_name(name);
  c.tensor.set_data_type(type);
  c.tensor.add_dims(static_cast<int64_t>(values.size()));
  for (auto v : values) {
    add(c.tensor, v);
    Raw raw = static_cast<Raw>(v);
    c.raw.append(reinterpret_cast<const char*>(&raw), sizeof(raw));
  }
  return c;
}

std::vector<TypedCase> TypedCases() {
  constexpr int kCount = 600;
  std::vector<float> floats;
  std::vector<double> doubles;
  std::vector<int64_t> ints;
  std::vector<uint64_t> uints;
  for (int i = 0; i < kCount; ++i) {
    floats.push_back(0.25f * i - 7);
    doubles.push_back(1e-3 * i - 0.1);
    ints.push_back(i * 977 - 50000);
    uints.push_back(uint64_t{0xfedcba9876543210} + i);
  }
  auto add_float = [](onnx::TensorProto& t, float v) { t.add_float_data(v); };
  auto add_double = [](onnx::TensorProto& t, double v) { t.add_double_data(v); };
  auto add_int32 = [](onnx::TensorProto& t, int64_t v) {
    t.add_int32_data(static_cast<int32_t>(v));
  };
  auto add_int64 = [](onnx::TensorProto& t, int64_t v) { t.add_int64_data(v); };
  auto add_uint64 = [](onnx::TensorProto& t, uint64_t v) { t.add_uint64_data(v); };
  std::vector<int64_t> bools, bytes, halves;
  for (int i = 0; i < kCount; ++i) {
    bools.push_back(i % 3 == 0);
    bytes.push_back(i % 256 - 128);
    halves.push_back((i * 131) & 0xffff);
  }
  using T = onnx::TensorProto;
  std::vector<TypedCase> cases = {
      MakeTyped<float>("float", T::FLOAT, floats, add_float),
      MakeTyped<float>("complex64", T::COMPLEX64, floats, add_float),
      MakeTyped<double>("double", T::DOUBLE, doubles, add_double),
      MakeTyped<int32_t>("int32", T::INT32, ints, add_int32),
      MakeTyped<int16_t>("int16", T::INT16, bytes, add_int32),
      MakeTyped<uint16_t>("float16", T::FLOAT16, halves, add_int32),
      MakeTyped<uint16_t>("bfloat16", T::BFLOAT16, halves, add_int32),
      MakeTyped<int8_t>("int8", T::INT8, bytes, add_int32),
      MakeTyped<uint8_t>("uint8", T::UINT8, halves, add_int32),
      MakeTyped<uint8_t>("bool", T::BOOL, bools, add_int32),
      MakeTyped<uint8_t>("float8", T::FLOAT8E4M3FN, halves, add_int32),
      MakeTyped<int64_t>("int64", T::INT64, ints, add_int64),
      MakeTyped<uint32_t>("uint32", T::UINT32, uints, add_uint64),
      MakeTyped<uint64_t>("uint64", T::UINT64, uints, add_uint64),
  };
  TypedCase raw;
  raw.tensor.set_name("raw");
  raw.tensor.set_data_type(T::FLOAT);
  raw.tensor.add_dims(kCount / 4);
  for (int i = 0; i < kCount; ++i) raw.raw.push_back(static_cast<char>(i));
  raw.tensor.set_raw_data(raw.raw);
  cases.push_back(raw);
  return cases;
}

// Every tensor of the model, by name.
std::map<std::string, onnx::TensorProto> TensorsByName(const onnx::ModelProto& model) {
  std::map<std::string, onnx::TensorProto> tensors;
  EXPECT_TRUE(ForEachTensor(model, [&](const onnx::TensorProto& tensor,
                                       const TensorPath&) {
                tensors[tensor.name()] = tensor;
                return absl::OkStatus();
              }).ok());
  return tensors;
}

TEST(SaveModelTest, ThresholdMovesTensorsAndLoadingGivesTheSameData) {
  fs::path dir = FreshDir("threshold");
  onnx::ModelProto model = SmallModel();
  std::vector<TypedCase> cases = TypedCases();
  for (size_t i = 0; i < cases.size(); ++i) {
    // Alternate places: initializers and Constant values in a subgraph.
    if (i % 2 == 0) {
      *model.mutable_graph()->add_initializer() = cases[i].tensor;
    } else {
      onnx::NodeProto* node = model.mutable_graph()->add_node();
      node->set_op_type("If");
      onnx::NodeProto* constant =
          node->add_attribute()->mutable_g()->add_node();
      constant->set_op_type("Constant");
      *constant->add_attribute()->mutable_t() = cases[i].tensor;
    }
  }
  onnx::TensorProto strings;
  strings.set_name("strings");
  strings.set_data_type(onnx::TensorProto::STRING);
  for (int i = 0; i < 500; ++i) strings.add_string_data("a long enough string");
  *model.mutable_graph()->add_initializer() = strings;
  const std::string before = model.SerializeAsString();

  SaveOptions options;
  options.external_data_threshold = 600;
  std::string path = (dir / "m.onnx").string();
  ASSERT_TRUE(SaveModel(model, path, options).ok());
  EXPECT_EQ(model.SerializeAsString(), before);  // the input is unchanged
  EXPECT_EQ(ListDir(dir), (std::set<std::string>{"m.onnx", "m.onnx.data"}));

  absl::StatusOr<LoadedModel> references = LoadModel(path);
  ASSERT_TRUE(references.ok()) << references.status();
  std::map<std::string, onnx::TensorProto> saved = TensorsByName(references->model);
  for (const TypedCase& c : cases) {
    const onnx::TensorProto& tensor = saved[c.tensor.name()];
    ASSERT_TRUE(IsExternal(tensor)) << c.tensor.name();
    absl::StatusOr<ExternalDataInfo> info = ParseExternalDataInfo(tensor);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->location, "m.onnx.data");
    EXPECT_EQ(info->offset % (*info->length >= 4096 ? 4096 : 64), 0)
        << c.tensor.name() << " at " << info->offset;
  }
  EXPECT_FALSE(IsExternal(saved["small"]));    // 8 bytes: under the threshold
  EXPECT_FALSE(IsExternal(saved["strings"]));  // STRING stays inline
  EXPECT_EQ(saved["strings"].string_data_size(), 500);

  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> loaded = LoadModel(path, load);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::map<std::string, onnx::TensorProto> tensors = TensorsByName(loaded->model);
  for (const TypedCase& c : cases) {
    const onnx::TensorProto& tensor = tensors[c.tensor.name()];
    EXPECT_EQ(tensor.raw_data(), c.raw) << c.tensor.name();
    EXPECT_EQ(tensor.data_type(), c.tensor.data_type());
    EXPECT_EQ(tensor.dims_size(), 1);
    EXPECT_EQ(tensor.dims(0), c.tensor.dims(0));
    EXPECT_EQ(tensor.float_data_size() + tensor.int32_data_size() +
                  tensor.int64_data_size() + tensor.double_data_size() +
                  tensor.uint64_data_size(),
              0);
  }
  EXPECT_EQ(tensors["small"].float_data_size(), 2);
}

TEST(SaveModelTest, ExternalizedTensorsKeepTheirOtherFields) {
  // Guard: WithoutData() copies every field but these data fields; a new
  // TensorProto field must be added there and here.
  const std::set<std::string> kDataFields = {
      "raw_data",    "float_data",  "int32_data",    "string_data",  "int64_data",
      "double_data", "uint64_data", "external_data", "data_location"};
  const std::set<std::string> kOtherFields = {"dims", "data_type", "segment", "name",
                                              "doc_string", "metadata_props"};
  const google::protobuf::Descriptor* descriptor = onnx::TensorProto::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const std::string& name = descriptor->field(i)->name();
    EXPECT_TRUE(kDataFields.count(name) + kOtherFields.count(name) == 1) << name;
  }
  EXPECT_EQ(descriptor->field_count(),
            static_cast<int>(kDataFields.size() + kOtherFields.size()));

  onnx::TensorProto tensor;
  tensor.set_name("W");
  tensor.set_doc_string("weights");
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(2);
  tensor.add_dims(64);
  tensor.mutable_segment()->set_begin(0);
  tensor.mutable_segment()->set_end(128);
  onnx::StringStringEntryProto* prop = tensor.add_metadata_props();
  prop->set_key("k");
  prop->set_value("v");
  tensor.mutable_unknown_fields()->AddVarint(77, 1);
  tensor.set_raw_data(std::string(512, 'w'));
  onnx::ModelProto model;
  *model.mutable_graph()->add_initializer() = tensor;

  fs::path dir = FreshDir("keep_fields");
  std::string path = (dir / "m.onnx").string();
  SaveOptions options;
  options.external_data_threshold = 0;
  ASSERT_TRUE(SaveModel(model, path, options).ok());
  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> loaded = LoadModel(path, load);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->model.graph().initializer(0).SerializeAsString(),
            tensor.SerializeAsString());
}

TEST(SaveModelTest, SavingElsewhereCarriesExternalDataOver) {
  fs::path from = FreshDir("carry_from");
  fs::path to = FreshDir("carry_to");
  testing::WriteTestFile(from / "weights.bin", "0123456789abcdef");
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_initializer() = ExternalTensor("weights.bin", 4, 8);
  SaveOptions options;
  options.source_base_dir = from.string();
  options.external_data_file = "moved.bin";
  ASSERT_TRUE(SaveModel(model, (to / "m.onnx").string(), options).ok());
  EXPECT_EQ(ListDir(to), (std::set<std::string>{"m.onnx", "moved.bin"}));
  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> loaded = LoadModel((to / "m.onnx").string(), load);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->model.graph().initializer(2).raw_data(), "456789ab");
  EXPECT_EQ(loaded->model.graph().initializer(0).float_data_size(), 1000);

  // A missing source file fails the save, naming the tensor, and writes nothing.
  fs::path elsewhere = FreshDir("carry_fail");
  *model.mutable_graph()->add_initializer() = ExternalTensor("absent.bin", 0, 1);
  absl::Status status = SaveModel(model, (elsewhere / "m.onnx").string(), options);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StartsWith(
      status.message(),
      absl::StrCat((elsewhere / "m.onnx").string(),
                   ": tensor 'W' (graph.initializer[3]): external data file "
                   "'absent.bin' does not exist")))
      << status;
  EXPECT_TRUE(ListDir(elsewhere).empty());
}

TEST(SaveModelTest, IdenticalDataFileIsMovedWhenAskedElseCopied) {
  // The source file (72 bytes) and the ranges the model's tensors take in
  // it: the plan puts them at 0, then at the next 64-byte boundary.
  std::string source_bytes(72, '\0');
  for (size_t i = 0; i < source_bytes.size(); ++i) source_bytes[i] = static_cast<char>('a' + i % 26);
  const struct {
    const char* name;
    std::vector<std::pair<int64_t, int64_t>> ranges;  // offset, length
    bool move;
    bool moved;
  } kCases[] = {
      {"whole file, planned offsets", {{0, 8}, {64, 8}}, true, true},
      {"not asked", {{0, 8}, {64, 8}}, false, false},
      {"offsets the plan moves", {{0, 8}, {8, 8}}, true, false},
      {"bytes after the last tensor", {{0, 8}}, true, false},
      {"first tensor not at 0", {{64, 8}}, true, false},
  };
  int index = 0;
  for (const auto& c : kCases) {
    fs::path from = FreshDir(absl::StrCat("link_from_", index));
    fs::path to = FreshDir(absl::StrCat("link_to_", index++));
    testing::WriteTestFile(from / "w.bin", source_bytes);
    onnx::ModelProto model = SmallModel();
    for (const auto& [offset, length] : c.ranges) {
      *model.mutable_graph()->add_initializer() = ExternalTensor("w.bin", offset, length);
    }
    SaveOptions options;
    options.source_base_dir = from.string();
    options.durable = false;
    options.move_identical_data = c.move;
    struct stat source_info, data_info;
    ASSERT_EQ(stat((from / "w.bin").c_str(), &source_info), 0);
    ASSERT_TRUE(SaveModel(model, (to / "m.onnx").string(), options).ok()) << c.name;
    ASSERT_EQ(stat((to / "m.onnx.data").c_str(), &data_info), 0) << c.name;
    EXPECT_EQ(data_info.st_ino == source_info.st_ino, c.moved) << c.name;
    EXPECT_EQ(fs::exists(from / "w.bin"), !c.moved) << c.name;
    EXPECT_EQ(ListDir(to), (std::set<std::string>{"m.onnx", "m.onnx.data"})) << c.name;
    LoadOptions load;
    load.load_external_data = true;
    absl::StatusOr<LoadedModel> loaded = LoadModel((to / "m.onnx").string(), load);
    ASSERT_TRUE(loaded.ok()) << c.name << ": " << loaded.status();
    for (size_t i = 0; i < c.ranges.size(); ++i) {
      EXPECT_EQ(loaded->model.graph().initializer(2 + i).raw_data(),
                source_bytes.substr(c.ranges[i].first, c.ranges[i].second))
          << c.name;
    }
  }
}

TEST(SaveModelTest, ReferencesIntoTheReplacedDataFileAreCarried) {
  // Re-saving a model over itself must not lose the data its references
  // point at, though the data file of the same name is replaced.
  fs::path dir = FreshDir("resave");
  onnx::ModelProto model = SmallModel();
  std::string path = (dir / "m.onnx").string();
  SaveOptions options;
  options.external_data_threshold = 1024;
  ASSERT_TRUE(SaveModel(model, path, options).ok());
  absl::StatusOr<LoadedModel> first = LoadModel(path);
  ASSERT_TRUE(first.ok()) << first.status();
  *first->model.mutable_graph()->add_initializer() = FloatTensor("more", 2000);
  ASSERT_TRUE(SaveModel(first->model, path, options).ok());

  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> second = LoadModel(path, load);
  ASSERT_TRUE(second.ok()) << second.status();
  std::map<std::string, onnx::TensorProto> tensors = TensorsByName(second->model);
  ASSERT_EQ(tensors["big"].raw_data().size(), 4000u);
  ASSERT_EQ(tensors["more"].raw_data().size(), 8000u);
  float value;
  std::memcpy(&value, tensors["big"].raw_data().data() + 4 * 999, 4);
  EXPECT_EQ(value, 0.5f * 999);
  std::memcpy(&value, tensors["more"].raw_data().data() + 4 * 1999, 4);
  EXPECT_EQ(value, 0.5f * 1999);

  // References to another file of the same directory are kept as they are.
  testing::WriteTestFile(dir / "other.bin", "abcd");
  onnx::ModelProto with_other = SmallModel();
  *with_other.mutable_graph()->add_initializer() = ExternalTensor("other.bin", 0, 4);
  ASSERT_TRUE(SaveModel(with_other, path, options).ok());
  absl::StatusOr<LoadedModel> third = LoadModel(path);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(ParseExternalDataInfo(third->model.graph().initializer(2))->location,
            "other.bin");
}

TEST(SaveModelTest, ModelsOver2GiBNeedTheThreshold) {
  fs::path dir = FreshDir("too_large");
  onnx::ModelProto model = SmallModel();
  std::string path = (dir / "m.onnx").string();
  SaveOptions options;
  options.max_model_bytes = 1000;  // stands in for 2 GiB
  absl::Status status = SaveModel(model, path, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(status.message(),
                               path + ": the serialized model would be "))
      << status;
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "save with an external data threshold"))
      << status;
  EXPECT_TRUE(ListDir(dir).empty());
  options.external_data_threshold = 1024;
  EXPECT_TRUE(SaveModel(model, path, options).ok());
}

TEST(SaveModelTest, RejectsBadTargets) {
  fs::path dir = FreshDir("bad_targets");
  fs::create_directories(dir / "taken");
  fs::create_symlink(FreshDir("elsewhere"), dir / "out");
  const struct {
    std::string path;
    std::string data_file;
    std::string expected;
  } cases[] = {
      {(dir / "missing_dir" / "m.onnx").string(), "", "does not exist"},
      {(dir / "taken").string(), "", "is a directory"},
      {(dir / "m.onnx").string(), "../m.data", "has a '..' component"},
      {(dir / "m.onnx").string(), "/tmp/m.data", "is absolute"},
      {(dir / "m.onnx").string(), "out/m.data", "resolves outside"},
      {(dir / "m.onnx").string(), "m.onnx", "is the model file"},
  };
  for (const auto& c : cases) {
    SaveOptions options;
    options.external_data_threshold = 0;
    options.external_data_file = c.data_file;
    absl::Status status = SaveModel(SmallModel(), c.path, options);
    EXPECT_FALSE(status.ok()) << c.path;
    EXPECT_TRUE(absl::StartsWith(status.message(), c.path + ": ")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), c.expected)) << status;
  }
  EXPECT_EQ(ListDir(dir), (std::set<std::string>{"taken", "out"}));
}

// Limits the size of files this process writes; writes past it fail with
// EFBIG instead of raising SIGXFSZ.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limited = saved_;
    limited.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &saved_); }

 private:
  rlimit saved_;
};

TEST(SaveModelTest, FailedWritesLeaveNothingBehind) {
  fs::path dir = FreshDir("atomic");
  std::string path = (dir / "m.onnx").string();
  testing::WriteTestFile(path, "old model");
  testing::WriteTestFile(dir / "m.onnx.data", "old data");
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_initializer() = FloatTensor("huge", 64 * 1024);
  const struct {
    std::string name;
    int64_t threshold;
  } cases[] = {{"model_file_write", -1}, {"data_file_write", 1024}};
  for (const auto& c : cases) {
    SaveOptions options;
    options.external_data_threshold = c.threshold;
    absl::Status status;
    {
      FileSizeLimit limit(16 * 1024);
      status = SaveModel(model, path, options);
    }
    EXPECT_FALSE(status.ok()) << c.name;
    EXPECT_TRUE(absl::StartsWith(status.message(), path + ": ")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "write failed: File too large"))
        << status;
    EXPECT_EQ(ListDir(dir), (std::set<std::string>{"m.onnx", "m.onnx.data"}))
        << c.name;
    EXPECT_EQ(testing::ReadTestFile(path), "old model") << c.name;
    EXPECT_EQ(testing::ReadTestFile(dir / "m.onnx.data"), "old data") << c.name;
  }
  // Without the limit the same saves replace both files.
  SaveOptions options;
  options.external_data_threshold = 1024;
  ASSERT_TRUE(SaveModel(model, path, options).ok());
  EXPECT_EQ(ListDir(dir), (std::set<std::string>{"m.onnx", "m.onnx.data"}));
  EXPECT_NE(testing::ReadTestFile(path), "old model");
}

TEST(SaveModelTest, WriteFileAtomically) {
  fs::path dir = FreshDir("write_atomically");
  std::string path = (dir / "out.txt").string();
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  EXPECT_EQ(testing::ReadTestFile(path), "second");
  EXPECT_EQ(ListDir(dir), std::set<std::string>{"out.txt"});
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);  // not mkstemp's 0600
  absl::Status status = WriteFileAtomically((dir / "no" / "x").string(), "x");
  EXPECT_TRUE(absl::StartsWith(status.message(), (dir / "no" / "x").string() + ": "))
      << status;
}

// Peak resident memory of this process, in bytes.
int64_t PeakRss() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} * 1024;
}

TEST(SaveModelTest, LargeModelsAreNotDuplicatedInMemory) {
  constexpr int64_t kTensorBytes = int64_t{256} << 20;
  onnx::ModelProto model = SmallModel();
  onnx::TensorProto* big = model.mutable_graph()->add_initializer();
  big->set_name("huge");
  big->set_data_type(onnx::TensorProto::UINT8);
  big->add_dims(kTensorBytes);
  big->mutable_raw_data()->assign(static_cast<size_t>(kTensorBytes), '\x5a');
  int64_t before = PeakRss();
  fs::path dir = FreshDir("memory");
  for (int64_t threshold : {int64_t{-1}, int64_t{1024}}) {
    SaveOptions options;
    options.external_data_threshold = threshold;
    ASSERT_TRUE(SaveModel(model, (dir / "m.onnx").string(), options).ok());
  }
  int64_t growth = PeakRss() - before;
  EXPECT_LT(growth, kTensorBytes / 4) << "peak grew by " << growth << " bytes";
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(dir / "m.onnx.data")),
            kTensorBytes + 4096);  // "big" (4000 bytes), then "huge" aligned
}

}  // namespace
}  // namespace onnxconvert
