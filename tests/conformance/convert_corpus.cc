// Converts the cases of the ONNX backend corpus to target opsets for the
// ONNX Runtime conformance harness (tools/ort/run_models.js):
//
//   convert_corpus --out DIR [--targets 7,9,...] [--sample N] [--no-casts]
//                  [--cases-filter REGEX] [--verify N] [--inject-fault ADAPTER]
//
// Writes, under DIR:
//   baseline.jsonl     a manifest line per case, the original model in place;
//   converted.jsonl    a manifest line per converted (case, target);
//   conversions.jsonl  the outcome of every (case, target): ok, refused
//                      (FailedPrecondition) or failed (any other status);
//                      with --verify N, also the verdict of the converter's
//                      verification by evaluation on N random input sets
//                      (see VerifyVerdict);
//   <case with '/' as '__'>/<target>.onnx  the converted models.
// --inject-fault ADAPTER corrupts every node that adapter converts (test
// only, converter/verify_testing.h): ONNX Runtime then sees mismatches that
// verification must fail.
// A manifest line is {"id", "model", "case_dir"}.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/json_writer.h"
#include "base/status_macros.h"
#include "cli/args.h"
#include "converter/converter.h"
#include "converter/verify_testing.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert::conformance {
namespace {

namespace fs = std::filesystem;

// The newest ai.onnx.ml opset (ONNX 1.22).
constexpr int64_t kNewestMlOpset = 5;

// The flags this tool accepts.
constexpr cli::FlagSpec kFlags[] = {
    {"out", true, ""},
    {"targets", true, ""},
    {"sample", true, ""},
    {"cases-filter", true, ""},
    {"no-casts", false, ""},
    {"verify", true, ""},
    {"inject-fault", true, ""},
};

// What to convert and where to write it.
struct Options {
  fs::path out;
  std::vector<int64_t> targets;
  int64_t sample = 1;                 // keep every sample-th case
  std::optional<std::regex> filter;  // keep cases whose name matches
  bool no_casts = false;             // ConvertOptions::no_casts
  int verify = 0;                    // ConvertOptions::verify (0: off)
  // Test-only: corrupt what the adapter of this name writes
  // (converter/verify_testing.h), to see verify and ORT both catch it.
  std::string inject_fault;
};

// The outcome names of conversions.jsonl, by status code.
std::string OutcomeOf(const absl::Status& status) {
  if (status.ok()) return "ok";
  return status.code() == absl::StatusCode::kFailedPrecondition ? "refused" : "failed";
}

// Parses "7,9,11" into opsets; an error names the bad item.
absl::StatusOr<std::vector<int64_t>> ParseTargets(absl::string_view text) {
  std::vector<int64_t> targets;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int64_t target = 0;
    if (!absl::SimpleAtoi(item, &target) || target < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--targets: bad opset '", item, "'"));
    }
    targets.push_back(target);
  }
  if (targets.empty()) return absl::InvalidArgumentError("--targets: no opset given");
  return targets;
}

// Builds Options from the command line.
absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  OC_ASSIGN_OR_RETURN(cli::ParsedArgs parsed, cli::ParseArgs(args, kFlags));
  if (!parsed.positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", parsed.positional.front(), "'"));
  }
  Options options;
  std::optional<std::string> out = parsed.Get("out");
  if (!out || out->empty()) return absl::InvalidArgumentError("--out DIR is required");
  options.out = *out;
  absl::Span<const int64_t> targets = testing::ConformanceTargets();
  options.targets.assign(targets.begin(), targets.end());
  if (std::optional<std::string> targets = parsed.Get("targets")) {
    OC_ASSIGN_OR_RETURN(options.targets, ParseTargets(*targets));
  }
  options.no_casts = parsed.Has("no-casts");
  if (std::optional<std::string> sample = parsed.Get("sample")) {
    if (!absl::SimpleAtoi(*sample, &options.sample) || options.sample < 1) {
      return absl::InvalidArgumentError("--sample needs a positive number");
    }
  }
  if (std::optional<std::string> verify = parsed.Get("verify")) {
    if (!absl::SimpleAtoi(*verify, &options.verify) || options.verify < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--verify: bad number of input sets '", *verify, "'"));
    }
  }
  options.inject_fault = parsed.Get("inject-fault").value_or("");
  if (std::optional<std::string> filter = parsed.Get("cases-filter")) {
    try {
      options.filter.emplace(*filter);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(absl::StrCat("--cases-filter: ", e.what()));
    }
  }
  return options;
}

// The cases to convert: those matching the filter, then every sample-th.
absl::StatusOr<std::vector<testing::CorpusCase>> SelectCases(const Options& options) {
  OC_ASSIGN_OR_RETURN(std::vector<testing::CorpusCase> all, testing::ListCorpusCases());
  std::vector<testing::CorpusCase> matching;
  for (testing::CorpusCase& c : all) {
    if (!options.filter || std::regex_search(c.name, *options.filter)) {
      matching.push_back(std::move(c));
    }
  }
  std::vector<testing::CorpusCase> selected;
  for (size_t i = 0; i < matching.size(); i += options.sample) {
    selected.push_back(std::move(matching[i]));
  }
  return selected;
}

// A manifest line for the harness.
std::string ManifestLine(absl::string_view id, absl::string_view model,
                         absl::string_view case_dir) {
  return absl::StrCat("{\"id\": ", JsonQuote(id), ", \"model\": ", JsonQuote(model),
                      ", \"case_dir\": ", JsonQuote(case_dir), "}\n");
}

// One line of conversions.jsonl.
struct ConversionRecord {
  std::string case_name;
  int64_t source = 0;
  int64_t target = 0;
  bool ml = false;  // the pair converts ai.onnx.ml, not ai.onnx
  absl::Status status;
  std::string id;  // manifest id of the converted model ("" if none)
  // With --verify: "pass", "fail" or "skipped" ("" when not verified: the
  // pair did not convert, or --verify is off), and for fail and skipped the
  // first line of the failure or the skip reason.
  std::string verify;
  std::string verify_message;
};

// The record as a line of conversions.jsonl: {"case", "source", "target",
// "direction", "outcome", "id", "message", "verify", "verify_message"}.
std::string ConversionLine(const ConversionRecord& r) {
  return absl::StrCat("{\"case\": ", JsonQuote(r.case_name), ", \"source\": ", r.source,
                      ", \"target\": ", r.target, ", \"direction\": \"", r.ml ? "ml-" : "",
                      r.target > r.source ? "up" : "down", "\", \"outcome\": \"",
                      OutcomeOf(r.status), "\", \"id\": ", JsonQuote(r.id),
                      ", \"message\": ", JsonQuote(r.status.message()),
                      ", \"verify\": ", JsonQuote(r.verify),
                      ", \"verify_message\": ", JsonQuote(r.verify_message), "}\n");
}

// The three line files under --out.
struct Outputs {
  std::ofstream baseline;
  std::ofstream converted;
  std::ofstream conversions;
};

// Creates `dir` and opens the line files in it.
absl::Status OpenOutputs(const fs::path& dir, Outputs& outputs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat(dir.string(), ": ", ec.message()));
  outputs.baseline.open(dir / "baseline.jsonl");
  outputs.converted.open(dir / "converted.jsonl");
  outputs.conversions.open(dir / "conversions.jsonl");
  if (!outputs.baseline || !outputs.converted || !outputs.conversions) {
    return absl::UnavailableError(absl::StrCat("cannot write under ", dir.string()));
  }
  return absl::OkStatus();
}

// Writes `model` to `path` (plain write: the files are scratch data).
absl::Status WriteModel(const onnx::ModelProto& model, const fs::path& path) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat(path.string(), ": cannot serialize"));
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return absl::UnavailableError(absl::StrCat(path.string(), ": cannot write"));
  return absl::OkStatus();
}

// The first line of `text`.
std::string FirstLine(absl::string_view text) {
  return std::string(text.substr(0, text.find('\n')));
}

// Whether `status` is the converter's verification failure (a refusal is
// FailedPrecondition too, with another message).
bool IsVerificationFailure(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         absl::StartsWith(status.message(), "verification failed");
}

// Records the verdict of a verified conversion that succeeded: skipped
// with the reason, or pass.
void RecordVerified(const converter::ConversionReport& report, ConversionRecord& record) {
  if (!report.verification) return;
  const std::string& skipped = report.verification->skipped;
  record.verify = skipped.empty() ? "pass" : "skipped";
  record.verify_message = FirstLine(skipped);
}

// Converts `model` with `options`, verified when `verify` > 0. A pair that
// verification fails is converted again without it, so that ONNX Runtime
// can judge the model too; the record keeps the verdict.
absl::StatusOr<converter::ConversionResult> ConvertRecordingVerdict(
    const onnx::ModelProto& model, converter::ConvertOptions options, int verify,
    ConversionRecord& record) {
  options.verify = verify;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
  if (result.ok()) {
    RecordVerified(result->report, record);
    return result;
  }
  if (verify == 0 || !IsVerificationFailure(result.status())) return result;
  record.verify = "fail";
  record.verify_message = FirstLine(result.status().message());
  options.verify = 0;
  return converter::ConvertModel(model, options);
}

// Converts `model` to `target`, writing the model on success; the record
// carries the outcome.
ConversionRecord ConvertOne(const testing::CorpusCase& c, const onnx::ModelProto& model,
                            int64_t source, int64_t target, const fs::path& case_out,
                            const Options& run, std::optional<int64_t> ml_source = std::nullopt) {
  ConversionRecord record{c.name, ml_source.value_or(source), target, ml_source.has_value(),
                          absl::OkStatus(), "", "", ""};
  converter::ConvertOptions options;
  options.target_opset = ml_source ? source : target;
  options.no_casts = run.no_casts;
  if (ml_source) options.ml_target_opset = target;
  absl::StatusOr<converter::ConversionResult> result =
      ConvertRecordingVerdict(model, options, run.verify, record);
  if (!result.ok()) {
    record.status = result.status();
    return record;
  }
  std::string stem = absl::StrCat(record.ml ? "ml" : "", target);
  fs::path path = case_out / absl::StrCat(stem, ".onnx");
  record.status = WriteModel(result->model, path);
  if (record.status.ok()) record.id = absl::StrCat(c.name, "@", stem);
  return record;
}

// Writes the baseline line of `c` and converts it to every target.
absl::Status ConvertCase(const testing::CorpusCase& c, const Options& options,
                         Outputs& outputs) {
  outputs.baseline << ManifestLine(c.name, c.model_path, c.dir);
  absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
  if (!loaded.ok()) {
    std::cerr << "skipped " << c.name << ": " << loaded.status() << "\n";
    return absl::OkStatus();
  }
  std::optional<int64_t> source = testing::ImportedOpset(loaded->model, "");
  std::optional<int64_t> ml = testing::ImportedOpset(loaded->model, "ai.onnx.ml");
  if (!source && !ml) return absl::OkStatus();
  fs::path case_out = options.out / absl::StrReplaceAll(c.name, {{"/", "__"}});
  std::error_code ec;
  fs::create_directories(case_out, ec);
  if (ec) return absl::UnavailableError(absl::StrCat(case_out.string(), ": ", ec.message()));
  auto record_pair = [&](const ConversionRecord& record) {
    outputs.conversions << ConversionLine(record);
    if (!record.id.empty()) {
      std::string stem = absl::StrCat(record.ml ? "ml" : "", record.target);
      outputs.converted << ManifestLine(record.id,
                                        (case_out / absl::StrCat(stem, ".onnx")).string(), c.dir);
    }
  };
  for (int64_t target : options.targets) {
    if (!source || target == *source) continue;
    record_pair(ConvertOne(c, loaded->model, *source, target, case_out, options));
  }
  // Models of ai.onnx.ml also go to every other ai.onnx.ml opset.
  if (ml) {
    for (int64_t target = 1; target <= kNewestMlOpset; ++target) {
      if (target == *ml) continue;
      record_pair(
          ConvertOne(c, loaded->model, source.value_or(0), target, case_out, options, *ml));
    }
  }
  return absl::OkStatus();
}

// The whole tool: parses `args`, converts the selected cases, writes DIR.
absl::Status Run(const std::vector<std::string>& args) {
  OC_ASSIGN_OR_RETURN(Options options, ParseOptions(args));
  OC_ASSIGN_OR_RETURN(std::vector<testing::CorpusCase> cases, SelectCases(options));
  std::optional<converter::ScopedFaultInjection> fault;
  if (!options.inject_fault.empty()) fault.emplace(options.inject_fault);
  Outputs outputs;
  OC_RETURN_IF_ERROR(OpenOutputs(options.out, outputs));
  for (const testing::CorpusCase& c : cases) {
    OC_RETURN_IF_ERROR(ConvertCase(c, options, outputs));
  }
  outputs.conversions.close();
  outputs.converted.close();
  outputs.baseline.close();
  if (!outputs.conversions || !outputs.converted || !outputs.baseline) {
    return absl::UnavailableError("cannot finish the line files");
  }
  std::cerr << "converted " << cases.size() << " cases to " << options.targets.size()
            << " targets under " << options.out.string() << "\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace onnxconvert::conformance

int main(int argc, char** argv) {
  absl::Status status =
      onnxconvert::conformance::Run(std::vector<std::string>(argv + 1, argv + argc));
  if (!status.ok()) {
    std::cerr << "convert_corpus: " << status << "\n";
    return 2;
  }
  return 0;
}
