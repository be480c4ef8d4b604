// Graph index speed on synthetic chains of 10k, 100k and 1M nodes
// (MatMul -> Add -> Relu -> Unsqueeze -> Squeeze blocks), against protobuf
// parsing of the same model; and the cost of edits: 1000 single-node
// replacements, then one Commit.
//
//   bazel run //bench:graph_index_bench -- --benchmark_min_time=0.05

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "bench/synthetic_models.h"
#include "ir/graph_index.h"
#include "ir/graph_index_editor.h"

namespace onnxconvert::bench {
namespace {

constexpr int kEdits = 1000;

const std::string& SerializedChain(int64_t nodes) {
  static auto* cache = new std::map<int64_t, std::string>();
  auto [it, inserted] = cache->try_emplace(nodes);
  if (inserted) it->second = MakeChainModel(nodes).SerializeAsString();
  return it->second;
}

onnx::ModelProto ParsedChain(int64_t nodes) {
  onnx::ModelProto model;
  model.ParseFromString(SerializedChain(nodes));
  return model;
}

void BM_Parse(benchmark::State& state) {
  const std::string& bytes = SerializedChain(state.range(0));
  for (auto _ : state) {
    onnx::ModelProto model;
    benchmark::DoNotOptimize(model.ParseFromString(bytes));
  }
  state.counters["MB"] = bytes.size() / 1e6;
}

void BM_BuildIndex(benchmark::State& state) {
  onnx::ModelProto model = ParsedChain(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<GraphIndex>> index = GraphIndex::Build(model.mutable_graph());
    if (!index.ok()) state.SkipWithError("the chain does not index");
    benchmark::DoNotOptimize(index);
  }
  state.counters["nodes"] = model.graph().node_size();
}

void BM_TopologicalOrder(benchmark::State& state) {
  onnx::ModelProto model = ParsedChain(state.range(0));
  std::unique_ptr<GraphIndex> index = *GraphIndex::Build(model.mutable_graph());
  for (auto _ : state) {
    absl::StatusOr<std::vector<NodeId>> order = index->TopologicalOrder();
    if (!order.ok()) state.SkipWithError("the chain does not sort");
    benchmark::DoNotOptimize(order);
  }
}

void BM_BuildIndexAndOrder(benchmark::State& state) {
  onnx::ModelProto model = ParsedChain(state.range(0));
  for (auto _ : state) {
    std::unique_ptr<GraphIndex> index = *GraphIndex::Build(model.mutable_graph());
    benchmark::DoNotOptimize(index->TopologicalOrder());
  }
}

// The first fresh name collects the names in use: once per model.
void BM_FirstFreshName(benchmark::State& state) {
  onnx::ModelProto model = ParsedChain(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<ModelIndex> index = *ModelIndex::Build(&model);
    state.ResumeTiming();
    benchmark::DoNotOptimize(index->FreshName("relu"));
    state.PauseTiming();
    index.reset();
    state.ResumeTiming();
  }
}

// Replaces `kEdits` Relu nodes spread over the chain, each by one new node,
// as a converter step would; commits when `commit`.
void ReplaceRelus(benchmark::State& state, bool commit) {
  const std::string& bytes = SerializedChain(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    // Parsed, as the converter gets it (a copy would size the node list
    // exactly, so that the first insertion regrows it).
    auto model = std::make_unique<onnx::ModelProto>();
    model->ParseFromString(bytes);
    std::unique_ptr<ModelIndex> index = *ModelIndex::Build(model.get());
    GraphIndex& graph = *index->main_graph();
    const std::vector<NodeId> relus = graph.NodesOf("", "Relu");
    index->FreshName("warm_up");  // collect the names outside the timing
    state.ResumeTiming();

    const size_t stride = std::max<size_t>(1, relus.size() / kEdits);
    for (size_t i = 0; i < relus.size() && i / stride < kEdits; i += stride) {
      onnx::NodeProto replacement = graph.node(relus[i]);
      replacement.set_name(index->FreshName("relu"));
      if (!Edit(graph).ReplaceNode(relus[i], {std::move(replacement)}).ok()) {
        state.SkipWithError("replace failed");
      }
    }
    if (commit && !index->Commit().ok()) state.SkipWithError("commit failed");

    state.PauseTiming();
    index.reset();
    model.reset();
    state.ResumeTiming();
  }
  state.counters["edits"] = kEdits;
}

void BM_Replace1000(benchmark::State& state) { ReplaceRelus(state, /*commit=*/false); }
void BM_Replace1000AndCommit(benchmark::State& state) { ReplaceRelus(state, /*commit=*/true); }

#define OC_SIZES ->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_Parse) OC_SIZES;
BENCHMARK(BM_BuildIndex) OC_SIZES;
BENCHMARK(BM_TopologicalOrder) OC_SIZES;
BENCHMARK(BM_BuildIndexAndOrder) OC_SIZES;
BENCHMARK(BM_FirstFreshName) OC_SIZES;
BENCHMARK(BM_Replace1000) OC_SIZES;
BENCHMARK(BM_Replace1000AndCommit) OC_SIZES;

}  // namespace
}  // namespace onnxconvert::bench

BENCHMARK_MAIN();
