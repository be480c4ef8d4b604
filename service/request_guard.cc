#include "service/request_guard.h"

#include "ir/memory_budget.h"

#include <new>

#include "service/error_text.h"

namespace onnxconvert::service {
namespace {

// Most bytes of an exception's what() quoted.
constexpr size_t kMaxWhatBytes = 500;

}  // namespace

absl::Status ExceptionStatus(std::exception_ptr error, absl::string_view subject,
                             absl::string_view where) {
  try {
    std::rethrow_exception(error);
  } catch (const MemoryBudgetExceeded& exceeded) {
    return absl::ResourceExhaustedError(
        absl::StrCat(BudgetError(subject, exceeded.limit()).message(), where));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(subject, ": out of memory (std::bad_alloc)", where));
  } catch (const std::exception& exception) {
    return absl::InternalError(absl::StrCat(
        subject, ": unexpected error (", Abbreviate(exception.what(), kMaxWhatBytes), ")", where));
  } catch (...) {
    return absl::InternalError(
        absl::StrCat(subject, ": unexpected exception of an unknown type", where));
  }
}

}  // namespace onnxconvert::service
