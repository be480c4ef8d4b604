// The client over several servers: balancing, retries, health checking.
#include "service/client.h"

#include <atomic>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/any.pb.h"
#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"
#include "proto/rpc_status.pb.h"
#include "service/server.h"
#include "service/testing/test_models.h"
#include "tests/eventually.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

using ::onnxconvert::testing::Eventually;

using testing::SlowModelBytes;

// A server on a free loopback port, logging its calls.
struct Replica {
  std::stringstream log;
  std::unique_ptr<Server> server;

  // Inspect calls in its log that ended with `status` ("OK", "UNAVAILABLE").
  int Inspects(const std::string& status) const {
    int count = 0;
    std::istringstream lines(log.str());
    for (std::string line; std::getline(lines, line);) {
      count += absl::StrContains(line, "method=Inspect") &&
               absl::StrContains(absl::StrCat(line, " "), absl::StrCat(" status=", status, " "));
    }
    return count;
  }
};

class ClientTest : public ::testing::Test {
 protected:
  void StartReplicas(int count) {
    for (int i = 0; i < count; ++i) {
      auto& replica = replicas_.emplace_back(std::make_unique<Replica>());
      ServerOptions options;
      options.port = 0;
      options.grace = absl::Seconds(60);
      options.flush_delay = absl::ZeroDuration();
      options.service.log = &replica->log;
      options.service.work_dir = onnxconvert::testing::FreshTestDir("client_work").string();
      absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(options);
      ASSERT_TRUE(server.ok()) << server.status();
      replica->server = *std::move(server);
    }
  }
  // "ipv4:127.0.0.1:P1,127.0.0.1:P2,...".
  std::string Target() const {
    std::vector<std::string> addresses;
    for (const auto& replica : replicas_) {
      addresses.push_back(absl::StrCat("127.0.0.1:", replica->server->port()));
    }
    return absl::StrCat("ipv4:", absl::StrJoin(addresses, ","));
  }
  // Makes `calls` Inspect calls; how many failed.
  int Inspect(Client& client, int calls) {
    int failed = 0;
    for (int i = 0; i < calls; ++i) {
      failed += !client.Inspect(testing::TinyCnnBytes(), "cnn").ok();
    }
    return failed;
  }

  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST(ServiceConfigTest, NamesThePolicyHealthCheckingAndTheRetries) {
  ClientOptions options;
  std::string config = ServiceConfigJson(options);
  for (const char* part : {R"("round_robin")", R"("healthCheckConfig": {"serviceName": ""})",
                           R"("service": "onnxconvert.v1.OnnxConvert")", R"("maxAttempts": 5)",
                           R"(["UNAVAILABLE", "RESOURCE_EXHAUSTED"])"}) {
    EXPECT_TRUE(absl::StrContains(config, part)) << part << " in " << config;
  }
  options.lb_policy = "pick_first";
  options.max_attempts = 1;
  config = ServiceConfigJson(options);
  EXPECT_TRUE(absl::StrContains(config, R"("pick_first")")) << config;
  EXPECT_FALSE(absl::StrContains(config, "retryPolicy")) << config;
}

TEST_F(ClientTest, RoundRobinSpreadsCallsOverEveryReplicaPickFirstUsesOne) {
  StartReplicas(3);
  struct Case {
    const char* lb_policy;
    int least_per_used_replica;  // of 60 calls
    int replicas_used;
  };
  for (const Case& c : {Case{"round_robin", 10, 3}, Case{"pick_first", 60, 1}}) {
    for (auto& replica : replicas_) replica->log.str("");
    ClientOptions options;
    options.lb_policy = c.lb_policy;
    std::unique_ptr<Client> client = Client::Connect(Target(), options);
    ASSERT_EQ(Inspect(*client, 60), 0) << c.lb_policy;
    int used = 0;
    for (const auto& replica : replicas_) {
      int served = replica->Inspects("OK");
      if (served == 0) continue;
      ++used;
      EXPECT_GE(served, c.least_per_used_replica) << c.lb_policy;
    }
    EXPECT_EQ(used, c.replicas_used) << c.lb_policy;
  }
}

TEST_F(ClientTest, CallsADrainingReplicaRefusesAreRetriedOnAnother) {
  StartReplicas(2);
  replicas_[0]->server->service().StartDraining();
  struct Case {
    int max_attempts;
    bool all_succeed;
  };
  for (const Case& c : {Case{5, true}, Case{1, false}}) {
    ClientOptions options;
    options.max_attempts = c.max_attempts;
    std::unique_ptr<Client> client = Client::Connect(Target(), options);
    int failed = Inspect(*client, 20);
    EXPECT_EQ(failed == 0, c.all_succeed) << c.max_attempts << " attempts: " << failed;
  }
  EXPECT_GT(replicas_[0]->Inspects("UNAVAILABLE"), 0);
}

TEST_F(ClientTest, AReplicaReportingNotServingGetsNoCalls) {
  StartReplicas(2);
  std::unique_ptr<Client> client = Client::Connect(Target());
  ASSERT_EQ(Inspect(*client, 10), 0);
  // A slow call keeps replica 0 draining (NOT_SERVING) until it is cancelled.
  grpc::ClientContext slow_context;
  auto direct = v1::OnnxConvert::NewStub(replicas_[0]->server->InProcessChannel());
  std::thread slow([&] {
    v1::ConvertRequest request;
    request.set_model(SlowModelBytes());
    request.mutable_options()->set_target_opset(25);
    v1::ConvertResponse response;
    direct->Convert(&slow_context, request, &response);
  });
  ASSERT_TRUE(Eventually([&] { return replicas_[0]->server->service().in_flight() == 1; }));
  std::thread shutdown([&] { replicas_[0]->server->Shutdown(); });
  ASSERT_TRUE(Eventually([&] { return replicas_[0]->server->service().draining(); }));
  // Once the client has seen the health change, no call reaches replica 0,
  // though it still listens (its slow call runs on).
  EXPECT_TRUE(Eventually([&] {
    int refused = replicas_[0]->Inspects("UNAVAILABLE");
    return Inspect(*client, 10) == 0 && replicas_[0]->Inspects("UNAVAILABLE") == refused &&
           replicas_[0]->server->service().in_flight() == 1;
  }));
  slow_context.TryCancel();
  slow.join();
  shutdown.join();
}

// Refuses the first `refusals` Inspect calls as busy, after sending its
// headers (as the real server does), with a google.rpc.RetryInfo of 1 ms.
class BusyService final : public v1::OnnxConvert::Service {
 public:
  explicit BusyService(int refusals) : refusals_(refusals) {}
  grpc::Status Inspect(grpc::ServerContext* context, const v1::ModelRequest*,
                       v1::InspectResponse*) override {
    context->AddInitialMetadata("x-request-id", "busy");
    if (calls_.fetch_add(1) >= refusals_) return grpc::Status::OK;
    google::protobuf::Duration delay;
    delay.set_nanos(1000000);
    // RetryInfo: field 1, the delay.
    std::string retry_info = std::string(1, '\x0a') +
                             static_cast<char>(delay.ByteSizeLong()) +
                             delay.SerializeAsString();
    google::rpc::Status details;
    details.set_code(grpc::StatusCode::RESOURCE_EXHAUSTED);
    google::protobuf::Any* any = details.add_details();
    any->set_type_url("type.googleapis.com/google.rpc.RetryInfo");
    any->set_value(retry_info);
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy",
                        details.SerializeAsString());
  }
  int calls() const { return calls_.load(); }

 private:
  const int refusals_;
  std::atomic<int> calls_{0};
};

TEST(ClientRetryTest, RefusalsAfterTheHeadersAreTriedAgainUpToTheAttempts) {
  struct Case {
    int refusals;
    int max_attempts;
    bool succeeds;
    int calls;
  };
  for (const Case& c : {Case{2, 5, true, 3}, Case{4, 5, true, 5}, Case{5, 5, false, 5},
                        Case{1, 1, false, 1}}) {
    BusyService service(c.refusals);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    ClientOptions options;
    options.max_attempts = c.max_attempts;
    absl::StatusOr<ModelSummary> summary =
        Client::Connect(absl::StrCat("127.0.0.1:", port), options)->Inspect("", "m");
    EXPECT_EQ(summary.ok(), c.succeeds) << c.refusals << " refusals: " << summary.status();
    EXPECT_EQ(service.calls(), c.calls) << c.refusals << " refusals";
    if (!c.succeeds) {
      EXPECT_TRUE(IsInfrastructureError(summary.status()));
    }
    server->Shutdown();
  }
}

TEST_F(ClientTest, ErrorsOfTheInfrastructureAreMarkedModelErrorsAreNot) {
  StartReplicas(1);
  std::unique_ptr<Client> client = Client::Connect(Target());
  absl::StatusOr<ModelSummary> bad = client->Inspect("not a model", "bad.onnx");
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(IsInfrastructureError(bad.status())) << bad.status();
  ClientOptions options;
  options.max_attempts = 1;
  absl::StatusOr<ModelSummary> down =
      Client::Connect("127.0.0.1:1", options)->Inspect(testing::TinyCnnBytes(), "cnn");
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(IsInfrastructureError(down.status())) << down.status();
  EXPECT_FALSE(IsInfrastructureError(absl::UnavailableError("not from a server")));
}

}  // namespace
}  // namespace onnxconvert::service
