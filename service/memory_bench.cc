// Concurrent conversions of one synthetic chain against a running server,
// for measuring its memory (a benchmark, not a test):
//   bazel run //service:memory_bench -- --target 127.0.0.1:50051 --clients 8 --nodes 10000
// Prints each call's status and, for refused calls, the retry delay; then
// a summary: calls admitted and refused, refusals that carry a retry delay
// (google.rpc.RetryInfo), and the admitted calls' latency percentiles.
#include <algorithm>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/synthetic_models.h"
#include "grpcpp/grpcpp.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/admission.h"
#include "service/grpc_status.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "The server (any gRPC target).");
ABSL_FLAG(int, clients, 8, "Concurrent clients, each on its own channel.");
ABSL_FLAG(int, calls, 1, "Calls each client makes, one after the other.");
ABSL_FLAG(int64_t, nodes, 10000, "Nodes of the chain converted.");
ABSL_FLAG(int, target_opset, 21, "Target opset.");
ABSL_FLAG(bool, stream, false,
          "Call ConvertStream (the header declaring the model's size, then chunks of 64 KiB) "
          "instead of Convert: the server refuses before the body.");

ABSL_FLAG(bool, declare_size, true,
          "Declare the model's size in the x-model-bytes metadata of each Convert call, so "
          "that the server refuses calls over its memory budget before their body.");

namespace {

using onnxconvert::v1::OnnxConvert;

// One ConvertStream call: the header declaring `model`'s size, the model in
// chunks of 64 KiB, then the answer read to its end.
grpc::Status ConvertStreamed(OnnxConvert::Stub& stub, const std::string& model,
                             int target_opset) {
  grpc::ClientContext context;
  auto stream = stub.ConvertStream(&context);
  onnxconvert::v1::ConvertStreamRequest message;
  onnxconvert::v1::StreamHeader& header = *message.mutable_header();
  header.set_model_name("chain.onnx");
  header.set_report_message_only(true);
  header.set_external_data(onnxconvert::v1::EXTERNAL_DATA_KEPT_BY_CLIENT);
  header.mutable_options()->set_target_opset(target_opset);
  header.set_model_bytes(static_cast<int64_t>(model.size()));
  bool open = stream->Write(message);
  constexpr size_t kChunk = 64 << 10;
  for (size_t at = 0; open && at < model.size(); at += kChunk) {
    message.mutable_chunk()->set_data(model.substr(at, kChunk));
    open = stream->Write(message);
  }
  if (open) stream->WritesDone();
  onnxconvert::v1::ConvertStreamResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

// What the calls gave.
struct Tally {
  std::vector<double> admitted_ms;  // latency of the calls that succeeded
  int refused = 0;                  // RESOURCE_EXHAUSTED
  int refused_with_retry = 0;       // ... carrying a retry delay
  int failed = 0;                   // any other error
};

// The `q` quantile (0..1) of `values`, nearest rank; 0 when empty.
double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(q * static_cast<double>(values.size()) + 0.999999);
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

}  // namespace

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
  Tally tally;
  std::vector<std::thread> threads;
  absl::Time start = absl::Now();
  for (int i = 0; i < absl::GetFlag(FLAGS_clients); ++i) {
    threads.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(1 << 30);
      args.SetInt("onnx-convert-bench-channel", i);  // a channel (connection) per client
      args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);        // every refusal is seen
      auto stub = OnnxConvert::NewStub(grpc::CreateCustomChannel(
          absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials(), args));
      for (int call = 0; call < absl::GetFlag(FLAGS_calls); ++call) {
        grpc::ClientContext context;
        onnxconvert::v1::ConvertResponse response;
        if (absl::GetFlag(FLAGS_declare_size)) {
          context.AddMetadata(onnxconvert::service::kModelBytesMetadata,
                              absl::StrCat(model.size()));
        }
        absl::Time sent = absl::Now();
        grpc::Status status =
            absl::GetFlag(FLAGS_stream)
                ? ConvertStreamed(*stub, model, absl::GetFlag(FLAGS_target_opset))
                : stub->Convert(&context, request, &response);
        double ms = absl::ToDoubleMilliseconds(absl::Now() - sent);
        std::optional<absl::Duration> retry = onnxconvert::service::RetryDelayOf(status);
        std::lock_guard<std::mutex> lock(mu);
        if (status.ok()) {
          tally.admitted_ms.push_back(ms);
        } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          ++tally.refused;
          if (retry) ++tally.refused_with_retry;
        } else {
          ++tally.failed;
        }
        std::cout << "call " << i << "." << call << ": "
                  << onnxconvert::service::StatusCodeName(status.error_code())
                  << (retry ? absl::StrCat(" retry in ", absl::FormatDuration(*retry)) : "")
                  << " after " << absl::FormatDuration(absl::Now() - start) << "\n";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::cout << absl::StrFormat(
      "summary: %d admitted, %d refused (RESOURCE_EXHAUSTED), %d of them with RetryInfo, %d "
      "other errors; admitted latency p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      tally.admitted_ms.size(), tally.refused, tally.refused_with_retry, tally.failed,
      Quantile(tally.admitted_ms, 0.5), Quantile(tally.admitted_ms, 0.99),
      Quantile(tally.admitted_ms, 1.0));
  return 0;
}
