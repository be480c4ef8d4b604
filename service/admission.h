#ifndef ONNX_CONVERT_SERVICE_ADMISSION_H_
#define ONNX_CONVERT_SERVICE_ADMISSION_H_

// Admission of calls by bytes: a budget of bytes that calls in flight are
// charged against (memory, or disk of the work folder), the memory a call
// is expected to take, and the default memory budget. (The heap goes back
// to the system once the server is idle: base/heap_trimmer.h.)

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace onnxconvert::service {

// Bytes shared by calls in flight. Thread-safe.
class ByteBudget : public std::enable_shared_from_this<ByteBudget> {
 public:
  // Bytes charged to one call; destroying it gives them back.
  class Charge {
   public:
    Charge(std::shared_ptr<ByteBudget> owner, int64_t bytes)
        : owner_(std::move(owner)), bytes_(bytes) {}
    ~Charge() { owner_->Release(bytes_); }
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;

    // Adds `bytes` to the charge; false (charge unchanged) when the budget
    // cannot take them.
    bool Grow(int64_t bytes);
    // Bytes charged now.
    int64_t bytes() const { return bytes_; }

   private:
    std::shared_ptr<ByteBudget> owner_;
    int64_t bytes_;
  };

  // A budget of `capacity` bytes (<= 0: no limit, charges are only counted).
  // With `lone_charge_may_exceed`, a charge past the capacity is still
  // admitted (and may grow) while it is the only one, so that any one call
  // can run; without, the capacity is never passed.
  static std::shared_ptr<ByteBudget> Create(int64_t capacity, bool lone_charge_may_exceed);

  // A charge of `bytes`, or null when it would take the budget past its
  // capacity.
  std::shared_ptr<Charge> TryCharge(int64_t bytes);
  // Bytes charged now.
  int64_t in_use() const;
  // The most bytes charged at once so far.
  int64_t peak() const;
  // The capacity (<= 0: none).
  int64_t capacity() const { return capacity_; }

 private:
  ByteBudget(int64_t capacity, bool lone_charge_may_exceed)
      : capacity_(capacity), lone_charge_may_exceed_(lone_charge_may_exceed) {}
  // Takes `bytes` more for a charge that holds `held` already.
  bool TryTake(int64_t bytes, int64_t held);
  void Release(int64_t bytes);

  const int64_t capacity_;
  const bool lone_charge_may_exceed_;
  mutable absl::Mutex mu_;
  int64_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t peak_ ABSL_GUARDED_BY(mu_) = 0;
};

// What a call on a model of `model_bytes` is charged against the memory
// budget: 4 times the model plus 2 MiB. A call holds the request's model,
// the copy its work keeps, the converted model and gRPC's serialized answer
// (4 times the model), plus one conversion window of 512 nodes parsed
// (model_work.h ServiceWindows); bench/service_memory.sh measures what
// calls take against this charge. Models that converter/windowed.h converts
// whole (subgraphs, functions, other domains) take more: their parsed graph
// is about 10 times their bytes.
int64_t ModelCallCharge(int64_t model_bytes);
// The per-model-byte part of ModelCallCharge, for charges that grow as a
// streamed model arrives.
inline constexpr int64_t kChargePerModelByte = 4;
// The fixed part of ModelCallCharge.
inline constexpr int64_t kChargePerCall = int64_t{2} << 20;

// The metadata key in which a client declares the size of the model a unary
// model call (Convert, Plan, Check, Inspect, Rewrite) carries, in decimal
// bytes: the server charges the memory budget with it before it reads the
// request, and refuses a call that does not fit without taking its body in.
inline constexpr char kModelBytesMetadata[] = "x-model-bytes";

// The model size declared by `value` (the kModelBytesMetadata value);
// InvalidArgument naming it when it is not a count of bytes.
absl::StatusOr<int64_t> ParseModelBytes(absl::string_view value);

// The memory limit that `text` (the content of cgroup v2's memory.max or
// v1's memory.limit_in_bytes) states; none for "max" or a value so large
// that it means no limit (v1 says so with about 2^63), or for text that is
// not a number.
std::optional<int64_t> ParseCgroupMemoryLimit(absl::string_view text);

// The memory this process may use: the limit of its cgroup (v2 under
// `cgroup_root`/memory.max, else v1 under
// `cgroup_root`/memory/memory.limit_in_bytes), else the machine's memory.
int64_t AvailableMemoryBytes(const std::string& cgroup_root = "/sys/fs/cgroup");

// The share of AvailableMemoryBytes the default memory budget takes: the
// rest is for what the budget does not count (the server's and the
// workers' baseline, allocator slack, the page cache of the work folder).
inline constexpr double kDefaultBudgetFraction = 0.5;

// The default --max_inflight_bytes: kDefaultBudgetFraction of
// AvailableMemoryBytes().
int64_t DefaultInflightBytes();

// Limits the heap to `arenas` malloc arenas (glibc's M_ARENA_MAX; it
// allows 8 a core, each thread taking one and keeping its free memory):
// fewer arenas keep less memory that calls in flight freed. <= 0 leaves
// glibc's default; false when malloc refuses the setting.
bool LimitMallocArenas(int arenas);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_ADMISSION_H_
