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

namespace onnxconvert::converter {
namespace {

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
  std::map<std::string, int> tally;   // "up ok", "down refused", ...
  std::map<std::string, int> reasons;  // refusal reasons by adapter
  int upgrade_refusals = 0;
  ForEachCorpusPair([&](const testing::CorpusCase& c, const onnx::ModelProto& model, int64_t own,
                        int64_t target) {
    std::string direction = target > own ? "up" : "down";
    ConvertOptions options;
    options.target_opset = target;
    absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
    if (result.ok()) {
      ++tally[direction + " ok"];
      return;
    }
    bool refused = result.status().code() == absl::StatusCode::kFailedPrecondition;
    ++tally[direction + (refused ? " refused" : " failed")];
    std::string message(result.status().message());
    size_t reason = message.find(": no adapter yet for ");
    ++reasons[reason == std::string::npos ? message.substr(message.rfind(": ") + 2, 60)
                                          : message.substr(reason + 21, 40)];
    if (direction == "up") {
      ++upgrade_refusals;
      ++reasons[absl::StrCat("UP ", message.substr(message.find(": ", message.find(" node ")) + 2, 50))];
    }
    bool precise = refused && message.rfind("step ", 0) == 0 && message.find(" node ") != std::string::npos;
    if (!precise) ADD_FAILURE() << c.name << " -> " << target << ": " << result.status();
  });
  for (const auto& [key, count] : tally) std::cerr << key << ": " << count << "\n";
  std::cerr << "refusals and failures by reason:\n";
  for (const auto& [reason, count] : reasons) std::cerr << "  " << count << "  " << reason << "\n";
  std::cerr << "upgrade refusals: " << upgrade_refusals << "\n";
  EXPECT_GT(tally["up ok"], 9000);
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
    for (const StepReport& step : result->report.steps) ++validations[step.validation];
  });
  std::cerr << converted << " conversions; steps validated:\n";
  for (const auto& [how, count] : validations) std::cerr << "  " << how << ": " << count << "\n";
  EXPECT_GT(validations["incremental"], validations["ok"]);
}

}  // namespace
}  // namespace onnxconvert::converter
