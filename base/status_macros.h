#ifndef ONNX_CONVERT_BASE_STATUS_MACROS_H_
#define ONNX_CONVERT_BASE_STATUS_MACROS_H_

// Early returns on a failed absl::Status or absl::StatusOr, and prefixes
// that name where a status came from.

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace onnxconvert {

// `s` as an absl::string_view (this abseil's string_view is its own type,
// not std::string_view, so StrCat and Status do not take the latter).
inline absl::string_view AsAbsl(std::string_view s) { return {s.data(), s.size()}; }

// `status` with "<prefix>: " before its message; an OK status stays OK.
inline absl::Status WithPrefix(std::string_view prefix, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(AsAbsl(prefix), ": ", status.message()));
}

}  // namespace onnxconvert

// Returns from the enclosing function when `expr` (an absl::Status) fails.
#define OC_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::absl::Status oc_status_ = (expr);           \
    if (!oc_status_.ok()) return oc_status_;      \
  } while (0)

#define OC_CONCAT_INNER_(a, b) a##b
#define OC_CONCAT_(a, b) OC_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (an absl::StatusOr<T>); on failure returns its status,
// otherwise moves the value into `lhs` (a declaration or an lvalue).
#define OC_ASSIGN_OR_RETURN(lhs, rexpr) \
  OC_ASSIGN_OR_RETURN_IMPL_(OC_CONCAT_(oc_statusor_, __LINE__), lhs, rexpr)

#define OC_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                              \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // ONNX_CONVERT_BASE_STATUS_MACROS_H_
