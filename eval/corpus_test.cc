// Every case of the ONNX backend test corpus (node, simple,
// pytorch-operator) run by the evaluator on each of its data sets and
// compared with the corpus's expected outputs (eval/compare.h). Prints a
// table per op (cases that pass, and those that fail by reason: no kernel
// for an op, a type the evaluator does not hold, a mismatch, an output of a
// non-deterministic op, another error), then every failing case by reason,
// and asserts a floor on the cases that pass. The table is also written as
// Markdown to $TEST_UNDECLARED_OUTPUTS_DIR/eval_corpus.md.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert::eval {
namespace {

// Cases that pass at this commit. It rises as kernel families land (the
// math and NN kernels are written beside this runner); raise it with them.
constexpr int kPassFloor = 1799;

// Why a case fails; kPass when it does not.
enum class Reason { kPass, kNoKernel, kType, kMismatch, kNondeterministic, kError };

struct ReasonName {
  Reason reason;
  const char* column;  // in the table
  const char* title;   // in the list of failing cases
};
constexpr ReasonName kReasons[] = {
    {Reason::kPass, "pass", "pass"},
    {Reason::kNoKernel, "no kernel", "no kernel for an op"},
    {Reason::kType, "type", "a type the evaluator does not hold"},
    {Reason::kMismatch, "mismatch", "outputs differ from the expected ones"},
    {Reason::kNondeterministic, "random", "outputs of a non-deterministic op differ"},
    {Reason::kError, "error", "another error"},
};

struct Outcome {
  Reason reason = Reason::kPass;
  std::string failed_op;  // the op the failure comes from, where known
  std::string detail;
};

// The reason for a failed run or load.
Outcome Classify(const absl::Status& status) {
  Outcome outcome;
  outcome.failed_op = FailedOp(status).value_or("");
  outcome.detail = std::string(status.message());
  if (absl::IsUnimplemented(status) && absl::StrContains(status.message(), "has no kernel")) {
    outcome.reason = Reason::kNoKernel;
  } else if (absl::StrContains(status.message(), "not supported by the evaluator")) {
    outcome.reason = Reason::kType;
  } else {
    outcome.reason = Reason::kError;
  }
  return outcome;
}

// Runs every data set of `c`; the first failure, or a pass.
Outcome RunCase(const testing::CorpusCase& c, const onnx::ModelProto& model) {
  absl::StatusOr<std::vector<DataSet>> sets = ListDataSets(c.dir);
  if (!sets.ok()) return Classify(sets.status());
  for (const DataSet& set : *sets) {
    absl::StatusOr<std::vector<NamedValue>> inputs = LoadInputs(set, model.graph());
    if (!inputs.ok()) return Classify(inputs.status());
    absl::StatusOr<std::vector<NamedValue>> expected = LoadOutputs(set, model.graph());
    if (!expected.ok()) return Classify(expected.status());
    absl::StatusOr<EvalResult> result = EvaluateModel(model, *std::move(inputs));
    if (!result.ok()) return Classify(result.status());
    for (size_t k = 0; k < expected->size(); ++k) {
      Comparison comparison = CompareValues((*expected)[k].value, result->outputs[k].value);
      if (comparison.ok) continue;
      return {result->deterministic ? Reason::kMismatch : Reason::kNondeterministic, "",
              absl::StrCat(set.name, " output '", (*expected)[k].name,
                           "': ", comparison.ToString())};
    }
  }
  return {};
}

// The op of a one-node model ("Add", "ai.onnx.ml.Binarizer"), or "".
std::string SingleOp(const onnx::ModelProto& model) {
  if (model.graph().node_size() != 1) return "";
  const onnx::NodeProto& node = model.graph().node(0);
  return node.domain().empty() || node.domain() == "ai.onnx"
             ? node.op_type()
             : absl::StrCat(node.domain(), ".", node.op_type());
}

// A row of the table: cases of one op by outcome.
struct Row {
  int cases = 0;
  std::map<Reason, int> by_reason;
};

std::string Cell(const Row& row, Reason reason) {
  auto it = row.by_reason.find(reason);
  return it == row.by_reason.end() ? "" : absl::StrCat(it->second);
}

TEST(EvalCorpusTest, BackendCasesMatchTheirExpectedOutputs) {
  absl::StatusOr<std::vector<testing::CorpusCase>> all = testing::ListCorpusCases();
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<testing::CorpusCase> cases;
  for (const testing::CorpusCase& c : *all) {
    if (!absl::StartsWith(c.name, "real/")) cases.push_back(c);
  }
  // The op of each case: its one node's, or for a case "X_expanded" or
  // "X_expanded_verN" (the spec's function body written out) the op of "X".
  absl::flat_hash_map<std::string, std::string> single_ops;
  std::vector<std::pair<std::string, Outcome>> outcomes;
  for (const testing::CorpusCase& c : cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    if (!loaded.ok()) {
      outcomes.emplace_back(c.name, Classify(loaded.status()));
      continue;
    }
    single_ops[c.name] = SingleOp(loaded->model);
    outcomes.emplace_back(c.name, RunCase(c, loaded->model));
  }
  auto op_of = [&](const std::string& name) {
    std::string op = single_ops[name];
    if (size_t expanded = name.rfind("_expanded"); op.empty() && expanded != std::string::npos) {
      op = single_ops[name.substr(0, expanded)];
    }
    if (op.empty()) op = absl::StrCat("(graphs of ", name.substr(0, name.find('/')), ")");
    return op;
  };
  std::map<std::string, Row> rows;
  Row total;
  std::map<Reason, std::vector<std::string>> failures;
  for (const auto& [name, outcome] : outcomes) {
    Row& row = rows[op_of(name)];
    ++row.cases;
    ++row.by_reason[outcome.reason];
    ++total.cases;
    ++total.by_reason[outcome.reason];
    if (outcome.reason != Reason::kPass) {
      failures[outcome.reason].push_back(
          absl::StrCat(name, outcome.failed_op.empty() ? "" : absl::StrCat(" [", outcome.failed_op, "]"),
                       ": ", outcome.detail.substr(0, 300)));
    }
  }
  std::string table = "| op | cases |";
  std::string rule = "|---|---:|";
  for (const ReasonName& r : kReasons) {
    absl::StrAppend(&table, " ", r.column, " |");
    absl::StrAppend(&rule, "---:|");
  }
  absl::StrAppend(&table, "\n", rule, "\n");
  auto add_row = [&](const std::string& op, const Row& row) {
    absl::StrAppend(&table, "| ", op, " | ", row.cases, " |");
    for (const ReasonName& r : kReasons) absl::StrAppend(&table, " ", Cell(row, r.reason), " |");
    absl::StrAppend(&table, "\n");
  };
  for (const auto& [op, row] : rows) add_row(op, row);
  add_row("**all**", total);
  std::cout << table << "\n";
  // Failing cases by reason, and the ops most failures come from.
  for (const ReasonName& r : kReasons) {
    auto it = failures.find(r.reason);
    if (it == failures.end()) continue;
    std::cout << "== " << r.title << " (" << it->second.size() << " cases)\n";
    for (const std::string& line : it->second) std::cout << "  " << line << "\n";
  }
  std::map<std::string, int> blocking;
  for (const auto& [name, outcome] : outcomes) {
    if (outcome.reason == Reason::kNoKernel) ++blocking[outcome.failed_op];
  }
  std::vector<std::pair<int, std::string>> top;
  for (const auto& [op, count] : blocking) top.emplace_back(-count, op);
  std::sort(top.begin(), top.end());
  std::cout << "== ops whose missing kernel fails the most cases\n";
  for (size_t i = 0; i < top.size() && i < 40; ++i) {
    std::cout << "  " << top[i].second << ": " << -top[i].first << "\n";
  }
  int passed = total.by_reason[Reason::kPass];
  std::cout << absl::StrFormat("== %d of %d cases pass (%.1f%%)\n", passed, total.cases,
                               100.0 * passed / std::max(1, total.cases));
  if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream(std::filesystem::path(dir) / "eval_corpus.md") << table;
  }
  EXPECT_GE(passed, kPassFloor) << "fewer corpus cases pass than the floor";
}

}  // namespace
}  // namespace onnxconvert::eval
