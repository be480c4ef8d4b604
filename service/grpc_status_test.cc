#include "service/grpc_status.h"

#include "gtest/gtest.h"
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

}  // namespace
}  // namespace onnxconvert::service
