#ifndef ONNX_CONVERT_IR_STATUS_MACROS_H_
#define ONNX_CONVERT_IR_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

#endif  // ONNX_CONVERT_IR_STATUS_MACROS_H_
