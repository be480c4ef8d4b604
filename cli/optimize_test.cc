// onnx-convert optimize, and convert --optimize: what users see.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "proto/onnx.pb.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFoldable = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[2] a = {1.5, -2.0}> {
  c = Constant<value = float[1] {2.0}>()
  b = Mul(a, c)
  unused = Exp(X)
  Y = Add(X, b)
})";

// Writes the model of `text` to `dir`/`name` and returns its path.
fs::path WriteModel(const fs::path& dir, const std::string& name, const char* text) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status();
  fs::path path = dir / name;
  testing::WriteTestFile(path, model->SerializeAsString());
  return path;
}

onnx::ModelProto ReadModel(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  return model;
}

TEST(OptimizeCliTest, OptimizesAndReports) {
  fs::path dir = testing::FreshTestDir("optimize");
  fs::path in = WriteModel(dir, "in.onnx", kFoldable);
  Result result = RunCli({"optimize", in.string(), "-o", (dir / "out.onnx").string(), "--report",
                          (dir / "report.json").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "nodes 4 -> 1")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "fold-constants: 1 matches")) << result.out;
  onnx::ModelProto out = ReadModel(dir / "out.onnx");
  ASSERT_EQ(out.graph().node_size(), 1);
  EXPECT_EQ(out.graph().node(0).op_type(), "Add");
  std::ifstream report(dir / "report.json");
  std::string json((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(json, "\"pass\": \"dead-code\"")) << json;
}

TEST(OptimizeCliTest, VerifyComparesOnRandomInputs) {
  fs::path dir = testing::FreshTestDir("optimize_verify");
  fs::path in = WriteModel(dir, "in.onnx", kFoldable);
  Result result = RunCli({"optimize", in.string(), "-o", (dir / "out.onnx").string(),
                          "--verify=2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "verified on 2 random input sets: the same bits"))
      << result.out;
  Result bad = RunCli({"optimize", in.string(), "-o", (dir / "bad.onnx").string(),
                       "--verify=0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir / "bad.onnx"));
}

// Rule files of the user's run after the profile's passes; a bad one is
// named with its line and column, and nothing is written.
TEST(OptimizeCliTest, UserRuleFiles) {
  fs::path dir = testing::FreshTestDir("optimize_rules");
  fs::path in = WriteModel(dir, "in.onnx", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  n = Neg(X)
  m = Neg(n)
  Y = Relu(m)
})");
  testing::WriteTestFile(dir / "neg.rules", R"(# Neg twice gives X back, to the bit.
rule double_negation
  pattern (X) => (Y) {
    T = Neg(X)
    Y = Neg(T)
  }
  replace (X) => (X)
)");
  Result result = RunCli({"optimize", in.string(), "-o", (dir / "out.onnx").string(), "--rules",
                          (dir / "neg.rules").string(), "--verify"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "user-rules: 1 matches")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "double_negation: 1")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "the same bits")) << result.out;
  onnx::ModelProto out = ReadModel(dir / "out.onnx");
  ASSERT_EQ(out.graph().node_size(), 1);
  EXPECT_EQ(out.graph().node(0).op_type(), "Relu");
  EXPECT_EQ(out.graph().node(0).input(0), "X");
  testing::WriteTestFile(dir / "bad.rules", "rule broken\n  pattern (X) => (Y) { Y = Neg(X) }\n  where nonsense(X)\n");
  Result bad = RunCli({"optimize", in.string(), "-o", (dir / "bad.onnx").string(), "--rules",
                       (dir / "bad.rules").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad.err, "bad.rules:3:")) << bad.err;
  EXPECT_FALSE(fs::exists(dir / "bad.onnx"));
}

TEST(OptimizeCliTest, ChosenAndSkippedPasses) {
  fs::path dir = testing::FreshTestDir("optimize_passes");
  fs::path in = WriteModel(dir, "in.onnx", kFoldable);
  Result only = RunCli({"optimize", in.string(), "-o", (dir / "dce.onnx").string(), "--passes",
                        "dead-code"});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(ReadModel(dir / "dce.onnx").graph().node_size(), 3);  // Exp gone
  Result skip = RunCli({"optimize", in.string(), "-o", (dir / "skip.onnx").string(), "--skip",
                        "fold-constants,dead-code"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(ReadModel(dir / "skip.onnx").graph().node_size(), 3);  // the Constant went
  Result list = RunCli({"optimize", in.string(), "--list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(absl::StrContains(list.out, "fold-constants (exact deploy):")) << list.out;
}

TEST(OptimizeCliTest, BadFlagsAreUsageErrorsAndWriteNothing) {
  fs::path dir = testing::FreshTestDir("optimize_bad");
  fs::path in = WriteModel(dir, "in.onnx", kFoldable);
  fs::path out = dir / "out.onnx";
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--passes", "no-such-pass"}, {"--profile", "fast"}, {"--max-fold-bytes", "lots"}}) {
    std::vector<std::string> args = {"optimize", in.string(), "-o", out.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    Result result = RunCli(args);
    EXPECT_EQ(result.exit_code, 2) << flags[0];
    EXPECT_TRUE(absl::StartsWith(result.err, "onnx-convert optimize: ")) << result.err;
    EXPECT_FALSE(fs::exists(out)) << flags[0];
  }
  Result missing = RunCli({"optimize", (dir / "absent.onnx").string(), "-o", out.string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST(OptimizeCliTest, ConvertThenOptimizeInOneReport) {
  fs::path dir = testing::FreshTestDir("convert_optimize");
  fs::path in = WriteModel(dir, "in.onnx", kFoldable);
  Result result = RunCli({"convert", in.string(), "-o", (dir / "out.onnx").string(), "--to",
                          "17", "--optimize", "--report", (dir / "report.json").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "opset 13 -> 17")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "optimize (exact)")) << result.out;
  onnx::ModelProto out = ReadModel(dir / "out.onnx");
  EXPECT_EQ(out.opset_import(0).version(), 17);
  EXPECT_EQ(out.graph().node_size(), 1);
  std::ifstream report(dir / "report.json");
  std::string json((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StartsWith(json, "{\"conversion\": {")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"optimize\": {")) << json;
}


// A user rule file for the --explain cases: Neg twice gives X back.
constexpr const char* kNegRules = R"(rule double_negation
  pattern (X) => (Y) {
    T = Neg(X)
    Y = Neg(T)
  }
  replace (X) => (X)
)";

// Slurps `path`.
std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct ExplainCliCase {
  const char* name;
  const char* model;
  const char* rule;
  const char* report;  // the --report file's name, "" for none
  std::vector<std::string> out_has;     // in what is printed
  std::vector<std::string> report_has;  // in the report file
};

TEST(OptimizeCliTest, ExplainSaysWhyARuleMatchesOrNot) {
  const ExplainCliCase cases[] = {
      {"user_rule_matches", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  [n] N = Neg(X)
  [m] M = Neg(N)
  [r] Y = Relu(M)
})",
       "double_negation", "",
       {"explain double_negation at node 'm' (#1, Neg) in main: matches, takes node 'n' (#0, Neg), "
        "node 'm' (#1, Neg)",
        "explain double_negation at node 'n' (#0, Neg) in main: no match: input 0 of node 'n'"},
       {}},
      {"builtin_rule_where_fails", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[1] k = {2.0}> {
  [mul] M = Mul(X, k)
  [r] Y = Relu(M)
})",
       "mul_by_one", "report.txt",
       {"explain mul_by_one at node 'mul' (#0, Mul) in main: no match: where `value(k) == 1` "
        "(rewrites/rules/no_ops.rules:57:",
        "fails: value(k) is [2], wanted == 1; k ('k'): float[1], a known constant, 1 use"},
       {"explain mul_by_one at node 'mul'"}},
      {"intermediate_with_two_users_json", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y, float[2] Z) {
  [n] N = Neg(X)
  [m] M = Neg(N)
  [r] Y = Relu(M)
  [s] Z = Abs(N)
})",
       "double_negation", "report.json",
       {"intermediate T ('N') has another user: node 's' (#3, Abs)"},
       {"\"explain\": [", "\"rule\": \"double_negation\"", "\"node\": \"m\"", "\"index\": 1",
        "\"matched\": false", "has another user: node 's' (#3, Abs)"}},
  };
  for (const ExplainCliCase& c : cases) {
    SCOPED_TRACE(c.name);
    fs::path dir = testing::FreshTestDir(absl::StrCat("optimize_explain_", c.name));
    fs::path in = WriteModel(dir, "in.onnx", c.model);
    testing::WriteTestFile(dir / "neg.rules", kNegRules);
    std::vector<std::string> args = {"optimize", in.string(), "-o", (dir / "out.onnx").string(),
                                     "--rules", (dir / "neg.rules").string(), "--explain",
                                     c.rule};
    if (*c.report != '\0') {
      args.push_back("--report");
      args.push_back((dir / c.report).string());
    }
    Result result = RunCli(args);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (const std::string& part : c.out_has) {
      EXPECT_TRUE(absl::StrContains(result.out, part)) << result.out << "\nlacks: " << part;
    }
    std::string report = *c.report != '\0' ? ReadText(dir / c.report) : "";
    for (const std::string& part : c.report_has) {
      EXPECT_TRUE(absl::StrContains(report, part)) << report << "\nlacks: " << part;
    }
  }
}

TEST(OptimizeCliTest, ExplainingAnUnknownRuleIsAUsageError) {
  fs::path dir = testing::FreshTestDir("optimize_explain_unknown");
  fs::path in = WriteModel(dir, "in.onnx", kFoldable);
  Result result = RunCli({"optimize", in.string(), "-o", (dir / "out.onnx").string(),
                          "--explain", "no_such_rule"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(result.err, "no rule 'no_such_rule'")) << result.err;
  EXPECT_FALSE(fs::exists(dir / "out.onnx"));
}

// How often `part` occurs in `text`.
int Occurrences(const std::string& text, const std::string& part) {
  int count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

struct HtmlCliCase {
  const char* name;
  std::vector<std::string> command;  // after the input model; "OUT", "REPORT" stand for paths
  std::vector<std::string> has;
};

// optimize --report x.html and convert --optimize --report x.html: one
// page, no external assets, tags balanced, counts and escaped ONNX text.
TEST(OptimizeCliTest, HtmlReports) {
  const HtmlCliCase cases[] = {
      {"optimize",
       {"optimize", "IN", "-o", "OUT", "--report", "REPORT"},
       {"<title>onnx-convert optimize report: in.onnx</title>",
        "<dt>Nodes</dt><dd>4 \xE2\x86\x92 1</dd>",
        "<tr class=\"pass\"><td><code>fold-constants</code></td><td class=\"num\">1</td>",
        // The Constant's attribute in ONNX text, escaped.
        "Constant &lt;value = float[1] {2.0}&gt;", "<td class=\"before\"><pre class=\"onnx\">"}},
      {"convert_optimize",
       {"convert", "IN", "-o", "OUT", "--to", "17", "--optimize", "--report", "REPORT"},
       {"<h1>Conversion report: <code>in.onnx</code></h1>", "<h1>Optimization</h1>",
        "<tr class=\"pass\"><td><code>dead-code</code></td><td class=\"num\">1</td>"}},
  };
  for (const HtmlCliCase& c : cases) {
    SCOPED_TRACE(c.name);
    fs::path dir = testing::FreshTestDir(absl::StrCat("optimize_html_", c.name));
    fs::path in = WriteModel(dir, "in.onnx", kFoldable);
    std::vector<std::string> args;
    for (const std::string& arg : c.command) {
      args.push_back(arg == "IN"       ? in.string()
                     : arg == "OUT"    ? (dir / "out.onnx").string()
                     : arg == "REPORT" ? (dir / "report.html").string()
                                       : arg);
    }
    Result result = RunCli(args);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::string html = ReadText(dir / "report.html");
    EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>")) << html;
    for (const std::string& part : c.has) {
      EXPECT_TRUE(absl::StrContains(html, part)) << html << "\nlacks: " << part;
    }
    for (const char* tag : {"table", "tr", "pre", "dl", "section", "h2"}) {
      EXPECT_EQ(Occurrences(html, absl::StrCat("<", tag, ">")) +
                    Occurrences(html, absl::StrCat("<", tag, " ")),
                Occurrences(html, absl::StrCat("</", tag, ">")))
          << tag;
    }
    EXPECT_FALSE(absl::StrContains(html, "<script")) << html;
    EXPECT_FALSE(absl::StrContains(html, "http")) << html;
    EXPECT_FALSE(absl::StrContains(html, "<value")) << html;
  }
}

}  // namespace
}  // namespace onnxconvert::cli
