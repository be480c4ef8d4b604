// Replays a fuzz target (linked beside this file) over its seed corpus and
// its regression inputs. $FUZZ_TARGET names the target, $FUZZ_SEEDS how its
// seeds are drawn from the backend corpus:
//   models    each case's model.onnx as it is;
//   text      each case's model printed as ONNX text;
//   requests  each case's model in a unary Convert request (to 7 and to 21)
//             and in a ConvertStream (header, then the model in one chunk),
//             framed as fuzz/service_fuzzer.cc reads them.
// With $FUZZ_WRITE_SEEDS=DIR the seeds are written to DIR (a campaign's
// starting corpus, tools/fuzz.sh) instead of replayed.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/text_printer.h"
#include "proto/onnx.pb.h"
#include "proto/onnx_convert_service.pb.h"
#include "tests/corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace onnxconvert::fuzz {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void AppendFramed(const google::protobuf::MessageLite& message, std::string& out) {
  std::string bytes = message.SerializeAsString();
  for (uint64_t length = bytes.size();; length >>= 7) {
    if (length < 0x80) {
      out.push_back(static_cast<char>(length));
      break;
    }
    out.push_back(static_cast<char>((length & 0x7f) | 0x80));
  }
  out += bytes;
}

// The seeds of one corpus model, as `mode` draws them.
std::vector<std::string> SeedsOf(const std::string& model_bytes, const std::string& mode) {
  if (mode == "models") return {model_bytes};
  if (mode == "text") {
    onnx::ModelProto model;
    if (!model.ParseFromString(model_bytes)) return {};
    return {PrintModelText(model)};
  }
  std::vector<std::string> seeds;
  for (int64_t target : {7, 21}) {
    v1::ConvertRequest request;
    request.set_model(model_bytes);
    request.set_model_name("model.onnx");
    request.set_report_message_only(target == 7);
    request.mutable_options()->set_target_opset(target);
    seeds.push_back(std::string(1, '\0') + request.SerializeAsString());
  }
  v1::ConvertStreamRequest header, chunk;
  header.mutable_header()->set_model_name("model.onnx");
  header.mutable_header()->mutable_options()->set_target_opset(13);
  chunk.mutable_chunk()->set_data(model_bytes);
  std::string stream(1, '\1');
  AppendFramed(header, stream);
  AppendFramed(chunk, stream);
  seeds.push_back(std::move(stream));
  return seeds;
}

void Feed(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(FuzzReplay, SeedCorpus) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  const std::string mode = Env("FUZZ_SEEDS");
  ASSERT_TRUE(mode == "models" || mode == "text" || mode == "requests") << "FUZZ_SEEDS=" << mode;
  const std::string write_to = Env("FUZZ_WRITE_SEEDS");
  int fed = 0;
  for (const testing::CorpusCase& c : *cases) {
    std::vector<std::string> seeds = SeedsOf(ReadFile(c.model_path), mode);
    for (size_t i = 0; i < seeds.size(); ++i) {
      if (!write_to.empty()) {
        std::string name = c.name;
        for (char& ch : name) ch = ch == '/' ? '_' : ch;
        std::ofstream(std::filesystem::path(write_to) / absl::StrCat(name, "_", i),
                      std::ios::binary)
            << seeds[i];
      } else {
        Feed(seeds[i]);
      }
      ++fed;
    }
  }
  EXPECT_GT(fed, 1000);
  std::cout << (write_to.empty() ? "replayed " : "wrote ") << fed << " seeds\n";
}

TEST(FuzzReplay, Regressions) {
  absl::StatusOr<std::string> root = testing::WorkspaceRoot();
  ASSERT_TRUE(root.ok()) << root.status();
  std::filesystem::path dir = std::filesystem::path(*root) / "fuzz/regressions" / Env("FUZZ_TARGET");
  int fed = 0;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
      Feed(ReadFile(entry.path()));
      ++fed;
    }
  }
  std::cout << "replayed " << fed << " regression inputs from " << dir << "\n";
}

}  // namespace
}  // namespace onnxconvert::fuzz
