#ifndef ONNX_CONVERT_BENCH_REAL_MODELS_H_
#define ONNX_CONVERT_BENCH_REAL_MODELS_H_

// Where the benchmarks find the real-model corpus that tools/real-models.js
// fetches (nothing of it is committed).

#include <cstdlib>
#include <string>

namespace onnxconvert::bench {

// The corpus's folder of models, one folder per model id, as
// tools/real-models.js lays it out: $ONNX_REAL_MODELS/corpus/real, else
// $HOME/.cache/onnx-convert-real-models/corpus/real.
inline std::string RealModelCorpusDir() {
  const char* dir = std::getenv("ONNX_REAL_MODELS");
  const char* home = std::getenv("HOME");
  std::string root = dir != nullptr ? std::string(dir)
                                    : std::string(home != nullptr ? home : "") +
                                          "/.cache/onnx-convert-real-models";
  return root + "/corpus/real";
}

}  // namespace onnxconvert::bench

#endif  // ONNX_CONVERT_BENCH_REAL_MODELS_H_
