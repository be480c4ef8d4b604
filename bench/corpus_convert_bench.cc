// Time per corpus model: every model of the ONNX backend corpus converted
// to every target of the conformance plan (7, 9, ..., 27), each conversion
// (or refusal) timed alone; prints the distribution.
//
//   bazel run -c opt //bench:corpus_convert_bench

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converter/converter.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert::bench {
namespace {

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  size_t at = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  std::nth_element(values.begin(), values.begin() + at, values.end());
  return values[at];
}

int Run() {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "%s\n", std::string(cases.status().message()).c_str());
    return 1;
  }
  std::vector<double> converted_ms, refused_ms;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    if (!loaded.ok()) continue;
    std::optional<int64_t> own = testing::ImportedOpset(loaded->model, "");
    if (!own) continue;
    for (int64_t target : testing::ConformanceTargets()) {
      if (target == *own) continue;
      converter::ConvertOptions options;
      options.target_opset = target;
      auto start = std::chrono::steady_clock::now();
      bool ok = converter::ConvertModel(loaded->model, options).ok();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            start)
                      .count();
      (ok ? converted_ms : refused_ms).push_back(ms);
    }
  }
  for (auto [label, values] : {std::pair{"converted", &converted_ms},
                               std::pair{"refused", &refused_ms}}) {
    double total = 0;
    for (double v : *values) total += v;
    std::printf("%-10s %6zu conversions: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
                label, values->size(), values->empty() ? 0 : total / values->size(),
                Percentile(*values, 0.5), Percentile(*values, 0.99), Percentile(*values, 1.0));
  }
  return 0;
}

}  // namespace
}  // namespace onnxconvert::bench

int main() { return onnxconvert::bench::Run(); }
