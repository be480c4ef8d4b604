#include "service/metrics.h"

#include "gtest/gtest.h"

namespace onnxconvert::service {
namespace {

TEST(MetricsTest, CountsByMethodAndCodeWithCumulativeBuckets) {
  Metrics metrics;
  metrics.Record("Convert", grpc::StatusCode::OK, 3);
  metrics.Record("Convert", grpc::StatusCode::OK, 40);
  metrics.Record("Convert", grpc::StatusCode::INVALID_ARGUMENT, 0.5);
  metrics.Record("Check", grpc::StatusCode::OK, 100000);
  v1::MetricsResponse snapshot = metrics.Snapshot(2, 1);
  ASSERT_EQ(snapshot.methods_size(), 2);
  const v1::MethodMetrics& check = snapshot.methods(0);
  const v1::MethodMetrics& convert = snapshot.methods(1);
  EXPECT_EQ(check.method(), "Check");
  EXPECT_EQ(convert.requests(), 3);
  ASSERT_EQ(convert.statuses_size(), 2);
  EXPECT_EQ(convert.statuses(0).code(), "OK");
  EXPECT_EQ(convert.statuses(0).count(), 2);
  EXPECT_EQ(convert.statuses(1).code(), "INVALID_ARGUMENT");
  EXPECT_DOUBLE_EQ(convert.latency_sum_ms(), 43.5);
  ASSERT_EQ(convert.latency_size(), static_cast<int>(Metrics::kBucketBoundsMs.size()) + 1);
  EXPECT_EQ(convert.latency(0).count(), 1);  // <= 1 ms
  EXPECT_EQ(convert.latency(2).count(), 2);  // <= 5 ms
  EXPECT_EQ(convert.latency(5).count(), 3);  // <= 50 ms
  EXPECT_TRUE(convert.latency().rbegin()->infinite());
  EXPECT_EQ(check.latency(check.latency_size() - 2).count(), 0);  // past 60 s
  EXPECT_EQ(check.latency().rbegin()->count(), 1);
  EXPECT_EQ(snapshot.in_flight(), 2);
  EXPECT_EQ(snapshot.running_workers(), 1);
}

TEST(MetricsTest, TextIsPrometheusExposition) {
  Metrics metrics;
  metrics.Record("Convert", grpc::StatusCode::OK, 3);
  std::string text = metrics.Snapshot(0, 0).text();
  EXPECT_NE(text.find("# TYPE onnx_convert_requests_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("onnx_convert_requests_total{method=\"Convert\",code=\"OK\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("onnx_convert_request_duration_ms_bucket{method=\"Convert\",le=\"5\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("le=\"+Inf\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("onnx_convert_request_duration_ms_count{method=\"Convert\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("onnx_convert_in_flight 0\n"), std::string::npos);
}

TEST(MetricsTest, BytesAddUpByMethod) {
  Metrics metrics;
  metrics.RecordBytes("Convert", 100, 90);
  metrics.RecordBytes("Convert", 20, 0);
  metrics.RecordBytes("Check", 7, 3);
  v1::MetricsResponse snapshot = metrics.Snapshot(0, 0);
  ASSERT_EQ(snapshot.methods_size(), 2);
  EXPECT_EQ(snapshot.methods(0).bytes_in(), 7);
  EXPECT_EQ(snapshot.methods(0).bytes_out(), 3);
  EXPECT_EQ(snapshot.methods(1).bytes_in(), 120);
  EXPECT_EQ(snapshot.methods(1).bytes_out(), 90);
  EXPECT_NE(snapshot.text().find("onnx_convert_received_bytes_total{method=\"Convert\"} 120\n"),
            std::string::npos);
  EXPECT_NE(snapshot.text().find("onnx_convert_sent_bytes_total{method=\"Check\"} 3\n"),
            std::string::npos);
}

}  // namespace
}  // namespace onnxconvert::service
