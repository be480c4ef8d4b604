#ifndef ONNX_CONVERT_SERVICE_SERVER_H_
#define ONNX_CONVERT_SERVICE_SERVER_H_

// The onnx-convert gRPC server: where it listens, starting and draining it,
// and the termination signals server_main waits on. Also started in process
// by the service, CLI and fuzz tests.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "service/service.h"

namespace onnxconvert::service {

// Where and how the server listens.
struct ServerOptions {
  std::string address = "127.0.0.1";
  int port = 50051;  // 0: any free port (see Server::port)
  // Most threads gRPC may use for calls (at least 2); 0: gRPC's default.
  int threads = 0;
  // How many bytes of a call the transport takes in before its handler
  // reads them (HTTP/2's per-stream window, with gRPC's window probing off),
  // so that calls refused before their body is read (unary ones by their
  // declared model size, streamed ones by their header) hold no more; 0:
  // kStreamWindowBytes (8 MiB), which gRPC widens with the link.
  int64_t stream_window_bytes = 0;
  // Largest message received or sent (the unary model limit in practice).
  int64_t max_message_bytes = int64_t{64} << 20;
  // How long in-flight calls may take to finish once shutdown begins.
  absl::Duration grace = absl::Seconds(10);
  // How long the last answer gets to reach its client before connections
  // close (within the grace period).
  absl::Duration flush_delay = absl::Milliseconds(500);
  ServiceOptions service;
};

// A running onnx-convert gRPC server: the OnnxConvert service, the
// grpc.health.v1 health service (SERVING until shutdown begins) and server
// reflection.
class Server {
 public:
  // Builds and starts the server; an address it cannot bind is Unavailable,
  // naming the address; threads of 1 or less than 0 is InvalidArgument.
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();

  // The port it listens on.
  int port() const { return port_; }
  // The service, e.g. for its options or draining state.
  ConvertService& service() { return *service_; }
  // A channel to this server inside the process.
  std::shared_ptr<grpc::Channel> InProcessChannel();

  // Drains and stops: new calls fail with UNAVAILABLE and health reports
  // NOT_SERVING; calls in flight get the grace period to finish, and the
  // last answer flush_delay to reach its client; then gRPC stops (cancelling
  // whatever still runs) and work calls abandoned gets what is left of the
  // grace period. Returns true when no work is left running. Idempotent.
  bool Shutdown();

 private:
  Server(ServerOptions options, std::unique_ptr<ConvertService> service)
      : options_(std::move(options)), service_(std::move(service)) {}

  const ServerOptions options_;
  std::unique_ptr<ConvertService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

// Blocks SIGTERM and SIGINT in the calling thread and in the threads it
// starts afterwards; call first thing in main, before any thread exists.
void BlockTerminationSignals();

// Waits for SIGTERM or SIGINT (blocked by BlockTerminationSignals) and
// returns its number.
int WaitForTerminationSignal();

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_SERVER_H_
