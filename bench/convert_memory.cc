// Peak memory of one conversion of the synthetic chain (parse, convert,
// serialize), against the model's bytes and against the parsed model. The
// chain is written to a file first and the conversion runs in a fresh
// process that reads it, so that the peak is the conversion's alone:
//
//   bazel run -c opt //bench:convert_memory -- 1000000 21

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "bench/synthetic_models.h"
#include "converter/converter.h"

namespace {

// The process's peak resident set so far, in bytes.
double PeakBytes() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = argc > 1 ? std::atoll(argv[1]) : 100000;
  int64_t target = argc > 2 ? std::atoll(argv[2]) : 13;
  if (argc <= 3) {
    // Write the chain, then measure in a fresh process.
    std::string path = std::string("/tmp/onnx-convert-chain-") + std::to_string(nodes) + ".onnx";
    std::ofstream(path, std::ios::binary)
        << onnxconvert::bench::MakeChainModel(nodes).SerializeAsString();
    execl("/proc/self/exe", argv[0], argv[1], argv[2], path.c_str(), static_cast<char*>(nullptr));
    std::perror("exec");
    return 1;
  }
  std::string bytes;
  {
    std::ifstream file(argv[3], std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  double before = PeakBytes();
  onnx::ModelProto model;
  model.ParseFromString(bytes);
  double parsed = PeakBytes();
  double in_memory = model.SpaceUsedLong();
  onnxconvert::converter::ConvertOptions options;
  options.target_opset = target;
  auto result = onnxconvert::converter::ConvertModel(std::move(model), options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  std::string out = result->model.SerializeAsString();
  double peak = PeakBytes();
  // The parsed model alone (protobuf's objects: ~12x its bytes for a graph
  // of small nodes), and the conversion's own memory above it.
  std::printf(
      "nodes %lld -> opset %lld: model %.1f MB; parsed %.1f MB (%.1fx the bytes; "
      "SpaceUsedLong %.1f MB); peak above the bytes read %.1f MB (%.2fx the bytes, "
      "%.2fx the parsed model)\n",
      static_cast<long long>(nodes), static_cast<long long>(target), bytes.size() / 1e6,
      (parsed - before) / 1e6, (parsed - before) / bytes.size(), in_memory / 1e6,
      (peak - before) / 1e6, (peak - before) / bytes.size(), (peak - before) / (parsed - before));
  return 0;
}
