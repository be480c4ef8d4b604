#include "cli/cli.h"

#include <optional>

#include "ir/memory_budget.h"
#include "service/request_guard.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/json_writer.h"
#include "cli/args.h"
#include "cli/batch.h"
#include "cli/engine.h"
#include "cli/help.h"
#include "schema/version.h"
#include "absl/strings/str_format.h"
#include "cli/html_report.h"
#include "cli/optimize.h"
#include "rewrites/pass_manager.h"
#include "cli/run.h"
#include "converter/converter.h"
#include "ir/model_io.h"
#include "ir/model_summary.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"
#include "schema/checker.h"
#include "schema/inference.h"

namespace onnxconvert::cli {
namespace {

// What a command handler sees.
struct Context {
  const ParsedArgs& args;
  std::ostream& out;
  std::ostream& err;
  Engine& engine;  // local, or the server of --server
};

// One subcommand: its name, usage, flags and handler.
struct Command {
  absl::string_view name;
  absl::string_view usage;
  absl::string_view summary;
  std::vector<FlagSpec> flags;
  size_t positional_count;
  std::function<int(Context&)> run;
  absl::string_view example = "";  // a command line, after "onnx-convert "
};

// Reports a failure as one line on stderr that starts with `file`, unless the
// message already does, and returns `code`.
int Fail(Context& ctx, absl::string_view file, const absl::Status& status, int code) {
  absl::string_view message = status.message();
  if (message.substr(0, file.size()) == file && !file.empty()) {
    ctx.err << message << "\n";
  } else {
    ctx.err << file << ": " << message << "\n";
  }
  return code;
}

// Loads a model, mapping an unreadable file to kExitUsageOrIo and an invalid
// model (bad bytes, bad external data) to kExitInvalidModel.
absl::StatusOr<LoadedModel> LoadForCommand(Context& ctx, const std::string& path,
                                           int& exit_code) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    exit_code = Fail(ctx, path, absl::NotFoundError("no such file"), kExitUsageOrIo);
    return absl::NotFoundError(path);
  }
  std::ifstream probe(path, std::ios::binary);
  if (!probe) {
    exit_code = Fail(ctx, path, absl::PermissionDeniedError("cannot read the file"),
                     kExitUsageOrIo);
    return absl::PermissionDeniedError(path);
  }
  absl::StatusOr<LoadedModel> loaded = LoadModel(path);
  if (!loaded.ok()) exit_code = Fail(ctx, path, loaded.status(), kExitInvalidModel);
  return loaded;
}

// Runs `command` on the model the command's argument names, once loaded
// (LoadForCommand's exit code when it cannot be).
int OnLoadedModel(Context& ctx,
                  absl::FunctionRef<int(const std::string& path, LoadedModel& loaded)> command) {
  const std::string& path = ctx.args.positional[0];
  int exit_code = kExitOk;
  absl::StatusOr<LoadedModel> loaded = LoadForCommand(ctx, path, exit_code);
  if (!loaded.ok()) return exit_code;
  return command(path, *loaded);
}

int RunInspect(Context& ctx) {
  return OnLoadedModel(ctx, [&](const std::string& path, LoadedModel& loaded) -> int {
    absl::StatusOr<ModelSummary> summary = ctx.engine.Inspect(loaded);
    if (!summary.ok()) return Fail(ctx, path, summary.status(), kExitUsageOrIo);
    ctx.out << (ctx.args.Has("json") ? SummaryToJson(*summary) : SummaryToText(*summary));
    return kExitOk;
  });
}

int RunPrint(Context& ctx) {
  return OnLoadedModel(ctx, [&](const std::string&, LoadedModel& loaded) -> int {
    ctx.out << PrintModelText(loaded.model);
    return kExitOk;
  });
}

int RunParse(Context& ctx) {
  const std::string& path = ctx.args.positional[0];
  std::optional<std::string> output = ctx.args.Get("output");
  if (!output) {
    return Fail(ctx, "onnx-convert parse",
                absl::InvalidArgumentError("missing -o MODEL"), kExitUsageOrIo);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Fail(ctx, path, absl::NotFoundError("cannot read the file"), kExitUsageOrIo);
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text.str());
  if (!model.ok()) return Fail(ctx, path, model.status(), kExitInvalidModel);
  absl::Status saved = SaveModel(*model, *output);
  if (!saved.ok()) return Fail(ctx, *output, saved, kExitUsageOrIo);
  return kExitOk;
}

std::string CheckReportToJson(const std::string& path, const schema::CheckReport& report) {
  JsonWriter json;
  json.BeginObject();
  json.Key("model").String(path);
  json.Key("valid").Bool(report.error_count() == 0);
  json.Key("errors").Int(report.error_count());
  json.Key("warnings").Int(static_cast<int64_t>(report.issues.size()) - report.error_count());
  json.Key("nodes_checked").Int(report.nodes_checked);
  json.Key("graphs_checked").Int(report.graphs_checked);
  json.Key("functions_checked").Int(report.functions_checked);
  json.Key("issues").BeginArray();
  for (const schema::CheckIssue& issue : report.issues) {
    json.BeginObject()
        .Key("code").String(schema::CheckCodeName(issue.code))
        .Key("severity").String(issue.is_warning ? "warning" : "error")
        .Key("path").String(issue.path)
        .Key("node").String(issue.node)
        .Key("message").String(issue.message)
        .EndObject();
  }
  json.EndArray().EndObject();
  return json.Finish();
}

int RunCheck(Context& ctx) {
  const std::string& path = ctx.args.positional[0];
  int exit_code = kExitOk;
  absl::StatusOr<LoadedModel> loaded = LoadForCommand(ctx, path, exit_code);
  if (!loaded.ok()) return exit_code;
  absl::StatusOr<schema::CheckReport> checked = ctx.engine.Check(*loaded);
  if (!checked.ok()) return Fail(ctx, path, checked.status(), kExitUsageOrIo);
  const schema::CheckReport& report = *checked;
  bool valid = report.error_count() == 0;
  if (ctx.args.Has("json")) {
    ctx.out << CheckReportToJson(path, report);
  } else {
    for (const schema::CheckIssue& issue : report.issues) {
      ctx.out << path << ": " << issue.ToString() << "\n";
    }
    ctx.out << path << ": " << (valid ? "valid" : "invalid") << " (" << report.error_count()
            << " errors, " << report.issues.size() - report.error_count() << " warnings; "
            << report.nodes_checked << " nodes in " << report.graphs_checked << " graphs and "
            << report.functions_checked << " functions)\n";
  }
  if (!valid) ctx.err << path << ": " << report.status().message() << "\n";
  return valid ? kExitOk : kExitInvalidModel;
}

int RunInfer(Context& ctx) {
  const std::string& path = ctx.args.positional[0];
  std::optional<std::string> output = ctx.args.Get("output");
  if (!output) {
    return Fail(ctx, "onnx-convert infer", absl::InvalidArgumentError("missing -o OUT"),
                kExitUsageOrIo);
  }
  int exit_code = kExitOk;
  absl::StatusOr<LoadedModel> loaded = LoadForCommand(ctx, path, exit_code);
  if (!loaded.ok()) return exit_code;
  schema::InferenceOptions options;
  options.strict = ctx.args.Has("strict");
  absl::StatusOr<schema::InferenceResult> result = schema::InferModel(loaded->model, options);
  if (!result.ok()) return Fail(ctx, path, result.status(), kExitInvalidModel);
  schema::ApplyInferredTypes(*result, loaded->model);
  SaveOptions save;
  save.source_base_dir = loaded->base_dir;
  absl::Status saved = SaveModel(std::move(loaded->model), *output, save);
  if (!saved.ok()) return Fail(ctx, *output, saved, kExitUsageOrIo);
  for (const std::string& note : result->notes) ctx.out << path << ": note: " << note << "\n";
  for (const auto& [op, count] : result->ops_without_rules) {
    ctx.out << path << ": no shape rule for " << op << " (" << count
            << " nodes): element types from its type constraints only\n";
  }
  return kExitOk;
}

// Writes the report on the model at `model_path` to `path` as JSON (.json),
// an HTML page (.html, with the rewrite after it when `optimized`) or text
// (anything else).
absl::Status WriteReport(const converter::ConversionReport& report, const std::string& path,
                         const std::string& model_path,
                         const rewrites::RewriteReport* optimized = nullptr) {
  if (absl::EndsWith(path, ".html")) {
    std::string name = std::filesystem::path(model_path).filename().string();
    return WriteFileAtomically(path, ConversionReportToHtml(report, name, optimized));
  }
  bool json = absl::EndsWith(path, ".json");
  return WriteFileAtomically(path, json ? report.ToJson() : report.ToText());
}

// Writes the --report file and prints the report of the conversion of the
// model at `path`, and of its optimization after, when there was one (in
// JSON: {"conversion": ..., "optimize": ...}).
int ReportConversion(Context& ctx, const converter::ConversionReport& report,
                     const std::string& path,
                     const rewrites::RewriteReport* optimized = nullptr) {
  if (std::optional<std::string> report_path = ctx.args.Get("report")) {
    absl::Status written;
    if (optimized != nullptr && absl::EndsWith(*report_path, ".json")) {
      written = WriteFileAtomically(*report_path, absl::StrCat("{\"conversion\": ", report.ToJson(),
                                                               ",\n\"optimize\": ",
                                                               optimized->ToJson(), "}\n"));
    } else if (optimized != nullptr && !absl::EndsWith(*report_path, ".html")) {
      written = WriteFileAtomically(*report_path, report.ToText() + optimized->ToText());
    } else {
      written = WriteReport(report, *report_path, path, optimized);
    }
    if (!written.ok()) return Fail(ctx, *report_path, written, kExitUsageOrIo);
  }
  ctx.out << report.ToText();
  if (optimized != nullptr) ctx.out << optimized->ToText();
  return kExitOk;
}

// The rewrite options of convert's --optimize[=PROFILE], if given.
std::optional<rewrites::RewriteOptions> OptimizeOptions(const ParsedArgs& args) {
  std::optional<std::string> profile = args.Get("optimize");
  if (!profile) return std::nullopt;
  rewrites::RewriteOptions options;
  if (!profile->empty()) options.profile = *profile;
  return options;
}

int ConvertOrPlan(Context& ctx, bool dry_run) {
  const std::string& path = ctx.args.positional[0];
  absl::StatusOr<int64_t> target = IntFlag(ctx.args, "to");
  if (!target.ok()) return Fail(ctx, "onnx-convert", target.status(), kExitUsageOrIo);
  std::optional<std::string> output = ctx.args.Get("output");
  dry_run = dry_run || ctx.args.Has("dry-run");
  if (!dry_run && !output) {
    return Fail(ctx, "onnx-convert convert", absl::InvalidArgumentError("missing -o OUT"),
                kExitUsageOrIo);
  }
  absl::StatusOr<converter::ConvertOptions> parsed = ConvertOptionsFromArgs(ctx.args);
  if (!parsed.ok()) return Fail(ctx, "onnx-convert", parsed.status(), kExitUsageOrIo);
  converter::ConvertOptions options = *std::move(parsed);
  options.target_opset = *target;
  options.dry_run = dry_run;
  std::optional<rewrites::RewriteOptions> optimize = OptimizeOptions(ctx.args);
  if (optimize) {
    if (absl::Status selected = rewrites::SelectPasses(*optimize).status(); !selected.ok()) {
      return Fail(ctx, "onnx-convert convert --optimize", selected, kExitUsageOrIo);
    }
  }
  if (!dry_run && !optimize && !ctx.args.Has("external-data-threshold")) {
    // A large model converts from its file, window by window.
    absl::StatusOr<std::optional<converter::ConversionReport>> windowed =
        ctx.engine.ConvertFile(path, *output, options);
    if (!windowed.ok()) return Fail(ctx, path, windowed.status(), kExitUsageOrIo);
    if (windowed->has_value()) return ReportConversion(ctx, **windowed, path);
  }
  int exit_code = kExitOk;
  absl::StatusOr<LoadedModel> loaded = LoadForCommand(ctx, path, exit_code);
  if (!loaded.ok()) return exit_code;
  absl::StatusOr<converter::ConversionResult> result = ctx.engine.Convert(*loaded, options);
  if (!result.ok()) {
    int code = (result.status().code() == absl::StatusCode::kInvalidArgument &&
                absl::StrContains(result.status().message(), "target opset")) ||
                       IsServerError(result.status())
                   ? kExitUsageOrIo
                   : kExitInvalidModel;
    return Fail(ctx, path, result.status(), code);
  }
  std::optional<rewrites::RewriteReport> optimized;
  if (optimize && !dry_run) {
    absl::StatusOr<rewrites::RewriteReport> rewritten = rewrites::Optimize(result->model, *optimize);
    if (!rewritten.ok()) {
      return Fail(ctx, path,
                  absl::Status(rewritten.status().code(),
                               absl::StrCat("--optimize: ", rewritten.status().message())),
                  kExitInvalidModel);
    }
    optimized = *std::move(rewritten);
  }
  int reported = ReportConversion(ctx, result->report, path, optimized ? &*optimized : nullptr);
  if (reported != kExitOk) return reported;
  // A plan that cannot be carried out fails, as the conversion would.
  if (dry_run) return result->report.nodes_refused > 0 ? kExitInvalidModel : kExitOk;
  SaveOptions save;
  save.source_base_dir = loaded->base_dir;
  if (ctx.args.Has("external-data-threshold")) {
    absl::StatusOr<int64_t> threshold = IntFlag(ctx.args, "external-data-threshold");
    if (!threshold.ok()) return Fail(ctx, "onnx-convert", threshold.status(), kExitUsageOrIo);
    save.external_data_threshold = *threshold;
  }
  absl::Status saved = SaveModel(result->model, *output, save);
  if (!saved.ok()) return Fail(ctx, *output, saved, kExitUsageOrIo);
  return kExitOk;
}

int RunConvert(Context& ctx) { return ConvertOrPlan(ctx, /*dry_run=*/false); }
int RunPlan(Context& ctx) { return ConvertOrPlan(ctx, /*dry_run=*/true); }

const std::vector<Command>& Commands();

// `completion bash|zsh`: the script, generated from the command table.
int RunCompletion(Context& ctx) {
  std::vector<CompletionEntry> entries;
  for (const Command& command : Commands()) {
    entries.push_back({std::string(command.name), command.flags});
  }
  const std::string& shell = ctx.args.positional[0];
  std::string script = CompletionScript(shell, entries);
  if (script.empty()) {
    ctx.err << "onnx-convert completion: unknown shell '" << shell << "' (bash, zsh)\n";
    return kExitUsageOrIo;
  }
  ctx.out << script;
  return kExitOk;
}

// `positional_count` of a command that takes one or more arguments.
constexpr size_t kOneOrMore = ~size_t{0};

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"convert",
       "convert IN -o OUT --to N [--ml-to M] [--ir-version V] [--no-expand] [--no-casts]\n"
       "          [--full-validation] [--report FILE.json|FILE.html|FILE.txt] [--dry-run]\n"
       "          [--external-data-threshold BYTES] [--verify[=N]] [--verify-inputs DIR]\n"
       "          [--optimize[=PROFILE]]",
       "converts the model one opset at a time (ai.onnx, and ai.onnx.ml with --ml-to),\n"
       "      validating every step (the nodes it touched; the whole model with\n"
       "      --full-validation); ops gone at the target are expanded into their function\n"
       "      bodies unless --no-expand; types a target version lacks are cast to a wider\n"
       "      type that holds every value exactly around the node (refused with --no-casts;\n"
       "      --allow-casts is accepted and changes nothing); --verify evaluates the\n"
       "      original and the converted model on N seeded random input sets (default 3;\n"
       "      --verify-inputs DIR: its test_data_set_*) and fails naming the first step\n"
       "      and node that disagree; a model the evaluator cannot run is reported as\n"
       "      not verified; --optimize[=exact|deploy] then rewrites the converted model\n"
       "      as `optimize` does (one report)",
       {{"output", true, "o"}, {"to", true, ""}, {"ml-to", true, ""}, {"ir-version", true, ""},
        {"no-expand", false, ""}, {"no-casts", false, ""}, {"allow-casts", false, ""},
        {"full-validation", false, ""},
        {"report", true, ""}, {"dry-run", false, ""},
        {"external-data-threshold", true, ""}, kVerifyFlags[0], kVerifyFlags[1],
        {"optimize", true, "", true}},
       1, RunConvert, "convert model.onnx -o model17.onnx --to 17 --report report.html"},
      {"plan", "plan IN --to N [--ml-to M] [--no-expand] [--no-casts] [--report FILE]",
       "the steps and adapters a conversion would run, changing nothing",
       {{"to", true, ""}, {"ml-to", true, ""}, {"no-expand", false, ""},
        {"no-casts", false, ""}, {"allow-casts", false, ""}, {"report", true, ""}},
       1, RunPlan, "plan model.onnx --to 11"},
      {"inspect", "inspect MODEL [--json]",
       "IR version, producer, opsets, ops, initializers, functions, inputs and outputs",
       {{"json", false, ""}}, 1, RunInspect, "inspect model.onnx --json"},
      {"check", "check MODEL [--json]",
       "checks the model against the ONNX 1.22 IR and operator rules",
       {{"json", false, ""}}, 1, RunCheck, "check model.onnx"},
      {"infer", "infer MODEL -o OUT [--strict]",
       "writes the model with inferred types in value_info and graph outputs",
       {{"output", true, "o"}, {"strict", false, ""}}, 1, RunInfer,
       "infer model.onnx -o typed.onnx --strict"},
      {"print", "print MODEL", "the model in ONNX text syntax, to stdout", {}, 1,
       RunPrint, "print model.onnx"},
      {"parse", "parse TEXT -o MODEL", "a model from ONNX text syntax",
       {{"output", true, "o"}}, 1, RunParse, "parse model.txt -o model.onnx"},
      {"batch", kBatchUsage, kBatchSummary, BatchFlags(), kOneOrMore,
       [](Context& ctx) { return RunBatch(ctx.args, ctx.engine, ctx.out, ctx.err); },
       "batch models/ -o out/ --to 17 -j 4"},
      {"run", kRunUsage, kRunSummary, RunFlags(), 1,
       [](Context& ctx) { return RunModel(ctx.args, ctx.out, ctx.err); },
       "run model.onnx --random 2 --seed 7"},
      {"optimize", kOptimizeUsage, kOptimizeSummary, OptimizeFlags(), 1,
       [](Context& ctx) { return RunOptimize(ctx.args, ctx.out, ctx.err); },
       "optimize model.onnx -o small.onnx --profile exact --report report.txt"},
      {"version", "version [--json]",
       "the tool's version and commit, the ONNX spec, opset ranges and IR version",
       {{"json", false, ""}}, 0,
       [](Context& ctx) {
         ctx.out << (ctx.args.Has("json") ? VersionJson() + "\n" : VersionText());
         return kExitOk;
       },
       "version --json"},
      {"completion", "completion bash|zsh",
       "a shell completion script for onnx-convert, to source or install", {}, 1,
       [](Context& ctx) { return RunCompletion(ctx); }, "completion bash > /etc/bash_completion.d/onnx-convert"},
  };
  return *commands;
}

// The names of every command.
std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const Command& command : Commands()) names.emplace_back(command.name);
  return names;
}

// `command`'s own help: usage, what it does, each option, an example.
std::string CommandHelp(const Command& command) {
  std::string help = absl::StrCat("usage: onnx-convert ", command.usage, "\n\n  ",
                                  command.summary, "\n");
  if (!command.flags.empty()) absl::StrAppend(&help, "\noptions:\n");
  for (const FlagSpec& flag : command.flags) {
    std::string spelling = absl::StrCat(flag.short_name.empty() ? "    " : absl::StrCat("-", flag.short_name, ", "),
                                        "--", flag.name,
                                        !flag.takes_value ? "" : flag.optional_value ? "[=VALUE]" : " VALUE");
    absl::StrAppendFormat(&help, "  %-34s %s\n", spelling, FlagHelp(flag.name));
  }
  if (!command.example.empty()) {
    absl::StrAppend(&help, "\nexample:\n  onnx-convert ", command.example, "\n");
  }
  return help;
}

std::string Usage() {
  std::string usage = "usage: onnx-convert COMMAND [ARGS]\n\ncommands:\n";
  for (const Command& command : Commands()) {
    absl::StrAppend(&usage, "  ", command.usage, "\n      ", command.summary, "\n");
  }
  absl::StrAppend(&usage,
                  "\nonnx-convert COMMAND --help (or help COMMAND): that command's options;\n"
                  "--version: the version, commit, ONNX spec and opsets\n"
                  "\n--server TARGET (before or after the command) runs convert, plan,\n"
                  "check, inspect and batch on an onnx-convert-server; TARGET is any gRPC\n"
                  "target (HOST:PORT, dns:///HOST:PORT, ipv4:A:P,B:P, unix:PATH);\n"
                  "--lb round_robin|pick_first (default round_robin) balances its\n"
                  "addresses, --retries N (0-4, default 4) retries UNAVAILABLE and\n"
                  "RESOURCE_EXHAUSTED calls\n"
                  "\nexit codes: 0 ok, 1 invalid or unconvertible model, "
                  "2 usage or I/O error,\n4 (batch) models failed for a server's sake\n");
  return usage;
}

// Says that `name` is no command, suggesting the closest one; exit 2.
int UnknownCommand(absl::string_view name, std::ostream& err) {
  const std::string closest = ClosestWord(name, CommandNames());
  err << "onnx-convert: unknown command '" << name << "'"
      << (closest.empty() ? "" : absl::StrCat(" (did you mean '", closest, "'?)"))
      << "; try --help\n";
  return kExitUsageOrIo;
}

// Whether `args` (after the command) ask for its help: -h or --help before
// a `--`.
bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

// Commands whose model work an Engine does, so that --server applies.
bool RunsOnServer(absl::string_view name) {
  static constexpr absl::string_view kRemote[] = {"convert", "plan", "check", "inspect",
                                                  "batch"};
  return std::find(std::begin(kRemote), std::end(kRemote), name) != std::end(kRemote);
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& command : Commands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

// Runs `command` within a memory budget for its first file (batch keeps one
// per model); running out of memory, or any exception, ends the command
// with one line naming the file, never a crash.
int RunWithinBudget(const Command& command, Context& ctx) {
  const std::string file = ctx.args.positional.empty() ? "" : ctx.args.positional[0];
  try {
    std::optional<MemoryBudget> budget;
    if (command.positional_count == 1) budget.emplace(BudgetForFile(file));
    return command.run(ctx);
  } catch (...) {
    absl::Status failed = service::ExceptionStatus(std::current_exception(), file);
    ctx.err << "onnx-convert " << command.name << ": " << failed.message() << "\n";
    return kExitInvalidModel;
  }
}

}  // namespace

std::vector<CommandInfo> CommandTable() {
  std::vector<CommandInfo> table;
  for (const Command& command : Commands()) {
    CommandInfo& info = table.emplace_back();
    info.name = std::string(command.name);
    for (const FlagSpec& flag : command.flags) info.options.push_back(absl::StrCat("--", flag.name));
  }
  return table;
}

int Run(const std::vector<std::string>& all_args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ServerChoice> server = TakeServerFlag(all_args);
  if (!server.ok()) {
    err << "onnx-convert: " << server.status().message() << "\n";
    return kExitUsageOrIo;
  }
  const std::vector<std::string>& args = server->rest;
  if (!args.empty() && args[0] == "help" && args.size() == 2) {
    const Command* asked = FindCommand(args[1]);
    if (asked == nullptr) return UnknownCommand(args[1], err);
    out << CommandHelp(*asked);
    return kExitOk;
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? err : out) << Usage();
    return args.empty() ? kExitUsageOrIo : kExitOk;
  }
  if (args[0] == "--version") {
    out << VersionText();
    return kExitOk;
  }
  const Command* command = FindCommand(args[0]);
  if (command == nullptr) return UnknownCommand(args[0], err);
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (AsksForHelp(rest)) {
    out << CommandHelp(*command);
    return kExitOk;
  }
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(rest, command->flags);
  if (parsed.ok() && !server->target.empty() && !RunsOnServer(command->name)) {
    parsed = absl::InvalidArgumentError(
        "--server runs convert, plan, check, inspect and batch only");
  }
  if (parsed.ok() && command->positional_count == kOneOrMore && parsed->positional.empty()) {
    parsed = absl::InvalidArgumentError("expected at least 1 argument");
  } else if (parsed.ok() && command->positional_count != kOneOrMore &&
             parsed->positional.size() != command->positional_count) {
    parsed = absl::InvalidArgumentError(
        absl::StrCat("expected ", command->positional_count, " argument(s), got ",
                     parsed->positional.size()));
  }
  if (!parsed.ok()) {
    err << "onnx-convert " << command->name << ": " << parsed.status().message()
        << " (usage: onnx-convert " << command->usage << ")\n";
    return kExitUsageOrIo;
  }
  std::unique_ptr<Engine> remote;
  if (!server->target.empty()) remote = RemoteEngine(server->target, server->connection);
  Context ctx{*parsed, out, err, remote ? *remote : LocalEngine()};
  return RunWithinBudget(*command, ctx);
}

}  // namespace onnxconvert::cli
