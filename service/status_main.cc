// onnx-convert-status: the health and metrics of a running onnx-convert
// server, for operators and probes.
//
//   onnx-convert-status --server 127.0.0.1:50051
//
// Prints "health: SERVING" (or another status) and the metrics in the
// Prometheus text format. Exits 0 when serving, 1 when not, 2 when the
// server cannot be reached.

#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "grpcpp/grpcpp.h"
#include "proto/grpc_health.grpc.pb.h"
#include "service/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "The server, HOST:PORT.");
ABSL_FLAG(bool, metrics, true, "Print the metrics after the health status.");

namespace {

using grpc::health::v1::HealthCheckResponse;

int PrintHealth(const std::string& target) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  HealthCheckResponse response;
  grpc::Status status = health->Check(&context, {}, &response);
  if (!status.ok()) {
    std::cerr << "onnx-convert-status: server " << target << ": " << status.error_message()
              << "\n";
    return 2;
  }
  std::cout << "health: " << HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return response.status() == HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Health and metrics of a running onnx-convert-server.");
  absl::ParseCommandLine(argc, argv);
  std::string target = absl::GetFlag(FLAGS_server);
  int code = PrintHealth(target);
  if (code == 2 || !absl::GetFlag(FLAGS_metrics)) return code;
  onnxconvert::service::ClientOptions options;
  options.deadline = absl::Seconds(5);
  auto metrics = onnxconvert::service::Client::Connect(target, options)->Metrics();
  if (!metrics.ok()) {
    std::cerr << "onnx-convert-status: " << metrics.status().message() << "\n";
    return 2;
  }
  std::cout << metrics->text();
  return code;
}
