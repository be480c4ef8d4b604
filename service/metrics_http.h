#ifndef ONNX_CONVERT_SERVICE_METRICS_HTTP_H_
#define ONNX_CONVERT_SERVICE_METRICS_HTTP_H_

// The server's metrics in the Prometheus exposition format over HTTP: the
// figures of the Metrics call plus the process's memory and work folder.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "proto/onnx_convert_service.pb.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace onnxconvert::service {

// Where the HTTP exposition reads its figures at each scrape.
struct MetricsSources {
  // The service's counts, histograms and gauges (see Metrics::Snapshot).
  std::function<v1::MetricsResponse()> snapshot;
  // Model bytes held by the calls in flight; null: not exported.
  std::function<int64_t()> in_flight_bytes;
  // Calls refused for want of room, by reason; null: not exported.
  std::function<std::map<std::string, int64_t, std::less<>>()> rejections;
  // Bytes the memory budget has charged to the calls in flight; null: not
  // exported.
  std::function<int64_t()> charged_bytes;
  // The server's work folder; "": its size is not exported.
  std::string work_dir;
  // How long a measured work-folder size is reused.
  absl::Duration work_dir_max_age = absl::Seconds(5);
};

// The families of `snapshot`, named as in its Prometheus text
// (onnx_convert_requests_total, onnx_convert_request_duration_ms, ...).
std::vector<prometheus::MetricFamily> SnapshotFamilies(const v1::MetricsResponse& snapshot);

// The resident set size of this process in bytes (/proc/self/statm), or -1.
int64_t ResidentBytes();

// Bytes in the files under `dir` that this server writes there (entries
// whose name begins with "onnx-convert", walked recursively; at most
// `max_entries` are looked at). Missing or unreadable entries count 0.
int64_t WorkFolderBytes(const std::string& dir, int64_t max_entries = 100000);

// A prometheus-cpp Collectable over MetricsSources: the snapshot's families
// plus onnx_convert_in_flight_bytes, process_resident_memory_bytes and
// onnx_convert_work_dir_bytes. Thread-safe.
class ServiceCollector : public prometheus::Collectable {
 public:
  explicit ServiceCollector(MetricsSources sources) : sources_(std::move(sources)) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  // The work folder's size, measured at most once per work_dir_max_age.
  int64_t CachedWorkDirBytes() const;

  const MetricsSources sources_;
  mutable absl::Mutex mu_;
  mutable absl::Time measured_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable int64_t work_dir_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// The Prometheus text exposition served over HTTP at /metrics (prometheus-cpp's
// Exposer, an embedded civetweb), for as long as this object lives.
class MetricsHttp {
 public:
  // Listens on `address`:`port` (port 0: any free one); an address it
  // cannot bind is Unavailable, naming it.
  static absl::StatusOr<std::unique_ptr<MetricsHttp>> Start(const std::string& address, int port,
                                                            MetricsSources sources);
  ~MetricsHttp();

  // The port it listens on.
  int port() const { return port_; }

 private:
  MetricsHttp() = default;

  std::shared_ptr<ServiceCollector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_METRICS_HTTP_H_
