// The evaluator's heavy kernels on realistic sizes, single-threaded: Conv
// (a ResNet-style 3x3 layer and a 1x1 projection), LSTM (a sentence batch)
// and MatMul (a transformer block's projection). Run with
//   bazel run -c opt //bench:nn_kernels_bench

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::bench {
namespace {

using eval::Tensor;

// A float tensor of `dims` with small deterministic values.
Tensor Filled(std::vector<int64_t> dims) {
  Tensor t(onnx::TensorProto::FLOAT, std::move(dims));
  float v = 0.1f;
  for (float& x : t.data<float>()) {
    x = v;
    v = v > 0.9f ? 0.1f : v + 0.013f;
  }
  return t;
}

onnx::NodeProto Node(const std::string& op, int inputs, int outputs) {
  onnx::NodeProto node;
  node.set_op_type(op);
  for (int i = 0; i < inputs; ++i) node.add_input(absl::StrCat("i", i));
  for (int i = 0; i < outputs; ++i) node.add_output(absl::StrCat("o", i));
  return node;
}

void AddInts(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void AddInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void Run(benchmark::State& state, const onnx::NodeProto& node, int version,
         const std::vector<const Tensor*>& inputs, double flops) {
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out = eval::EvaluateNode(node, version, inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out->front().data<float>().data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
  state.counters["GFLOP/s"].value /= 1e9;
}

// Conv of a [1, C, H, W] input with C output channels, k x k, pads k/2.
void BM_Conv(benchmark::State& state) {
  int64_t c = state.range(0), hw = state.range(1), k = state.range(2);
  Tensor x = Filled({1, c, hw, hw});
  Tensor w = Filled({c, c, k, k});
  Tensor b = Filled({c});
  onnx::NodeProto node = Node("Conv", 3, 1);
  AddInts(node, "pads", {k / 2, k / 2, k / 2, k / 2});
  Run(state, node, 22, {&x, &w, &b}, 2.0 * c * c * k * k * hw * hw);
}
BENCHMARK(BM_Conv)->Args({64, 56, 3})->Args({128, 28, 3})->Args({256, 14, 1})
    ->Unit(benchmark::kMillisecond);

// 1-D Conv of a [1, C, L] input to M output channels in G groups, kernel
// k, stride s, pads k/2 (narrow outputs, as in silero_vad's STFT and
// encoder, take the direct 1-D path).
void BM_Conv1d(benchmark::State& state) {
  int64_t c = state.range(0), m = state.range(1), l = state.range(2), k = state.range(3),
          s = state.range(4), g = state.range(5);
  Tensor x = Filled({1, c, l});
  Tensor w = Filled({m, c / g, k});
  Tensor b = Filled({m});
  onnx::NodeProto node = Node("Conv", 3, 1);
  int64_t pad = k > l ? 0 : k / 2;
  AddInts(node, "pads", {pad, pad});
  AddInts(node, "strides", {s});
  AddInt(node, "group", g);
  int64_t width = (l + 2 * pad - k) / s + 1;
  Run(state, node, 22, {&x, &w, &b}, 2.0 * m * (c / g) * k * width);
}
// {C, M, L, k, stride, group}
BENCHMARK(BM_Conv1d)
    ->Args({128, 128, 64, 3, 1, 1})
    ->Args({1, 258, 576, 256, 128, 1})
    ->Args({129, 128, 3, 3, 1, 1})
    ->Args({128, 128, 4, 3, 1, 1})
    ->Args({128, 128, 6, 3, 1, 1})
    ->Args({128, 128, 8, 3, 1, 1})
    ->Args({128, 128, 8, 3, 1, 128})
    ->Unit(benchmark::kMicrosecond);

// LSTM over [steps, batch, input] with `hidden` units, forward.
void BM_Lstm(benchmark::State& state) {
  int64_t steps = state.range(0), batch = state.range(1), input = state.range(2),
          hidden = state.range(3);
  Tensor x = Filled({steps, batch, input});
  Tensor w = Filled({1, 4 * hidden, input});
  Tensor r = Filled({1, 4 * hidden, hidden});
  Tensor b = Filled({1, 8 * hidden});
  onnx::NodeProto node = Node("LSTM", 4, 3);
  AddInt(node, "hidden_size", hidden);
  Run(state, node, 22, {&x, &w, &r, &b},
      2.0 * steps * batch * 4 * hidden * (input + hidden));
}
BENCHMARK(BM_Lstm)->Args({32, 8, 128, 256})->Args({100, 1, 64, 128})
    ->Unit(benchmark::kMillisecond);

// MatMul of [batch, seq, d] by [d, 4d] (a feed-forward projection).
void BM_MatMul(benchmark::State& state) {
  int64_t seq = state.range(0), d = state.range(1);
  Tensor a = Filled({1, seq, d});
  Tensor bm = Filled({d, 4 * d});
  onnx::NodeProto node = Node("MatMul", 2, 1);
  Run(state, node, 13, {&a, &bm}, 2.0 * seq * d * 4 * d);
}
BENCHMARK(BM_MatMul)->Args({128, 256})->Args({512, 512})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace onnxconvert::bench

BENCHMARK_MAIN();
