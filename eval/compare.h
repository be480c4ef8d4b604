#ifndef ONNX_CONVERT_EVAL_COMPARE_H_
#define ONNX_CONVERT_EVAL_COMPARE_H_

// Comparing computed values with expected ones, with the tolerances of
// issue 19: integers, bool and strings exactly; float32 and double within
// rtol 1e-5, float16 and bfloat16 within 1e-2, with an absolute tolerance
// scaled by the output's magnitude; NaN equals NaN; kind, element type and
// shape must match exactly.

#include <cstdint>
#include <optional>
#include <string>

#include "eval/value.h"

namespace onnxconvert::eval {

// The tolerance for elements of one type: |actual - expected| <= atol +
// rtol * |expected|, with atol = max(atol_floor, rtol * the largest finite
// |expected| of the tensor). rtol 0 means exact.
struct Tolerance {
  double rtol = 0;
  double atol_floor = 0;
};

// The tolerance for elements of `elem_type`.
Tolerance ToleranceFor(int32_t elem_type);

// The element of a comparison that is farthest off, relative to its
// tolerance.
struct WorstElement {
  std::string index;  // "[1,0]"; "element 2 [1,0]" inside a sequence
  std::string expected;
  std::string actual;
  double abs_error = 0;
  double rel_error = 0;  // abs_error / |expected| (inf when expected is 0)
  double score = 0;      // abs_error over the element's tolerance: off above 1
};

// The outcome of comparing one value.
struct Comparison {
  bool ok = true;
  // Why the values cannot be compared element by element (kind, element
  // type, shape, sequence length), or "".
  std::string mismatch;
  // Elements outside the tolerance.
  int64_t elements_off = 0;
  // Elements compared.
  int64_t elements = 0;
  // The worst element, when any element was compared.
  std::optional<WorstElement> worst;

  // "pass; worst [0,1]: expected 1, actual 1.0000001, abs 1e-07, rel 1e-07"
  // or "FAIL: ...".
  std::string ToString() const;
};

// Compares `actual` with `expected`.
Comparison CompareValues(const Value& expected, const Value& actual);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_COMPARE_H_
