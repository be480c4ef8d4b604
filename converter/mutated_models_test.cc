// Converts corpus models after random structural damage (ops renamed,
// inputs dropped or renamed, attributes added, imports changed, values
// defined twice) to random targets, validating each step both node by node
// and as a whole: the result is a converted model, or a refusal or a
// rejection with a message; never a crash, and never a converted model the
// whole-model validation rejects (Internal). The counts of the fixed run
// are pinned in tests/golden/mutated_models_*.txt (rewritten by
// UPDATE_GOLDEN=1 bazel run //converter:mutated_models_test).

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "converter/bytes_testing.h"
#include "converter/report_testing.h"
#include "converter/windowed.h"
#include "google/protobuf/util/message_differencer.h"
#include "ir/model_sink.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/corpus.h"
#include "tests/golden.h"

namespace onnxconvert::converter {
namespace {

// Compares `table` with the golden table `path` in the fixed run (without
// SEED, which explores other damage than the table's).
void ExpectGolden(absl::string_view path, const std::string& table) {
  std::cerr << table;
  if (getenv("SEED") != nullptr) return;
  absl::Status golden = testing::CompareWithGolden(
      path, table, "UPDATE_GOLDEN=1 bazel run //converter:mutated_models_test");
  EXPECT_TRUE(golden.ok()) << golden;
}

// Damages `model` once, in a way chosen by `random`.
void Damage(onnx::ModelProto& model, std::mt19937& random) {
  onnx::GraphProto& graph = *model.mutable_graph();
  if (graph.node_size() == 0) return;
  onnx::NodeProto& node = *graph.mutable_node(random() % graph.node_size());
  static const char* kOps[] = {"Relu", "Unsqueeze", "Split", "Resize", "Pad", "Clip", "Loop"};
  switch (random() % 6) {
    case 0:
      node.set_op_type(kOps[random() % std::size(kOps)]);
      break;
    case 1:
      if (node.input_size() > 0) node.mutable_input()->RemoveLast();
      break;
    case 2:
      if (node.input_size() > 0) node.set_input(random() % node.input_size(), "nowhere");
      break;
    case 3: {
      onnx::AttributeProto* attribute = node.add_attribute();
      attribute->set_name(random() % 2 ? "axes" : "axis");
      attribute->set_type(onnx::AttributeProto::INTS);
      attribute->add_ints(static_cast<int>(random() % 5) - 2);
      break;
    }
    case 4:
      model.mutable_opset_import(0)->set_version(1 + random() % 27);
      break;
    case 5:
      if (graph.node_size() > 1 && node.output_size() > 0 && graph.node(0).output_size() > 0) {
        node.set_output(0, graph.node(0).output(0));
      }
      break;
  }
}

TEST(MutatedModelsTest, DamagedModelsConvertOrFailWithAMessage) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  // SEED=n in the environment explores other damage than the fixed run's.
  std::mt19937 random(getenv("SEED") != nullptr ? std::atoi(getenv("SEED")) : 20261123);
  int converted = 0;
  int failed = 0;
  for (size_t i = 0; i < 3 * cases->size(); ++i) {
    const testing::CorpusCase& c = (*cases)[i % cases->size()];
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    if (loaded->model.opset_import_size() == 0) continue;
    onnx::ModelProto model = loaded->model;
    for (int damage = 1 + random() % 3; damage > 0; --damage) Damage(model, random);
    ConvertOptions options;
    options.target_opset = 7 + random() % 21;
    options.cross_check = true;
    absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
    if (result.ok()) {
      ++converted;
      continue;
    }
    ++failed;
    EXPECT_NE(result.status().code(), absl::StatusCode::kInternal)
        << c.name << " -> " << options.target_opset << ": " << result.status();
    EXPECT_FALSE(result.status().message().empty()) << c.name;
  }
  EXPECT_GT(failed, 0);  // the damage is real
  ExpectGolden("tests/golden/mutated_models_whole.txt",
               absl::StrCat("# Damaged corpus models converted whole (mutated_models_test).\n"
                            "# Regenerate: UPDATE_GOLDEN=1 bazel run "
                            "//converter:mutated_models_test\n"
                            "converted: ",
                            converted, "\nrefused or rejected: ", failed, "\n"));
}

// The same damage, and bytes flipped or cut off, converted window by window
// (windows of two nodes) and whole: the same bytes and report, or the same
// error; bytes that do not parse are refused with a message. Never a crash.
TEST(MutatedModelsTest, DamagedModelsConvertInWindowsAsWhole) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::mt19937 random(getenv("SEED") != nullptr ? std::atoi(getenv("SEED")) : 20261124);
  WindowOptions windows;
  windows.window_nodes = 2;
  windows.min_nodes = 1;
  int windowed = 0;
  int unparsable = 0;
  for (size_t i = 0; i < cases->size(); ++i) {
    const testing::CorpusCase& c = (*cases)[i];
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    if (loaded->model.opset_import_size() == 0) continue;
    onnx::ModelProto model = loaded->model;
    for (int damage = random() % 3; damage > 0; --damage) Damage(model, random);
    std::string bytes = model.SerializeAsString();
    if (random() % 4 == 0 && !bytes.empty()) {
      // Flip a byte, or cut the model short.
      size_t at = random() % bytes.size();
      if (random() % 2 == 0) {
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
      } else {
        bytes.resize(at);
      }
    }
    ConvertOptions options;
    options.target_opset = 7 + random() % 21;
    StringModelSink sink;
    std::string why;
    absl::StatusOr<ConversionReport> report =
        ConvertBytesOrError(bytes, options, sink, windows, &why);
    windowed += report.ok() && why.empty();
    onnx::ModelProto parsed;
    if (!parsed.ParseFromString(bytes)) {
      ++unparsable;
      EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
      continue;
    }
    absl::StatusOr<ConversionResult> whole = ConvertModel(parsed, options);
    ASSERT_EQ(report.status(), whole.status()) << c.name << " -> " << options.target_opset;
    if (!whole.ok()) continue;
    EXPECT_EQ(UntimedJson(*report), UntimedJson(whole->report)) << c.name;
    if (bytes == parsed.SerializeAsString()) {
      EXPECT_TRUE(sink.bytes() == whole->model.SerializeAsString()) << c.name;
      continue;
    }
    // Bytes protobuf would encode otherwise: the windows keep the untouched
    // nodes as they were encoded; the message is the same.
    onnx::ModelProto out;
    ASSERT_TRUE(out.ParseFromString(sink.bytes())) << c.name;
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(out, whole->model)) << c.name;
  }
  ExpectGolden("tests/golden/mutated_models_windowed.txt",
               absl::StrCat("# Damaged corpus models converted in windows (mutated_models_test).\n"
                            "# Regenerate: UPDATE_GOLDEN=1 bazel run "
                            "//converter:mutated_models_test\n"
                            "converted window by window: ",
                            windowed, "\ndid not parse: ", unparsable, "\n"));
}

}  // namespace
}  // namespace onnxconvert::converter
