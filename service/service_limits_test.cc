// The service's limits: message and model sizes, concurrency, the memory
// budget and admission before a body is read, deadlines, cancellation and
// draining.

#include "service/service.h"

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "rewrites/pass_manager.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "ir/model_io.h"
#include "proto/grpc_health.grpc.pb.h"
#include "service/client.h"
#include "service/grpc_status.h"
#include "service/server.h"
#include "service/testing/service_fixture.h"
#include "service/testing/test_models.h"
#include "tests/eventually.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

using ::onnxconvert::testing::Eventually;
using testing::SlowModelBytes;

TEST_F(ServiceTest, ModelPastTheLimitIsResourceExhausted) {
  ServiceOptions options;
  options.max_model_bytes = 1000;
  Start(options);
  v1::ConvertResponse response;
  grpc::ClientContext context;
  grpc::Status status = Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 13), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "--max_model_bytes"));
}

TEST_F(ServiceTest, MessagePastTheLimitIsResourceExhausted) {
  Start(ServiceOptions(), /*max_message_bytes=*/1024);
  v1::ConvertResponse response;
  grpc::ClientContext context;
  grpc::Status status = Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 13), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Over a loopback port (the in-process channel refuses it on the client
  // side), gRPC refuses it when the handler reads it; channelz counts it.
  auto stub = v1::OnnxConvert::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext port_context;
  status = stub->Convert(&port_context, Request(testing::TinyCnnBytes(), 13), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  absl::StatusOr<v1::MetricsResponse> metrics = InProcessClient()->Metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_FALSE(absl::StrContains(metrics->text(), "onnx_convert_grpc_calls_failed_total 0\n"))
      << metrics->text();
  EXPECT_TRUE(absl::StrContains(metrics->text(), "onnx_convert_grpc_calls_failed_total "))
      << metrics->text();
}

TEST_F(ServiceTest, CallsPastMaxConcurrentAreResourceExhausted) {
  ServiceOptions options;
  options.max_concurrent = 1;
  Start(options);
  SlowCall slow(Stub());
  ASSERT_TRUE(Eventually([&] { return RunningWorkers() == 1; }));
  v1::CheckResponse response;
  grpc::ClientContext context;
  v1::ModelRequest request;
  request.set_model(testing::TinyCnnBytes());
  grpc::Status status = Stub()->Check(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "busy")) << status.error_message();
  EXPECT_TRUE(RetryDelayOf(status).has_value());
  EXPECT_EQ(server_->service().rejections("max_concurrent"), 1);
  EXPECT_TRUE(absl::StrContains(log_.str(), "reason=max_concurrent")) << log_.str();
  slow.Cancel();
}

// The model bytes of the calls being handled, for the metrics endpoint.
TEST_F(ServiceTest, InFlightBytesCountTheModelsOfRunningCalls) {
  Start();
  EXPECT_EQ(server_->service().in_flight_bytes(), 0);
  SlowCall slow(Stub());
  // Counted once its request has been read (its slot is held from its
  // admission, before).
  ASSERT_TRUE(Eventually([&] {
    return server_->service().in_flight_bytes() == static_cast<int64_t>(SlowModelBytes().size());
  }));
  EXPECT_EQ(RunningWorkers(), 1);
  EXPECT_EQ(server_->service().MetricsSnapshot().in_flight(), 1);
  slow.Cancel();
  // The server answers the cancelled call soon after the client saw it end.
  EXPECT_TRUE(Eventually([&] { return server_->service().in_flight_bytes() == 0; }));
}

// Streams a header for a conversion to `target` (declaring a model of
// `declared` bytes when given), then, with `send_body`, `bytes` in
// chunks of 64 KiB and a half-close, without waiting for answers in between;
// the call's status (30 s at most). Without `send_body` the client neither
// sends a chunk nor half-closes: only an answer given before the body ends
// the call.
grpc::Status StreamUpload(v1::OnnxConvert::Stub& stub, const std::string& bytes, int64_t target,
                          std::optional<int64_t> declared = std::nullopt,
                          bool send_body = true) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub.ConvertStream(&context);
  v1::ConvertStreamRequest message;
  message.mutable_header()->mutable_options()->set_target_opset(target);
  message.mutable_header()->set_report_message_only(true);
  if (declared) message.mutable_header()->set_model_bytes(*declared);
  stream->Write(message);
  if (send_body) {
    constexpr size_t kChunk = 64 << 10;
    for (size_t at = 0; at < bytes.size(); at += kChunk) {
      message.mutable_chunk()->set_data(bytes.substr(at, kChunk));
      if (!stream->Write(message)) break;
    }
    stream->WritesDone();
  }
  v1::ConvertStreamResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

// Streams `bytes` as the model, converted to `target`; the call's status.
grpc::Status StreamModel(v1::OnnxConvert::Stub& stub, const std::string& bytes, int64_t target) {
  return StreamUpload(stub, bytes, target);
}

// A model call and whether it must be admitted.
struct AdmissionCase {
  const char* name;
  const std::string* model;
  bool admitted;
};

// `status` of the call of `c`: ok when admitted, else refused for want of room
// (RESOURCE_EXHAUSTED) with a retry delay and a message naming `flag`.
void ExpectAdmission(const AdmissionCase& c, const grpc::Status& status, absl::string_view flag) {
  if (c.admitted) {
    EXPECT_TRUE(status.ok()) << c.name << ": " << status.error_message();
    return;
  }
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << c.name;
  EXPECT_TRUE(RetryDelayOf(status).has_value()) << c.name;
  EXPECT_TRUE(absl::StrContains(status.error_message(), flag)) << status.error_message();
}

TEST_F(ServiceTest, CallsPastTheMemoryBudgetAreResourceExhaustedWithARetryDelay) {
  const std::string& big = SlowModelBytes();
  const std::string& small = testing::TinyCnnBytes();
  ServiceOptions options;
  options.retry_delay = absl::Milliseconds(1500);
  std::unique_ptr<SlowCall> slow = StartBesideASlowCall(options, /*small_calls=*/2);
  ASSERT_FALSE(HasFailure());
  const AdmissionCase kCases[] = {
      {"a second big call", &big, false},
      {"a small call", &small, true},
      {"another small call", &small, true},
  };
  for (const AdmissionCase& c : kCases) {
    v1::ConvertResponse response;
    grpc::ClientContext context;
    grpc::Status status = Stub()->Convert(&context, Request(*c.model, 13), &response);
    ExpectAdmission(c, status, "--max_inflight_bytes");
    if (!c.admitted) {
      EXPECT_EQ(RetryDelayOf(status), absl::Milliseconds(1500)) << c.name;
    }
  }
  EXPECT_EQ(server_->service().rejections("inflight_bytes"), 1);
  EXPECT_TRUE(absl::StrContains(log_.str(), "reason=inflight_bytes")) << log_.str();
  slow->Cancel();
  EXPECT_TRUE(Eventually([&] { return server_->service().inflight_bytes() == 0; }));
}

TEST_F(ServiceTest, StreamedUploadsPastALimitAreRefusedCountedAndLogged) {
  const std::string& model = testing::TinyCnnBytes();
  const int64_t under = static_cast<int64_t>(model.size()) / 2;
  const ByteLimitCase kCases[] = {
      {"max_model_bytes", under, int64_t{1} << 30, 0, false},
      {"max_upload_bytes", int64_t{1} << 30, under, 0, false},
      {"work_bytes", int64_t{1} << 30, int64_t{1} << 30, under, true},
  };
  for (const ByteLimitCase& c : kCases) {
    Start(ByteLimitOptions(c));
    ExpectRefused(c, StreamModel(*Stub(), model, 13));
    EXPECT_TRUE(absl::StrContains(log_.str(), absl::StrCat("reason=", c.reason))) << log_.str();
  }
}

// StreamUpload to opset 13 declaring `declared` bytes.
grpc::Status StreamDeclaring(v1::OnnxConvert::Stub& stub, const std::string& bytes,
                             int64_t declared, bool send_body) {
  return StreamUpload(stub, bytes, 13, declared, send_body);
}

TEST_F(ServiceTest, StreamsDeclaringAModelPastALimitAreRefusedBeforeTheBody) {
  const std::string& model = testing::TinyCnnBytes();
  const int64_t size = static_cast<int64_t>(model.size());
  const ByteLimitCase kCases[] = {
      {"max_model_bytes", size / 2, int64_t{1} << 30, 0, false},
      {"max_upload_bytes", int64_t{1} << 30, size / 2, 0, false},
      // The model and its output take twice its size.
      {"work_bytes", int64_t{1} << 30, int64_t{1} << 30, size, true},
  };
  for (const ByteLimitCase& c : kCases) {
    Start(ByteLimitOptions(c));
    ExpectRefused(c, StreamDeclaring(*Stub(), model, size, /*send_body=*/false));
  }
}

TEST_F(ServiceTest, StreamsDeclaringTheMemoryBudgetTakenAreRefusedBeforeTheBody) {
  const std::string& big = SlowModelBytes();
  const std::string& small = testing::TinyCnnBytes();
  std::unique_ptr<SlowCall> slow = StartBesideASlowCall(ServiceOptions(), /*small_calls=*/1);
  ASSERT_FALSE(HasFailure());
  // Declared: refused before the body; not declared, the same upload would
  // be refused only once its chunks had arrived.
  grpc::Status status = StreamDeclaring(*Stub(), big, static_cast<int64_t>(big.size()),
                                        /*send_body=*/false);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(RetryDelayOf(status).has_value());
  EXPECT_TRUE(absl::StrContains(status.error_message(), "--max_inflight_bytes"))
      << status.error_message();
  EXPECT_EQ(server_->service().rejections("inflight_bytes"), 1);
  // A small declared model fits beside the big one.
  status = StreamDeclaring(*Stub(), small, static_cast<int64_t>(small.size()), /*send_body=*/true);
  EXPECT_TRUE(status.ok()) << status.error_message();
  slow->Cancel();
  EXPECT_TRUE(Eventually([&] { return server_->service().inflight_bytes() == 0; }));
}

TEST_F(ServiceTest, StreamsSendingMoreThanTheyDeclaredAreRefused) {
  const std::string& model = testing::TinyCnnBytes();
  const int64_t size = static_cast<int64_t>(model.size());
  struct Case {
    const char* name;
    int64_t declared;
    grpc::StatusCode code;
  };
  const Case kCases[] = {
      {"declared exactly", size, grpc::StatusCode::OK},
      {"declared more", size + 1000, grpc::StatusCode::OK},
      {"declared less", size - 1, grpc::StatusCode::INVALID_ARGUMENT},
      {"declared none of it", 0, grpc::StatusCode::INVALID_ARGUMENT},
      {"declared a negative size", -1, grpc::StatusCode::INVALID_ARGUMENT},
  };
  Start();
  for (const Case& c : kCases) {
    grpc::Status status = StreamDeclaring(*Stub(), model, c.declared, /*send_body=*/true);
    EXPECT_EQ(status.error_code(), c.code) << c.name << ": " << status.error_message();
    EXPECT_FALSE(RetryDelayOf(status).has_value()) << c.name;
  }
  EXPECT_EQ(server_->service().rejections("model_bytes_declared"), 2);
  EXPECT_TRUE(absl::StrContains(log_.str(), "reason=model_bytes_declared")) << log_.str();
  EXPECT_TRUE(Eventually([&] { return server_->service().inflight_bytes() == 0; }));
}

TEST_F(ServiceTest, SmallStreamWindowsStillCarryUploadsLargerThanThem) {
  const std::string model = testing::UnsqueezeChain(3000).SerializeAsString();
  ASSERT_GT(model.size(), size_t{64} << 10);
  Start({}, int64_t{64} << 20, /*stream_window_bytes=*/16 << 10);
  const struct {
    const char* name;
    bool declared;
  } kCases[] = {{"declared", true}, {"not declared", false}};
  for (const auto& c : kCases) {
    grpc::Status status =
        c.declared ? StreamDeclaring(*Stub(), model, static_cast<int64_t>(model.size()),
                                     /*send_body=*/true)
                   : StreamModel(*Stub(), model, 13);
    EXPECT_TRUE(status.ok()) << c.name << ": " << status.error_message();
  }
  // Over a real connection too (the in-process channel has no HTTP/2).
  auto stub = v1::OnnxConvert::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  grpc::Status status = StreamModel(*stub, model, 13);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// A unary Convert call made by hand on the generic stub, so that its
// request is sent only when the test says: its metadata (with
// `declared_bytes` under x-model-bytes when given) goes out at once.
class HandMadeConvert {
 public:
  HandMadeConvert(std::shared_ptr<grpc::Channel> channel,
                  std::optional<std::string> declared_bytes)
      : stub_(std::move(channel)) {
    if (declared_bytes) context_.AddMetadata(kModelBytesMetadata, *declared_bytes);
    // Only a call that waits for a body it never gets meets this deadline.
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    call_ = stub_.PrepareCall(&context_, "/onnxconvert.v1.OnnxConvert/Convert", &queue_);
    call_->StartCall(this);
    Next();
  }
  HandMadeConvert(const HandMadeConvert&) = delete;
  HandMadeConvert& operator=(const HandMadeConvert&) = delete;
  ~HandMadeConvert() {
    if (!finished_) {
      context_.TryCancel();
      Finish();
    }
    queue_.Shutdown();
    void* tag;
    bool ok;
    while (queue_.Next(&tag, &ok)) {
    }
  }

  // Sends `request` and half-closes.
  void Send(const v1::ConvertRequest& request) {
    grpc::Slice slice(request.SerializeAsString());
    grpc::ByteBuffer buffer(&slice, 1);
    call_->Write(buffer, this);
    Next();
    call_->WritesDone(this);
    Next();
  }

  // Waits for the answer: the call's status, and the response in `response`
  // when one came.
  grpc::Status Finish(v1::ConvertResponse* response = nullptr) {
    grpc::ByteBuffer buffer;
    call_->Read(&buffer, this);
    if (Next() && response != nullptr) {
      std::vector<grpc::Slice> slices;
      EXPECT_TRUE(buffer.Dump(&slices).ok());
      std::string bytes;
      for (const grpc::Slice& slice : slices) {
        bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
      }
      EXPECT_TRUE(response->ParseFromString(bytes));
    }
    grpc::Status status;
    call_->Finish(&status, this);
    Next();
    finished_ = true;
    return status;
  }

 private:
  // Waits for the operation started last; whether it succeeded.
  bool Next() {
    void* tag;
    bool ok = false;
    EXPECT_TRUE(queue_.Next(&tag, &ok));
    return ok;
  }

  grpc::GenericStub stub_;
  grpc::ClientContext context_;
  grpc::CompletionQueue queue_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool finished_ = false;
};

TEST_F(ServiceTest, UnaryCallsOverTheBudgetAreRefusedBeforeTheirBody) {
  const std::string& held_model = testing::TinyCnnBytes();
  const int64_t held_charge = ModelCallCharge(static_cast<int64_t>(held_model.size()));
  ServiceOptions options;
  options.max_concurrent = 0;
  options.max_model_bytes = int64_t{1} << 30;
  // Beside the held call, room for the fixed part of a call's charge and a
  // little more.
  options.max_inflight_bytes = held_charge + ModelCallCharge(1000);
  Start(options);
  // A call declaring its model is charged for it before it sends it.
  HandMadeConvert held(grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()),
                       absl::StrCat(held_model.size()));
  ASSERT_TRUE(Eventually([&] { return server_->service().inflight_bytes() == held_charge; }));
  struct Case {
    const char* name;
    std::optional<std::string> declared;  // x-model-bytes
    std::optional<std::string> body;      // the model sent; none: nothing sent
    grpc::StatusCode code;
    const char* reason;  // the rejection counted, if any
    bool retry;
  };
  const Case kCases[] = {
      {"a declared model past the budget, never sent", absl::StrCat(int64_t{40} << 20),
       std::nullopt, grpc::StatusCode::RESOURCE_EXHAUSTED, "inflight_bytes", true},
      {"a declared model past --max_message_bytes, never sent",
       absl::StrCat(int64_t{100} << 20), std::nullopt, grpc::StatusCode::RESOURCE_EXHAUSTED,
       "max_message_bytes", false},
      {"a declared model past --max_model_bytes, never sent", absl::StrCat(int64_t{2} << 30),
       std::nullopt, grpc::StatusCode::RESOURCE_EXHAUSTED, "max_model_bytes", false},
      {"a declared size that is not a number, never sent", "many", std::nullopt,
       grpc::StatusCode::INVALID_ARGUMENT, nullptr, false},
      // Without a declared size a call is charged the fixed part first, the
      // rest once its model has arrived.
      {"an undeclared model past what is left", std::nullopt, std::string(300000, '\x01'),
       grpc::StatusCode::RESOURCE_EXHAUSTED, "inflight_bytes", true},
  };
  std::map<std::string, int64_t> refusals;
  for (const Case& c : kCases) {
    HandMadeConvert call(grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()),
                         c.declared);
    if (c.body) call.Send(Request(*c.body, 13));
    grpc::Status status = call.Finish();
    EXPECT_EQ(status.error_code(), c.code) << c.name << ": " << status.error_message();
    EXPECT_EQ(RetryDelayOf(status).has_value(), c.retry) << c.name;
    if (c.reason != nullptr) ++refusals[c.reason];
    for (const auto& [reason, count] : refusals) {
      EXPECT_EQ(server_->service().rejections(reason), count) << c.name << ": " << reason;
    }
  }
  // The held call, its model sent at last, is answered.
  held.Send(Request(held_model, 13));
  v1::ConvertResponse response;
  grpc::Status status = held.Finish(&response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(response.model().empty());
  EXPECT_LE(server_->service().inflight_bytes_peak(), options.max_inflight_bytes);
  EXPECT_TRUE(Eventually([&] { return server_->service().inflight_bytes() == 0; }));
}

TEST_F(ServiceTest, UploadsPastTheWorkBytesAreResourceExhaustedWithARetryDelay) {
  const std::string& small = testing::TinyCnnBytes();
  ServiceOptions options;
  // Each uploaded byte counts twice (upload and output).
  options.max_work_bytes = 2 * static_cast<int64_t>(small.size()) + 1024;
  Start(options);
  const AdmissionCase kCases[] = {
      {"small upload", &small, true},
      {"upload past the budget", &SlowModelBytes(), false},
      {"small upload after the refusal", &small, true},
  };
  for (const AdmissionCase& c : kCases) {
    ExpectAdmission(c, StreamModel(*Stub(), *c.model, 13), "--max_work_bytes");
  }
  EXPECT_EQ(server_->service().rejections("work_bytes"), 1);
  EXPECT_TRUE(absl::StrContains(log_.str(), "reason=work_bytes")) << log_.str();
}

TEST_F(ServiceTest, CancelledCallReturnsBeforeItsWorkEnds) {
  Start();
  grpc::ClientContext context;
  std::thread canceller([&] {
    Eventually([&] { return RunningWorkers() == 1; });
    context.TryCancel();
  });
  v1::ConvertResponse response;
  grpc::Status status = Stub()->Convert(&context, Request(SlowModelBytes(), 25), &response);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  // The server saw the cancellation and answered while the abandoned
  // conversion was still running.
  ASSERT_TRUE(Eventually([&] { return Count("Convert", "CANCELLED") == 1; }));
  EXPECT_EQ(RunningWorkers(), 1);
  EXPECT_TRUE(Eventually([&] { return RunningWorkers() == 0; }));
}

TEST_F(ServiceTest, ClientDeadlineIsHonouredByTheServer) {
  Start();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  v1::ConvertResponse response;
  grpc::Status status = Stub()->Convert(&context, Request(SlowModelBytes(), 25), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(Eventually([&] { return Count("Convert", "DEADLINE_EXCEEDED") == 1; }));
}

TEST_F(ServiceTest, DefaultDeadlineAppliesWhenTheClientSetsNone) {
  ServiceOptions options;
  options.default_deadline = absl::Milliseconds(200);
  Start(options);
  grpc::ClientContext context;  // no deadline
  v1::ConvertResponse response;
  grpc::Status status = Stub()->Convert(&context, Request(SlowModelBytes(), 25), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "deadline")) << status.error_message();
}

TEST_F(ServiceTest, DrainingServerIsUnavailable) {
  Start();
  server_->service().StartDraining();
  v1::ConvertResponse response;
  grpc::ClientContext context;
  grpc::Status status = Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 13), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
}
}  // namespace
}  // namespace onnxconvert::service
