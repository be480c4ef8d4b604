#include "service/metrics_http.h"

#include <optional>
#include <tuple>

#include "service/transport_counts.h"

#include <unistd.h>

#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"

namespace onnxconvert::service {
namespace {

namespace fs = std::filesystem;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr char kPrefix[] = "onnx_convert_";

MetricFamily Family(absl::string_view name, absl::string_view help, MetricType type) {
  MetricFamily family;
  family.name = std::string(name);
  family.help = std::string(help);
  family.type = type;
  return family;
}

// A family of one gauge of no labels.
MetricFamily GaugeFamily(absl::string_view name, absl::string_view help, double value) {
  MetricFamily family = Family(name, help, MetricType::Gauge);
  ClientMetric metric;
  metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
  return family;
}

ClientMetric MethodMetric(const v1::MethodMetrics& method) {
  ClientMetric metric;
  metric.label.push_back({"method", method.method()});
  return metric;
}

void AddCounts(const v1::MethodMetrics& method, MetricFamily& family) {
  for (const v1::StatusCount& status : method.statuses()) {
    ClientMetric metric = MethodMetric(method);
    metric.label.push_back({"code", status.code()});
    metric.counter.value = static_cast<double>(status.count());
    family.metric.push_back(std::move(metric));
  }
}

void AddLatency(const v1::MethodMetrics& method, MetricFamily& family) {
  ClientMetric metric = MethodMetric(method);
  metric.histogram.sample_count = static_cast<uint64_t>(method.requests());
  metric.histogram.sample_sum = method.latency_sum_ms();
  for (const v1::HistogramBucket& bucket : method.latency()) {
    ClientMetric::Bucket out;
    out.upper_bound =
        bucket.infinite() ? std::numeric_limits<double>::infinity() : bucket.upper_ms();
    out.cumulative_count = static_cast<uint64_t>(bucket.count());
    metric.histogram.bucket.push_back(out);
  }
  family.metric.push_back(std::move(metric));
}

// One counter per method of `value` (bytes in or out).
void AddBytes(const v1::MethodMetrics& method, int64_t value, MetricFamily& family) {
  ClientMetric metric = MethodMetric(method);
  metric.counter.value = static_cast<double>(value);
  family.metric.push_back(std::move(metric));
}

// "host:port" as civetweb takes it, brackets around an IPv6 host.
std::string ListenSpec(const std::string& address, int port) {
  bool ipv6 = absl::StrContains(address, ':') && !absl::StartsWith(address, "[");
  return ipv6 ? absl::StrCat("[", address, "]:", port) : absl::StrCat(address, ":", port);
}

}  // namespace

std::vector<MetricFamily> SnapshotFamilies(const v1::MetricsResponse& snapshot) {
  MetricFamily requests = Family(absl::StrCat(kPrefix, "requests_total"),
                                 "Calls handled, by method and status code.", MetricType::Counter);
  MetricFamily latency = Family(absl::StrCat(kPrefix, "request_duration_ms"),
                                "Call latency in milliseconds, by method.", MetricType::Histogram);
  MetricFamily received = Family(absl::StrCat(kPrefix, "received_bytes_total"),
                                 "Model bytes received, by method.", MetricType::Counter);
  MetricFamily sent = Family(absl::StrCat(kPrefix, "sent_bytes_total"),
                             "Model or answer bytes sent, by method.", MetricType::Counter);
  for (const v1::MethodMetrics& method : snapshot.methods()) {
    AddCounts(method, requests);
    AddLatency(method, latency);
    AddBytes(method, method.bytes_in(), received);
    AddBytes(method, method.bytes_out(), sent);
  }
  std::vector<MetricFamily> families = {std::move(requests), std::move(latency),
                                        std::move(received), std::move(sent)};
  families.push_back(GaugeFamily(absl::StrCat(kPrefix, "in_flight"), "Calls being handled now.",
                                 static_cast<double>(snapshot.in_flight())));
  families.push_back(GaugeFamily(absl::StrCat(kPrefix, "running_workers"),
                                 "Work slots held: model calls admitted (streamed ones before their upload is read) until their work ends, abandoned ones included.",
                                 static_cast<double>(snapshot.running_workers())));
  families.push_back(GaugeFamily(absl::StrCat(kPrefix, "uptime_seconds"),
                                 "Seconds since the server started.", snapshot.uptime_seconds()));
  return families;
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0;
  int64_t resident = 0;
  if (!(statm >> size >> resident)) return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t WorkFolderBytes(const std::string& dir, int64_t max_entries) {
  std::error_code ec;
  int64_t total = 0;
  int64_t seen = 0;
  for (fs::directory_iterator top(dir, ec), end; !ec && top != end; top.increment(ec)) {
    if (!absl::StartsWith(top->path().filename().string(), "onnx-convert")) continue;
    if (++seen > max_entries) break;
    std::error_code size_ec;
    if (top->is_regular_file(size_ec)) {
      uintmax_t size = top->file_size(size_ec);
      if (!size_ec) total += static_cast<int64_t>(size);
      continue;
    }
    if (!top->is_directory(size_ec) || top->is_symlink(size_ec)) continue;
    auto options = fs::directory_options::skip_permission_denied;
    std::error_code walk_ec;
    for (fs::recursive_directory_iterator it(top->path(), options, walk_ec), stop;
         !walk_ec && it != stop; it.increment(walk_ec)) {
      if (++seen > max_entries) break;
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec)) continue;
      uintmax_t size = it->file_size(file_ec);
      if (!file_ec) total += static_cast<int64_t>(size);
    }
  }
  return total;
}

int64_t ServiceCollector::CachedWorkDirBytes() const {
  absl::MutexLock lock(&mu_);
  absl::Time now = absl::Now();
  if (now - measured_ >= sources_.work_dir_max_age) {
    work_dir_bytes_ = WorkFolderBytes(sources_.work_dir);
    measured_ = now;
  }
  return work_dir_bytes_;
}

std::vector<MetricFamily> ServiceCollector::Collect() const {
  std::vector<MetricFamily> families = SnapshotFamilies(sources_.snapshot());
  if (sources_.in_flight_bytes) {
    families.push_back(GaugeFamily(absl::StrCat(kPrefix, "in_flight_bytes"),
                                   "Model bytes held by the calls being handled now.",
                                   static_cast<double>(sources_.in_flight_bytes())));
  }
  if (sources_.rejections) {
    MetricFamily rejected = Family(absl::StrCat(kPrefix, "rejections_total"),
                                   "Calls refused for want of room, by reason.",
                                   MetricType::Counter);
    for (const auto& [reason, count] : sources_.rejections()) {
      prometheus::ClientMetric metric;
      metric.label.push_back({"reason", reason});
      metric.counter.value = static_cast<double>(count);
      rejected.metric.push_back(std::move(metric));
    }
    families.push_back(std::move(rejected));
  }
  if (sources_.charged_bytes) {
    families.push_back(GaugeFamily(absl::StrCat(kPrefix, "charged_bytes"),
                                   "Bytes the memory budget (--max_inflight_bytes) has charged "
                                   "to the calls in flight.",
                                   static_cast<double>(sources_.charged_bytes())));
  }
  // gRPC's own counts: among the calls it ended without a handler's answer
  // are those it refused itself (over --max_message_bytes).
  if (std::optional<TransportCalls> calls = TransportCallCounts()) {
    for (const auto& [name, help, value] :
         {std::tuple<const char*, const char*, int64_t>{
              "grpc_calls_started_total", "Calls gRPC started (channelz).", calls->started},
          {"grpc_calls_failed_total",
           "Calls gRPC ended without a handler's answer (channelz): messages over "
           "--max_message_bytes, cancelled calls, lost connections.",
           calls->failed}}) {
      MetricFamily family = Family(absl::StrCat(kPrefix, name), help, MetricType::Counter);
      prometheus::ClientMetric metric;
      metric.counter.value = static_cast<double>(value);
      family.metric.push_back(std::move(metric));
      families.push_back(std::move(family));
    }
  }
  families.push_back(GaugeFamily("process_resident_memory_bytes",
                                 "Resident set size of the server process.",
                                 static_cast<double>(ResidentBytes())));
  if (!sources_.work_dir.empty()) {
    families.push_back(GaugeFamily(absl::StrCat(kPrefix, "work_dir_bytes"),
                                   "Bytes of the server's files in its work folder.",
                                   static_cast<double>(CachedWorkDirBytes())));
  }
  return families;
}

absl::StatusOr<std::unique_ptr<MetricsHttp>> MetricsHttp::Start(const std::string& address,
                                                                int port, MetricsSources sources) {
  std::unique_ptr<MetricsHttp> http(new MetricsHttp());
  std::string spec = ListenSpec(address, port);
  try {
    http->exposer_ = std::make_unique<prometheus::Exposer>(spec, /*num_threads=*/2);
  } catch (const std::exception& e) {
    bool ipv6 = absl::StartsWith(spec, "[");
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on ", spec, " (", e.what(), ")",
                     ipv6 ? "; Debian's civetweb has no IPv6: give an IPv4 --address" : ""));
  }
  std::vector<int> ports = http->exposer_->GetListeningPorts();
  if (ports.empty() || ports[0] <= 0) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", spec));
  }
  http->port_ = ports[0];
  http->collector_ = std::make_shared<ServiceCollector>(std::move(sources));
  http->exposer_->RegisterCollectable(http->collector_);
  return http;
}

MetricsHttp::~MetricsHttp() {
  // Stop serving before the collector (and what it reads) goes away.
  exposer_.reset();
}

}  // namespace onnxconvert::service
