#ifndef ONNX_CONVERT_BENCH_SYNTHETIC_MODELS_H_
#define ONNX_CONVERT_BENCH_SYNTHETIC_MODELS_H_

// Synthetic models of any size for the benchmarks and the tests that need a
// large model without a file on disk.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::bench {

// A chain of MatMul -> Add -> Relu -> Unsqueeze -> Squeeze blocks at opset 12
// (axes as attributes) with about `nodes` nodes, on float[N,16] values with
// one shared 16x16 weight and bias.
onnx::ModelProto MakeChainModel(int64_t nodes);

// MakeChainModel(nodes) with every `every`-th block inside an If on the
// bool input "c": its then branch is the block (reading the chain's value,
// the weight and bias from the main graph), its else branch a Relu. About
// `nodes` nodes, those of the branches included.
onnx::ModelProto MakeIfChainModel(int64_t nodes, int64_t every = 100);

// MakeChainModel(nodes) with every `every`-th block the body of a Loop of
// "n" iterations (the int64 graph input) carrying the chain's value (the
// body reads the weight and bias from the main graph), as exporters write
// recurrent models. About `nodes` nodes, those of the bodies included.
onnx::ModelProto MakeLoopChainModel(int64_t nodes, int64_t every = 100);

// MakeChainModel(nodes) with every `every`-th block a call of the
// model-local function local.Block, which holds the block's five nodes (on
// inputs x, W and B); the calls' outputs typed in the graph's value_info,
// as exporters write them. About `nodes` nodes in the graph.
onnx::ModelProto MakeCallChainModel(int64_t nodes, int64_t every = 100);

// The chains above, by what holds every 100th block.
enum class ChainKind {
  kPlain,  // MakeChainModel
  kIf,     // MakeIfChainModel
  kLoop,   // MakeLoopChainModel
  kCall,   // MakeCallChainModel
};

// The chain of `kind` of about `nodes` nodes.
onnx::ModelProto MakeChainModelOf(ChainKind kind, int64_t nodes);

// The kind a benchmark's argument names: "if", "loop", "fn"; none for
// another.
std::optional<ChainKind> ChainKindNamed(absl::string_view arg);

// MakeChainModel(nodes), serialized; built once per size and kept.
const std::string& SerializedChainModel(int64_t nodes);

}  // namespace onnxconvert::bench

#endif  // ONNX_CONVERT_BENCH_SYNTHETIC_MODELS_H_
