#include "service/metrics.h"

#include <initializer_list>
#include <string>

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

// Expects each of `parts` in the exposition `text`.
void ExpectInText(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* part : parts) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " is not in\n" << text;
  }
}

TEST(MetricsTest, TextIsPrometheusExposition) {
  Metrics metrics;
  metrics.Record("Convert", grpc::StatusCode::OK, 3);
  ExpectInText(metrics.Snapshot(0, 0).text(),
               {"# TYPE onnx_convert_requests_total counter\n",
                "onnx_convert_requests_total{method=\"Convert\",code=\"OK\"} 1\n",
                "onnx_convert_request_duration_ms_bucket{method=\"Convert\",le=\"5\"} 1\n",
                "le=\"+Inf\"} 1\n",
                "onnx_convert_request_duration_ms_count{method=\"Convert\"} 1\n",
                "onnx_convert_in_flight 0\n"});
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
  ExpectInText(snapshot.text(), {"onnx_convert_received_bytes_total{method=\"Convert\"} 120\n",
                                 "onnx_convert_sent_bytes_total{method=\"Check\"} 3\n"});
}

TEST(MetricsTest, RejectionsAreCountedByReason) {
  Metrics metrics;
  for (const char* reason : {"inflight_bytes", "max_concurrent", "inflight_bytes"}) {
    metrics.RecordRejection(reason);
  }
  EXPECT_EQ(metrics.Rejections("inflight_bytes"), 2);
  EXPECT_EQ(metrics.Rejections("max_concurrent"), 1);
  EXPECT_EQ(metrics.Rejections("work_bytes"), 0);
  ExpectInText(metrics.Snapshot(0, 0).text(),
               {"# TYPE onnx_convert_rejections_total counter\n",
                "onnx_convert_rejections_total{reason=\"inflight_bytes\"} 2\n",
                "onnx_convert_rejections_total{reason=\"max_concurrent\"} 1\n"});
}

}  // namespace
}  // namespace onnxconvert::service
