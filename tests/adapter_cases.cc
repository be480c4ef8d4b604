#include "tests/adapter_cases.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "adapters/adapter_helpers.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

// The label of a case in failure messages: where it stands and its name.
std::string Label(const ConversionCase& c) {
  return c.where.empty() ? c.name : absl::StrCat(c.where, ": ", c.name);
}

}  // namespace

void ExpectConversion(const ConversionCase& c) {
  if (!c.file_error.empty()) FAIL() << c.file_error;
  onnx::ModelProto model = CaseModel(c);
  converter::ConvertOptions options;
  options.target_opset = c.to;
  options.no_casts = c.no_casts;
  // Each step is validated node by node and as a whole, which must agree.
  options.cross_check = true;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
  if (c.error.empty()) {
    ASSERT_TRUE(result.ok()) << Label(c) << ": " << result.status();
    if (c.expanded_op.empty()) {
      EXPECT_EQ(c.all_nodes ? AllNodesText(result->model.graph())
                            : PrintNodeText(result->model.graph().node(0)),
                c.expected_node)
          << Label(c);
    }
    for (const onnx::NodeProto& node : result->model.graph().node()) {
      EXPECT_NE(node.op_type(), c.expanded_op) << Label(c);
    }
    if (c.constants.has_value()) {
      EXPECT_EQ(ConstantsText(result->model.graph()), *c.constants) << Label(c);
    }
    if (!c.expected_model.empty()) {
      EXPECT_EQ(PrintModelText(result->model),
                PrintModelText(testing::ModelFromText(c.expected_model)))
          << Label(c);
    }
    for (const converter::StepReport& step : result->report.steps) {
      EXPECT_TRUE(step.validation == converter::StepValidation::kOk ||
                  step.validation == converter::StepValidation::kIncremental ||
                  step.validation == converter::StepValidation::kUnchanged)
          << Label(c);
    }
    return;
  }
  ASSERT_FALSE(result.ok()) << Label(c);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << Label(c);
  EXPECT_TRUE(absl::StrContains(result.status().message(), c.error))
      << Label(c) << ": " << result.status();
}

std::string ConstantsText(const onnx::GraphProto& graph) {
  std::string text;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    std::string values;
    if (std::optional<std::vector<int64_t>> ints = IntValues(tensor)) {
      values = absl::StrJoin(*ints, ", ");
    } else if (std::optional<std::vector<double>> floats = FloatValues(tensor)) {
      values = absl::StrJoin(*floats, ", ");
    } else {
      // float16 as its bits.
      std::vector<std::string> bits;
      for (int32_t v : tensor.int32_data()) bits.push_back(absl::StrFormat("0x%04x", v));
      values = absl::StrCat("float16 ", absl::StrJoin(bits, ", "));
    }
    absl::StrAppend(&text, text.empty() ? "" : "; ", tensor.name(), " = ",
                    tensor.dims_size() == 0 ? values : absl::StrCat("{", values, "}"));
  }
  return text;
}

bool ReportLists(const converter::ConversionResult& result, ChangeKind kind,
                 std::optional<std::string> detail) {
  for (const converter::StepReport& step : result.report.steps) {
    for (const converter::NodeChange& node : step.nodes) {
      for (const Change& change : node.changes) {
        if (change.kind == kind && (!detail.has_value() || change.detail == *detail)) return true;
      }
    }
  }
  return false;
}

namespace {

// How a case file's key takes its value: the lines of a block are joined
// with `joiner`; `inline_only` keys take one value on their own line.
struct CaseKey {
  const char* key;
  const char* joiner;
  bool inline_only;
  // Stores the value in the case; false when the value is not valid there.
  bool (*store)(ConversionCase& c, std::string value);
};

bool StoreText(std::string& field, std::string value) {
  field = std::move(value);
  return !field.empty();
}

// Stores a value in the case's text field `kField`; false when it is empty.
template <std::string ConversionCase::*kField>
bool StoreTextField(ConversionCase& c, std::string value) {
  return StoreText(c.*kField, std::move(value));
}

constexpr CaseKey kCaseKeys[] = {
    {"model", "\n", false, StoreTextField<&ConversionCase::graph>},
    {"node", " ", false, StoreTextField<&ConversionCase::expected_node>},
    {"nodes", "; ", false,
     [](ConversionCase& c, std::string v) {
       c.all_nodes = true;
       return StoreText(c.expected_node, std::move(v));
     }},
    {"error", " ", false, StoreTextField<&ConversionCase::error>},
    {"expanded", "", true, StoreTextField<&ConversionCase::expanded_op>},
    {"converted model", "\n", false,
     [](ConversionCase& c, std::string v) {
       return StoreText(c.expected_model, absl::StrCat(v, "\n"));
     }},
    {"constants", "; ", false,
     [](ConversionCase& c, std::string v) {
       c.constants = v == "none" ? "" : v;
       return !v.empty();
     }},
    {"ir_version", "", true,
     [](ConversionCase& c, std::string v) { return absl::SimpleAtoi(v, &c.ir_version); }},
    {"no_casts", "", true,
     [](ConversionCase& c, std::string v) { return absl::SimpleAtob(v, &c.no_casts); }},
};

const CaseKey* FindKey(absl::string_view key) {
  for (const CaseKey& k : kCaseKeys) {
    if (key == k.key) return &k;
  }
  return nullptr;
}

// What a complete case must hold; the error says what is missing or too
// much.
absl::Status CheckCase(const ConversionCase& c) {
  if (c.graph.empty()) return absl::InvalidArgumentError("no model:");
  if ((c.expected_node.empty() ? 0 : 1) + (c.error.empty() ? 0 : 1) +
          (c.expanded_op.empty() ? 0 : 1) !=
      1) {
    return absl::InvalidArgumentError("give either node: (or nodes:), expanded: or error:");
  }
  if (!c.error.empty() && (c.constants.has_value() || !c.expected_model.empty())) {
    return absl::InvalidArgumentError("a refused case has no constants: or converted model:");
  }
  return absl::OkStatus();
}

// Reads a case file line by line: `case NAME: FROM -> TO` starts a case;
// `key: value` or `key:` and the lines below it indented by two spaces give
// its parts; lines starting with '#' and blank lines are comments.
class CaseFileParser {
 public:
  explicit CaseFileParser(absl::string_view path) : path_(path) {}

  absl::Status Line(int number, absl::string_view line) {
    line_ = number;
    if (line.empty() || absl::StartsWith(line, "#")) return absl::OkStatus();
    if (absl::ConsumePrefix(&line, "  ")) {
      if (key_ == nullptr) return Error("an indented line under no block key");
      if (inline_) {
        return Error(absl::StrCat("'", key_->key, ":' has a value on its line and below it"));
      }
      block_.emplace_back(line);
      return absl::OkStatus();
    }
    if (absl::Status status = EndKey(); !status.ok()) return status;
    if (absl::ConsumePrefix(&line, "case ")) return StartCase(line);
    return StartKey(line);
  }

  absl::StatusOr<std::vector<ConversionCase>> Finish() {
    if (absl::Status status = EndCase(); !status.ok()) return status;
    return std::move(cases_);
  }

 private:
  absl::Status Error(absl::string_view message, int line = 0) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ":", line == 0 ? line_ : line, ": ", message));
  }

  absl::Status StartCase(absl::string_view line) {
    if (absl::Status status = EndCase(); !status.ok()) return status;
    std::pair<absl::string_view, absl::string_view> name_versions =
        absl::StrSplit(line, absl::MaxSplits(": ", 1));
    std::pair<absl::string_view, absl::string_view> versions =
        absl::StrSplit(name_versions.second, " -> ");
    ConversionCase c;
    c.name = std::string(name_versions.first);
    if (c.name.empty() || !absl::SimpleAtoi(versions.first, &c.from) ||
        !absl::SimpleAtoi(versions.second, &c.to)) {
      return Error("a case line is 'case NAME: FROM -> TO'");
    }
    if (!names_.emplace(c.name, line_).second) {
      return Error(absl::StrCat("case '", c.name, "' is named already at line ", names_[c.name]));
    }
    c.where = absl::StrCat(path_, ":", line_);
    case_ = std::move(c);
    case_line_ = line_;
    seen_.clear();
    return absl::OkStatus();
  }

  absl::Status StartKey(absl::string_view line) {
    if (!case_.has_value()) return Error("a key before the first 'case' line");
    std::pair<absl::string_view, absl::string_view> key_value =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    const CaseKey* key = FindKey(key_value.first);
    if (key == nullptr || !absl::StrContains(line, ':')) {
      return Error(absl::StrCat("unknown key '", key_value.first, "'"));
    }
    if (!seen_.insert(key->key).second) return Error(absl::StrCat("'", key->key, ":' twice"));
    absl::string_view value = absl::StripLeadingAsciiWhitespace(key_value.second);
    key_ = key;
    key_line_ = line_;
    block_.clear();
    if (!value.empty()) {
      block_.emplace_back(value);
      inline_ = true;
    } else if (key->inline_only) {
      return Error(absl::StrCat("'", key->key, ":' takes its value on its line"));
    } else {
      inline_ = false;
    }
    return absl::OkStatus();
  }

  absl::Status EndKey() {
    if (key_ == nullptr) return absl::OkStatus();
    const CaseKey* key = key_;
    key_ = nullptr;
    if (!key->store(*case_, absl::StrJoin(block_, key->joiner))) {
      return Error(absl::StrCat("no valid value for '", key->key, ":'"), key_line_);
    }
    return absl::OkStatus();
  }

  absl::Status EndCase() {
    if (absl::Status status = EndKey(); !status.ok()) return status;
    if (!case_.has_value()) return absl::OkStatus();
    if (absl::Status status = CheckCase(*case_); !status.ok()) {
      return Error(absl::StrCat("case '", case_->name, "': ", status.message()), case_line_);
    }
    cases_.push_back(*std::move(case_));
    case_.reset();
    return absl::OkStatus();
  }

  std::string path_;
  int line_ = 0;
  std::vector<ConversionCase> cases_;
  std::optional<ConversionCase> case_;
  int case_line_ = 0;
  absl::flat_hash_map<std::string, int> names_;
  absl::flat_hash_set<std::string> seen_;
  const CaseKey* key_ = nullptr;
  int key_line_ = 0;
  bool inline_ = false;
  std::vector<std::string> block_;
};

// A case that fails with `error`, named `name`.
ConversionCase FailingCase(std::string name, std::string error) {
  ConversionCase c;
  c.name = std::move(name);
  c.file_error = std::move(error);
  return c;
}

}  // namespace

absl::StatusOr<std::vector<ConversionCase>> ParseCaseFile(absl::string_view path,
                                                          absl::string_view text) {
  CaseFileParser parser(path);
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::Status status = parser.Line(++number, line); !status.ok()) return status;
  }
  return parser.Finish();
}

std::vector<ConversionCase> CasesInFolder(const std::string& folder) {
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.path().extension() == ".cases") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) return {FailingCase("no_case_files", absl::StrCat("no *.cases in ", folder))};
  std::vector<ConversionCase> cases;
  absl::flat_hash_map<std::string, std::string> where;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<ConversionCase>> parsed =
        in ? ParseCaseFile(path, text.str())
           : absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
    if (!parsed.ok()) {
      cases.push_back(
          FailingCase(absl::StrCat("case_file_", std::filesystem::path(path).stem().string()),
                      std::string(parsed.status().message())));
      continue;
    }
    for (ConversionCase& c : *parsed) {
      auto [it, inserted] = where.emplace(c.name, c.where);
      if (!inserted) {
        cases.push_back(FailingCase(
            absl::StrCat("twice_", c.name),
            absl::StrCat(c.where, ": case '", c.name, "' is named already at ", it->second)));
        continue;
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

TEST_P(ConversionCaseTest, Converts) { ExpectConversion(GetParam()); }

// A test binary that links these without the case files instantiates none.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConversionCaseTest);

}  // namespace onnxconvert::adapters
