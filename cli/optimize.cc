#include "cli/optimize.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/exit_codes.h"
#include "cli/html_report.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "google/protobuf/arena.h"
#include "ir/model_io.h"
#include "rewrites/pass_manager.h"
#include "rewrites/rules.h"
#include "rewrites/rules_explain.h"

namespace onnxconvert::cli {
namespace {

namespace fs = std::filesystem;

// Prints "<file>: <message>" and returns `code`.
int Fail(int code, const std::string& file, const absl::Status& status, std::ostream& err) {
  absl::string_view message = status.message();
  if (!absl::StartsWith(message, file)) err << file << ": ";
  err << message << "\n";
  return code;
}

// A comma-separated list flag, or empty.
std::vector<std::string> ListFlag(const ParsedArgs& args, absl::string_view name) {
  std::optional<std::string> value = args.Get(name);
  if (!value) return {};
  return absl::StrSplit(*value, ',', absl::SkipEmpty());
}

// The options the flags give.
absl::StatusOr<rewrites::RewriteOptions> OptionsFrom(const ParsedArgs& args) {
  rewrites::RewriteOptions options;
  if (std::optional<std::string> profile = args.Get("profile")) options.profile = *profile;
  options.passes = ListFlag(args, "passes");
  options.skip = ListFlag(args, "skip");
  for (const std::string& path : ListFlag(args, "rules")) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the rule file"));
    std::stringstream text;
    text << in.rdbuf();
    // A rule file that does not parse is the caller's error, found before
    // the model is read.
    if (absl::Status parsed = rewrites::ParseRules(text.str(), path).status(); !parsed.ok()) {
      return parsed;
    }
    options.rule_files.push_back({path, text.str()});
  }
  options.explain = ListFlag(args, "explain");
  // A rule to explain that does not exist is found before the model is read.
  if (absl::Status known = rewrites::RulesToExplain(options).status(); !known.ok()) return known;
  if (std::optional<std::string> bytes = args.Get("max-fold-bytes")) {
    if (!absl::SimpleAtoi(*bytes, &options.max_fold_bytes) || options.max_fold_bytes < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-fold-bytes takes a byte count, not '", *bytes, "'"));
    }
  }
  return options;
}

// What --verify N found: "" when the optimized model computes what the
// original does on N seeded random input sets (to the bit with the exact
// profile, within eval/compare.h's tolerances with deploy); else why not,
// starting "not verified: " when the original cannot be evaluated.
std::string VerifyOptimized(const onnx::ModelProto& original, const onnx::ModelProto& optimized,
                            int sets, bool exact) {
  for (int set = 0; set < sets; ++set) {
    std::mt19937_64 rng(static_cast<uint64_t>(set));
    absl::StatusOr<std::vector<eval::NamedValue>> inputs =
        eval::RandomInputs(original.graph(), eval::RandomInputOptions{}, rng);
    if (!inputs.ok()) return absl::StrCat("not verified: ", inputs.status().message());
    absl::StatusOr<eval::EvalResult> before = eval::EvaluateModel(original, *inputs);
    if (!before.ok()) return absl::StrCat("not verified: ", before.status().message());
    if (!before->deterministic) return "not verified: the model has a non-deterministic op";
    absl::StatusOr<eval::EvalResult> after = eval::EvaluateModel(optimized, *std::move(inputs));
    if (!after.ok()) {
      return absl::StrCat("random set ", set, ": the optimized model fails: ",
                          after.status().message());
    }
    for (size_t i = 0; i < before->outputs.size(); ++i) {
      eval::Comparison comparison =
          eval::CompareValues(before->outputs[i].value, after->outputs[i].value);
      bool same = comparison.ok && (!exact || !comparison.worst ||
                                    comparison.worst->abs_error == 0);
      if (!same) {
        return absl::StrCat("random set ", set, ": output '", before->outputs[i].name,
                            "' differs: ", comparison.ToString());
      }
    }
  }
  return "";
}

// The passes, one a line.
void ListPasses(std::ostream& out) {
  for (const rewrites::PassEntry& entry : rewrites::Passes()) {
    out << entry.name << " (" << entry.profiles << "): " << entry.summary << "\n";
  }
}

}  // namespace

const std::vector<FlagSpec>& OptimizeFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"output", true, "o"},        {"profile", true, ""}, {"passes", true, ""},
      {"skip", true, ""},           {"max-fold-bytes", true, ""}, {"report", true, ""},
      {"list", false, ""},          {"verify", true, "", true},
      {"rules", true, ""},          {"explain", true, ""},
  };
  return *flags;
}

int RunOptimize(const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  const std::string& path = args.positional[0];
  if (args.Has("list")) {
    ListPasses(out);
    return kExitOk;
  }
  std::optional<std::string> output = args.Get("output");
  if (!output) {
    return Fail(kExitUsageOrIo, "onnx-convert optimize", absl::InvalidArgumentError("missing -o OUT"),
                err);
  }
  absl::StatusOr<rewrites::RewriteOptions> options = OptionsFrom(args);
  if (!options.ok()) return Fail(kExitUsageOrIo, "onnx-convert optimize", options.status(), err);
  if (absl::StatusOr<std::vector<const rewrites::PassEntry*>> selected =
          rewrites::SelectPasses(*options);
      !selected.ok()) {
    return Fail(kExitUsageOrIo, "onnx-convert optimize", selected.status(), err);
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Fail(kExitUsageOrIo, path, absl::NotFoundError("no such file"), err);
  }
  // On an arena (see ModelArenaOptions).
  google::protobuf::Arena arena(ModelArenaOptions());
  onnx::ModelProto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  absl::StatusOr<LoadedModel> loaded = LoadModelInto(path, model);
  if (!loaded.ok()) return Fail(kExitInvalidModel, path, loaded.status(), err);
  int verify_sets = 0;
  if (std::optional<std::string> verify = args.Get("verify")) {
    if (verify->empty()) {
      verify_sets = 3;
    } else if (!absl::SimpleAtoi(*verify, &verify_sets) || verify_sets < 1 || verify_sets > 64) {
      return Fail(kExitUsageOrIo, "onnx-convert optimize",
                  absl::InvalidArgumentError("--verify takes a number of input sets from 1 to 64"),
                  err);
    }
  }
  std::optional<onnx::ModelProto> original;
  if (verify_sets > 0) original = model;
  absl::StatusOr<rewrites::RewriteReport> report = rewrites::Optimize(model, *options);
  if (!report.ok()) return Fail(kExitInvalidModel, path, report.status(), err);
  std::string verified;
  if (original) {
    verified = VerifyOptimized(*original, model, verify_sets, options->profile == "exact");
    if (!verified.empty() && !absl::StartsWith(verified, "not verified")) {
      return Fail(kExitInvalidModel, path,
                  absl::FailedPreconditionError(absl::StrCat("--verify: ", verified)), err);
    }
  }
  SaveOptions save;
  save.source_base_dir = loaded->base_dir;
  absl::Status saved = SaveModel(model, *output, save);
  if (!saved.ok()) return Fail(kExitUsageOrIo, *output, saved, err);
  if (std::optional<std::string> report_path = args.Get("report")) {
    std::string text;
    if (absl::EndsWith(*report_path, ".json")) {
      text = report->ToJson();
    } else if (absl::EndsWith(*report_path, ".html")) {
      text = RewriteReportToHtml(*report, fs::path(path).filename().string());
    } else {
      text = report->ToText(true);
    }
    absl::Status written = WriteFileAtomically(*report_path, text);
    if (!written.ok()) return Fail(kExitUsageOrIo, *report_path, written, err);
  }
  out << report->ToText();
  if (original) {
    out << (verified.empty() ? absl::StrCat("verified on ", verify_sets, " random input sets: ",
                                            options->profile == "exact" ? "the same bits"
                                                                        : "within tolerance",
                                            "\n")
                             : verified + "\n");
  }
  return kExitOk;
}

}  // namespace onnxconvert::cli
