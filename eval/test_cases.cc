#include "eval/test_cases.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "eval/evaluator.h"
#include "ir/text_parser.h"
#include "schema/registry.h"

namespace onnxconvert::eval {

std::string Evaluate(const Case& c) {
  std::string imports = absl::StrCat("\"\" : ", c.opset);
  if (c.ml_opset > 0) absl::StrAppend(&imports, ", \"ai.onnx.ml\" : ", c.ml_opset);
  if (c.training_opset > 0) {
    absl::StrAppend(&imports, ", \"ai.onnx.preview.training\" : ", c.training_opset);
  }
  if (c.preview_opset > 0) {
    absl::StrAppend(&imports, ", \"ai.onnx.preview\" : ", c.preview_opset);
  }
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(
      absl::StrCat("<ir_version: 10, opset_import: [", imports, "]>\n", c.graph));
  if (!model.ok()) return absl::StrCat("parse: ", model.status().message());
  absl::flat_hash_map<std::string, Tensor> values;
  for (const onnx::TensorProto& init : model->graph().initializer()) {
    absl::StatusOr<Tensor> t = FromProto(init);
    if (!t.ok()) return std::string(t.status().message());
    values[init.name()] = *std::move(t);
  }
  for (const onnx::NodeProto& node : model->graph().node()) {
    int opset = node.domain().empty()                        ? c.opset
                : node.domain() == "ai.onnx.preview.training" ? c.training_opset
                : node.domain() == "ai.onnx.preview"          ? c.preview_opset
                                                              : c.ml_opset;
    const schema::OpSchema* op = schema::Registry::Get().Lookup(node.domain(), node.op_type(),
                                                                opset);
    if (op == nullptr) return absl::StrCat("no schema for ", node.op_type());
    std::vector<const Tensor*> inputs;
    for (const std::string& name : node.input()) {
      inputs.push_back(name.empty() ? nullptr : &values.at(name));
    }
    absl::StatusOr<std::vector<Tensor>> outputs = EvaluateNode(node, op->since_version, inputs);
    if (!outputs.ok()) return std::string(outputs.status().message());
    for (int i = 0; i < node.output_size(); ++i) values[node.output(i)] = (*outputs)[i];
  }
  std::vector<std::string> shown;
  for (const onnx::ValueInfoProto& output : model->graph().output()) {
    shown.push_back(DebugString(values.at(output.name())));
  }
  return absl::StrJoin(shown, "; ");
}

namespace {

// The opset fields of a "case" line's words after the name, by keyword.
absl::Status ReadOpsets(const std::vector<std::string>& words, Case& c) {
  const std::pair<const char*, int Case::*> kFields[] = {
      {"opset", &Case::opset},
      {"ml", &Case::ml_opset},
      {"training", &Case::training_opset},
      {"preview", &Case::preview_opset},
  };
  c.opset = 0;
  for (size_t i = 2; i < words.size(); i += 2) {
    auto field = std::find_if(std::begin(kFields), std::end(kFields),
                              [&](const auto& f) { return words[i] == f.first; });
    if (field == std::end(kFields) || i + 1 == words.size() ||
        !absl::SimpleAtoi(words[i + 1], &(c.*(field->second)))) {
      return absl::InvalidArgumentError(absl::StrCat("'", words[i], "' is not an opset <n>"));
    }
  }
  if (c.opset == 0) return absl::InvalidArgumentError("the case has no opset");
  return absl::OkStatus();
}

// A case that fails with `error`: a case file that did not read.
Case Unread(std::string name, std::string error) {
  Case c{};
  c.name = std::move(name);
  c.error = std::move(error);
  return c;
}

}  // namespace

absl::StatusOr<std::vector<Case>> ReadCaseFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::string stem = std::filesystem::path(path).stem().string();
  std::vector<Case> cases;
  bool open = false;  // a case whose "expect" line is still to come
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto error = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", why));
    };
    if (!open && (line.empty() || line[0] == '#')) continue;
    if (absl::StartsWith(line, "case ")) {
      if (open) return error("a case starts before the last one's expect line");
      std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
      Case c{};
      c.name = absl::StrCat(stem, "_", words[1]);
      if (absl::Status opsets = ReadOpsets(words, c); !opsets.ok()) return error(opsets.message());
      cases.push_back(std::move(c));
      open = true;
    } else if (!open) {
      return error("a line outside a case");
    } else if (line == "expect" || absl::StartsWith(line, "expect ")) {
      cases.back().expected = line.substr(std::min<size_t>(line.size(), 7));
      open = false;
    } else {
      absl::StrAppend(&cases.back().graph, cases.back().graph.empty() ? "" : "\n", line);
    }
  }
  if (open) return absl::InvalidArgumentError(absl::StrCat(path, ": the last case has no expect"));
  return cases;
}

std::vector<Case> ReadCaseFiles(const std::string& dir) {
  std::vector<Case> cases;
  std::vector<std::string> paths;
  std::error_code listing;
  for (const auto& entry : std::filesystem::directory_iterator(dir, listing)) {
    if (entry.path().extension() == ".cases") paths.push_back(entry.path().string());
  }
  if (listing || paths.empty()) {
    cases.push_back(Unread("case_files_do_not_read",
                           absl::StrCat(dir, ": no case files (", listing.message(), ")")));
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<Case>> read = ReadCaseFile(path);
    if (read.ok()) {
      cases.insert(cases.end(), read->begin(), read->end());
    } else {
      cases.push_back(Unread(std::filesystem::path(path).stem().string() + "_does_not_read",
                             std::string(read.status().message())));
    }
  }
  return cases;
}

TEST_P(KernelCaseTest, ComputesOutputs) {
  ASSERT_EQ(GetParam().error, "");
  EXPECT_EQ(Evaluate(GetParam()), GetParam().expected);
}

}  // namespace onnxconvert::eval
