// A service request -> the in-process server: byte 0 picks the call (even:
// unary Convert of the ConvertRequest in the rest; odd: ConvertStream of
// the ConvertStreamRequests in the rest, each a varint length then the
// message). Every call must end with a status, and the server must answer
// the next one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "grpcpp/grpcpp.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/server.h"

namespace {

using onnxconvert::service::Server;
using onnxconvert::service::ServerOptions;
namespace v1 = onnxconvert::v1;

// The one server of the process, with its work files under $TMPDIR.
Server& TheServer() {
  static Server* server = [] {
    ServerOptions options;
    options.port = 0;
    options.grace = absl::ZeroDuration();
    options.flush_delay = absl::ZeroDuration();
    const char* tmp = std::getenv("TEST_TMPDIR");
    if (tmp == nullptr) tmp = std::getenv("TMPDIR");
    options.service.work_dir = tmp != nullptr ? tmp : "/tmp";
    absl::StatusOr<std::unique_ptr<Server>> started = Server::Start(options);
    if (!started.ok()) std::abort();
    return started->release();
  }();
  return *server;
}

// Splits `bytes` into varint-length-prefixed messages; a length past the
// end takes what is left.
std::vector<std::string_view> Messages(std::string_view bytes) {
  std::vector<std::string_view> messages;
  while (!bytes.empty()) {
    uint64_t length = 0;
    int shift = 0;
    size_t used = 0;
    while (used < bytes.size() && shift < 64) {
      uint8_t byte = static_cast<uint8_t>(bytes[used++]);
      length |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if (byte < 0x80) break;
    }
    bytes.remove_prefix(used);
    size_t take = length < bytes.size() ? static_cast<size_t>(length) : bytes.size();
    messages.push_back(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  return messages;
}

void Convert(v1::OnnxConvert::Stub& stub, std::string_view bytes) {
  v1::ConvertRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  grpc::ClientContext context;
  v1::ConvertResponse response;
  (void)stub.Convert(&context, request, &response);
}

void ConvertStream(v1::OnnxConvert::Stub& stub, std::string_view bytes) {
  grpc::ClientContext context;
  auto stream = stub.ConvertStream(&context);
  for (std::string_view message : Messages(bytes)) {
    v1::ConvertStreamRequest request;
    if (!request.ParseFromArray(message.data(), static_cast<int>(message.size()))) continue;
    if (!stream->Write(request)) break;
  }
  stream->WritesDone();
  v1::ConvertStreamResponse response;
  while (stream->Read(&response)) {
  }
  (void)stream->Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > onnxconvert::fuzz::kMaxInputBytes) return 0;
  std::unique_ptr<v1::OnnxConvert::Stub> stub =
      v1::OnnxConvert::NewStub(TheServer().InProcessChannel());
  std::string_view bytes = onnxconvert::fuzz::Bytes(data, size).substr(1);
  if (data[0] % 2 == 0) {
    Convert(*stub, bytes);
  } else {
    ConvertStream(*stub, bytes);
  }
  return 0;
}
