#ifndef ONNX_CONVERT_SERVICE_TESTING_SERVICE_FIXTURE_H_
#define ONNX_CONVERT_SERVICE_TESTING_SERVICE_FIXTURE_H_

// The service under test (ServiceTest: a server on a loopback port, reached
// in process or over the port) and the requests and calls its tests share.

#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "service/admission.h"
#include "service/client.h"
#include "service/grpc_status.h"
#include "service/server.h"
#include "service/service.h"
#include "service/testing/test_models.h"
#include "tests/eventually.h"
#include "tests/test_files.h"

namespace onnxconvert::service {

inline v1::ConvertRequest Request(const std::string& bytes, int64_t target,
                           const std::string& name = "model.onnx") {
  v1::ConvertRequest request;
  request.set_report_message_only(true);
  request.set_model(bytes);
  request.set_model_name(name);
  request.mutable_options()->set_target_opset(target);
  return request;
}

// Streams `header`, a model with external data, and one chunk of data
// named `chunk_name`; the call's status.
inline grpc::Status StreamWithChunkNamed(v1::OnnxConvert::Stub& stub, const v1::StreamHeader& header,
                                  const std::string& chunk_name) {
  grpc::ClientContext context;
  auto stream = stub.ConvertStream(&context);
  v1::ConvertStreamRequest message;
  *message.mutable_header() = header;
  stream->Write(message);
  message.mutable_chunk()->set_data(testing::ExternalDataModel("w.bin").SerializeAsString());
  stream->Write(message);
  message.mutable_chunk()->set_name(chunk_name);
  message.mutable_chunk()->set_data("x");
  stream->Write(message);
  stream->WritesDone();
  v1::ConvertStreamResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

// A service held to one of its byte limits, and how a call past it is
// refused.
struct ByteLimitCase {
  const char* reason;  // the rejection counted and logged
  int64_t max_model_bytes;
  int64_t max_upload_bytes;
  int64_t max_work_bytes;
  bool retry;  // room may free up
};

// The service options holding to `c`'s limits.
inline ServiceOptions ByteLimitOptions(const ByteLimitCase& c) {
  ServiceOptions options;
  options.max_model_bytes = c.max_model_bytes;
  options.max_upload_bytes = c.max_upload_bytes;
  options.max_work_bytes = c.max_work_bytes;
  return options;
}

class SlowCall;

class ServiceTest : public ::testing::Test {
 protected:
  void Start(ServiceOptions service = {}, int64_t max_message_bytes = int64_t{64} << 20,
             int64_t stream_window_bytes = 0) {
    ServerOptions options;
    options.port = 0;
    options.max_message_bytes = max_message_bytes;
    options.stream_window_bytes = stream_window_bytes;
    options.grace = absl::Seconds(60);
    options.flush_delay = absl::ZeroDuration();  // nothing is in flight at teardown
    options.service = std::move(service);
    options.service.log = &log_;
    options.service.work_dir = onnxconvert::testing::FreshTestDir("service_work").string();
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  std::string Target() const { return absl::StrCat("127.0.0.1:", server_->port()); }
  std::unique_ptr<Client> InProcessClient(ClientOptions options = {}) {
    return std::make_unique<Client>(server_->InProcessChannel(), "in-process", options);
  }
  std::unique_ptr<v1::OnnxConvert::Stub> Stub() {
    return v1::OnnxConvert::NewStub(server_->InProcessChannel());
  }
  // The server's metrics for `method`: calls that ended with `code`.
  int64_t Count(const std::string& method, const std::string& code) {
    absl::StatusOr<v1::MetricsResponse> metrics = InProcessClient()->Metrics();
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    for (const v1::MethodMetrics& entry : metrics->methods()) {
      if (entry.method() != method) continue;
      for (const v1::StatusCount& status : entry.statuses()) {
        if (status.code() == code) return status.count();
      }
    }
    return 0;
  }
  int64_t RunningWorkers() {
    absl::StatusOr<v1::MetricsResponse> metrics = InProcessClient()->Metrics();
    return metrics.ok() ? metrics->running_workers() : -1;
  }

  // Starts the server with `options` (no cap on concurrent calls) whose
  // memory budget holds a call of the slow model and `small_calls` calls of
  // the tiny model, and a slow call that has taken its share of it.
  std::unique_ptr<SlowCall> StartBesideASlowCall(ServiceOptions options, int small_calls);

  // Expects `status` to be the refusal `c` describes, counted once.
  void ExpectRefused(const ByteLimitCase& c, const grpc::Status& status) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << c.reason << ": " << status.error_message();
    EXPECT_EQ(RetryDelayOf(status).has_value(), c.retry) << c.reason;
    EXPECT_EQ(server_->service().rejections(c.reason), 1) << c.reason;
  }

  std::stringstream log_;
  std::unique_ptr<Server> server_;
};

// A conversion of the slow model to opset 25, running on its own thread
// until Cancel.
class SlowCall {
 public:
  explicit SlowCall(std::unique_ptr<v1::OnnxConvert::Stub> stub)
      : stub_(std::move(stub)), thread_([this] {
          v1::ConvertResponse response;
          stub_->Convert(&context_, Request(testing::SlowModelBytes(), 25), &response);
        }) {}
  SlowCall(const SlowCall&) = delete;
  SlowCall& operator=(const SlowCall&) = delete;
  ~SlowCall() { Cancel(); }

  // Cancels the call and waits for its thread to end.
  void Cancel() {
    if (!thread_.joinable()) return;
    context_.TryCancel();
    thread_.join();
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<v1::OnnxConvert::Stub> stub_;
  std::thread thread_;  // last: it uses the members above
};

inline std::unique_ptr<SlowCall> ServiceTest::StartBesideASlowCall(ServiceOptions options,
                                                                   int small_calls) {
  const int64_t big_charge =
      ModelCallCharge(static_cast<int64_t>(testing::SlowModelBytes().size()));
  options.max_concurrent = 0;
  options.max_inflight_bytes =
      big_charge +
      small_calls * ModelCallCharge(static_cast<int64_t>(testing::TinyCnnBytes().size()));
  Start(options);
  auto slow = std::make_unique<SlowCall>(Stub());
  EXPECT_TRUE(onnxconvert::testing::Eventually(
      [&] { return server_->service().inflight_bytes() >= big_charge; }));
  return slow;
}

inline converter::ConversionResult LocalConvert(const std::string& bytes, int64_t target) {
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "local");
  EXPECT_TRUE(model.ok());
  converter::ConvertOptions options;
  options.target_opset = target;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(*model, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return *std::move(result);
}

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_TESTING_SERVICE_FIXTURE_H_
