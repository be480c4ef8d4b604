#include "cli/cli.h"
#include "cli/cli_test_util.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/synthetic_models.h"
#include "gtest/gtest.h"
#include "proto/onnx.pb.h"
#include "tests/corpus.h"
#include "tests/model_text.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {
namespace fs = std::filesystem;

// Writes `model` to `path`, which it returns.
fs::path WriteModel(const fs::path& path, const onnx::ModelProto& model) {
  testing::WriteTestFile(path, model.SerializeAsString());
  return path;
}

// The model `text` (ONNX text) written to dir/<stem>.txt and parsed by the
// CLI into dir/<stem>.onnx, whose path it returns.
fs::path ParsedModel(const fs::path& dir, const std::string& stem, const std::string& text) {
  testing::WriteTestFile(dir / (stem + ".txt"), text);
  fs::path model = dir / (stem + ".onnx");
  Result parsed = RunCli({"parse", (dir / (stem + ".txt")).string(), "-o", model.string()});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
  return model;
}

// `convert` of the model at `in` to opset `to` (into <in's stem><to>.onnx
// beside it), its report in `report`, with `flags` added.
Result ConvertWithFlags(const fs::path& in, int to, const fs::path& report,
                        const std::vector<std::string>& flags) {
  std::vector<std::string> args = {
      "convert", in.string(), "-o",
      (in.parent_path() / absl::StrCat(in.stem().string(), to, ".onnx")).string(),
      "--to", absl::StrCat(to), "--report", report.string()};
  args.insert(args.end(), flags.begin(), flags.end());
  return RunCli(args);
}

// A one-node model: Y = Relu(X) at opset 13, optionally with an initializer.
onnx::ModelProto ReluModel() {
  return testing::ModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 13], producer_name: "cli_test">
    g (float[N,4] X) => (float[N,4] Y) {
      Y = Relu (X)
    }
  )");
}

// A model whose one initializer lives in external data at `location`.
onnx::ModelProto ExternalModel(const std::string& location) {
  onnx::ModelProto model = ReluModel();
  onnx::TensorProto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("W");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(4);
  weight->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = weight->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  entry = weight->add_external_data();
  entry->set_key("length");
  entry->set_value("16");
  return model;
}

void ExpectOneLineError(const Result& result, const std::string& file) {
  EXPECT_TRUE(absl::StartsWith(result.err, file)) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST(CliTest, InspectReportsModelFacts) {
  fs::path model = WriteModel(testing::FreshTestDir("inspect") / "relu.onnx", ReluModel());
  Result text = RunCli({"inspect", model.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(absl::StrContains(text.out, "ai.onnx 13")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "ai.onnx.Relu: 1")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "X: float[N,4]")) << text.out;
  Result json = RunCli({"inspect", model.string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(absl::StrContains(json.out, "\"op_type\": \"Relu\"")) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, "\"type\": \"float[N,4]\"")) << json.out;
}

TEST(CliTest, PrintThenParseGivesTheSameModel) {
  fs::path dir = testing::FreshTestDir("print_parse");
  onnx::ModelProto original = ReluModel();
  fs::path model = WriteModel(dir / "relu.onnx", original);
  Result printed = RunCli({"print", model.string()});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_TRUE(absl::StrContains(printed.out, "Relu")) << printed.out;
  testing::WriteTestFile(dir / "relu.txt", printed.out);
  Result parsed = RunCli({"parse", (dir / "relu.txt").string(), "-o",
                          (dir / "back.onnx").string()});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  std::ifstream in(dir / "back.onnx", std::ios::binary);
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromIstream(&in));
  EXPECT_EQ(back.SerializeAsString(), original.SerializeAsString());
}

TEST(CliTest, ParseErrorNamesFileLineAndColumn) {
  fs::path dir = testing::FreshTestDir("parse_error");
  testing::WriteTestFile(dir / "bad.txt", "<ir_version: 8, opset_import: [\"\" : 13]>\ng (float X) => (float Y) {\n  Y = Relu(X\n}\n");
  Result result = RunCli({"parse", (dir / "bad.txt").string(), "-o",
                          (dir / "out.onnx").string()});
  EXPECT_EQ(result.exit_code, 1);
  ExpectOneLineError(result, (dir / "bad.txt").string());
  EXPECT_TRUE(absl::StrContains(result.err, "line 4, column 1: expected ')'")) << result.err;
  EXPECT_FALSE(fs::exists(dir / "out.onnx"));
}

struct BadModelCase {
  std::string name;
  std::string bytes;  // the model file's content
};

std::vector<BadModelCase> BadModels() {
  std::string good = ExternalModel("weights.bin").SerializeAsString();
  std::vector<BadModelCase> cases;
  cases.push_back({"truncated", good.substr(0, good.size() / 2)});
  std::mt19937 rng(7);
  for (int seed = 0; seed < 4; ++seed) {
    std::string random(64 + 97 * seed, '\0');
    for (char& c : random) c = static_cast<char>(rng());
    cases.push_back({"random" + std::to_string(seed), random});
  }
  // Field 7 (graph) with wire type 0 (varint) instead of 2 (length-delimited).
  cases.push_back({"wrong_wire_type", std::string("\x08\x08\x38\x05", 4)});
  cases.push_back({"absolute_external", ExternalModel("/etc/passwd").SerializeAsString()});
  cases.push_back({"dotdot_external", ExternalModel("../outside.bin").SerializeAsString()});
  cases.push_back({"missing_external", ExternalModel("absent.bin").SerializeAsString()});
  cases.push_back({"symlink_external", ExternalModel("link.bin").SerializeAsString()});
  return cases;
}

TEST(CliTest, BadInputIsExitOneWithOneLineError) {
  for (const BadModelCase& c : BadModels()) {
    fs::path dir = testing::FreshTestDir("bad_" + c.name);
    testing::WriteTestFile(dir / "weights.bin", std::string(16, '\0'));
    testing::WriteTestFile(dir.parent_path() / "outside.bin", std::string(16, '\0'));
    fs::create_symlink(dir.parent_path() / "outside.bin", dir / "link.bin");
    fs::path model = dir / "model.onnx";
    testing::WriteTestFile(model, c.bytes);
    for (const char* command : {"inspect", "print"}) {
      Result result = RunCli({command, model.string()});
      EXPECT_EQ(result.exit_code, 1) << c.name << " " << command << ": " << result.err;
      ExpectOneLineError(result, model.string());
    }
  }
}

TEST(CliTest, CheckReportsValidAndInvalidModels) {
  fs::path dir = testing::FreshTestDir("check");
  fs::path good = WriteModel(dir / "good.onnx", ReluModel());
  Result ok = RunCli({"check", good.string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(absl::StrContains(ok.out, "valid (0 errors")) << ok.out;

  onnx::ModelProto broken = ReluModel();
  broken.mutable_graph()->mutable_node(0)->set_name("relu_1");
  broken.mutable_graph()->mutable_node(0)->set_input(0, "missing");
  fs::path bad = WriteModel(dir / "bad.onnx", broken);
  Result text = RunCli({"check", bad.string()});
  EXPECT_EQ(text.exit_code, 1);
  ExpectOneLineError(text, bad.string());
  EXPECT_TRUE(absl::StrContains(text.err, "node 'relu_1' (Relu-13): undefined-input")) << text.err;
  Result json = RunCli({"check", bad.string(), "--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(json.out, "\"code\": \"undefined-input\"")) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, "\"valid\": false")) << json.out;
}

// A model of 30,000 nodes converts from its file, window by window, to the
// same bytes and report as when it is loaded and converted whole (as with
// --external-data-threshold, which saves it whole); batch too.
TEST(CliTest, LargeModelsConvertWindowByWindow) {
  fs::path dir = testing::FreshTestDir("windowed");
  fs::path in = WriteModel(dir / "chain.onnx", bench::MakeChainModel(30000));
  Result windowed = RunCli({"convert", in.string(), "-o", (dir / "windowed.onnx").string(),
                            "--to", "13", "--report", (dir / "windowed.json").string()});
  ASSERT_EQ(windowed.exit_code, 0) << windowed.err;
  Result whole = RunCli({"convert", in.string(), "-o", (dir / "whole.onnx").string(), "--to",
                         "13", "--report", (dir / "whole.json").string(),
                         "--external-data-threshold", "1000000"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_TRUE(absl::StrContains(windowed.out, "step 12 -> 13: 30000 nodes")) << windowed.out;
  // The same report, timings aside.
  auto untimed = [](std::string json) {
    std::stringstream in(json), out;
    for (std::string line; std::getline(in, line);) {
      if (!absl::StrContains(line, "\"milliseconds\"")) out << line << "\n";
    }
    return out.str();
  };
  EXPECT_EQ(untimed(testing::ReadTestFile(dir / "windowed.json")),
            untimed(testing::ReadTestFile(dir / "whole.json")));
  std::string bytes = testing::ReadTestFile(dir / "windowed.onnx");
  EXPECT_TRUE(bytes == testing::ReadTestFile(dir / "whole.onnx"));
  onnx::ModelProto converted;
  ASSERT_TRUE(converted.ParseFromString(bytes));
  EXPECT_EQ(converted.graph().node_size(), 30000);
  EXPECT_EQ(converted.graph().node(3).input_size(), 2);  // Unsqueeze: axes as an input
  EXPECT_FALSE(fs::exists(dir / "windowed.onnx.partial"));
  EXPECT_FALSE(fs::exists(dir / "windowed.onnx.nodes.partial"));
  Result batch = RunCli({"batch", in.string(), "-o", (dir / "batch").string(), "--to", "13"});
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_TRUE(testing::ReadTestFile(dir / "batch" / "chain.onnx") == bytes);
}

TEST(CliTest, ConvertWritesModelAndReport) {
  fs::path dir = testing::FreshTestDir("convert");
  fs::path in = WriteModel(dir / "relu.onnx", ReluModel());
  fs::path out = dir / "relu14.onnx";
  Result result = RunCli({"convert", in.string(), "-o", out.string(), "--to", "14", "--report",
                          (dir / "report.json").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "opset 13 -> 14")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "validation incremental")) << result.out;
  // The whole model validated after each step: the same model.
  Result full = RunCli({"convert", in.string(), "-o", (dir / "full.onnx").string(), "--to", "14",
                        "--full-validation"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_TRUE(absl::StrContains(full.out, "step 13 -> 14: 1 nodes, validation ok")) << full.out;
  EXPECT_EQ(testing::ReadTestFile(dir / "full.onnx"), testing::ReadTestFile(out));
  std::ifstream converted(out, std::ios::binary);
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromIstream(&converted));
  EXPECT_EQ(model.opset_import(0).version(), 14);
  std::ifstream report(dir / "report.json");
  std::stringstream json;
  json << report.rdbuf();
  EXPECT_TRUE(absl::StrContains(json.str(), "\"op\": \"Relu\",\n          \"from_version\": 13"))
      << json.str();

  onnx::ModelProto weighted = ReluModel();
  onnx::TensorProto* weight = weighted.mutable_graph()->add_initializer();
  weight->set_name("W");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(4);
  for (int i = 0; i < 4; ++i) weight->add_float_data(1.5f * i);
  WriteModel(dir / "weighted.onnx", weighted);
  Result external = RunCli({"convert", (dir / "weighted.onnx").string(), "-o",
                            (dir / "ext.onnx").string(), "--to", "14",
                            "--external-data-threshold", "0"});
  EXPECT_EQ(external.exit_code, 0) << external.err;
  EXPECT_EQ(fs::file_size(dir / "ext.onnx.data"), 16u);

  Result plan = RunCli({"plan", in.string(), "--to", "14"});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_TRUE(absl::StrContains(plan.out, "1 Relu: version 13 -> 14")) << plan.out;

  onnx::ModelProto gelu = ReluModel();
  gelu.mutable_opset_import(0)->set_version(20);
  gelu.mutable_graph()->mutable_node(0)->set_op_type("Gelu");
  WriteModel(dir / "gelu.onnx", gelu);
  Result refused = RunCli({"convert", (dir / "gelu.onnx").string(), "-o",
                           (dir / "gelu19.onnx").string(), "--to", "19", "--no-expand"});
  EXPECT_EQ(refused.exit_code, 1);
  ExpectOneLineError(refused, (dir / "gelu.onnx").string());
  EXPECT_TRUE(absl::StrContains(refused.err, "step 20 -> 19")) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "expansion is off (--no-expand)")) << refused.err;
  EXPECT_FALSE(fs::exists(dir / "gelu19.onnx"));

  // By default the op is expanded into its function body.
  Result expanded = RunCli({"convert", (dir / "gelu.onnx").string(), "-o",
                            (dir / "gelu19.onnx").string(), "--to", "19"});
  EXPECT_EQ(expanded.exit_code, 0) << expanded.err;
  onnx::ModelProto gelu19;
  ASSERT_TRUE(gelu19.ParseFromString(testing::ReadTestFile(dir / "gelu19.onnx")));
  for (const onnx::NodeProto& node : gelu19.graph().node()) EXPECT_NE(node.op_type(), "Gelu");
  EXPECT_GT(gelu19.graph().node_size(), 1);
}

// A model in ONNX text converted with some flags, and what the run gives:
// its exit code, and a text of its report (exit 0) or of its stderr.
struct ConvertFlagsCase {
  std::string name;
  std::string model;
  int to;
  std::string report;  // the report's file name; its extension picks the format
  std::vector<std::string> flags;
  int exit_code;
  std::string expect;
};

// Prints a case by its name (in the failures of parameterized tests).
void PrintTo(const ConvertFlagsCase& c, std::ostream* os) { *os << c.name; }

// Int8 Add, which Add-13 does not take: converted to 13 through exact casts.
constexpr char kInt8Add[] =
    "<ir_version: 8, opset_import: [\"\" : 14]>\n"
    "g (int8[2] A, int8[2] B) => (int8[2] C) { [a] C = Add(A, B) }\n";

constexpr char kSub8[] =
    "<ir_version: 7, opset_import: [\"\" : 8]>\n"
    "g (float[N,4] A, float[4] B) => (float[N,4] C) { [s] C = Sub(A, B) }\n";

std::vector<ConvertFlagsCase> ConvertFlagsCases() {
  return {
      // Exact casts are the default (listed in the report); --no-casts
      // refuses instead; --allow-casts is still accepted and changes nothing.
      {"casts_by_default", kInt8Add, 13, "report.json", {}, 0, "'A' to tensor(int32)"},
      {"allow_casts_changes_nothing", kInt8Add, 13, "report.json", {"--allow-casts"}, 0,
       "'A' to tensor(int32)"},
      {"no_casts_refuses", kInt8Add, 13, "report.json", {"--no-casts"}, 1,
       "'A' is tensor(int8), which Add-13 does not allow"},
      // --verify[=N] verifies by evaluation and says so in the report; an
      // unreadable --verify-inputs and a bad count are usage errors.
      {"verify", kSub8, 6, "report.txt", {"--verify"}, 0,
       "verified per step: 3 input sets, 1 outputs each"},
      {"verify_2", kSub8, 6, "report.txt", {"--verify=2"}, 0, "verified per step: 2 input sets"},
      {"verify_0", kSub8, 6, "report.txt", {"--verify=0"}, 2,
       "--verify takes a number of input sets from 1 to 64"},
      {"verify_inputs_absent", kSub8, 6, "report.txt",
       {"--verify-inputs", "/nonexistent/verify-inputs"}, 2, "--verify-inputs"},
  };
}

class ConvertFlagsTest : public ::testing::TestWithParam<ConvertFlagsCase> {};

TEST_P(ConvertFlagsTest, ExitCodeAndReport) {
  const ConvertFlagsCase& c = GetParam();
  fs::path dir = testing::FreshTestDir("flags_" + c.name);
  fs::path in = ParsedModel(dir, "model", c.model);
  Result result = ConvertWithFlags(in, c.to, dir / c.report, c.flags);
  ASSERT_EQ(result.exit_code, c.exit_code) << result.err;
  std::string said = c.exit_code == 0 ? testing::ReadTestFile(dir / c.report) : result.err;
  EXPECT_TRUE(absl::StrContains(said, c.expect)) << said;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, ConvertFlagsTest, ::testing::ValuesIn(ConvertFlagsCases()),
    [](const ::testing::TestParamInfo<ConvertFlagsCase>& info) { return info.param.name; });

TEST(CliTest, UsageAndIoErrorsAreExitTwo) {
  fs::path dir = testing::FreshTestDir("usage");
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"frobnicate"},
      {"inspect"},
      {"inspect", (dir / "absent.onnx").string()},
      {"inspect", "a.onnx", "--bogus"},
      {"parse", (dir / "absent.txt").string(), "-o", (dir / "x.onnx").string()},
      {"parse", "only.txt"},
      {"convert", "a.onnx", "-o", "b.onnx"},
      {"convert", "a.onnx", "-o", "b.onnx", "--to", "x"},
  };
  for (const auto& args : cases) {
    Result result = RunCli(args);
    EXPECT_EQ(result.exit_code, 2) << absl::StrJoin(args, " ") << ": " << result.err;
    EXPECT_FALSE(result.err.empty());
  }
}

TEST(CliTest, InspectAndPrintWorkOnTheWholeCorpus) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  int failures = 0;
  for (const testing::CorpusCase& c : *cases) {
    for (const char* command : {"inspect", "print", "check"}) {
      Result result = RunCli({command, c.model_path});
      if (result.exit_code != 0 || result.out.empty()) {
        ADD_FAILURE() << c.name << " " << command << ": " << result.err;
        if (++failures > 20) return;
      }
    }
  }
}

}  // namespace
}  // namespace onnxconvert::cli
