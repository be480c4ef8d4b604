#include "service/admission.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onnxconvert::service {
namespace {

// cgroup v1 states "no limit" as a number near 2^63 (rounded to pages).
constexpr int64_t kNoLimitAbove = int64_t{1} << 62;

std::optional<int64_t> ReadLimitFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ParseCgroupMemoryLimit(text.str());
}

int64_t MachineMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) * page_size;
}

}  // namespace

bool ByteBudget::Charge::Grow(int64_t bytes) {
  if (!owner_->TryTake(bytes, bytes_)) return false;
  bytes_ += bytes;
  return true;
}

std::shared_ptr<ByteBudget> ByteBudget::Create(int64_t capacity, bool lone_charge_may_exceed) {
  return std::shared_ptr<ByteBudget>(new ByteBudget(capacity, lone_charge_may_exceed));
}

std::shared_ptr<ByteBudget::Charge> ByteBudget::TryCharge(int64_t bytes) {
  if (!TryTake(bytes, 0)) return nullptr;
  return std::make_shared<Charge>(shared_from_this(), bytes);
}

bool ByteBudget::TryTake(int64_t bytes, int64_t held) {
  absl::MutexLock lock(&mu_);
  bool fits = capacity_ <= 0 || in_use_ + bytes <= capacity_ ||
              (lone_charge_may_exceed_ && in_use_ == held);
  if (fits) {
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
  }
  return fits;
}

void ByteBudget::Release(int64_t bytes) {
  absl::MutexLock lock(&mu_);
  in_use_ -= bytes;
}

int64_t ByteBudget::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

int64_t ByteBudget::peak() const {
  absl::MutexLock lock(&mu_);
  return peak_;
}

absl::StatusOr<int64_t> ParseModelBytes(absl::string_view value) {
  int64_t bytes = 0;
  if (!absl::SimpleAtoi(value, &bytes) || bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("the ", kModelBytesMetadata, " metadata \"",
                                                   absl::CHexEscape(value.substr(0, 40)),
                                                   "\" is not a count of bytes"));
  }
  return bytes;
}

bool LimitMallocArenas(int arenas) {
  if (arenas <= 0) return true;
  return mallopt(M_ARENA_MAX, arenas) == 1;
}

int64_t ModelCallCharge(int64_t model_bytes) {
  return kChargePerModelByte * model_bytes + kChargePerCall;
}

std::optional<int64_t> ParseCgroupMemoryLimit(absl::string_view text) {
  int64_t limit = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &limit)) return std::nullopt;
  if (limit <= 0 || limit >= kNoLimitAbove) return std::nullopt;
  return limit;
}

int64_t AvailableMemoryBytes(const std::string& cgroup_root) {
  int64_t machine = MachineMemoryBytes();
  for (const char* file : {"/memory.max", "/memory/memory.limit_in_bytes"}) {
    std::optional<int64_t> limit = ReadLimitFile(cgroup_root + file);
    if (limit.has_value()) return std::min(*limit, machine);
  }
  return machine;
}

int64_t DefaultInflightBytes() {
  return static_cast<int64_t>(static_cast<double>(AvailableMemoryBytes()) *
                              kDefaultBudgetFraction);
}

}  // namespace onnxconvert::service
