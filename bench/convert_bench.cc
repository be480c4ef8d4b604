// Conversion of synthetic MatMul -> Add -> Relu -> Unsqueeze -> Squeeze chains
// from opset 12 to 13 and to 21, against protobuf parse + serialize of the
// same model (the floor): bytes in, converted bytes out. ConvertTo* parse
// the model, convert it whole and serialize it; SerializedTo* convert the
// bytes with ConvertBytes (window by window from 1,024 nodes,
// whole on an arena below), as the CLI and the service do.
// tools/bench-convert.sh runs them in turn, one process each.
// OptimizeExact parses (onto an arena, as the CLI's and the service's
// optimize do), optimizes (rewrites/, exact profile) and serializes,
// against the same floor (issue 20: 3x, linear); from 16,384 nodes it
// indexes and checks on a second thread, so its time is the wall's
// (UseRealTime). OptimizeOneThread is the same on one thread. IfChain*,
// LoopChain* and CallChain* convert chains with blocks inside If nodes,
// Loop bodies and calls of a model-local function; RealModel* real models
// with subgraphs, if the real-model cache holds them.
//
//   bazel run -c opt //bench:convert_bench
//   bazel run -c opt //bench:convert_bench -- --benchmark_filter='ParseAndSerialize|Optimize'

#include <malloc.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/real_models.h"
#include "bench/synthetic_models.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/arena.h"
#include "converter/converter.h"
#include "converter/windowed.h"
#include "ir/model_io.h"
#include "ir/model_sink.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::bench {
namespace {

// Parses and serializes `bytes`, the floor.
void ParseAndSerialize(const std::string& bytes) {
  onnx::ModelProto model;
  model.ParseFromString(bytes);
  benchmark::DoNotOptimize(model.SerializeAsString());
}

// Parses `bytes`, converts the model whole to `target` and serializes it.
absl::Status ConvertWhole(const std::string& bytes, int64_t target) {
  onnx::ModelProto model;
  model.ParseFromString(bytes);
  converter::ConvertOptions options;
  options.target_opset = target;
  absl::StatusOr<converter::ConversionResult> result =
      converter::ConvertModel(std::move(model), options);
  if (!result.ok()) return result.status();
  benchmark::DoNotOptimize(result->model.SerializeAsString());
  return absl::OkStatus();
}

// Converts `bytes` to `target` as the CLI and the service do.
absl::Status ConvertSerialized(const std::string& bytes, int64_t target) {
  converter::ConvertOptions options;
  options.target_opset = target;
  StringModelSink sink;
  absl::StatusOr<std::optional<converter::ConversionReport>> report =
      converter::ConvertBytes(bytes, options, sink);
  if (!report.ok()) return report.status();
  if (!report->has_value()) return absl::InternalError("left to the caller");
  benchmark::DoNotOptimize(sink.bytes());
  return absl::OkStatus();
}

// Parses `bytes`, optimizes the model (exact profile; on one thread when
// `one_thread` is 1) and serializes it.
absl::Status OptimizeWhole(const std::string& bytes, int64_t one_thread) {
  google::protobuf::Arena arena(ModelArenaOptions());
  auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  model->ParseFromString(bytes);
  rewrites::RewriteOptions options;
  options.second_thread = one_thread == 0;
  absl::StatusOr<rewrites::RewriteReport> report = rewrites::Optimize(*model, options);
  if (!report.ok()) return report.status();
  benchmark::DoNotOptimize(model->SerializeAsString());
  return absl::OkStatus();
}

using ConvertFn = absl::Status (*)(const std::string&, int64_t);

void BM_ParseAndSerialize(benchmark::State& state) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) ParseAndSerialize(bytes);
}

void Convert(benchmark::State& state, ConvertFn convert, int64_t target) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) {
    absl::Status status = convert(bytes, target);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
}

void BM_ConvertTo13(benchmark::State& state) { Convert(state, ConvertWhole, 13); }
void BM_ConvertTo21(benchmark::State& state) { Convert(state, ConvertWhole, 21); }
void BM_SerializedTo13(benchmark::State& state) { Convert(state, ConvertSerialized, 13); }
void BM_SerializedTo21(benchmark::State& state) { Convert(state, ConvertSerialized, 21); }
void BM_OptimizeExact(benchmark::State& state) { Convert(state, OptimizeWhole, 0); }
void BM_OptimizeOneThread(benchmark::State& state) { Convert(state, OptimizeWhole, 1); }

// The fastest repetition: other load on the machine only ever slows a
// repetition down, so the minimum is the measure least moved by it.
double Fastest(const std::vector<double>& times) {
  return *std::min_element(times.begin(), times.end());
}

#define OC_SIZES                                                                   \
  ->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond) \
      ->ComputeStatistics("min", Fastest)
BENCHMARK(BM_ParseAndSerialize) OC_SIZES->MinTime(2.0);
BENCHMARK(BM_ConvertTo13) OC_SIZES->MinTime(2.0);
BENCHMARK(BM_ConvertTo21) OC_SIZES->MinTime(2.0);
BENCHMARK(BM_SerializedTo13) OC_SIZES->MinTime(2.0);
BENCHMARK(BM_SerializedTo21) OC_SIZES->MinTime(2.0);
BENCHMARK(BM_OptimizeExact) OC_SIZES->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_OptimizeOneThread) OC_SIZES->MinTime(2.0);

// The chain with every 100th block inside an If (issue 23): the floor, and
// ConvertBytes window by window (IfChainTo*) or, as before the windows took
// subgraphs, whole on an arena (IfChainArenaTo*).
// The same for the chain with every 100th block the body of a Loop
// (LoopChain*), and with every 100th block a call of a model-local
// function (CallChain*).
const std::string& SerializedHeldChainModel(int64_t nodes, ChainKind kind) {
  static auto* cache = new std::map<std::pair<int64_t, ChainKind>, std::string>();
  auto [it, inserted] = cache->try_emplace({nodes, kind});
  if (inserted) it->second = MakeChainModelOf(kind, nodes).SerializeAsString();
  return it->second;
}

void ParseAndSerializeHeldChain(benchmark::State& state, ChainKind kind) {
  const std::string& bytes = SerializedHeldChainModel(state.range(0), kind);
  for (auto _ : state) ParseAndSerialize(bytes);
}

void ConvertHeldChain(benchmark::State& state, ChainKind kind, int64_t target, bool windows) {
  const std::string& bytes = SerializedHeldChainModel(state.range(0), kind);
  converter::ConvertOptions options;
  options.target_opset = target;
  converter::WindowOptions window_options;
  if (!windows) {
    window_options.min_nodes = std::numeric_limits<int64_t>::max();
    window_options.min_bytes = std::numeric_limits<int64_t>::max();
  }
  for (auto _ : state) {
    StringModelSink sink;
    std::string why;
    absl::StatusOr<std::optional<converter::ConversionReport>> report =
        converter::ConvertBytes(bytes, options, sink, window_options, &why);
    if (!report.ok() || !report->has_value() || (windows && !why.empty())) {
      state.SkipWithError(report.ok() ? ("left whole: " + why).c_str()
                                      : report.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(sink.bytes());
  }
}

// The chains holding every 100th block, each as BM_<name>ParseAndSerialize,
// BM_<name>To13 and To21 (window by window), and BM_<name>ArenaTo<N> (whole
// on an arena) for the targets in `arena`.
struct HeldChain {
  const char* name;
  ChainKind kind;
  std::vector<int64_t> arena;
};

benchmark::internal::Benchmark* AtHeldSizes(benchmark::internal::Benchmark* benchmark) {
  return benchmark->Arg(100000)
      ->Arg(1000000)
      ->Unit(benchmark::kMillisecond)
      ->MinTime(2.0)
      ->ComputeStatistics("min", Fastest);
}

const bool kHeldChainsRegistered = [] {
  const HeldChain chains[] = {{"IfChain", ChainKind::kIf, {13, 21}},
                              {"LoopChain", ChainKind::kLoop, {13}},
                              {"CallChain", ChainKind::kCall, {13}}};
  for (const HeldChain& chain : chains) {
    ChainKind kind = chain.kind;
    AtHeldSizes(benchmark::RegisterBenchmark(
        absl::StrCat("BM_", chain.name, "ParseAndSerialize").c_str(),
        [kind](benchmark::State& state) { ParseAndSerializeHeldChain(state, kind); }));
    for (int64_t target : {13, 21}) {
      AtHeldSizes(benchmark::RegisterBenchmark(
          absl::StrCat("BM_", chain.name, "To", target).c_str(),
          [kind, target](benchmark::State& state) {
            ConvertHeldChain(state, kind, target, true);
          }));
    }
    for (int64_t target : chain.arena) {
      AtHeldSizes(benchmark::RegisterBenchmark(
          absl::StrCat("BM_", chain.name, "ArenaTo", target).c_str(),
          [kind, target](benchmark::State& state) {
            ConvertHeldChain(state, kind, target, false);
          }));
    }
  }
  return true;
}();

// Real models with subgraphs, from the cache tools/real-models.js fills
// (RealModelCorpusDir): converted
// as the CLI converts them (RealModelTo), against their floor
// (RealModelParseAndSerialize); skipped when the cache has no such model.
// The models with a Loop are torchvision's detection models as Debian's
// PyTorch exports them (tools/install-deps.sh --torch; skipped without).
struct RealModel {
  const char* id;
  int64_t target;
};
constexpr RealModel kRealModels[] = {
    {"silero_vad_v5", 17},      // opset 16, 689 nodes, 684 of them in subgraphs of If nodes
    {"silero_vad_legacy", 17},  // opset 16, 250 nodes, 248 in subgraphs
    // opset 11, 178 MB (weights), 2,368 nodes: a Loop of 130 nodes, 22 If branches
    {"tv_maskrcnn_op11", 13},
    {"tv_maskrcnn_op11", 21},
    {"tv_keypointrcnn_op11", 21},  // opset 11, 237 MB, 2,278 nodes: a Loop of 89 nodes
};

// The bytes of real model `id`, or "" when it is not in the cache.
const std::string& RealModelBytes(const char* id) {
  static auto* cache = new std::map<std::string, std::string>();
  auto [it, inserted] = cache->try_emplace(id);
  if (!inserted) return it->second;
  std::ifstream file(RealModelCorpusDir() + "/" + id + "/model.onnx", std::ios::binary);
  if (file) it->second.assign(std::istreambuf_iterator<char>(file), {});
  return it->second;
}

void BM_RealModelParseAndSerialize(benchmark::State& state) {
  const RealModel& model = kRealModels[state.range(0)];
  const std::string& bytes = RealModelBytes(model.id);
  if (bytes.empty()) state.SkipWithError("not in the real-model cache");
  state.SetLabel(model.id);
  for (auto _ : state) ParseAndSerialize(bytes);
}

void BM_RealModelTo(benchmark::State& state) {
  const RealModel& model = kRealModels[state.range(0)];
  const std::string& bytes = RealModelBytes(model.id);
  if (bytes.empty()) state.SkipWithError("not in the real-model cache");
  state.SetLabel(absl::StrCat(model.id, " -> ", model.target));
  for (auto _ : state) {
    absl::Status status = ConvertSerialized(bytes, model.target);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
}

#define OC_REAL_MODELS                                                                \
  ->DenseRange(0, std::size(kRealModels) - 1)->Unit(benchmark::kMicrosecond)->MinTime(1.0) \
      ->ComputeStatistics("min", Fastest)
BENCHMARK(BM_RealModelParseAndSerialize) OC_REAL_MODELS;
BENCHMARK(BM_RealModelTo) OC_REAL_MODELS;

}  // namespace
}  // namespace onnxconvert::bench

int main(int argc, char** argv) {
  // Fixed malloc thresholds: glibc otherwise raises its mmap threshold as
  // large blocks are freed, so that a benchmark would run differently
  // (slower at 10 k nodes) after the larger ones before it than alone.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
