// Converts a synthetic chain model of bench/synthetic_models.h (the plain
// chain, with `if` the If chain, `loop` the Loop chain, `fn` the call
// chain) the way the CLI does (ConvertBytes), or parses and serializes it
// (the floor), a given number of times, for counting instructions under
// callgrind (tools/bench-instructions.sh): counts do not move with the
// machine's load as times do.
//
//   convert_repeat NODES TARGET_OPSET REPETITIONS [if|loop|fn] [from=OPSET] [window=NODES]
//                  [min=NODES]
//
// TARGET_OPSET 0: the floor. from=OPSET: the chain converted to OPSET
// first (not timed), e.g. from=14 with target 15, a step no node of the
// chain changes at. window=NODES: the windows' size (WindowOptions);
// min=NODES: the fewest nodes of a graph the windows take (min_nodes).
// Prints the bytes written, the fastest time and the model's bytes per
// second at it, and why the windows left the model whole if they did.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "bench/synthetic_models.h"
#include "converter/converter.h"
#include "converter/windowed.h"
#include "ir/model_sink.h"

namespace {

// Converts `bytes` to opset `target` the way the CLI does, into `sink`;
// whether it converted. `whole` gets why the windows left it whole ("": they
// did not).
bool ConvertInto(const std::string& bytes, int64_t target,
                 const onnxconvert::converter::WindowOptions& windows,
                 onnxconvert::StringModelSink& sink, std::string& whole) {
  onnxconvert::converter::ConvertOptions options;
  options.target_opset = target;
  absl::StatusOr<std::optional<onnxconvert::converter::ConversionReport>> report =
      onnxconvert::converter::ConvertBytes(bytes, options, sink, windows, &whole);
  return report.ok() && report->has_value();
}

}  // namespace

int main(int argc, char** argv) {
  auto kind = onnxconvert::bench::ChainKind::kPlain;
  int64_t from = 0;
  onnxconvert::converter::WindowOptions windows;
  bool usage = argc < 4;
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    if (auto named = onnxconvert::bench::ChainKindNamed(arg)) {
      kind = *named;
    } else if (arg.rfind("from=", 0) == 0) {
      from = std::atoll(arg.c_str() + 5);
    } else if (arg.rfind("window=", 0) == 0) {
      windows.window_nodes = std::atoll(arg.c_str() + 7);
    } else if (arg.rfind("min=", 0) == 0) {
      windows.min_nodes = std::atoll(arg.c_str() + 4);
    } else {
      usage = true;
    }
  }
  if (usage) {
    std::fprintf(stderr,
                 "usage: convert_repeat NODES TARGET_OPSET REPETITIONS [if|loop|fn] [from=OPSET] "
                 "[window=NODES] [min=NODES]\n");
    return 2;
  }
  const int64_t nodes = std::atoll(argv[1]);
  const int64_t target = std::atoll(argv[2]);
  const int repetitions = std::atoi(argv[3]);
  std::string bytes = onnxconvert::bench::MakeChainModelOf(kind, nodes).SerializeAsString();
  std::string whole;
  if (from > 0) {
    onnxconvert::StringModelSink sink;
    if (!ConvertInto(bytes, from, {}, sink, whole)) {
      std::fprintf(stderr, "the conversion to opset %lld failed\n", static_cast<long long>(from));
      return 1;
    }
    bytes = sink.bytes();
  }
  size_t written = 0;
  double fastest_ms = 0;
  for (int i = 0; i < repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    absl::Cleanup timed = [&] {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            start)
                      .count();
      if (i == 0 || ms < fastest_ms) fastest_ms = ms;
    };
    if (target == 0) {
      onnx::ModelProto model;
      if (!model.ParseFromString(bytes)) return 1;
      written += model.SerializeAsString().size();
      continue;
    }
    onnxconvert::StringModelSink sink;
    if (!ConvertInto(bytes, target, windows, sink, whole)) {
      std::fprintf(stderr, "the conversion was left to the caller or failed\n");
      return 1;
    }
    written += sink.bytes().size();
  }
  std::printf("%zu bytes written, fastest %.1f ms, %.0f MB/s of the model%s%s\n", written,
              fastest_ms, static_cast<double>(bytes.size()) / 1e3 / fastest_ms,
              whole.empty() ? "" : "; converted whole: ", whole.c_str());
  return 0;
}
