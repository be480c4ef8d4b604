// What loading a model checks besides the parse, on the synthetic chains:
// the reflective wire check of its unknown fields and search for external
// tensors, and the typed scan that spares both when there is nothing to
// find, against the parse alone.
//
//   bazel run -c opt //bench:load_checks_bench

#include <string>

#include "bench/synthetic_models.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/arena.h"
#include "ir/external_data.h"
#include "ir/model_scan.h"
#include "ir/tensor_util.h"
#include "ir/wire_diagnostics.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::bench {
namespace {

void BM_ParseOnArena(benchmark::State& state) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) {
    google::protobuf::Arena arena;
    auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    benchmark::DoNotOptimize(model->ParseFromString(bytes));
  }
}

void BM_NeedsWireCheck(benchmark::State& state) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChainModel(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(NeedsWireCheck(model));
}

void BM_FindWireError(benchmark::State& state) {
  const std::string& bytes = SerializedChainModel(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(FindWireError(bytes, *onnx::ModelProto::descriptor()));
  }
}

void BM_ForEachTensor(benchmark::State& state) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChainModel(state.range(0)));
  for (auto _ : state) {
    int external = 0;
    ForEachTensor(model, [&](const onnx::TensorProto& tensor, const TensorPath&) {
      external += IsExternal(tensor);
      return absl::OkStatus();
    }).IgnoreError();
    benchmark::DoNotOptimize(external);
  }
}

void BM_ScanModel(benchmark::State& state) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChainModel(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ScanModel(model));
}

#define OC_SIZES ->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_ParseOnArena) OC_SIZES;
BENCHMARK(BM_NeedsWireCheck) OC_SIZES;
BENCHMARK(BM_FindWireError) OC_SIZES;
BENCHMARK(BM_ForEachTensor) OC_SIZES;
BENCHMARK(BM_ScanModel) OC_SIZES;

}  // namespace
}  // namespace onnxconvert::bench

BENCHMARK_MAIN();
