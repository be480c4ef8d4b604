// Converts every model of the ONNX backend corpus to every target opset of
// the conformance plan and counts, by direction, conversions that succeed
// (each step validated by the checker and strict inference) and refusals.
// Every refusal must be a precise FailedPrecondition naming the step, node
// and reason; nothing may fail otherwise. (Adapters for the remaining
// refused upgrades are the next work: the counts are printed.)

#include <functional>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/corpus.h"
#include "tests/golden.h"

namespace onnxconvert::converter {
namespace {

constexpr char kRegenerate[] = "UPDATE_GOLDEN=1 bazel run //converter:corpus_conversion_test";

// The op (with its version, e.g. "Mod-13") of the node a refusal names:
// "step 13 -> 9: main › node 'n' (Mod-13): <reason>".
std::string RefusedOp(absl::string_view message) {
  // The node's name may hold parentheses ("(unnamed Where)"): the op is the
  // last parenthesis before the reason.
  size_t node = message.find(" node ");
  size_t close = node == absl::string_view::npos ? node : message.find("): ", node);
  size_t open = close == absl::string_view::npos ? close : message.rfind(" (", close);
  if (open == absl::string_view::npos || open < node) return "?";
  return std::string(message.substr(open + 2, close - open - 2));
}

// Appends "<prefix> <key> <count>" lines, in key order, to `table`.
template <typename Key>
void AppendCounts(std::string& table, absl::string_view prefix, const std::map<Key, int>& counts) {
  for (const auto& [key, count] : counts) absl::StrAppend(&table, prefix, " ", key, " ", count, "\n");
}

// Calls `visit` with every corpus case whose model imports ai.onnx, its
// model and opset, and every conformance target other than that opset.
void ForEachCorpusPair(const std::function<void(const testing::CorpusCase&,
                                                const onnx::ModelProto&, int64_t own,
                                                int64_t target)>& visit) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    std::optional<int64_t> own = testing::ImportedOpset(loaded->model, "");
    if (!own) continue;
    for (int64_t target : testing::ConformanceTargets()) {
      if (target != *own) visit(c, loaded->model, *own, target);
    }
  }
}

TEST(CorpusConversionTest, EveryCaseToEveryTarget) {
  std::map<std::string, int> tally;      // "up ok", "down refused", ...
  std::map<std::string, int> by_target;  // "7 ok", "7 refused", ...
  std::map<std::string, int> refused;    // by the refused node's op, e.g. "Mod-13"
  std::map<std::string, int> reasons;    // refusal reasons by adapter (printed only)
  ForEachCorpusPair([&](const testing::CorpusCase& c, const onnx::ModelProto& model, int64_t own,
                        int64_t target) {
    std::string direction = target > own ? "up" : "down";
    ConvertOptions options;
    options.target_opset = target;
    absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
    if (result.ok()) {
      ++tally[direction + " ok"];
      ++by_target[absl::StrCat(absl::Dec(target, absl::kZeroPad2), " ok")];
      return;
    }
    bool refused_precisely = result.status().code() == absl::StatusCode::kFailedPrecondition;
    std::string outcome = refused_precisely ? " refused" : " failed";
    ++tally[direction + outcome];
    ++by_target[absl::StrCat(absl::Dec(target, absl::kZeroPad2), outcome)];
    std::string message(result.status().message());
    ++refused[absl::StrCat(direction, " ", RefusedOp(message))];
    size_t reason = message.find(": no adapter yet for ");
    ++reasons[reason == std::string::npos ? message.substr(message.rfind(": ") + 2, 60)
                                          : message.substr(reason + 21, 40)];
    bool precise = refused_precisely && message.rfind("step ", 0) == 0 &&
                   message.find(" node ") != std::string::npos;
    if (!precise) ADD_FAILURE() << c.name << " -> " << target << ": " << result.status();
  });
  std::cerr << "refusals and failures by reason:\n";
  for (const auto& [reason, count] : reasons) std::cerr << "  " << count << "  " << reason << "\n";
  std::string table =
      "# Conversions of the backend corpus to every conformance target (corpus_conversion_test).\n"
      "# Regenerate: UPDATE_GOLDEN=1 bazel run //converter:corpus_conversion_test\n";
  AppendCounts(table, "direction", tally);
  AppendCounts(table, "target", by_target);
  AppendCounts(table, "refused", refused);
  std::cerr << table;
  absl::Status golden =
      testing::CompareWithGolden("tests/golden/corpus_conversion.txt", table, kRegenerate);
  EXPECT_TRUE(golden.ok()) << golden;
}

// Converts every case to every target validating each step both node by
// node and as a whole model (cross_check): they must agree, on the verdict
// and on every type. Counts how the steps were validated.
TEST(CorpusConversionTest, IncrementalValidationAgreesWithTheWholeModel) {
  std::map<std::string, int> validations;  // "incremental", "ok", "unchanged"
  int converted = 0;
  ForEachCorpusPair([&](const testing::CorpusCase& c, const onnx::ModelProto& model, int64_t,
                        int64_t target) {
    ConvertOptions options;
    options.target_opset = target;
    options.cross_check = true;
    absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition)
          << c.name << " -> " << target << ": " << result.status();
      return;
    }
    ++converted;
    for (const StepReport& step : result->report.steps) ++validations[std::string(StepValidationName(step.validation))];
  });
  EXPECT_GT(validations["incremental"], validations["ok"]);
  std::string table = absl::StrCat(
      "# How the steps of the corpus conversions were validated (corpus_conversion_test).\n"
      "# Regenerate: UPDATE_GOLDEN=1 bazel run //converter:corpus_conversion_test\n"
      "conversions ",
      converted, "\n");
  AppendCounts(table, "steps", validations);
  std::cerr << table;
  absl::Status golden =
      testing::CompareWithGolden("tests/golden/corpus_validation.txt", table, kRegenerate);
  EXPECT_TRUE(golden.ok()) << golden;
}

}  // namespace
}  // namespace onnxconvert::converter
