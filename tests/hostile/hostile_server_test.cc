// Every hostile model of the catalogue sent to one onnx-convert-server (two
// worker processes) as Check, Convert to 7 and Convert to 21, and the
// string amplifier twice at once: every call ends with a status, and the
// server is still up and converts the next model.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/testing/server_process.h"
#include "service/testing/test_models.h"
#include "tests/hostile/hostile_models.h"

namespace onnxconvert::testing {
namespace {

using service::ServerProcess;
namespace v1 = ::onnxconvert::v1;

#ifdef __SANITIZE_ADDRESS__
constexpr int kStrings = 3'000'000;  // see hostile_cli_test.cc
#else
constexpr int kStrings = 30'000'000;
#endif

// A request of type R for the model `bytes` named `name`.
template <typename R>
R ModelRequest(const std::string& bytes, const std::string& name) {
  R request;
  request.set_model(bytes);
  request.set_model_name(name);
  return request;
}

// The status of `method` called on `request` with a 120 s deadline.
template <typename Request, typename Response>
grpc::Status Call(ServerProcess& server,
                  grpc::Status (v1::OnnxConvert::Stub::*method)(grpc::ClientContext*,
                                                                const Request&, Response*),
                  const Request& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  Response response;
  return (server.Stub().get()->*method)(&context, request, &response);
}

grpc::Status Convert(ServerProcess& server, const std::string& bytes, int64_t target,
                     const std::string& name) {
  auto request = ModelRequest<v1::ConvertRequest>(bytes, name);
  request.set_report_message_only(true);
  request.mutable_options()->set_target_opset(target);
  return Call(server, &v1::OnnxConvert::Stub::Convert, request);
}

grpc::Status Check(ServerProcess& server, const std::string& bytes, const std::string& name) {
  return Call(server, &v1::OnnxConvert::Stub::Check,
              ModelRequest<v1::ModelRequest>(bytes, name));
}

grpc::Status Rewrite(ServerProcess& server, const std::string& bytes, const std::string& name) {
  return Call(server, &v1::OnnxConvert::Stub::Rewrite,
              ModelRequest<v1::RewriteRequest>(bytes, name));
}

TEST(HostileServerTest, NoHostileModelTakesTheServerDown) {
  ServerProcess server("hostile_server", {"--workers=2", "--max_message_bytes=134217728"});
  ASSERT_NE(server.port(), 0);
  int calls = 0;
  std::string amplifier;
  for (const HostileModel& model : HostileModels(kStrings)) {
    if (model.text) continue;
    if (absl::StartsWith(model.name, "strings_")) amplifier = model.bytes;
    for (int64_t target : {7, 21}) {
      grpc::Status status = Convert(server, model.bytes, target, model.name);
      ++calls;
      std::cout << model.name << " -> " << target << ": " << status.error_code() << " "
                << status.error_message().substr(0, 160) << "\n";
      EXPECT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE)
          << model.name << ": the server is gone: " << status.error_message();
      EXPECT_NE(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << model.name;
    }
    grpc::Status rewritten = Rewrite(server, model.bytes, model.name);
    ++calls;
    EXPECT_NE(rewritten.error_code(), grpc::StatusCode::UNAVAILABLE)
        << model.name << ": Rewrite took the server down: " << rewritten.error_message();
    EXPECT_NE(rewritten.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << model.name;
    grpc::Status checked = Check(server, model.bytes, model.name);
    ++calls;
    EXPECT_TRUE(checked.ok() || checked.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                checked.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
        << model.name << ": " << checked.error_code() << " " << checked.error_message();
  }
  ASSERT_FALSE(amplifier.empty());
  // The amplifier twice at once.
  grpc::Status first, second;
  std::thread other([&] { first = Convert(server, amplifier, 21, "amplifier-1"); });
  second = Convert(server, amplifier, 21, "amplifier-2");
  other.join();
  for (const grpc::Status& status : {first, second}) {
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    std::cout << "amplifier, concurrently: " << status.error_code() << " "
              << status.error_message().substr(0, 160) << "\n";
  }
  // Still up: the next model converts.
  grpc::Status next = Convert(server, service::testing::TinyCnnBytes(), 17, "tiny_cnn.onnx");
  EXPECT_TRUE(next.ok()) << next.error_message() << "\n" << server.Stderr();
  std::cout << calls + 3 << " calls\n";
}

}  // namespace
}  // namespace onnxconvert::testing
