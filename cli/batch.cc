#include "cli/batch.h"

#include "ir/memory_budget.h"
#include "service/request_guard.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "base/json_writer.h"
#include "cli/batch_inputs.h"
#include "cli/exit_codes.h"
#include "ir/model_io.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::cli {
namespace {
namespace fs = std::filesystem;

// How many times a call the server refused as busy is tried again.
constexpr int kBusyRetries = 4;
// The pause before the models that failed for a server's sake are tried
// again, at the end of the batch.
constexpr auto kSecondPassDelay = std::chrono::seconds(1);
constexpr int kBarWidth = 30;
constexpr size_t kTableErrorWidth = 72;

// Choices shared by every job.
struct BatchSettings {
  converter::ConvertOptions options;
  bool json_reports = true;
  std::optional<int64_t> external_data_threshold;
  bool force = false;
  // --optimize[=PROFILE]: each converted model is then rewritten.
  std::optional<rewrites::RewriteOptions> optimize;
};

// What became of one model.
struct JobResult {
  enum Outcome { kConverted, kSkipped, kFailed };
  Outcome outcome = kFailed;
  std::string error;
  // Failed for the infrastructure's sake (a server), not the model's.
  bool infrastructure = false;
  int64_t from_opset = 0;
  int64_t to_opset = 0;
  int nodes_changed = 0;
  double milliseconds = 0;
};

constexpr const char* kOutcomeNames[] = {"ok", "skipped", "failed"};

// True when the JSON `report` has `"key": value`.
bool JsonHas(const std::string& report, absl::string_view key, int64_t value) {
  std::string entry = absl::StrCat("\"", key, "\": ", value);
  size_t at = report.find(entry);
  if (at == std::string::npos) return false;
  size_t end = at + entry.size();
  return end == report.size() || !std::isdigit(static_cast<unsigned char>(report[end]));
}

// True when `report` (a report file's text) was written for the targets of
// `options`: a JSON report names both; a text report's first line names the
// ai.onnx target only.
bool ReportHasTargets(const std::string& report, const converter::ConvertOptions& options,
                      bool optimized) {
  // An output converted without --verify (or --optimize) is redone when
  // verification (or optimization) is asked for now.
  if (converter::VerifyRequested(options) && !absl::StrContains(report, "verif")) return false;
  if (optimized && !absl::StrContains(report, "optimize")) return false;
  if (absl::StartsWith(report, "{")) {
    return JsonHas(report, "target_opset", options.target_opset) &&
           (!options.ml_target_opset ||
            JsonHas(report, "target_ml_opset", *options.ml_target_opset));
  }
  std::string first_line = report.substr(0, report.find('\n'));
  return absl::StrContains(first_line, absl::StrCat(" -> ", options.target_opset, ", ir_"));
}

// True when the job's output and report exist, the output is newer than
// the input, and the report was written for the same targets: an earlier
// run finished it (the report is written last, so it marks completion).
bool IsComplete(const BatchJob& job, const BatchSettings& settings) {
  std::error_code ec;
  auto input_time = fs::last_write_time(job.input, ec);
  if (ec) return false;
  auto output_time = fs::last_write_time(job.output, ec);
  if (ec || !(output_time > input_time) || !fs::exists(job.report, ec)) return false;
  std::ifstream in(job.report, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return ReportHasTargets(text.str(), settings.options, settings.optimize.has_value());
}

// Converts through `engine`, trying again while the server is busy (only a
// server says so, and the remote engine leaves the model as it is).
absl::StatusOr<converter::ConversionResult> ConvertWithRetries(
    Engine& engine, LoadedModel& model, const converter::ConvertOptions& options) {
  absl::StatusOr<converter::ConversionResult> result = engine.Convert(model, options);
  for (int attempt = 0; attempt < kBusyRetries && !result.ok() &&
                        result.status().code() == absl::StatusCode::kResourceExhausted &&
                        absl::StrContains(result.status().message(), "busy");
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    result = engine.Convert(model, options);
  }
  return result;
}

// Loads, converts and saves one model, then writes its report.
absl::Status ConvertJob(const BatchJob& job, const BatchSettings& settings, Engine& engine,
                        JobResult& result) {
  std::error_code ec;
  fs::create_directories(fs::path(job.output).parent_path(), ec);
  auto finish = [&](const converter::ConversionReport& report,
                    const rewrites::RewriteReport* optimized = nullptr) {
    result.from_opset = report.source_opset;
    result.to_opset = report.target_opset;
    result.nodes_changed = report.nodes_converted;
    std::string text = settings.json_reports ? report.ToJson() : report.ToText();
    if (optimized != nullptr) {
      text = settings.json_reports
                 ? absl::StrCat("{\"conversion\": ", text, ",\n\"optimize\": ",
                                optimized->ToJson(), "}\n")
                 : absl::StrCat(text, optimized->ToText());
    }
    return WriteFileAtomically(job.report, text);
  };
  if (!settings.external_data_threshold && !settings.optimize) {
    // A large model converts from its file, window by window.
    absl::StatusOr<std::optional<converter::ConversionReport>> windowed =
        engine.ConvertFile(job.input, job.output, settings.options);
    if (!windowed.ok()) return windowed.status();
    if (windowed->has_value()) return finish(**windowed);
  }
  absl::StatusOr<LoadedModel> loaded = LoadModel(job.input);
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<converter::ConversionResult> converted =
      ConvertWithRetries(engine, *loaded, settings.options);
  if (!converted.ok()) return converted.status();
  std::optional<rewrites::RewriteReport> optimized;
  if (settings.optimize) {
    absl::StatusOr<rewrites::RewriteReport> rewritten =
        rewrites::Optimize(converted->model, *settings.optimize);
    if (!rewritten.ok()) {
      return absl::Status(rewritten.status().code(),
                          absl::StrCat("--optimize: ", rewritten.status().message()));
    }
    optimized = *std::move(rewritten);
  }
  SaveOptions save;
  save.source_base_dir = loaded->base_dir;
  if (settings.external_data_threshold) {
    save.external_data_threshold = *settings.external_data_threshold;
  }
  absl::Status saved = SaveModel(converted->model, job.output, save);
  if (!saved.ok()) return saved;
  return finish(converted->report, optimized ? &*optimized : nullptr);
}

// Runs one job: skips it when complete, else converts it; a failure leaves
// the error file and no output or report.
JobResult RunJob(const BatchJob& job, const BatchSettings& settings, Engine& engine) {
  JobResult result;
  auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  if (!settings.force && IsComplete(job, settings)) {
    result.outcome = JobResult::kSkipped;
    return result;
  }
  absl::Status status;
  try {
    // Each model within its own budget, as the command's own model would be.
    MemoryBudget budget(BudgetForFile(job.input));
    status = ConvertJob(job, settings, engine, result);
  } catch (...) {
    status = service::ExceptionStatus(std::current_exception(), job.input);
  }
  result.milliseconds = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  if (status.ok()) {
    result.outcome = JobResult::kConverted;
    fs::remove(job.error, ec);
    return result;
  }
  result.outcome = JobResult::kFailed;
  result.infrastructure = IsInfrastructureError(status);
  absl::string_view message = status.message();
  result.error = absl::StartsWith(message, job.input) ? std::string(message)
                                                      : absl::StrCat(job.input, ": ", message);
  fs::remove(job.report, ec);
  fs::remove(job.output, ec);
  (void)WriteFileAtomically(job.error, result.error + "\n");
  return result;
}

// Progress on stderr: a bar redrawn in place on a terminal, else a line
// per model. Failures always get a line of their own. Thread-safe.
class Progress {
 public:
  Progress(std::ostream& err, size_t total, bool bar) : err_(err), total_(total), bar_(bar) {}

  // Records a finished job.
  void Done(const BatchJob& job, const JobResult& result) {
    absl::MutexLock lock(&mu_);
    ++counts_[result.outcome];
    ++done_;
    if (bar_) err_ << "\r\033[K";
    if (result.outcome == JobResult::kFailed) {
      err_ << result.error << "\n";
    } else if (!bar_) {
      err_ << absl::StrFormat("[%d/%d] %s %s", done_, total_, kOutcomeNames[result.outcome],
                              job.name)
           << (result.outcome == JobResult::kSkipped ? " (up to date)" : "") << "\n";
    }
    if (bar_) DrawBar();
    err_.flush();
  }

  // Ends the bar's line.
  void Finish() {
    absl::MutexLock lock(&mu_);
    if (bar_) err_ << "\n";
    err_.flush();
  }

 private:
  void DrawBar() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int filled = total_ == 0 ? kBarWidth : static_cast<int>(done_ * kBarWidth / total_);
    err_ << "[" << std::string(filled, '#') << std::string(kBarWidth - filled, '.') << "] "
         << done_ << "/" << total_ << "  ok " << counts_[JobResult::kConverted] << "  skipped "
         << counts_[JobResult::kSkipped] << "  failed " << counts_[JobResult::kFailed];
  }

  absl::Mutex mu_;
  std::ostream& err_;
  const size_t total_;
  const bool bar_;
  size_t done_ ABSL_GUARDED_BY(mu_) = 0;
  size_t counts_[3] ABSL_GUARDED_BY(mu_) = {0, 0, 0};
};

// Runs the jobs at `indices` on `threads` threads, into `results`.
void RunJobs(const std::vector<BatchJob>& jobs, const std::vector<size_t>& indices,
             const BatchSettings& settings, Engine& engine, int threads, Progress& progress,
             std::vector<JobResult>& results) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < indices.size(); k = next++) {
      size_t i = indices[k];
      results[i] = RunJob(jobs[i], settings, engine);
      progress.Done(jobs[i], results[i]);
    }
  };
  std::vector<std::thread> pool;
  int count = std::max(1, std::min<int>(threads, static_cast<int>(indices.size())));
  for (int i = 1; i < count; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& thread : pool) thread.join();
  progress.Finish();
}

// The jobs that failed for the infrastructure's sake.
std::vector<size_t> InfrastructureFailures(const std::vector<JobResult>& results) {
  std::vector<size_t> failed;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].outcome == JobResult::kFailed && results[i].infrastructure) {
      failed.push_back(i);
    }
  }
  return failed;
}

// Runs every job, then once more those that failed for a server's sake
// (a replica that died or drained, a busy server): they go to whichever
// server answers then.
std::vector<JobResult> RunAllJobs(const std::vector<BatchJob>& jobs,
                                  const BatchSettings& settings, Engine& engine, int threads,
                                  bool bar, std::ostream& err) {
  std::vector<JobResult> results(jobs.size());
  std::vector<size_t> all(jobs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  Progress progress(err, jobs.size(), bar);
  RunJobs(jobs, all, settings, engine, threads, progress, results);
  std::vector<size_t> again = InfrastructureFailures(results);
  if (again.empty()) return results;
  err << "trying again " << again.size() << " model(s) that failed for the server's sake\n";
  std::this_thread::sleep_for(kSecondPassDelay);
  Progress second(err, again.size(), bar);
  RunJobs(jobs, again, settings, engine, threads, second, results);
  return results;
}

// `text` cut to at most `width` bytes on a UTF-8 character boundary, with
// "..." when cut.
std::string Truncated(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t end = width;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

std::string OpsetCell(const JobResult& result) {
  if (result.outcome != JobResult::kConverted) return "-";
  return absl::StrCat(result.from_opset, " -> ", result.to_opset);
}

// The summary table and its totals line.
std::string SummaryTable(const std::vector<BatchJob>& jobs,
                         const std::vector<JobResult>& results) {
  size_t width = 5;
  for (const BatchJob& job : jobs) width = std::max(width, job.name.size());
  std::string table = absl::StrFormat("%-*s  %-7s  %-8s  %5s  %8s  %s\n", width, "model",
                                      "status", "opset", "nodes", "ms", "error");
  size_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobResult& result = results[i];
    ++counts[result.outcome];
    bool converted = result.outcome == JobResult::kConverted;
    absl::StrAppend(
        &table,
        absl::StrFormat("%-*s  %-7s  %-8s  %5s  %8s  %s", width, jobs[i].name,
                        kOutcomeNames[result.outcome], OpsetCell(result),
                        converted ? absl::StrCat(result.nodes_changed) : "-",
                        result.outcome == JobResult::kSkipped
                            ? "-"
                            : absl::StrFormat("%.1f", result.milliseconds),
                        Truncated(result.error, kTableErrorWidth)));
    while (!table.empty() && table.back() == ' ') table.pop_back();
    table += "\n";
  }
  absl::StrAppend(&table, jobs.size(), " models: ", counts[JobResult::kConverted],
                  " converted, ", counts[JobResult::kSkipped], " skipped (up to date), ",
                  counts[JobResult::kFailed], " failed\n");
  return table;
}

// OUTDIR/batch-summary.json: every model, its outcome and error.
std::string SummaryJson(const std::vector<BatchJob>& jobs,
                        const std::vector<JobResult>& results, int64_t target) {
  JsonWriter json;
  json.BeginObject().Key("target_opset").Int(target).Key("models").BeginArray();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobResult& result = results[i];
    json.BeginObject()
        .Key("name").String(jobs[i].name)
        .Key("input").String(jobs[i].input)
        .Key("output").String(jobs[i].output)
        .Key("status").String(kOutcomeNames[result.outcome]);
    if (result.outcome == JobResult::kConverted) {
      json.Key("source_opset").Int(result.from_opset)
          .Key("nodes_changed").Int(result.nodes_changed)
          .Key("milliseconds").Double(result.milliseconds);
    }
    if (result.outcome == JobResult::kFailed) {
      json.Key("error").String(result.error).Key("infrastructure").Bool(result.infrastructure);
    }
    json.EndObject();
  }
  json.EndArray().EndObject();
  return json.Finish();
}

// The settings the flags give, or a usage error.
absl::StatusOr<BatchSettings> SettingsFromArgs(const ParsedArgs& args) {
  BatchSettings settings;
  if (!args.Has("to")) return absl::InvalidArgumentError("missing --to N");
  absl::StatusOr<int64_t> target = IntFlag(args, "to");
  if (!target.ok()) return target.status();
  absl::StatusOr<converter::ConvertOptions> options = ConvertOptionsFromArgs(args);
  if (!options.ok()) return options.status();
  settings.options = *std::move(options);
  settings.options.target_opset = *target;
  if (args.Has("external-data-threshold")) {
    absl::StatusOr<int64_t> threshold = IntFlag(args, "external-data-threshold");
    if (!threshold.ok()) return threshold.status();
    settings.external_data_threshold = *threshold;
  }
  std::string format = args.Get("report-format").value_or("json");
  if (format != "json" && format != "txt") {
    return absl::InvalidArgumentError("--report-format is json or txt");
  }
  settings.json_reports = format == "json";
  settings.force = args.Has("force");
  if (std::optional<std::string> profile = args.Get("optimize")) {
    rewrites::RewriteOptions optimize;
    if (!profile->empty()) optimize.profile = *profile;
    if (absl::Status selected = rewrites::SelectPasses(optimize).status(); !selected.ok()) {
      return selected;
    }
    settings.optimize = std::move(optimize);
  }
  return settings;
}

// Whether progress is a bar: --progress bar|lines, or auto (a bar when
// stderr is a terminal).
absl::StatusOr<bool> UseBar(const ParsedArgs& args, std::ostream& err) {
  std::string mode = args.Get("progress").value_or("auto");
  if (mode == "bar") return true;
  if (mode == "lines") return false;
  if (mode != "auto") return absl::InvalidArgumentError("--progress is auto, bar or lines");
  return &err == &std::cerr && isatty(STDERR_FILENO) == 1;
}

// --shard I/N: this worker's share; {0, 1} without the flag.
absl::StatusOr<Shard> ShardFromArgs(const ParsedArgs& args) {
  std::optional<std::string> text = args.Get("shard");
  if (!text) return Shard{};
  std::pair<std::string, std::string> parts = absl::StrSplit(*text, absl::MaxSplits('/', 1));
  Shard shard;
  if (!absl::SimpleAtoi(parts.first, &shard.index) ||
      !absl::SimpleAtoi(parts.second, &shard.count) || shard.count < 1 || shard.index < 0 ||
      shard.index >= shard.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard '", *text, "': give I/N with 0 <= I < N"));
  }
  return shard;
}

// OUTDIR/batch-summary.json, or batch-summary.shard-I-of-N.json for a
// shard (the shards of one batch share OUTDIR).
std::string SummaryPath(const std::string& out_dir, const Shard& shard) {
  std::string name = shard.count == 1 ? "batch-summary.json"
                                      : absl::StrCat("batch-summary.shard-", shard.index,
                                                     "-of-", shard.count, ".json");
  return (fs::path(out_dir) / name).string();
}

int UsageError(std::ostream& err, const absl::Status& status) {
  err << "onnx-convert batch: " << status.message() << " (usage: onnx-convert " << kBatchUsage
      << ")\n";
  return kExitUsageOrIo;
}

}  // namespace

const std::vector<FlagSpec>& BatchFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"output", true, "o"},          {"to", true, ""},
      {"ml-to", true, ""},            {"jobs", true, "j"},
      {"ir-version", true, ""},       {"no-expand", false, ""},
      {"allow-casts", false, ""},     {"report-format", true, ""},
      {"no-casts", false, ""},
      {"full-validation", false, ""},
      {"external-data-threshold", true, ""},
      {"force", false, ""},           {"progress", true, ""},
      kVerifyFlags[0],                kVerifyFlags[1],
      {"optimize", true, "", true},   {"shard", true, ""},
  };
  return *flags;
}

int RunBatch(const ParsedArgs& args, Engine& engine, std::ostream& out, std::ostream& err) {
  absl::StatusOr<BatchSettings> settings = SettingsFromArgs(args);
  if (!settings.ok()) return UsageError(err, settings.status());
  std::optional<std::string> out_dir = args.Get("output");
  if (!out_dir) return UsageError(err, absl::InvalidArgumentError("missing -o OUTDIR"));
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (args.Has("jobs")) {
    absl::StatusOr<int64_t> jobs = IntFlag(args, "jobs");
    if (!jobs.ok() || *jobs < 1) {
      return UsageError(err, absl::InvalidArgumentError("-j needs a number >= 1"));
    }
    threads = static_cast<int>(std::min<int64_t>(*jobs, 256));
  }
  absl::StatusOr<bool> bar = UseBar(args, err);
  if (!bar.ok()) return UsageError(err, bar.status());
  absl::StatusOr<Shard> shard = ShardFromArgs(args);
  if (!shard.ok()) return UsageError(err, shard.status());
  absl::StatusOr<std::vector<BatchJob>> jobs =
      CollectBatchJobs(args.positional, *out_dir, settings->json_reports ? "json" : "txt");
  if (!jobs.ok()) return UsageError(err, jobs.status());
  *jobs = JobsOfShard(*std::move(jobs), *shard);
  std::error_code ec;
  fs::create_directories(*out_dir, ec);
  if (!fs::is_directory(*out_dir, ec)) {
    err << *out_dir << ": cannot create the output directory\n";
    return kExitUsageOrIo;
  }
  std::vector<JobResult> results = RunAllJobs(*jobs, *settings, engine, threads, *bar, err);
  out << SummaryTable(*jobs, results);
  std::string summary_path = SummaryPath(*out_dir, *shard);
  absl::Status written = WriteFileAtomically(
      summary_path, SummaryJson(*jobs, results, settings->options.target_opset));
  if (!written.ok()) {
    err << written.message() << "\n";
    return kExitUsageOrIo;
  }
  bool failed = std::any_of(results.begin(), results.end(), [](const JobResult& result) {
    return result.outcome == JobResult::kFailed;
  });
  if (!InfrastructureFailures(results).empty()) return kExitInfrastructure;
  return failed ? kExitInvalidModel : kExitOk;
}

}  // namespace onnxconvert::cli
