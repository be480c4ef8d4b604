// Concurrent conversions of one synthetic chain against a running server,
// for measuring its memory (a benchmark, not a test):
//   bazel run //service:memory_bench -- --target 127.0.0.1:50051 --clients 8 --nodes 10000
// Prints each call's status and, for refused calls, the retry delay.
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/synthetic_models.h"
#include "grpcpp/grpcpp.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/grpc_status.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "The server (any gRPC target).");
ABSL_FLAG(int, clients, 8, "Concurrent calls, each on its own channel.");
ABSL_FLAG(int64_t, nodes, 10000, "Nodes of the chain converted.");
ABSL_FLAG(int, target_opset, 21, "Target opset.");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string& model =
      onnxconvert::bench::SerializedChainModel(absl::GetFlag(FLAGS_nodes));
  std::cout << "model: " << model.size() << " bytes\n";
  onnxconvert::v1::ConvertRequest request;
  request.set_model(model);
  request.set_model_name("chain.onnx");
  request.set_report_message_only(true);
  request.mutable_options()->set_target_opset(absl::GetFlag(FLAGS_target_opset));
  std::mutex mu;
  std::vector<std::thread> threads;
  absl::Time start = absl::Now();
  for (int i = 0; i < absl::GetFlag(FLAGS_clients); ++i) {
    threads.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(1 << 30);
      args.SetInt("onnx-convert-bench-channel", i);  // a channel (connection) per client
      auto stub = onnxconvert::v1::OnnxConvert::NewStub(grpc::CreateCustomChannel(
          absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials(), args));
      grpc::ClientContext context;
      onnxconvert::v1::ConvertResponse response;
      grpc::Status status = stub->Convert(&context, request, &response);
      std::optional<absl::Duration> retry = onnxconvert::service::RetryDelayOf(status);
      std::lock_guard<std::mutex> lock(mu);
      std::cout << "call " << i << ": " << onnxconvert::service::StatusCodeName(status.error_code())
                << (retry ? absl::StrCat(" retry in ", absl::FormatDuration(*retry)) : "")
                << " after " << absl::FormatDuration(absl::Now() - start) << "\n";
    });
  }
  for (std::thread& thread : threads) thread.join();
  return 0;
}
