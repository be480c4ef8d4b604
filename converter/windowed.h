#ifndef ONNX_CONVERT_CONVERTER_WINDOWED_H_
#define ONNX_CONVERT_CONVERTER_WINDOWED_H_

// Converting a model held as bytes: ConvertBytes, the entry point the CLI,
// the service, benchmarks and fuzzers use, and ConvertWindowed, the way it
// converts a large graph window by window without holding it parsed.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/converter.h"
#include "ir/model_sink.h"

namespace onnxconvert::converter {

// How ConvertWindowed cuts a graph.
struct WindowOptions {
  // Nodes parsed, converted and written at a time: small enough that the
  // tables a window builds stay in the processor's caches (larger windows
  // run slower), large enough that a window's fixed cost is shared.
  int64_t window_nodes = 1024;
  // Graphs with fewer nodes are converted whole (Unimplemented), unless
  // the model has at least `min_bytes`: its weights are then written as
  // they came rather than parsed and held twice. (From 1,000 nodes the
  // windows run fewer instructions than a whole conversion: bench/README.md.)
  int64_t min_nodes = 1024;
  int64_t min_bytes = 16 << 20;
  // Floating-point initializers of at least this many bytes are read as
  // headers (name, type, dims): their data is written out as it came, never
  // parsed or held, and the adapters see no value for them (a conversion
  // that needs one is left whole).
  int64_t header_only_bytes = 64 << 10;
  // If set, given pieces of the bytes that a pass over the main graph's
  // nodes (a walk, the windows) has left behind, a few MiB at a time: a
  // caller whose bytes map a file drops their pages from memory
  // (MappedFile::Release), so that a node-heavy model is never resident
  // whole. Later passes read them again (from the page cache).
  std::function<void(absl::string_view)> release;
};

// Converts the serialized model `bytes` as ConvertModel converts it, to the
// same report and, for bytes encoded as protobuf encodes them, the same
// bytes (otherwise the nodes no step touched keep their encoding), without
// holding its main graph parsed: the nodes are parsed a window at a time,
// checked, inferred and taken through every step, then written to `out`
// (untouched nodes as their original bytes) and freed. A node with
// subgraphs (If, Loop, Scan; GRAPH and GRAPHS attributes, nested) is parsed
// with them as part of its window: its subgraphs are checked and inferred
// with the types of the main graph's values they read, taken through every
// step with the main graph's nodes, and written with their node (as it came
// if no step touched a node within). A value a subgraph reads is used there
// as if it were an input of the node holding the subgraph. A node of the
// main graph of an op every step only rebinds is not parsed at all when a
// node alike (op, attributes as encoded, input types and the
// input values its inference asked for) checked and inferred before: its
// outputs take that node's types, and its bytes are written as they came
// (see plain_node_memo.h); one that may fold or whose outputs have declared
// types is parsed. A call of one of the model's functions is a node of its
// window like any other (inference does not see into the function: its
// outputs have the types the graph declares, if any); the function bodies
// are taken through every step once, with the last window, so that the
// report lists their nodes after the main graph's. Between windows
// only the types of values still to be used are kept. Besides `bytes`,
// memory holds one window, two bits per value, a fingerprint per value
// while repeated names are looked for, and the report.
//
// Unimplemented, with the reason and nothing written that counts, when the
// windows cannot be shown to convert exactly as the whole model would; the
// caller then converts the model whole. That is so when:
//   - the model has training graphs, nodes of other domains than ai.onnx
//     and its functions' (in subgraphs, calls of its functions too), sparse
//     initializers (in subgraphs too), subgraphs
//     nested over 32 deep, or external data;
//   - the options ask for ai.onnx.ml, a dry run or whole-model validation;
//   - the model or a step does not validate node by node, or a step refuses
//     a node (the whole conversion then says why);
//   - work of later windows would come first in a whole conversion (fresh
//     names or constants shared in another order);
//   - a step rewrites a node holding subgraphs (more than binding it to
//     another version of its op), or builds subgraphs (a whole conversion
//     validates the whole model);
//   - a value a subgraph reads is not defined before the node holding it;
//   - an adapter needs the value of an initializer read as a header.
// Other errors: Cancelled (should_stop), or the sink's.
absl::StatusOr<ConversionReport> ConvertWindowed(absl::string_view bytes,
                                                 const ConvertOptions& options, ModelSink& out,
                                                 const WindowOptions& windows = {});

// Converts the model serialized as `bytes`, written to `out`: the one way
// to convert a model held as bytes (the CLI, the service, benchmarks and
// fuzzers use it). ConvertWindowed, else (Unimplemented) the whole
// conversion of the model parsed onto a protobuf arena. nullopt, with
// nothing written that counts, when the caller's own load and whole
// conversion must do it: verification is asked for, a dry run, bytes that do
// not parse, or parse only with a field of the wrong wire type kept unknown
// (LoadModel says where); tensors in external files (they are found beside
// the model); or a whole conversion that fails (the caller's conversion then
// gives the error in its terms). Other errors: Cancelled (should_stop), or
// the sink's. `whole_reason` (if not null) gets why the windows left the
// model to the whole conversion ("" if they did not).
absl::StatusOr<std::optional<ConversionReport>> ConvertBytes(absl::string_view bytes,
                                                             const ConvertOptions& options,
                                                             ModelSink& out,
                                                             const WindowOptions& windows = {},
                                                             std::string* whole_reason = nullptr);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_WINDOWED_H_
