#include "service/metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/grpc_status.h"

namespace onnxconvert::service {
namespace {

constexpr absl::string_view kPrefix = "onnx_convert_";

// The bucket a call of `milliseconds` falls in (the last is +Inf).
size_t BucketOf(double milliseconds) {
  const auto& bounds = Metrics::kBucketBoundsMs;
  return std::lower_bound(bounds.begin(), bounds.end(), milliseconds) - bounds.begin();
}

std::string Number(double value) { return absl::StrFormat("%.6g", value); }

void AppendCountText(const v1::MethodMetrics& method, std::string& out) {
  for (const v1::StatusCount& status : method.statuses()) {
    absl::StrAppend(&out, kPrefix, "requests_total{method=\"", method.method(), "\",code=\"",
                    status.code(), "\"} ", status.count(), "\n");
  }
}

void AppendBytesText(const v1::MethodMetrics& method, std::string& out) {
  absl::StrAppend(&out, kPrefix, "received_bytes_total{method=\"", method.method(), "\"} ",
                  method.bytes_in(), "\n");
  absl::StrAppend(&out, kPrefix, "sent_bytes_total{method=\"", method.method(), "\"} ",
                  method.bytes_out(), "\n");
}

void AppendHistogramText(const v1::MethodMetrics& method, std::string& out) {
  for (const v1::HistogramBucket& bucket : method.latency()) {
    absl::StrAppend(&out, kPrefix, "request_duration_ms_bucket{method=\"", method.method(),
                    "\",le=\"", bucket.infinite() ? "+Inf" : Number(bucket.upper_ms()),
                    "\"} ", bucket.count(), "\n");
  }
  absl::StrAppend(&out, kPrefix, "request_duration_ms_sum{method=\"", method.method(), "\"} ",
                  Number(method.latency_sum_ms()), "\n");
  absl::StrAppend(&out, kPrefix, "request_duration_ms_count{method=\"", method.method(),
                  "\"} ", method.requests(), "\n");
}

}  // namespace

Metrics::Metrics() : start_(std::chrono::steady_clock::now()) {}

void Metrics::Record(absl::string_view method, grpc::StatusCode code, double milliseconds) {
  absl::MutexLock lock(&mu_);
  MethodStats& stats = StatsOf(method);
  ++stats.requests;
  ++stats.codes[static_cast<int>(code)];
  ++stats.buckets[BucketOf(milliseconds)];
  stats.sum_ms += milliseconds;
}

void Metrics::RecordBytes(absl::string_view method, int64_t bytes_in, int64_t bytes_out) {
  absl::MutexLock lock(&mu_);
  MethodStats& stats = StatsOf(method);
  stats.bytes_in += bytes_in;
  stats.bytes_out += bytes_out;
}

Metrics::MethodStats& Metrics::StatsOf(absl::string_view method) {
  auto it = methods_.find(method);
  if (it == methods_.end()) it = methods_.emplace(std::string(method), MethodStats()).first;
  return it->second;
}

v1::MetricsResponse Metrics::Snapshot(int64_t in_flight, int64_t running_workers) const {
  v1::MetricsResponse response;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, stats] : methods_) {
      v1::MethodMetrics* method = response.add_methods();
      method->set_method(name);
      method->set_requests(stats.requests);
      method->set_latency_sum_ms(stats.sum_ms);
      method->set_bytes_in(stats.bytes_in);
      method->set_bytes_out(stats.bytes_out);
      for (const auto& [code, count] : stats.codes) {
        v1::StatusCount* status = method->add_statuses();
        status->set_code(StatusCodeName(static_cast<grpc::StatusCode>(code)));
        status->set_count(count);
      }
      int64_t cumulative = 0;
      for (size_t i = 0; i < stats.buckets.size(); ++i) {
        cumulative += stats.buckets[i];
        v1::HistogramBucket* bucket = method->add_latency();
        bool infinite = i == kBucketBoundsMs.size();
        bucket->set_infinite(infinite);
        if (!infinite) bucket->set_upper_ms(kBucketBoundsMs[i]);
        bucket->set_count(cumulative);
      }
    }
  }
  response.set_in_flight(in_flight);
  response.set_running_workers(running_workers);
  response.set_uptime_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  response.set_text(MetricsToText(response));
  return response;
}

std::string MetricsToText(const v1::MetricsResponse& response) {
  std::string out;
  absl::StrAppend(&out, "# HELP ", kPrefix,
                  "requests_total Calls handled, by method and status code.\n", "# TYPE ",
                  kPrefix, "requests_total counter\n");
  for (const v1::MethodMetrics& method : response.methods()) AppendCountText(method, out);
  absl::StrAppend(&out, "# HELP ", kPrefix,
                  "request_duration_ms Call latency in milliseconds, by method.\n", "# TYPE ",
                  kPrefix, "request_duration_ms histogram\n");
  for (const v1::MethodMetrics& method : response.methods()) AppendHistogramText(method, out);
  absl::StrAppend(&out, "# TYPE ", kPrefix, "received_bytes_total counter\n", "# TYPE ",
                  kPrefix, "sent_bytes_total counter\n");
  for (const v1::MethodMetrics& method : response.methods()) AppendBytesText(method, out);
  absl::StrAppend(&out, "# TYPE ", kPrefix, "in_flight gauge\n", kPrefix, "in_flight ",
                  response.in_flight(), "\n");
  absl::StrAppend(&out, "# TYPE ", kPrefix, "running_workers gauge\n", kPrefix,
                  "running_workers ", response.running_workers(), "\n");
  absl::StrAppend(&out, "# TYPE ", kPrefix, "uptime_seconds gauge\n", kPrefix,
                  "uptime_seconds ", Number(response.uptime_seconds()), "\n");
  return out;
}

}  // namespace onnxconvert::service
