// The reference evaluator on real models (issue 19's acceptance figures),
// single-threaded: per model, the CPU time of one eval::EvaluateModel on
// its test_data_set_0 inputs; the evaluator's peak live bytes (and the
// process's peak RSS growth) against the model's bytes; and what
// verification by evaluation adds to a conversion (ConvertModel with
// verification minus without), as a ratio to one evaluation. Run with
//   bazel run -c opt //bench:eval_bench -- [CACHE_DIR] [--models=a,b]
//       [--tsv=FILE] [benchmark flags]
// CACHE_DIR defaults to the folder tools/real-models.js makes
// (RealModelCorpusDir: $ONNX_REAL_MODELS/corpus/real, else
// $HOME/.cache/onnx-convert-real-models/corpus/real); --tsv writes the summary table as
// tab-separated lines for bench/eval_vs_ort.sh.

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/real_models.h"
#include "benchmark/benchmark.h"
#include "converter/converter.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "ir/model_io.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::bench {
namespace {

// The default models: a CNN, an RNN (LSTM) and a transformer-like block
// (SVTR attention: MatMul, Softmax, normalisation).
constexpr const char* kDefaultModels[] = {"ppocr_v3_det", "silero_vad_v5", "ppocr_v4_rec"};

// The conversion that verification is measured on: one opset up from the
// model's, else one down when up is refused.
constexpr int kTargetSteps[] = {+1, -1};

// One model and what the set-up pass found about it.
struct ModelCase {
  std::string id;
  std::string dir;
  onnx::ModelProto model;
  std::vector<eval::NamedValue> inputs;
  int64_t model_bytes = 0;
  int64_t opset = 0;
  int64_t target = 0;         // 0: no conversion converts it
  std::string census;         // "Conv 74, Relu 30, ..." (main graph and subgraphs)
  std::string check;          // outputs against test_data_set_0's
  std::string verification;   // VerificationText of a verified conversion
  int64_t peak_live_bytes = 0;
  int64_t node_runs = 0;
  int64_t rss_growth_bytes = -1;  // -1: not measured
};

// Median CPU times (ms) by benchmark name, from the reporter below.
std::map<std::string, double>& MedianMs() {
  static auto* medians = new std::map<std::string, double>;
  return *medians;
}

// The console reporter, also keeping every median.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.aggregate_name == "median") {
        MedianMs()[run.run_name.function_name] = run.GetAdjustedCPUTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

int64_t ImportedOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") return import.version();
  }
  return 0;
}

// Ops of `graph` and of its subgraphs, counted into `counts`.
void CountOps(const onnx::GraphProto& graph, absl::flat_hash_map<std::string, int>& counts) {
  for (const onnx::NodeProto& node : graph.node()) {
    ++counts[node.op_type()];
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) CountOps(a.g(), counts);
      for (const onnx::GraphProto& g : a.graphs()) CountOps(g, counts);
    }
  }
}

// The model's ops, most frequent first: "Conv 74, Relu 30, ...".
std::string Census(const onnx::ModelProto& model) {
  absl::flat_hash_map<std::string, int> counts;
  CountOps(model.graph(), counts);
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> parts;
  for (const auto& [op, n] : sorted) parts.push_back(absl::StrCat(op, " ", n));
  return absl::StrJoin(parts, ", ");
}

// The process's peak resident bytes (VmHWM) and current ones (VmRSS), or -1.
int64_t StatusBytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!absl::StartsWith(line, field)) continue;
    int64_t kb = 0;
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb * 1024;
  }
  return -1;
}

// Starts the peak RSS over from the current RSS (Linux clear_refs "5"),
// heap kept by malloc returned first. False when the kernel refuses.
bool ResetPeakRss() {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

// "pass" when every output matches test_data_set_0's, else the first
// mismatch.
std::string CheckOutputs(const ModelCase& c, const eval::EvalResult& result,
                         const eval::DataSet& set) {
  absl::StatusOr<std::vector<eval::NamedValue>> expected =
      eval::LoadOutputs(set, c.model.graph());
  if (!expected.ok()) return std::string(expected.status().message());
  for (size_t i = 0; i < expected->size() && i < result.outputs.size(); ++i) {
    eval::Comparison cmp = eval::CompareValues((*expected)[i].value, result.outputs[i].value);
    if (!cmp.ok) return absl::StrCat((*expected)[i].name, ": ", cmp.ToString());
  }
  return "pass";
}

converter::ConvertOptions ConvertOptionsFor(const ModelCase& c, bool verify) {
  converter::ConvertOptions options;
  options.target_opset = c.target;
  if (verify) options.verify_inputs = c.dir;  // the same inputs as one evaluation
  return options;
}

// The first target of kTargetSteps that a verified conversion reaches.
void ChooseTarget(ModelCase& c) {
  for (int step : kTargetSteps) {
    c.target = c.opset + step;
    absl::StatusOr<converter::ConversionResult> result =
        converter::ConvertModel(c.model, ConvertOptionsFor(c, true));
    if (result.ok()) {
      c.verification = result->report.verification
                           ? converter::VerificationText(*result->report.verification)
                           : "no verification report";
      return;
    }
    c.verification = std::string(result.status().message()).substr(0, 200);
  }
  c.target = 0;
}

// Loads model `id` of `cache` and runs it once: census, output check,
// peak live bytes, peak RSS growth, conversion target. Null with a message
// on stderr when the model cannot be read or run.
std::unique_ptr<ModelCase> SetUp(const std::string& cache, const std::string& id) {
  auto c = std::make_unique<ModelCase>();
  c->id = id;
  c->dir = absl::StrCat(cache, "/", id);
  absl::StatusOr<LoadedModel> loaded = LoadModel(c->dir + "/model.onnx");
  absl::StatusOr<std::vector<eval::DataSet>> sets = eval::ListDataSets(c->dir);
  if (!loaded.ok() || !sets.ok() || sets->empty()) {
    std::fprintf(stderr, "%s: cannot read the model or its test_data_set_0\n", id.c_str());
    return nullptr;
  }
  c->model = std::move(loaded->model);
  c->model_bytes = static_cast<int64_t>(c->model.ByteSizeLong());
  c->opset = ImportedOpset(c->model);
  c->census = Census(c->model);
  absl::StatusOr<std::vector<eval::NamedValue>> inputs =
      eval::LoadInputs(sets->front(), c->model.graph());
  if (!inputs.ok()) {
    std::fprintf(stderr, "%s: %s\n", id.c_str(), std::string(inputs.status().message()).c_str());
    return nullptr;
  }
  c->inputs = std::move(*inputs);

  bool rss = ResetPeakRss();
  int64_t rss_before = StatusBytes("VmHWM:");
  absl::StatusOr<eval::EvalResult> result = eval::EvaluateModel(c->model, c->inputs);
  if (rss && rss_before >= 0) c->rss_growth_bytes = StatusBytes("VmHWM:") - rss_before;
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", id.c_str(), std::string(result.status().message()).c_str());
    return nullptr;
  }
  c->peak_live_bytes = result->peak_live_bytes;
  c->node_runs = result->node_runs;
  c->check = CheckOutputs(*c, *result, sets->front());
  ChooseTarget(*c);
  return c;
}

// Evaluations of one PreparedModel: its bodies are planned on the first
// (EvaluateModel plans them on every call).
void BM_Evaluate(benchmark::State& state, const ModelCase* c) {
  eval::PreparedModel prepared(c->model);
  for (auto _ : state) {
    absl::StatusOr<eval::EvalResult> result = prepared.Evaluate(c->inputs);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->node_runs);
  }
}

// One whole evaluation as `onnx-convert run` and verification make it:
// planned, constants converted, evaluated.
void BM_EvaluateOnce(benchmark::State& state, const ModelCase* c) {
  for (auto _ : state) {
    absl::StatusOr<eval::EvalResult> result = eval::EvaluateModel(c->model, c->inputs);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->node_runs);
  }
}

void BM_Convert(benchmark::State& state, const ModelCase* c, bool verify) {
  converter::ConvertOptions options = ConvertOptionsFor(*c, verify);
  for (auto _ : state) {
    absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(c->model, options);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->model);
  }
}

// The benchmarks of one model, each a median of 5 repetitions of CPU time.
void Register(const ModelCase* c) {
  auto configure = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMillisecond)->MinTime(0.3)->Repetitions(5)->ReportAggregatesOnly(true);
  };
  configure(benchmark::RegisterBenchmark(("evaluate/" + c->id).c_str(), BM_Evaluate, c));
  configure(
      benchmark::RegisterBenchmark(("evaluate_once/" + c->id).c_str(), BM_EvaluateOnce, c));
  if (c->target == 0) return;
  configure(benchmark::RegisterBenchmark(("convert/" + c->id).c_str(), BM_Convert, c, false));
  configure(
      benchmark::RegisterBenchmark(("convert_verify/" + c->id).c_str(), BM_Convert, c, true));
}

double Median(const std::string& name) {
  auto it = MedianMs().find(name);
  return it == MedianMs().end() ? -1 : it->second;
}

// The summary row of one model.
struct Row {
  std::string id;
  double eval_ms, convert_ms, verify_ms, verify_ratio, peak_ratio, rss_ratio;
  // One evaluation made from scratch (EvaluateModel), and verification's
  // cost as a ratio to it.
  double once_ms = -1, verify_once_ratio = -1;
};

Row Summarise(const ModelCase& c) {
  Row r{c.id, Median("evaluate/" + c.id), Median("convert/" + c.id),
        Median("convert_verify/" + c.id), -1, -1, -1};
  if (r.eval_ms > 0 && r.verify_ms >= 0 && r.convert_ms >= 0) {
    r.verify_ratio = (r.verify_ms - r.convert_ms) / r.eval_ms;
  }
  r.once_ms = Median("evaluate_once/" + c.id);
  if (r.once_ms > 0 && r.verify_ms >= 0 && r.convert_ms >= 0) {
    r.verify_once_ratio = (r.verify_ms - r.convert_ms) / r.once_ms;
  }
  r.peak_ratio = static_cast<double>(c.peak_live_bytes) / c.model_bytes;
  if (c.rss_growth_bytes >= 0) r.rss_ratio = static_cast<double>(c.rss_growth_bytes) / c.model_bytes;
  return r;
}

void PrintSetUp(const ModelCase& c) {
  std::printf("%s: opset %lld -> %lld, %lld nodes run, %lld model bytes\n  ops: %s\n"
              "  outputs vs test_data_set_0: %s\n  conversion: %s\n",
              c.id.c_str(), static_cast<long long>(c.opset), static_cast<long long>(c.target),
              static_cast<long long>(c.node_runs), static_cast<long long>(c.model_bytes),
              c.census.c_str(), c.check.c_str(), c.verification.c_str());
}

void PrintTable(const std::vector<Row>& rows, const std::vector<const ModelCase*>& cases) {
  std::printf("\n%-16s %9s %10s %10s %8s %12s %12s %8s %12s %8s %9s %8s\n", "model",
              "eval ms", "convert ms", "+verify ms", "verify/x", "model bytes", "peak live",
              "/model", "RSS growth", "/model", "once ms", "verify/1");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const ModelCase& c = *cases[i];
    std::printf("%-16s %9.2f %10.2f %10.2f %8.2f %12lld %12lld %8.2f %12lld %8.2f %9.2f %8.2f\n",
                r.id.c_str(), r.eval_ms, r.convert_ms, r.verify_ms, r.verify_ratio,
                static_cast<long long>(c.model_bytes), static_cast<long long>(c.peak_live_bytes),
                r.peak_ratio, static_cast<long long>(c.rss_growth_bytes), r.rss_ratio,
                r.once_ms, r.verify_once_ratio);
  }
}

// Tab-separated: id, eval ms, convert ms, convert+verify ms, verify ratio,
// model bytes, peak live bytes, peak ratio, RSS growth bytes, RSS ratio,
// one evaluation from scratch ms, verify ratio to it.
void WriteTsv(const std::string& path, const std::vector<Row>& rows,
              const std::vector<const ModelCase*>& cases) {
  std::ofstream out(path);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const ModelCase& c = *cases[i];
    out << absl::StrJoin({r.id, absl::StrCat(r.eval_ms), absl::StrCat(r.convert_ms),
                          absl::StrCat(r.verify_ms), absl::StrCat(r.verify_ratio),
                          absl::StrCat(c.model_bytes), absl::StrCat(c.peak_live_bytes),
                          absl::StrCat(r.peak_ratio), absl::StrCat(c.rss_growth_bytes),
                          absl::StrCat(r.rss_ratio), absl::StrCat(r.once_ms),
                          absl::StrCat(r.verify_once_ratio)},
                         "\t")
        << "\n";
  }
}

// A path given on the command line, relative to where `bazel run` was
// called.
std::string FromCaller(const std::string& path) {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || cwd == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

// This program's own arguments, the rest left to Google Benchmark.
struct Args {
  std::string cache;
  std::vector<std::string> models;
  std::string tsv;
};

Args TakeArgs(int& argc, char** argv) {
  Args args;
  args.cache = RealModelCorpusDir();
  args.models.assign(std::begin(kDefaultModels), std::end(kDefaultModels));
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (absl::StartsWith(arg, "--models=")) {
      args.models = absl::StrSplit(arg.substr(9), ',', absl::SkipEmpty());
    } else if (absl::StartsWith(arg, "--tsv=")) {
      args.tsv = FromCaller(arg.substr(6));
    } else if (!absl::StartsWith(arg, "--")) {
      args.cache = FromCaller(arg);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return args;
}

}  // namespace
}  // namespace onnxconvert::bench

int main(int argc, char** argv) {
  using namespace onnxconvert::bench;
  Args args = TakeArgs(argc, argv);
  benchmark::Initialize(&argc, argv);
  std::vector<std::unique_ptr<ModelCase>> owned;
  std::vector<const ModelCase*> cases;
  for (const std::string& id : args.models) {
    std::unique_ptr<ModelCase> c = SetUp(args.cache, id);
    if (c == nullptr) continue;
    PrintSetUp(*c);
    Register(c.get());
    cases.push_back(c.get());
    owned.push_back(std::move(c));
  }
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::vector<Row> rows;
  for (const ModelCase* c : cases) rows.push_back(Summarise(*c));
  PrintTable(rows, cases);
  if (!args.tsv.empty()) WriteTsv(args.tsv, rows, cases);
  benchmark::Shutdown();
  return cases.size() == args.models.size() ? 0 : 1;
}
