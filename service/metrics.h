#ifndef ONNX_CONVERT_SERVICE_METRICS_H_
#define ONNX_CONVERT_SERVICE_METRICS_H_

// The service's request counts and latencies, kept per method and status
// code, and their text form for the Metrics call.

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/status.h"
#include "proto/onnx_convert_service.pb.h"

namespace onnxconvert::service {

// Request counts by method and status code, and a latency histogram per
// method, since construction. Thread-safe.
class Metrics {
 public:
  // Upper bounds of the latency buckets, in milliseconds (+Inf follows).
  static constexpr std::array<double, 15> kBucketBoundsMs = {
      1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000, 60000};

  Metrics();

  // Records one finished call of `method` that took `milliseconds`.
  void Record(absl::string_view method, grpc::StatusCode code, double milliseconds);
  // Adds to the bytes one call of `method` received and sent.
  void RecordBytes(absl::string_view method, int64_t bytes_in, int64_t bytes_out);

  // Records one call refused for `reason` (e.g. "inflight_bytes"), before
  // or while it was handled.
  void RecordRejection(absl::string_view reason);
  // Calls refused for `reason` so far.
  int64_t Rejections(absl::string_view reason) const;
  // Every rejection count so far, by reason.
  std::map<std::string, int64_t, std::less<>> RejectionCounts() const;

  // Everything recorded so far, with the two gauges the caller keeps, and
  // the same figures in the Prometheus text format.
  v1::MetricsResponse Snapshot(int64_t in_flight, int64_t running_workers) const;

 private:
  // The calls of one method.
  struct MethodStats {
    int64_t requests = 0;
    std::map<int, int64_t> codes;                        // by grpc::StatusCode
    std::array<int64_t, kBucketBoundsMs.size() + 1> buckets{};  // not cumulative
    double sum_ms = 0;
    int64_t bytes_in = 0;
    int64_t bytes_out = 0;
  };

  // The stats of `method`, created empty when new.
  MethodStats& StatsOf(absl::string_view method) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::chrono::steady_clock::time_point start_;
  mutable absl::Mutex mu_;
  std::map<std::string, MethodStats, std::less<>> methods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t, std::less<>> rejections_ ABSL_GUARDED_BY(mu_);
};

// `response` in the Prometheus text exposition format.
std::string MetricsToText(const v1::MetricsResponse& response);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_METRICS_H_
