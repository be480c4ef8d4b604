#ifndef ONNX_CONVERT_IR_MEMORY_BUDGET_H_
#define ONNX_CONVERT_IR_MEMORY_BUDGET_H_

// A per-thread limit on heap allocation, so that work on one hostile model
// fails alone instead of exhausting the process, and the budget to give work
// on a model of a given size.

#include <cstdint>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace onnxconvert {

// Thrown by an allocation that would take the thread's MemoryBudget past its
// limit. A std::bad_alloc, so code that survives running out of memory
// survives it too.
class MemoryBudgetExceeded : public std::bad_alloc {
 public:
  explicit MemoryBudgetExceeded(int64_t limit) : limit_(limit) {}
  const char* what() const noexcept override { return "memory budget exceeded"; }
  // The budget's limit, in bytes.
  int64_t limit() const { return limit_; }

 private:
  int64_t limit_;
};

// A limit on the memory the calling thread allocates (net of what it frees)
// while the object lives: the work of one request or one command. An
// allocation that would pass it throws MemoryBudgetExceeded, so that work
// on a hostile model fails alone instead of exhausting the process; catch
// it outside the budget's scope. Budgets do not nest: an inner one replaces
// the outer while it lives. Enforced only in binaries that link
// //ir:memory_budget and are built without a sanitizer (which brings its
// own operator new); see Enforced().
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit_bytes);
  ~MemoryBudget();
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Bytes allocated and not yet freed by this thread since the budget began.
  int64_t used() const { return state_.used; }
  // The most used() has been.
  int64_t peak() const { return state_.peak; }
  // The limit.
  int64_t limit() const { return state_.limit; }
  // Whether an allocation was refused.
  bool exceeded() const { return state_.exceeded; }

  // Whether budgets are enforced in this binary.
  static bool Enforced();

  // What the allocation functions keep of the running budget.
  struct State {
    int64_t limit = 0;
    int64_t used = 0;
    int64_t peak = 0;
    bool exceeded = false;
  };

 private:
  State state_;
  State* saved_;
};

// The budget for work on a model of `input_bytes` bytes: `per_input_byte`
// bytes per input byte plus `fixed_bytes`, saturating.
int64_t BudgetFor(int64_t input_bytes, int64_t per_input_byte = 32,
                  int64_t fixed_bytes = int64_t{512} << 20);

// The budget for work on the model in the file `path` (BudgetFor its size;
// the fixed part alone when it cannot be read).
int64_t BudgetForFile(const std::string& path);

// The error for work on `what` that ran out of `budget` (ResourceExhausted).
absl::Status BudgetError(absl::string_view what, int64_t budget);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_MEMORY_BUDGET_H_
