// Peak memory of one conversion of the synthetic chain, against the model's
// bytes. The chain is written to a file first and each conversion runs in a
// fresh process that reads it, so that the peak is the conversion's alone:
//
//   bazel run -c opt //bench:convert_memory -- 1000000 21
//   bazel run -c opt //bench:convert_memory -- 20000 21 500   (500 MB of weights too)
//   bazel run -c opt //bench:convert_memory -- 1000000 21 if  (every 100th block in an If)
//   bazel run -c opt //bench:convert_memory -- 1000000 21 loop  (... the body of a Loop)
//   bazel run -c opt //bench:convert_memory -- 1000000 21 fn  (every 100th block a call of
//                                                              a model-local function)
//   FROM=21 bazel-bin/bench/convert_memory 1000000 17 if     (the chain converted to 21
//                                                              first, then measured to 17)
//   KEEP=1 bazel-bin/bench/convert_memory 100000 13 loop      (the model file is kept in /tmp)
//   bazel-bin/bench/convert_memory MODEL.onnx 21              (a model file, e.g. a real one)
//
// Two ways are measured, each in its own process:
//  - whole: the file read into memory, parsed into a ModelProto, converted
//    (ConvertModel) and serialized; the parsed model alone is reported too;
//  - windowed: the file mapped into memory and converted from its bytes
//    (ConvertBytes: window by window from 1,024 nodes, whole on an
//    arena below) to an output file, as `onnx-convert convert` does.
//  - arena (the If and call chains only): ConvertBytes with no windows,
//    whole on an arena, as before the windows took subgraphs and functions;
//  - optimize (not for those chains): `onnx-convert optimize` (exact):
//    LoadModelInto onto an arena (a streamed parse), rewrites::Optimize,
//    SaveModel (streamed to the file).
// Each peak counts everything the process holds above what it held before
// reading the file (the operator registry, built first, is outside it): the
// model's bytes once read or mapped, the conversion, and the output.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "bench/synthetic_models.h"
#include "converter/converter.h"
#include "converter/windowed.h"
#include "google/protobuf/arena.h"
#include "ir/model_io.h"
#include "ir/model_sink.h"
#include "rewrites/pass_manager.h"
#include "schema/registry.h"

namespace {

// The process's peak resident set so far, in bytes.
double PeakBytes() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024.0;
}

int Whole(const char* path, int64_t target) {
  double before = PeakBytes();
  std::string bytes;
  {
    std::ifstream file(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  double read = PeakBytes();
  onnx::ModelProto model;
  model.ParseFromString(bytes);
  double parsed = PeakBytes();
  onnxconvert::converter::ConvertOptions options;
  options.target_opset = target;
  auto result = onnxconvert::converter::ConvertModel(std::move(model), options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  std::string out = result->model.SerializeAsString();
  double peak = PeakBytes();
  double size = bytes.size();
  std::printf(
      "whole:    model %.1f MB; parsed model alone %.1f MB (%.1fx the bytes); peak %.1f MB "
      "(%.2fx the bytes)\n",
      size / 1e6, (parsed - read) / 1e6, (parsed - read) / size, (peak - before) / 1e6,
      (peak - before) / size);
  return 0;
}

int Windowed(const char* path, int64_t target, bool windows) {
  double before = PeakBytes();
  absl::StatusOr<onnxconvert::MappedFile> file = onnxconvert::MappedFile::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  onnxconvert::converter::ConvertOptions options;
  options.target_opset = target;
  std::string out_path = std::string(path) + ".converted";
  // As the CLI writes it: pieces passed through as they came are copied
  // from the model's file by the kernel.
  onnxconvert::FileModelSink sink(out_path, /*durable=*/true, &*file);
  std::string why;
  onnxconvert::converter::WindowOptions window_options;
  if (!windows) window_options.min_nodes = window_options.min_bytes = INT64_MAX;
  // As the CLI converts it: the pages passes leave behind are dropped.
  window_options.release = [&](absl::string_view piece) { file->Release(piece); };
  auto report = onnxconvert::converter::ConvertBytes(
      file->bytes(), options, sink, window_options, &why);
  if (!report.ok() || !report->has_value()) {
    std::fprintf(stderr, "%s\n",
                 report.ok() ? "the model is left to a whole conversion of its own "
                               "(it does not parse, has external data or does not convert)"
                             : std::string(report.status().message()).c_str());
    return 1;
  }
  double peak = PeakBytes();
  const double size = static_cast<double>(file->bytes().size());
  std::printf("%s: model %.1f MB; peak %.1f MB (%.2fx the bytes)%s%s\n",
              windows ? "windowed" : "arena   ", size / 1e6,
              (peak - before) / 1e6, (peak - before) / size,
              why.empty() ? "" : "; whole: ", why.c_str());
  std::remove(out_path.c_str());
  return 0;
}

int OptimizeWay(const char* path) {
  double before = PeakBytes();
  struct stat info;
  if (stat(path, &info) != 0) {
    std::perror(path);
    return 1;
  }
  const double size = static_cast<double>(info.st_size);
  // On an arena, as the CLI's optimize reads it.
  google::protobuf::Arena arena(onnxconvert::ModelArenaOptions());
  onnx::ModelProto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  absl::StatusOr<onnxconvert::LoadedModel> loaded = onnxconvert::LoadModelInto(path, model);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
    return 1;
  }
  double parsed = PeakBytes();
  absl::StatusOr<onnxconvert::rewrites::RewriteReport> report =
      onnxconvert::rewrites::Optimize(model, onnxconvert::rewrites::RewriteOptions{});
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", std::string(report.status().message()).c_str());
    return 1;
  }
  double optimized = PeakBytes();
  std::string out_path = std::string(path) + ".optimized";
  absl::Status saved = onnxconvert::SaveModel(model, out_path);
  if (!saved.ok()) {
    std::fprintf(stderr, "%s\n", std::string(saved.message()).c_str());
    return 1;
  }
  double peak = PeakBytes();
  std::printf(
      "optimize: model %.1f MB; loaded %.1f MB (%.2fx); optimized %.1f MB (%.2fx); peak %.1f MB "
      "(%.2fx the bytes)\n",
      size / 1e6, (parsed - before) / 1e6, (parsed - before) / size, (optimized - before) / 1e6,
      (optimized - before) / size, (peak - before) / 1e6, (peak - before) / size);
  std::remove(out_path.c_str());
  return 0;
}

// This program's path, to run a way in a fresh process of its own.
std::string SelfPath() {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return std::string(self, length > 0 ? length : 0);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = argc > 1 ? std::atoll(argv[1]) : 100000;
  int64_t target = argc > 2 ? std::atoll(argv[2]) : 13;
  if (argc == 3 && absl::EndsWith(argv[1], ".onnx")) {
    // A model file of one's own (a real model): measured as it is.
    for (const char* way : {"whole", "windowed"}) {
      std::string command = SelfPath() + " 0 " + argv[2] + " " + argv[1] + " " + way;
      if (std::system(command.c_str()) != 0) return 1;
    }
    return 0;
  }
  if (argc != 5) {
    // Write the chain (with `weights_mb` of weights besides, if given), then
    // measure each way in a fresh process.
    using onnxconvert::bench::ChainKind;
    std::optional<ChainKind> named =
        argc > 3 ? onnxconvert::bench::ChainKindNamed(argv[3]) : std::nullopt;
    ChainKind kind = named.value_or(ChainKind::kPlain);
    int64_t weights_mb = argc > 3 && !named ? std::atoll(argv[3]) : 0;
    std::string path = std::string("/tmp/onnx-convert-") +
                       (kind == ChainKind::kIf     ? "ifchain-"
                        : kind == ChainKind::kLoop ? "loopchain-"
                        : kind == ChainKind::kCall ? "callchain-"
                                                   : "chain-") +
                       std::to_string(nodes) + ".onnx";
    onnx::ModelProto model = onnxconvert::bench::MakeChainModelOf(kind, nodes);
    if (weights_mb > 0) {
      onnx::TensorProto* weights = model.mutable_graph()->add_initializer();
      weights->set_name("weights");
      weights->set_data_type(onnx::TensorProto::FLOAT);
      weights->add_dims(weights_mb << 18);
      weights->set_raw_data(std::string(weights_mb << 20, '\1'));
      // Used (an output of its own), so that optimize keeps it.
      onnx::NodeProto* use = model.mutable_graph()->add_node();
      use->set_op_type("Identity");
      use->add_input("weights");
      use->add_output("weights_out");
      onnx::ValueInfoProto* output = model.mutable_graph()->add_output();
      output->set_name("weights_out");
      output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      output->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(
          weights_mb << 18);
    }
    if (const char* from = std::getenv("FROM")) {
      // The chain as exported at opset FROM: converted there first.
      onnxconvert::converter::ConvertOptions options;
      options.target_opset = std::atoll(from);
      auto converted = onnxconvert::converter::ConvertModel(std::move(model), options);
      if (!converted.ok()) {
        std::fprintf(stderr, "%s\n", std::string(converted.status().message()).c_str());
        return 1;
      }
      model = std::move(converted->model);
    }
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
    model.Clear();
    std::vector<const char*> ways = {"whole", "windowed", "optimize"};
    if (named) ways = {"whole", "arena", "windowed"};
    for (const char* way : ways) {
      std::string command = SelfPath() + " " + argv[1] + " " + argv[2] + " " + path + " " + way;
      if (std::system(command.c_str()) != 0) return 1;
    }
    if (std::getenv("KEEP") == nullptr) std::remove(path.c_str());
    return 0;
  }
  onnxconvert::schema::Registry::Get();
  if (std::strcmp(argv[4], "optimize") == 0) return OptimizeWay(argv[3]);
  if (std::strcmp(argv[4], "whole") == 0) return Whole(argv[3], target);
  return Windowed(argv[3], target, std::strcmp(argv[4], "arena") != 0);
}
