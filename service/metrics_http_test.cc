#include "service/metrics_http.h"

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "service/metrics.h"
#include "service/testing/http_get.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

namespace fs = std::filesystem;

// A Metrics with calls of two methods recorded.
v1::MetricsResponse RecordedSnapshot() {
  Metrics metrics;
  metrics.Record("Convert", grpc::StatusCode::OK, 3);
  metrics.Record("Convert", grpc::StatusCode::INVALID_ARGUMENT, 40);
  metrics.RecordBytes("Convert", 1000, 900);
  metrics.RecordBytes("Convert", 24, 0);
  metrics.Record("Check", grpc::StatusCode::OK, 0.5);
  return metrics.Snapshot(/*in_flight=*/2, /*running_workers=*/1);
}

std::string Serialize(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

TEST(MetricsHttpTest, SnapshotFamiliesCarryCountsHistogramsBytesAndGauges) {
  std::string text = Serialize(SnapshotFamilies(RecordedSnapshot()));
  for (const char* line : {
           "# TYPE onnx_convert_requests_total counter\n",
           "onnx_convert_requests_total{method=\"Convert\",code=\"OK\"} 1\n",
           "onnx_convert_requests_total{method=\"Convert\",code=\"INVALID_ARGUMENT\"} 1\n",
           "onnx_convert_requests_total{method=\"Check\",code=\"OK\"} 1\n",
           "# TYPE onnx_convert_request_duration_ms histogram\n",
           "onnx_convert_request_duration_ms_count{method=\"Convert\"} 2\n",
           "onnx_convert_request_duration_ms_sum{method=\"Convert\"} 43\n",
           "onnx_convert_request_duration_ms_bucket{method=\"Convert\",le=\"5\"} 1\n",
           "onnx_convert_request_duration_ms_bucket{method=\"Convert\",le=\"50\"} 2\n",
           "onnx_convert_request_duration_ms_bucket{method=\"Convert\",le=\"+Inf\"} 2\n",
           "onnx_convert_received_bytes_total{method=\"Convert\"} 1024\n",
           "onnx_convert_sent_bytes_total{method=\"Convert\"} 900\n",
           "onnx_convert_in_flight 2\n",
           "onnx_convert_running_workers 1\n",
       }) {
    EXPECT_TRUE(absl::StrContains(text, line)) << line << "\nin:\n" << text;
  }
  // One +Inf bucket per method, not two.
  EXPECT_EQ(text.find("le=\"+Inf\"} 2\n"), text.rfind("le=\"+Inf\"} 2\n")) << text;
}

TEST(MetricsHttpTest, ResidentBytesIsThisProcesssSize) {
  int64_t resident = ResidentBytes();
  EXPECT_GT(resident, 1 << 20);
  EXPECT_LT(resident, int64_t{1} << 40);
}

TEST(MetricsHttpTest, WorkFolderBytesCountsOnlyTheServersEntries) {
  fs::path dir = onnxconvert::testing::FreshTestDir("work_folder_bytes");
  fs::create_directories(dir / "onnx-convert-stream-a" / "in");
  onnxconvert::testing::WriteTestFile(dir / "onnx-convert-stream-a" / "in" / "m.onnx",
                                      std::string(1000, 'x'));
  onnxconvert::testing::WriteTestFile(dir / "onnx-convert-stream-a" / "w.bin",
                                      std::string(24, 'x'));
  onnxconvert::testing::WriteTestFile(dir / "someone-elses.bin", std::string(5000, 'x'));
  EXPECT_EQ(WorkFolderBytes(dir.string()), 1024);
  EXPECT_EQ(WorkFolderBytes((dir / "missing").string()), 0);
}

TEST(MetricsHttpTest, ServesTheCollectorOverHttp) {
  fs::path dir = onnxconvert::testing::FreshTestDir("metrics_http_serves");
  onnxconvert::testing::WriteTestFile(dir / "onnx-convert-x", std::string(77, 'x'));
  int scrapes = 0;
  MetricsSources sources;
  sources.snapshot = [&scrapes] {
    ++scrapes;
    return RecordedSnapshot();
  };
  sources.in_flight_bytes = [] { return int64_t{4096}; };
  sources.work_dir = dir.string();
  auto http = MetricsHttp::Start("127.0.0.1", /*port=*/0, sources);  // any free one
  ASSERT_TRUE(http.ok()) << http.status();
  std::string response = testing::HttpGet((*http)->port(), "/metrics");
  EXPECT_TRUE(absl::StartsWith(response, "HTTP/1.1 200")) << response;
  std::string body = testing::HttpBody(response);
  for (const char* line :
       {"onnx_convert_requests_total{method=\"Convert\",code=\"OK\"} 1\n",
        "onnx_convert_in_flight_bytes 4096\n", "onnx_convert_work_dir_bytes 77\n",
        "# TYPE process_resident_memory_bytes gauge\n"}) {
    EXPECT_TRUE(absl::StrContains(body, line)) << line << "\nin:\n" << body;
  }
  EXPECT_EQ(scrapes, 1);
  // A port in use is refused, naming it.
  auto again = MetricsHttp::Start("127.0.0.1", (*http)->port(), sources);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(
      absl::StrContains(again.status().message(), absl::StrCat("127.0.0.1:", (*http)->port())));
}

}  // namespace
}  // namespace onnxconvert::service
