#include "ir/memory_budget.h"

#include <malloc.h>

#include <cstdlib>
#include <filesystem>
#include <limits>

#include "absl/strings/str_cat.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ONNX_CONVERT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ONNX_CONVERT_SANITIZED 1
#endif
#endif

namespace onnxconvert {

namespace {
// The budget of the calling thread, or null.
thread_local MemoryBudget::State* current = nullptr;
}  // namespace

MemoryBudget::MemoryBudget(int64_t limit_bytes) : saved_(current) {
  state_.limit = limit_bytes;
  current = &state_;
}

MemoryBudget::~MemoryBudget() { current = saved_; }

int64_t BudgetFor(int64_t input_bytes, int64_t per_input_byte, int64_t fixed_bytes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (input_bytes > 0 && per_input_byte > (kMax - fixed_bytes) / input_bytes) return kMax;
  return input_bytes * per_input_byte + fixed_bytes;
}

int64_t BudgetForFile(const std::string& path) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  return BudgetFor(ec ? 0 : static_cast<int64_t>(size));
}

absl::Status BudgetError(absl::string_view what, int64_t budget) {
  return absl::ResourceExhaustedError(
      absl::StrCat(what, ": needs more memory than its budget of ", budget >> 20, " MiB"));
}

#ifdef ONNX_CONVERT_SANITIZED
bool MemoryBudget::Enforced() { return false; }
#else
bool MemoryBudget::Enforced() { return true; }
#endif

}  // namespace onnxconvert

#ifndef ONNX_CONVERT_SANITIZED
// The global allocation functions, charging the thread's budget when one
// runs. Sizes are what malloc gave (malloc_usable_size), so a free refunds
// exactly what its allocation charged.
namespace {

using State = onnxconvert::MemoryBudget::State;

void* Allocate(std::size_t size, std::size_t alignment, bool nothrow) {
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  State* state = onnxconvert::current;
  if (p != nullptr && state != nullptr) {
    int64_t got = static_cast<int64_t>(malloc_usable_size(p));
    if (state->used + got > state->limit) {
      std::free(p);
      p = nullptr;
      state->exceeded = true;
      if (!nothrow) throw onnxconvert::MemoryBudgetExceeded(state->limit);
      return nullptr;
    }
    state->used += got;
    if (state->used > state->peak) state->peak = state->used;
  }
  if (p == nullptr && !nothrow) throw std::bad_alloc();
  return p;
}

void Free(void* p) noexcept {
  if (p == nullptr) return;
  if (State* state = onnxconvert::current) {
    state->used -= static_cast<int64_t>(malloc_usable_size(p));
  }
  std::free(p);
}

}  // namespace

void* operator new(std::size_t size) { return Allocate(size, 0, false); }
void* operator new[](std::size_t size) { return Allocate(size, 0, false); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size, 0, true);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size, 0, true);
}
void* operator new(std::size_t size, std::align_val_t align) {
  return Allocate(size, static_cast<std::size_t>(align), false);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return Allocate(size, static_cast<std::size_t>(align), false);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return Allocate(size, static_cast<std::size_t>(align), true);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return Allocate(size, static_cast<std::size_t>(align), true);
}
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, std::size_t) noexcept { Free(p); }
void operator delete[](void* p, std::size_t) noexcept { Free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Free(p); }
void operator delete(void* p, std::align_val_t) noexcept { Free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { Free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { Free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { Free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { Free(p); }
#endif
