#include "service/grpc_status.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/rpc_status.pb.h"
#include "service/model_work.h"
#include "service/testing/test_models.h"

namespace onnxconvert::service {
namespace {

TEST(GrpcStatusTest, CodesAndMessagesCarryOverBothWays) {
  for (absl::Status status :
       {absl::InvalidArgumentError("bad"), absl::ResourceExhaustedError("too big"),
        absl::DeadlineExceededError("late"), absl::CancelledError("gone"),
        absl::UnavailableError("draining"), absl::FailedPreconditionError("cannot")}) {
    grpc::Status rpc = ToGrpcStatus(status);
    EXPECT_EQ(static_cast<int>(rpc.error_code()), static_cast<int>(status.code()));
    EXPECT_EQ(rpc.error_message(), status.message());
    EXPECT_EQ(FromGrpcStatus(rpc), status);
  }
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_STREQ(StatusCodeName(grpc::StatusCode::RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
}

TEST(GrpcStatusTest, ConversionFailureCarriesItsStructuredError) {
  converter::ConvertOptions options;
  options.target_opset = 19;
  options.expand_functions = false;
  absl::StatusOr<v1::ConvertResponse> failed = ConvertModelBytes(
      testing::GeluModel().SerializeAsString(), "gelu.onnx", options, 1 << 20);
  ASSERT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  grpc::Status rpc = ToGrpcStatus(failed.status());
  std::optional<v1::ConversionError> error = ConversionErrorOf(rpc);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message(), failed.status().message());
  EXPECT_EQ(error->from_opset(), 20);
  EXPECT_EQ(error->to_opset(), 19);
  EXPECT_EQ(error->graph(), "main");
  EXPECT_EQ(error->node(), "'gelu'");
  EXPECT_EQ(error->op_version(), "Gelu-20");
  EXPECT_NE(error->reason().find("expansion is off"), std::string::npos);
}

TEST(GrpcStatusTest, MessageOfAnotherShapeFillsMessageAndReasonOnly) {
  v1::ConversionError error = ParseConversionError("target opset 99 does not exist");
  EXPECT_EQ(error.message(), "target opset 99 does not exist");
  EXPECT_EQ(error.reason(), error.message());
  EXPECT_EQ(error.from_opset(), 0);
  EXPECT_TRUE(error.node().empty());
}

TEST(GrpcStatusTest, OtherCodesCarryNoDetails) {
  grpc::Status rpc = ToGrpcStatus(absl::ResourceExhaustedError("busy"));
  EXPECT_TRUE(rpc.error_details().empty());
  EXPECT_FALSE(ConversionErrorOf(rpc).has_value());
}

TEST(GrpcStatusTest, LongMessagesAndTheirDetailsAreBounded) {
  std::string node(5000, 'n');
  std::string message =
      "step 12 -> 13: main \xE2\x80\xBA node '" + node + "' (Squeeze-11): " + node;
  grpc::Status rpc = ToGrpcStatus(absl::FailedPreconditionError(message));
  EXPECT_LE(rpc.error_message().size(), kMaxStatusMessageBytes + 32);
  EXPECT_TRUE(absl::EndsWith(rpc.error_message(), absl::StrCat("(", message.size(), " bytes)")))
      << rpc.error_message().substr(rpc.error_message().size() - 40);
  EXPECT_LE(rpc.error_details().size(), kMaxStatusDetailsBytes);
  std::optional<v1::ConversionError> error = ConversionErrorOf(rpc);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->to_opset(), 13);
  EXPECT_EQ(error->message().substr(0, 20), message.substr(0, 20));
  // A short message is kept as it is.
  EXPECT_EQ(ToGrpcStatus(absl::InternalError("short")).error_message(), "short");
}

TEST(GrpcStatusTest, RetryDelayTravelsAsGoogleRpcRetryInfo) {
  for (absl::Duration delay :
       {absl::Seconds(1), absl::Milliseconds(250), absl::Seconds(3) + absl::Nanoseconds(7)}) {
    grpc::Status rpc =
        ToGrpcStatus(WithRetryDelay(absl::ResourceExhaustedError("busy"), delay));
    EXPECT_EQ(rpc.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(rpc.error_message(), "busy");
    EXPECT_EQ(RetryDelayOf(rpc), delay);
    // What any gRPC client's rich-status support decodes.
    google::rpc::Status details;
    ASSERT_TRUE(details.ParseFromString(rpc.error_details()));
    EXPECT_EQ(details.code(), static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
    ASSERT_EQ(details.details_size(), 1);
    EXPECT_EQ(details.details(0).type_url(), "type.googleapis.com/google.rpc.RetryInfo");
  }
  EXPECT_FALSE(RetryDelayOf(ToGrpcStatus(absl::ResourceExhaustedError("no hint"))));
}

}  // namespace
}  // namespace onnxconvert::service
