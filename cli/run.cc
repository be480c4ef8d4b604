#include "cli/run.h"

#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/exit_codes.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "ir/model_io.h"

namespace onnxconvert::cli {
namespace {

namespace fs = std::filesystem;
using eval::NamedValue;

// Most random input sets one run makes.
constexpr int64_t kMaxRandomSets = 10000;
// Characters of an output shown without --compare or -o.
constexpr size_t kShownChars = 160;

// A set of inputs to run the model on.
struct InputSet {
  std::string name;  // "test_data_set_0", or "" for a folder of input_*.pb
  std::vector<NamedValue> inputs;
};

// An error and the exit code it ends the command with.
struct Failure {
  int code;
  std::string file;
  absl::Status status;
};

int Report(const Failure& failure, std::ostream& err) {
  absl::string_view message = failure.status.message();
  if (!failure.file.empty() && message.substr(0, failure.file.size()) != failure.file) {
    err << failure.file << ": ";
  }
  err << message << "\n";
  return failure.code;
}

Failure Usage(absl::string_view why) {
  return {kExitUsageOrIo, "onnx-convert run", absl::InvalidArgumentError(why)};
}

// "N=2,M=3" as extents by name.
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ParseDims(absl::string_view text) {
  absl::flat_hash_map<std::string, int64_t> dims;
  for (absl::string_view entry : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(entry, '=');
    int64_t extent = 0;
    if (parts.first.empty() || !absl::SimpleAtoi(parts.second, &extent) || extent < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim takes NAME=V[,NAME=V...] with V >= 0, got '", entry, "'"));
    }
    dims[std::string(parts.first)] = extent;
  }
  return dims;
}

// The input sets of the command line: from --inputs DIR, --random N, or
// one empty set for a model without inputs. On failure, `failure` holds the
// exit code and the file the error is reported with.
absl::StatusOr<std::vector<InputSet>> InputSets(const ParsedArgs& args,
                                                const onnx::GraphProto& graph, Failure& failure) {
  std::vector<InputSet> sets;
  if (std::optional<std::string> dir = args.Get("inputs")) {
    failure = {kExitUsageOrIo, *dir, absl::OkStatus()};
    absl::StatusOr<std::vector<eval::DataSet>> found = eval::ListDataSets(*dir);
    if (!found.ok()) return found.status();
    for (const eval::DataSet& set : *found) {
      absl::StatusOr<std::vector<NamedValue>> inputs = eval::LoadInputs(set, graph);
      if (!inputs.ok()) return inputs.status();
      sets.push_back({set.name, *std::move(inputs)});
    }
    return sets;
  }
  if (args.Has("random")) {
    failure = Usage("");
    absl::StatusOr<int64_t> count = IntFlag(args, "random");
    if (!count.ok()) return count.status();
    if (*count < 1 || *count > kMaxRandomSets) {
      return absl::InvalidArgumentError(
          absl::StrCat("--random takes a number of sets from 1 to ", kMaxRandomSets));
    }
    int64_t seed = 0;
    if (args.Has("seed")) {
      absl::StatusOr<int64_t> given = IntFlag(args, "seed");
      if (!given.ok()) return given.status();
      seed = *given;
    }
    eval::RandomInputOptions options;
    if (std::optional<std::string> dims = args.Get("dim")) {
      absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> parsed = ParseDims(*dims);
      if (!parsed.ok()) return parsed.status();
      options.dims = *std::move(parsed);
    }
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    for (int64_t i = 0; i < *count; ++i) {
      failure = {kExitInvalidModel, "", absl::OkStatus()};
      absl::StatusOr<std::vector<NamedValue>> inputs = eval::RandomInputs(graph, options, rng);
      if (!inputs.ok()) return inputs.status();
      sets.push_back({absl::StrCat("test_data_set_", i), *std::move(inputs)});
    }
    return sets;
  }
  if (!eval::FedInputs(graph).empty()) {
    failure = Usage("");
    return absl::InvalidArgumentError("the model has inputs: give --inputs DIR or --random N");
  }
  sets.push_back({"", {}});
  return sets;
}

// The data set of `sets` that holds the expected outputs of input set
// `name` (of `count` input sets): the one of the same name, or the only one
// when there is only one of each.
const eval::DataSet* ExpectedSet(const std::vector<eval::DataSet>& sets, const std::string& name,
                                 size_t count) {
  for (const eval::DataSet& set : sets) {
    if (set.name == name) return &set;
  }
  return sets.size() == 1 && count == 1 ? &sets.front() : nullptr;
}

// "test_data_set_0: " or "".
std::string SetPrefix(const std::string& name) {
  return name.empty() ? "" : absl::StrCat(name, ": ");
}

// Prints each output of a run, shortened.
void PrintOutputs(const std::string& set, const eval::EvalResult& result, std::ostream& out) {
  for (const NamedValue& output : result.outputs) {
    std::string shown = eval::DebugString(output.value);
    if (shown.size() > kShownChars) shown = absl::StrCat(shown.substr(0, kShownChars), " ...");
    out << SetPrefix(set) << "output '" << output.name << "' = " << shown << "\n";
  }
}

// Compares the outputs of `result` with those of `expected`; prints one
// line per output; false when any differs.
absl::StatusOr<bool> CompareOutputs(const std::string& set, const eval::DataSet& expected,
                                    const onnx::GraphProto& graph,
                                    const eval::EvalResult& result, std::ostream& out) {
  absl::StatusOr<std::vector<NamedValue>> wanted = eval::LoadOutputs(expected, graph);
  if (!wanted.ok()) return wanted.status();
  bool all = true;
  for (size_t k = 0; k < result.outputs.size(); ++k) {
    const NamedValue& actual = result.outputs[k];
    out << SetPrefix(set) << "output '" << actual.name << "': ";
    if (k >= wanted->size()) {
      out << "no expected value (no output_" << k << ".pb)\n";
      continue;
    }
    eval::Comparison comparison = eval::CompareValues((*wanted)[k].value, actual.value);
    all = all && comparison.ok;
    out << comparison.ToString() << "\n";
  }
  return all;
}

}  // namespace

const std::vector<FlagSpec>& RunFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"inputs", true, ""}, {"random", true, ""},   {"seed", true, ""},
      {"dim", true, ""},    {"output", true, "o"}, {"compare", true, ""},
  };
  return *flags;
}

int RunModel(const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  const std::string& path = args.positional[0];
  if (args.Has("inputs") && args.Has("random")) {
    return Report(Usage("give --inputs DIR or --random N, not both"), err);
  }
  if (!args.Has("random") && (args.Has("seed") || args.Has("dim"))) {
    return Report(Usage("--seed and --dim go with --random N"), err);
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Report({kExitUsageOrIo, path, absl::NotFoundError("no such file")}, err);
  }
  LoadOptions load;
  load.load_external_data = true;
  absl::StatusOr<LoadedModel> loaded = LoadModel(path, load);
  if (!loaded.ok()) return Report({kExitInvalidModel, path, loaded.status()}, err);
  const onnx::GraphProto& graph = loaded->model.graph();

  Failure failure{kExitUsageOrIo, "", absl::OkStatus()};
  absl::StatusOr<std::vector<InputSet>> sets = InputSets(args, graph, failure);
  if (!sets.ok()) {
    failure.status = sets.status();
    if (failure.file.empty()) failure.file = path;
    return Report(failure, err);
  }
  std::vector<eval::DataSet> expected_sets;
  std::optional<std::string> compare_dir = args.Get("compare");
  if (compare_dir) {
    absl::StatusOr<std::vector<eval::DataSet>> found = eval::ListDataSets(*compare_dir);
    if (!found.ok()) return Report({kExitUsageOrIo, *compare_dir, found.status()}, err);
    expected_sets = *std::move(found);
  }
  std::optional<std::string> output_dir = args.Get("output");
  bool random = args.Has("random");
  bool all_match = true;
  for (InputSet& set : *sets) {
    std::string out_dir =
        output_dir ? (fs::path(*output_dir) / set.name).string() : std::string();
    if (output_dir && random) {
      absl::Status written = eval::WriteValues(out_dir, "input", set.inputs);
      if (!written.ok()) return Report({kExitUsageOrIo, out_dir, written}, err);
    }
    absl::StatusOr<eval::EvalResult> result =
        eval::EvaluateModel(loaded->model, std::move(set.inputs));
    if (!result.ok()) {
      return Report({kExitInvalidModel, path,
                     absl::Status(result.status().code(),
                                  absl::StrCat(SetPrefix(set.name), result.status().message()))},
                    err);
    }
    if (!result->deterministic) {
      out << SetPrefix(set.name)
          << "note: the model ran non-deterministic ops; their outputs vary from run to run\n";
    }
    if (output_dir) {
      absl::Status written = eval::WriteValues(out_dir, "output", result->outputs);
      if (!written.ok()) return Report({kExitUsageOrIo, out_dir, written}, err);
    }
    if (compare_dir) {
      const eval::DataSet* expected = ExpectedSet(expected_sets, set.name, sets->size());
      if (expected == nullptr) {
        return Report({kExitUsageOrIo, *compare_dir,
                       absl::NotFoundError(absl::StrCat("holds no expected outputs for ",
                                                        set.name.empty() ? "the set" : set.name))},
                      err);
      }
      absl::StatusOr<bool> matched = CompareOutputs(set.name, *expected, graph, *result, out);
      if (!matched.ok()) return Report({kExitUsageOrIo, *compare_dir, matched.status()}, err);
      all_match = all_match && *matched;
    } else if (!output_dir) {
      PrintOutputs(set.name, *result, out);
    }
  }
  if (!all_match) {
    return Report({kExitInvalidModel, path,
                   absl::InvalidArgumentError("outputs differ from the expected ones")},
                  err);
  }
  return kExitOk;
}

}  // namespace onnxconvert::cli
