// Check + type and shape inference time on synthetic chains of 10k, 100k and
// 1M nodes, against protobuf parsing of the same model (the floor), and
// registry start-up time.
//
//   bazel run -c opt //bench:check_infer_bench

#include <chrono>
#include <cstdio>
#include <string>

#include "benchmark/benchmark.h"
#include "bench/synthetic_models.h"
#include "schema/checker.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::bench {
namespace {

void BM_Parse(benchmark::State& state) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) {
    onnx::ModelProto model;
    benchmark::DoNotOptimize(model.ParseFromString(bytes));
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
  state.counters["MB"] = bytes.size() / 1e6;
}

void BM_Check(benchmark::State& state) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChainModel(state.range(0)));
  for (auto _ : state) {
    schema::CheckReport report = schema::CheckModel(model);
    if (report.error_count() != 0) state.SkipWithError("the chain does not check");
  }
}

void BM_Infer(benchmark::State& state) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChainModel(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<schema::InferenceResult> result = schema::InferModel(model);
    if (!result.ok()) state.SkipWithError("inference failed");
    benchmark::DoNotOptimize(result);
  }
}

void BM_CheckAndInfer(benchmark::State& state) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChainModel(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(schema::CheckModel(model));
    benchmark::DoNotOptimize(schema::InferModel(model));
  }
}

void BM_RegistryLookup(benchmark::State& state) {
  const schema::Registry& registry = schema::Registry::Get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(registry.Lookup("", "Add", 13));
  }
}

#define OC_SIZES ->Arg(10000)->Arg(100000)->Arg(300000)->Arg(600000)->Arg(1000000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_Parse) OC_SIZES->MinTime(3.0);
BENCHMARK(BM_Check) OC_SIZES->MinTime(3.0);
BENCHMARK(BM_Infer) OC_SIZES->MinTime(3.0);
BENCHMARK(BM_CheckAndInfer) OC_SIZES->MinTime(3.0);
BENCHMARK(BM_RegistryLookup);

}  // namespace
}  // namespace onnxconvert::bench

int main(int argc, char** argv) {
  // Registry start-up is measured once, before anything else touches it.
  auto start = std::chrono::steady_clock::now();
  const auto& registry = onnxconvert::schema::Registry::Get();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  std::printf("registry start-up: %.3f ms for %zu schemas\n", ms, registry.All().size());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
