// The graph rewriter (exact profile) on synthetic MatMul -> Add -> Relu ->
// Unsqueeze -> Squeeze chains of 10 k, 100 k and 1 M nodes, against
// protobuf parse + serialize of the same model (the floor): bytes in,
// optimized bytes out (issue 20: at most 3x the floor, linear).
//
//   bazel run -c opt //bench:optimize_bench

#include <malloc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/synthetic_models.h"
#include "benchmark/benchmark.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::bench {
namespace {

void BM_ParseAndSerialize(benchmark::State& state) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) {
    onnx::ModelProto model;
    model.ParseFromString(bytes);
    benchmark::DoNotOptimize(model.SerializeAsString());
  }
}

void BM_OptimizeExact(benchmark::State& state) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) {
    onnx::ModelProto model;
    model.ParseFromString(bytes);
    absl::StatusOr<rewrites::RewriteReport> report =
        rewrites::Optimize(model, rewrites::RewriteOptions{});
    if (!report.ok()) {
      state.SkipWithError(report.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(model.SerializeAsString());
  }
}

// The fastest repetition: other load on the machine only slows one down.
double Fastest(const std::vector<double>& times) {
  return *std::min_element(times.begin(), times.end());
}

#define OC_SIZES                                                           \
  ->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond) \
      ->ComputeStatistics("min", Fastest)
BENCHMARK(BM_ParseAndSerialize) OC_SIZES->MinTime(1.0);
BENCHMARK(BM_OptimizeExact) OC_SIZES->MinTime(1.0);

}  // namespace
}  // namespace onnxconvert::bench

int main(int argc, char** argv) {
  // Fixed malloc thresholds, as in convert_bench.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
