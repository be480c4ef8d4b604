#ifndef ONNX_CONVERT_SERVICE_CLIENT_H_
#define ONNX_CONVERT_SERVICE_CLIENT_H_

// The client of the onnx-convert server: channel options (load balancing,
// retries), and Client, whose calls return the library's structs. Used by
// the CLI's remote engine, the status tool and the service tests.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "converter/converter.h"
#include "grpcpp/grpcpp.h"
#include "ir/model_summary.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "schema/checker.h"
#include "service/stream_files.h"

namespace onnxconvert::service {

// How a client talks to the server.
struct ClientOptions {
  // Largest message sent or accepted.
  int64_t max_message_bytes = int64_t{64} << 20;
  // Models larger than this are converted through ConvertStream.
  int64_t unary_limit_bytes = int64_t{32} << 20;
  // Size of the chunks ConvertStream sends.
  int64_t chunk_bytes = int64_t{1} << 20;
  // Deadline of each call, from its start; InfiniteDuration: none.
  absl::Duration deadline = absl::InfiniteDuration();
  // The load-balancing policy over the target's addresses: "round_robin"
  // (every ready address in turn, unhealthy ones skipped) or "pick_first".
  std::string lb_policy = "round_robin";
  // Attempts of a call that fails UNAVAILABLE or RESOURCE_EXHAUSTED, the
  // first included (gRPC caps it at 5); 1: none. gRPC's retry policy tries
  // again what failed before the server answered (a connection refused or
  // lost); the client itself what the server refused once it had sent its
  // headers (gRPC commits such a call), after the delay of the answer's
  // google.rpc.RetryInfo, else 0.1 s, 0.2 s, ... up to 2 s.
  int max_attempts = 5;
  // Connections of the channel's own, not shared with other channels of
  // the process (e.g. for clients that stand for separate processes).
  bool own_connections = false;
};

// The gRPC service config of `options`: the load-balancing policy,
// grpc.health.v1 health checking of every address, and the retry policy of
// the OnnxConvert calls (conversion is idempotent).
std::string ServiceConfigJson(const ClientOptions& options);

// A channel to `target`, any gRPC target ("host:port", "dns:///host:port",
// "ipv4:a:p,b:p", "unix:/path"), balanced and retried as `options` says.
std::shared_ptr<grpc::Channel> CreateChannel(const std::string& target,
                                             const ClientOptions& options);

// True when a Client error is the infrastructure's, not the model's: the
// server unreachable, shutting down, busy, out of time, or its answer
// lost; trying again (later, elsewhere) may succeed.
bool IsInfrastructureError(const absl::Status& status);

// A client of an onnx-convert server that returns what the library would:
// the same structs, so callers format results exactly as a local run does.
// Errors about the model (INVALID_ARGUMENT, FAILED_PRECONDITION, INTERNAL)
// come back with the server's message as it is; any other error (the
// server unreachable, a limit, a deadline) begins with "server TARGET: ".
// Thread-safe.
class Client {
 public:
  // A ConvertStream call as the client sees it.
  using Stream = grpc::ClientReaderWriter<v1::ConvertStreamRequest, v1::ConvertStreamResponse>;

  // A client of the server(s) at `target` (any gRPC target, see
  // CreateChannel); connects on first use.
  static std::unique_ptr<Client> Connect(const std::string& target,
                                         const ClientOptions& options = {});
  // A client over an existing channel; `target` names it in errors.
  Client(std::shared_ptr<grpc::Channel> channel, std::string target,
         const ClientOptions& options = {});

  // Inspect: the summary of the serialized model `bytes` called `name`.
  absl::StatusOr<ModelSummary> Inspect(const std::string& bytes, const std::string& name);
  // Check: the checker's report.
  absl::StatusOr<schema::CheckReport> Check(const std::string& bytes, const std::string& name);
  // Convert (Plan for a dry run): the converted model, parsed, and the
  // report. Models over unary_limit_bytes go through ConvertStream with
  // EXTERNAL_DATA_KEPT_BY_CLIENT. External references come back unchanged.
  absl::StatusOr<converter::ConversionResult> Convert(const std::string& bytes,
                                                      const std::string& name,
                                                      const converter::ConvertOptions& options);

  // ConvertStream in full: sends `header`, the model `bytes` and each
  // (location, local path) of `external_files` as chunks, and passes every
  // chunk of the answer to `sink`. Returns the StreamResult. With the
  // header's client_keeps_identical_data, the files it names
  // `same_as_upload` send no chunks: the caller writes them from its own
  // copy of the upload.
  absl::StatusOr<v1::StreamResult> ConvertStreamed(
      const v1::StreamHeader& header, const std::string& bytes,
      const std::vector<std::pair<std::string, std::string>>& external_files,
      absl::FunctionRef<absl::Status(const v1::Chunk&)> sink);

  // Converts the model file at `path` (called `name`) through ConvertStream,
  // any external data kept here (references come back unchanged), and
  // writes the converted model to `output` (nothing is left there unless it
  // is complete): the report. Neither model is held whole in memory: both
  // go a chunk at a time.
  absl::StatusOr<converter::ConversionReport> ConvertFile(
      const std::string& path, const std::string& name, const std::string& output,
      const converter::ConvertOptions& options);

  // The server's capabilities.
  absl::StatusOr<v1::CapabilitiesResponse> Capabilities();
  // The server's metrics.
  absl::StatusOr<v1::MetricsResponse> Metrics();

 private:
  void Prepare(grpc::ClientContext& context) const;
  // Runs `rpc` on a prepared context, again (on a fresh context) while it
  // fails as ClientOptions::max_attempts says.
  grpc::Status CallWithRetries(absl::FunctionRef<grpc::Status(grpc::ClientContext&)> rpc) const;
  absl::Status FromRpc(const grpc::Status& status) const;
  // Runs `rpc` with retries on the ModelRequest of `bytes` named `name`,
  // declaring the model's size to the server.
  absl::Status CallOnModel(
      const std::string& bytes, const std::string& name,
      absl::FunctionRef<grpc::Status(grpc::ClientContext&, const v1::ModelRequest&)> rpc) const;
  // ConvertStream with retries: sends the header (declaring `model_bytes`),
  // the model by `write_model` (false: the stream broke) and the external
  // files; the result goes to `on_result` (if set) before any chunk, every
  // chunk of the answer to `sink`. Tries again only a call of which
  // nothing of the answer arrived.
  absl::StatusOr<v1::StreamResult> ConvertStreamedWith(
      const v1::StreamHeader& header, int64_t model_bytes,
      absl::FunctionRef<absl::StatusOr<bool>(Stream&)> write_model,
      const std::vector<std::pair<std::string, std::string>>& external_files,
      absl::FunctionRef<absl::Status(const v1::Chunk&)> sink,
      const std::function<absl::Status(const v1::StreamResult&)>& on_result = nullptr);
  absl::StatusOr<v1::StreamResult> ConvertStreamOnce(
      const v1::StreamHeader& header, int64_t model_bytes,
      absl::FunctionRef<absl::StatusOr<bool>(Stream&)> write_model,
      const std::vector<std::pair<std::string, std::string>>& external_files,
      absl::FunctionRef<absl::Status(const v1::Chunk&)> sink,
      const std::function<absl::Status(const v1::StreamResult&)>& on_result, bool& retryable);
  absl::StatusOr<v1::ConvertResponse> ConvertUnary(const std::string& bytes,
                                                   const std::string& name,
                                                   const converter::ConvertOptions& options);

  std::string target_;
  ClientOptions options_;
  std::unique_ptr<v1::OnnxConvert::Stub> stub_;
};

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_CLIENT_H_
