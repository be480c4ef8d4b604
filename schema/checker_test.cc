#include "schema/checker.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"
#include "tests/test_files.h"
#include "ir/model_io.h"
#include "ir/text_parser.h"
#include "tests/corpus.h"

namespace onnxconvert::schema {
namespace {

onnx::ModelProto Model(absl::string_view text) { return testing::ModelFromText(text); }

TEST(CheckerTest, ValidModelHasNoIssues) {
  CheckReport report = CheckModel(Model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N,4] X, bool C) => (float[N,4] Y) <float[4] W = {1.0, 2.0, 3.0, 4.0}> {
  [add] T = Add(X, W)
  [if] Y = If <then_branch = t () => (float[N,4] A) { A = Relu(T) },
               else_branch = e () => (float[N,4] B) { B = Neg(T) }> (C)
})"));
  EXPECT_TRUE(report.issues.empty()) << report.issues[0].ToString();
  EXPECT_EQ(report.nodes_checked, 4);
  EXPECT_EQ(report.graphs_checked, 3);
}

// One case of testdata/checker.cases (the format: that file's opening
// comment).
struct CheckerCase {
  std::string name;
  std::string where = "";  // "file:line" of its `case` line
  std::string model = "";  // ONNX text
  std::vector<std::string> edits = {};
  std::string code = "";    // the first error's CheckCodeName; "" when it passes
  std::string expect = "";  // "pass", or the first error as ToString() prints it
  std::vector<std::string> warnings = {};
  std::string file_error = "";  // why the case file did not read, if it did not
};

void PrintTo(const CheckerCase& c, std::ostream* os) { *os << c.name; }

constexpr absl::string_view kCaseFile = "schema/testdata/checker.cases";

// Adds `line` ("key: value", or "key:" opening a block), of `c`, to `c`.
absl::Status AddKey(CheckerCase& c, absl::string_view line) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(line, absl::MaxSplits(':', 1));
  absl::string_view key = kv.first;
  std::string value(absl::StripLeadingAsciiWhitespace(kv.second));
  if (key == "model") {
    c.model = value;
  } else if (key == "edit") {
    c.edits.push_back(value);
  } else if (key == "code") {
    c.code = value;
  } else if (key == "expect") {
    c.expect = value;
  } else if (key == "warning") {
    c.warnings.push_back(value);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown key '", key, "'"));
  }
  return absl::OkStatus();
}

// The cases of the case file `path` holding `text`; an error names the line.
absl::StatusOr<std::vector<CheckerCase>> ParseCheckerCases(absl::string_view path,
                                                           absl::string_view text) {
  std::vector<CheckerCase> cases;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    std::string where = absl::StrCat(path, ":", number);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    if (absl::ConsumePrefix(&line, "case ")) {
      cases.push_back({.name = std::string(line), .where = where});
      continue;
    }
    if (cases.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": no case yet"));
    CheckerCase& c = cases.back();
    if (absl::ConsumePrefix(&line, "  ")) {  // a line of the model block
      absl::StrAppend(&c.model, c.model.empty() ? "" : "\n", line);
    } else if (absl::Status added = AddKey(c, line); !added.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", added.message()));
    }
  }
  absl::flat_hash_set<std::string> names;
  for (const CheckerCase& c : cases) {
    if (c.model.empty() || c.expect.empty() || (c.expect == "pass") != c.code.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(c.where, ": a case has a model and expect:, and code: unless it passes"));
    }
    bool word = !c.name.empty() && std::all_of(c.name.begin(), c.name.end(), [](char ch) {
      return absl::ascii_isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    });
    if (!word || !names.insert(c.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(c.where, ": case '", c.name, "' is no word or is named twice"));
    }
  }
  return cases;
}

// The cases of kCaseFile, or one case that fails with why it did not read.
std::vector<CheckerCase> CheckerCases() {
  std::string text = testing::ReadTestFile(std::string(kCaseFile));
  absl::StatusOr<std::vector<CheckerCase>> cases =
      !text.empty() ? ParseCheckerCases(kCaseFile, text)
                    : absl::NotFoundError(absl::StrCat(kCaseFile, ": cannot be read, or empty"));
  if (!cases.ok()) {
    return {{.name = "case_file", .file_error = std::string(cases.status().message())}};
  }
  return *std::move(cases);
}

// The message at `path` ("graph.node[0].attribute[0]") of `root`: each
// step a singular message field or an element of a repeated one.
absl::StatusOr<google::protobuf::Message*> MessageAt(google::protobuf::Message* root,
                                                     absl::string_view path) {
  google::protobuf::Message* message = root;
  for (absl::string_view step : absl::StrSplit(path, '.')) {
    std::optional<int> index;
    size_t open = step.find('[');
    if (open != absl::string_view::npos && absl::EndsWith(step, "]")) {
      int i = 0;
      if (!absl::SimpleAtoi(step.substr(open + 1, step.size() - open - 2), &i)) {
        return absl::InvalidArgumentError(absl::StrCat("bad index in '", step, "'"));
      }
      index = i;
      step = step.substr(0, open);
    }
    const google::protobuf::FieldDescriptor* field =
        message->GetDescriptor()->FindFieldByName(std::string(step));
    const google::protobuf::Reflection* reflection = message->GetReflection();
    if (field == nullptr || field->message_type() == nullptr ||
        field->is_repeated() != index.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("'", step, "' is no message field here"));
    }
    if (index && *index >= reflection->FieldSize(*message, field)) {
      return absl::InvalidArgumentError(absl::StrCat("'", step, "' has no element ", *index));
    }
    message = index ? reflection->MutableRepeatedMessage(message, field, *index)
                    : reflection->MutableMessage(message, field);
  }
  return message;
}

// Does `edit` ("clear PATH" or "merge PATH: TEXT") to `model`.
absl::Status ApplyEdit(onnx::ModelProto& model, absl::string_view edit) {
  if (absl::ConsumePrefix(&edit, "merge ")) {
    std::pair<absl::string_view, absl::string_view> target =
        absl::StrSplit(edit, absl::MaxSplits(':', 1));
    OC_ASSIGN_OR_RETURN(google::protobuf::Message * message, MessageAt(&model, target.first));
    if (!google::protobuf::TextFormat::MergeFromString(std::string(target.second), message)) {
      return absl::InvalidArgumentError(absl::StrCat("cannot merge '", target.second, "'"));
    }
    return absl::OkStatus();
  }
  if (!absl::ConsumePrefix(&edit, "clear ")) {
    return absl::InvalidArgumentError(absl::StrCat("unknown edit '", edit, "'"));
  }
  // An element or singular message is cleared whole; a last field by name.
  size_t dot = edit.rfind('.');
  absl::string_view last = dot == absl::string_view::npos ? edit : edit.substr(dot + 1);
  if (absl::EndsWith(last, "]")) {
    OC_ASSIGN_OR_RETURN(google::protobuf::Message * message, MessageAt(&model, edit));
    message->Clear();
    return absl::OkStatus();
  }
  google::protobuf::Message* parent = &model;
  if (dot != absl::string_view::npos) {
    OC_ASSIGN_OR_RETURN(parent, MessageAt(&model, edit.substr(0, dot)));
  }
  const google::protobuf::FieldDescriptor* field =
      parent->GetDescriptor()->FindFieldByName(std::string(last));
  if (field == nullptr) return absl::InvalidArgumentError(absl::StrCat("no field '", last, "'"));
  parent->GetReflection()->ClearField(parent, field);
  return absl::OkStatus();
}

// The data-driven checker test: each case's model, edited, checks as the
// case expects (its first error, its warnings).
class CheckerCaseTest : public ::testing::TestWithParam<CheckerCase> {};

TEST_P(CheckerCaseTest, Checks) {
  const CheckerCase& c = GetParam();
  ASSERT_TRUE(c.file_error.empty()) << c.file_error;
  onnx::ModelProto model = Model(c.model);
  for (const std::string& edit : c.edits) {
    absl::Status edited = ApplyEdit(model, edit);
    ASSERT_TRUE(edited.ok()) << c.where << ": " << edited;
  }
  CheckReport report = CheckModel(model);
  const CheckIssue* first = nullptr;
  std::vector<std::string> warnings;
  for (const CheckIssue& issue : report.issues) {
    if (issue.is_warning) warnings.push_back(issue.ToString());
    else if (first == nullptr) first = &issue;
  }
  EXPECT_EQ(warnings, c.warnings) << c.where;
  if (c.expect == "pass") {
    EXPECT_TRUE(report.status().ok()) << c.where << ": " << report.status();
    return;
  }
  ASSERT_FALSE(report.status().ok()) << c.where;
  EXPECT_EQ(CheckCodeName(first->code), c.code) << c.where << ": " << first->ToString();
  EXPECT_EQ(first->ToString(), c.expect) << c.where;
}

INSTANTIATE_TEST_SUITE_P(CaseFile, CheckerCaseTest, ::testing::ValuesIn(CheckerCases()),
                         [](const ::testing::TestParamInfo<CheckerCase>& info) {
                           return info.param.name;
                         });

TEST(CheckerTest, FunctionsAndVendorOpsAreChecked) {
  CheckReport report = CheckModel(Model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1, "com.vendor" : 1]>
g (float X) => (float Y) {
  T = local.Twice(X)
  Y = com.vendor.Fancy(T)
}
<domain: "local", opset_import: ["" : 13]>
Twice (A) => (B) {
  [bad] B = Add(A, Missing)
})"));
  ASSERT_EQ(report.error_count(), 1) << report.issues[0].ToString();
  EXPECT_EQ(report.issues[0].ToString(),
            "function 'local.Twice' \xE2\x80\xBA node 'bad' (Add-13): undefined-input: input "
            "'Missing' is not defined");
  EXPECT_EQ(report.functions_checked, 1);
}

// CheckFunctions finds in the functions what CheckModel finds there, and
// nothing of the graphs.
TEST(CheckerTest, CheckFunctionsChecksTheFunctionsAlone) {
  onnx::ModelProto model = Model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float X) => (float Y) {
  Y = Add(X, Undefined)
}
<domain: "local", opset_import: ["" : 13]>
Twice (A) => (B) {
  [bad] B = Gelu(A)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
Loops (A) => (B) {
  B = local.Loops(A)
})");
  CheckReport report = CheckFunctions(model);
  std::vector<std::string> found;
  for (const CheckIssue& issue : report.issues) found.push_back(CheckCodeName(issue.code));
  EXPECT_EQ(found, (std::vector<std::string>{"unknown-operator", "function-cycle"}));
  EXPECT_EQ(report.functions_checked, 2);
  EXPECT_EQ(report.nodes_checked, 2);
  EXPECT_EQ(report.issues[0].path, "function 'local.Twice'");
  CheckReport whole = CheckModel(model);
  ASSERT_EQ(whole.issues.size(), 3u);
  EXPECT_EQ(whole.issues[1].ToString(), report.issues[0].ToString());
  EXPECT_EQ(whole.issues[2].ToString(), report.issues[1].ToString());
}

// Every model of the corpus passes the checker at its own opset.
TEST(CheckerTest, EveryCorpusModelPasses) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::map<std::string, int> by_code;
  int failures = 0;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    CheckReport report = CheckModel(loaded->model);
    for (const CheckIssue& issue : report.issues) {
      if (issue.is_warning) continue;
      ++by_code[CheckCodeName(issue.code)];
      if (++failures <= 30) ADD_FAILURE() << c.name << ": " << issue.ToString();
    }
  }
  for (const auto& [code, count] : by_code) std::cerr << code << ": " << count << "\n";
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace onnxconvert::schema
