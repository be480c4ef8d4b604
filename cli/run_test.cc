// `onnx-convert run`, one table-driven case per behaviour: the command line
// (with {model}, {case}, ... standing for files the fixture writes), the
// exit code, stdout and stderr.

#include "cli/run.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli/cli_test_util.h"
#include "eval/data_sets.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/model_text.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {

namespace fs = std::filesystem;
using eval::NamedValue;
using eval::Tensor;
using eval::Value;

// y = a + a (int64, exact), z = -x (float, within tolerance), s = Shape(x).
constexpr char kModel[] =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "g (int64[2] a, float[N] x) => (int64[2] y, float[N] z, int64[1] s) {\n"
    "  y = Add(a, a)\n  z = Neg(x)\n  s = Shape(x)\n}";
constexpr char kBadModel[] =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "g (int64[2] a, int64[3] b) => (int64[2] y) { y = Add(a, b) }";

Value Ints(std::vector<int64_t> values) { return Value(eval::Int64Tensor(values)); }

Value Floats(std::vector<float> values) {
  Tensor t(onnx::TensorProto::FLOAT, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return Value(std::move(t));
}

// Writes a data set of inputs a, x and expected outputs y, z, s to `dir`.
void WriteSet(const fs::path& dir, std::vector<int64_t> y, std::vector<float> z) {
  std::vector<NamedValue> inputs;
  inputs.push_back({"a", Ints({1, 2})});
  inputs.push_back({"x", Floats({0.5f, -1.0f})});
  ASSERT_TRUE(eval::WriteValues(dir.string(), "input", inputs).ok());
  std::vector<NamedValue> outputs;
  outputs.push_back({"y", Ints(y)});
  outputs.push_back({"z", Floats(z)});
  outputs.push_back({"s", Ints({2})});
  ASSERT_TRUE(eval::WriteValues(dir.string(), "output", outputs).ok());
}

// The files the cases run on, written once.
const fs::path& Files() {
  static const fs::path* root = [] {
    auto* dir = new fs::path(testing::FreshTestDir("run_test"));
    EXPECT_TRUE(SaveModel(testing::ModelFromText(kModel), (*dir / "model.onnx").string()).ok());
    EXPECT_TRUE(SaveModel(testing::ModelFromText(kBadModel), (*dir / "bad.onnx").string()).ok());
    WriteSet(*dir / "case" / "test_data_set_0", {2, 4}, {-0.5f, 1.0f});
    WriteSet(*dir / "close" / "test_data_set_0", {2, 4}, {-0.500001f, 1.0f});
    WriteSet(*dir / "off" / "test_data_set_0", {2, 5}, {-0.5f, 1.001f});
    WriteSet(*dir / "flat", {2, 4}, {-0.5f, 1.0f});
    return dir;
  }();
  return *root;
}

// `text` with {name} replaced by the fixture's path of `name`.
std::string Expand(const std::string& text) {
  std::string root = Files().string();
  return absl::StrReplaceAll(text, {{"{model}", root + "/model.onnx"},
                                    {"{bad}", root + "/bad.onnx"},
                                    {"{dir}", root}});
}

struct Case {
  std::string name;
  std::string args;  // after "run", split at spaces
  int exit_code;
  std::string out;
  std::string err;
};

const Case kCases[] = {
    {"compare_passes", "{model} --inputs {dir}/case --compare {dir}/case", kExitOk,
     "test_data_set_0: output 'y': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n"
     "test_data_set_0: output 'z': pass; worst [0]: expected -0.5, actual -0.5, abs 0, rel 0\n"
     "test_data_set_0: output 's': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n",
     ""},
    {"compare_within_float_tolerance", "{model} --inputs {dir}/case --compare {dir}/close", kExitOk,
     "test_data_set_0: output 'y': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n"
     "test_data_set_0: output 'z': pass; worst [0]: expected -0.500001013, actual -0.5, "
     "abs 1.01327896e-06, rel 2.02655382e-06\n"
     "test_data_set_0: output 's': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n",
     ""},
    {"compare_reports_the_worst_element", "{model} --inputs {dir}/case --compare {dir}/off",
     kExitInvalidModel,
     "test_data_set_0: output 'y': FAIL: 1 of 2 elements differ; worst [1]: expected 5, "
     "actual 4, abs 1, rel 0.2\n"
     "test_data_set_0: output 'z': FAIL: 1 of 2 elements differ; worst [1]: expected "
     "1.00100005, actual 1, abs 0.00100004673, rel 0.000999047636\n"
     "test_data_set_0: output 's': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n",
     "{model}: outputs differ from the expected ones\n"},
    {"flat_folder_is_one_set", "{model} --inputs {dir}/flat --compare {dir}/flat", kExitOk,
     "output 'y': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n"
     "output 'z': pass; worst [0]: expected -0.5, actual -0.5, abs 0, rel 0\n"
     "output 's': pass; worst [0]: expected 2, actual 2, abs 0, rel 0\n",
     ""},
    {"prints_outputs_without_compare", "{model} --inputs {dir}/case", kExitOk,
     "test_data_set_0: output 'y' = int64[2] {2, 4}\n"
     "test_data_set_0: output 'z' = float[2] {-0.5, 1}\n"
     "test_data_set_0: output 's' = int64[1] {2}\n",
     ""},
    // Random inputs: the seed fixes them (mt19937_64, the same everywhere),
    // --dim sizes the symbolic dims.
    {"random_inputs_take_dims", "{model} --random 1 --seed 3 --dim N=3", kExitOk,
     "test_data_set_0: output 'y' = int64[2] {20, 0}\n"
     "test_data_set_0: output 'z' = float[3] {-0.180483, 0.307262, -0.119591}\n"
     "test_data_set_0: output 's' = int64[1] {3}\n",
     ""},
    {"evaluation_error_names_the_node", "{bad} --random 1", kExitInvalidModel, "",
     "{bad}: test_data_set_0: node (Add-13) of 'y': shapes [2], [3] do not broadcast\n"},
    {"inputs_and_random_refused", "{model} --inputs {dir}/case --random 1", kExitUsageOrIo, "",
     "onnx-convert run: give --inputs DIR or --random N, not both\n"},
    {"seed_without_random_refused", "{model} --inputs {dir}/case --seed 1", kExitUsageOrIo, "",
     "onnx-convert run: --seed and --dim go with --random N\n"},
    {"inputs_needed", "{model}", kExitUsageOrIo, "",
     "onnx-convert run: the model has inputs: give --inputs DIR or --random N\n"},
    {"compare_folder_missing", "{model} --inputs {dir}/case --compare {dir}/nowhere",
     kExitUsageOrIo, "", "{dir}/nowhere: no such folder\n"},
    {"bad_dim_refused", "{model} --random 1 --dim N", kExitUsageOrIo, "",
     "onnx-convert run: --dim takes NAME=V[,NAME=V...] with V >= 0, got 'N'\n"},
};

class RunTest : public ::testing::TestWithParam<Case> {};

TEST_P(RunTest, ExitCodeAndOutput) {
  const Case& c = GetParam();
  std::vector<std::string> args = {"run"};
  for (absl::string_view arg : absl::StrSplit(Expand(c.args), ' ')) args.emplace_back(arg);
  Result result = RunCli(args);
  EXPECT_EQ(result.exit_code, c.exit_code) << result.err;
  EXPECT_EQ(result.out, Expand(c.out));
  EXPECT_EQ(result.err, Expand(c.err));
}

INSTANTIATE_TEST_SUITE_P(Run, RunTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Random inputs and their outputs land in OUTDIR in the backend layout, so
// that the folder is a case of its own; the same seed makes the same files.
TEST(RunRandomTest, WritesACaseThatComparesWithItself) {
  std::string root = Files().string();
  for (const char* dir : {"r1", "r2"}) {
    Result made = RunCli({"run", root + "/model.onnx", "--random", "2", "--seed", "5",
                          "--dim", "N=4", "-o", root + "/" + dir});
    ASSERT_EQ(made.exit_code, kExitOk) << made.err;
  }
  for (const char* file : {"input_0.pb", "input_1.pb", "output_0.pb", "output_1.pb",
                           "output_2.pb"}) {
    std::string one = testing::ReadTestFile(fs::path(root) / "r1/test_data_set_1" / file);
    EXPECT_FALSE(one.empty()) << file;
    EXPECT_EQ(one, testing::ReadTestFile(fs::path(root) / "r2/test_data_set_1" / file)) << file;
  }
  Result again = RunCli({"run", root + "/model.onnx", "--inputs", root + "/r1", "--compare",
                         root + "/r1"});
  EXPECT_EQ(again.exit_code, kExitOk) << again.err;
  EXPECT_NE(again.out.find("test_data_set_1: output 's': pass; worst [0]: expected 4"),
            std::string::npos)
      << again.out;
  Result other_seed = RunCli({"run", root + "/model.onnx", "--random", "2", "--seed", "6",
                              "--dim", "N=4", "-o", root + "/r3"});
  ASSERT_EQ(other_seed.exit_code, kExitOk) << other_seed.err;
  EXPECT_NE(testing::ReadTestFile(fs::path(root) / "r1/test_data_set_0/input_1.pb"),
            testing::ReadTestFile(fs::path(root) / "r3/test_data_set_0/input_1.pb"));
}

}  // namespace
}  // namespace onnxconvert::cli
