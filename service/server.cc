#include "service/server.h"

#include <signal.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "service/stream_files.h"

namespace onnxconvert::service {
namespace {

constexpr char kServiceName[] = "onnxconvert.v1.OnnxConvert";

// "host:port", with brackets around an IPv6 host.
std::string ListenAddress(const std::string& address, int port) {
  bool ipv6 = absl::StrContains(address, ':') && !absl::StartsWith(address, "[");
  return ipv6 ? absl::StrCat("[", address, "]:", port) : absl::StrCat(address, ":", port);
}

void SetServing(grpc::Server& server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus(serving);
  health->SetServingStatus(kServiceName, serving);
}

sigset_t TerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  if (options.threads == 1 || options.threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--threads ", options.threads,
        ": gRPC needs at least 2 threads (one polls, one answers); 0 is its default"));
  }
  options.service.max_message_bytes = options.max_message_bytes;
  auto service = std::make_unique<ConvertService>(options.service);
  std::unique_ptr<Server> server(new Server(std::move(options), std::move(service)));
  const ServerOptions& opts = server->options_;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  std::string address = ListenAddress(opts.address, opts.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &server->port_);
  // gRPC sets SO_REUSEPORT by default: a second server on a port in use
  // would then bind it too and silently take part of its calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(opts.max_message_bytes));
  // Streamed models arrive in MiB chunks: larger HTTP/2 frames and stream
  // windows than gRPC's defaults (16 KiB frames, 64 KiB first window) cut
  // the work per byte (see bench/stream_bench.sh). A window set by the
  // options replaces that default and stops gRPC widening it by its own
  // estimate.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, kStreamFrameBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES,
                             opts.stream_window_bytes > 0
                                 ? static_cast<int>(opts.stream_window_bytes)
                                 : kStreamWindowBytes);
  if (opts.stream_window_bytes > 0) builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // Answers are bounded by the model limit, not the message limit: the
  // report of a million converted nodes alone is over 100 MB.
  builder.SetMaxSendMessageSize(std::numeric_limits<int>::max());
  if (opts.threads > 0) {
    grpc::ResourceQuota quota("onnx-convert-server");
    quota.SetMaxThreads(opts.threads);
    builder.SetResourceQuota(quota);
  }
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0 ||
      (opts.port != 0 && server->port_ != opts.port)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", address,
        opts.port != 0 ? " (is the port in use by another process?)" : ""));
  }
  SetServing(*server->server_, true);
  return server;
}

Server::~Server() { Shutdown(); }

std::shared_ptr<grpc::Channel> Server::InProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(std::numeric_limits<int>::max());
  args.SetMaxSendMessageSize(static_cast<int>(options_.max_message_bytes));
  return server_->InProcessChannel(args);
}

bool Server::Shutdown() {
  if (shut_down_) return service_->WaitIdle(absl::Now());
  shut_down_ = true;
  if (server_ == nullptr) return true;  // it never started
  absl::Time deadline = absl::Now() + options_.grace;
  service_->StartDraining();
  SetServing(*server_, false);
  // gRPC's own shutdown closes a connection as soon as its last call has
  // answered, which can cut off a large answer still on its way: answer the
  // calls in flight first, give the answers time to arrive, then stop.
  while (service_->in_flight() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  absl::SleepFor(std::min(service_->last_answer() + options_.flush_delay, deadline) -
                 absl::Now());
  server_->Shutdown(absl::ToChronoTime(deadline));
  server_->Wait();
  return service_->WaitIdle(deadline);
}

void BlockTerminationSignals() {
  sigset_t signals = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t signals = TerminationSignals();
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  return signal;
}

}  // namespace onnxconvert::service
