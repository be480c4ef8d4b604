#include "eval/compare.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace onnxconvert::eval {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Tolerances by element type; anything not listed compares exactly.
struct ToleranceRow {
  int32_t elem_type;
  Tolerance tolerance;
};
constexpr ToleranceRow kTolerances[] = {
    {onnx::TensorProto::FLOAT, {1e-5, 1e-7}},
    {onnx::TensorProto::DOUBLE, {1e-5, 1e-7}},
    {onnx::TensorProto::FLOAT16, {1e-2, 1e-5}},
    {onnx::TensorProto::BFLOAT16, {1e-2, 1e-5}},
};

std::string Dims(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The multi-index of element `offset` of a tensor of `dims`.
std::string IndexOf(absl::Span<const int64_t> dims, int64_t offset) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] > 0) {
      index[d] = offset % dims[d];
      offset /= dims[d];
    }
  }
  return Dims(index);
}

std::string Number(double value) { return absl::StrFormat("%.9g", value); }

// Keeps the element of the largest score (error / tolerance).
struct Tracker {
  Comparison& result;
  const Tensor& expected;
  double worst_score = -1;

  // `describe` gives the expected and actual element as text; called only
  // for a new worst element.
  template <typename Describe>
  void Offer(int64_t offset, double abs_error, double rel_error, double score,
             const Describe& describe) {
    ++result.elements;
    if (score > 1) ++result.elements_off;
    if (score <= worst_score) return;
    worst_score = score;
    auto [e, a] = describe();
    result.worst = WorstElement{IndexOf(expected.dims(), offset), std::move(e), std::move(a),
                                abs_error, rel_error, score};
  }
};

double Relative(double abs_error, double expected) {
  if (abs_error == 0) return 0;
  if (!std::isfinite(abs_error) || !std::isfinite(expected)) return kInf;
  return expected == 0 ? kInf : abs_error / std::fabs(expected);
}

void CompareStrings(const Tensor& expected, const Tensor& actual, Tracker& tracker) {
  for (int64_t i = 0; i < expected.size(); ++i) {
    const std::string& e = expected.strings()[i];
    const std::string& a = actual.strings()[i];
    bool same = e == a;
    tracker.Offer(i, same ? 0 : 1, same ? 0 : 1, same ? 0 : kInf, [&] {
      return std::pair(absl::StrCat("\"", e, "\""), absl::StrCat("\"", a, "\""));
    });
  }
}

template <typename T>
void CompareExact(const Tensor& expected, const Tensor& actual, Tracker& tracker) {
  absl::Span<const T> e = expected.data<T>();
  absl::Span<const T> a = actual.data<T>();
  for (int64_t i = 0; i < expected.size(); ++i) {
    double abs_error = std::fabs(static_cast<double>(a[i]) - static_cast<double>(e[i]));
    if (e[i] != a[i] && abs_error == 0) abs_error = 1;  // 64-bit values past double's precision
    tracker.Offer(i, abs_error, Relative(abs_error, static_cast<double>(e[i])),
                  e[i] == a[i] ? 0 : kInf, [&] {
                    if constexpr (std::is_same_v<T, bool>) {
                      return std::pair(std::string(e[i] ? "true" : "false"),
                                       std::string(a[i] ? "true" : "false"));
                    } else {
                      return std::pair(absl::StrCat(e[i]), absl::StrCat(a[i]));
                    }
                  });
  }
}

template <typename T>
void CompareFloats(const Tensor& expected, const Tensor& actual, Tolerance tolerance,
                   Tracker& tracker) {
  absl::Span<const T> e = expected.data<T>();
  absl::Span<const T> a = actual.data<T>();
  double magnitude = 0;
  for (const T& value : e) {
    double d = std::fabs(ToDouble(value));
    if (std::isfinite(d)) magnitude = std::max(magnitude, d);
  }
  double atol = std::max(tolerance.atol_floor, tolerance.rtol * magnitude);
  for (int64_t i = 0; i < expected.size(); ++i) {
    double ev = ToDouble(e[i]);
    double av = ToDouble(a[i]);
    double abs_error = 0;
    double score = 0;
    if (std::isnan(ev) || std::isnan(av)) {
      bool same = std::isnan(ev) && std::isnan(av);
      abs_error = same ? 0 : kInf;
      score = same ? 0 : kInf;
    } else if (std::isinf(ev) || std::isinf(av)) {
      bool same = ev == av;
      abs_error = same ? 0 : kInf;
      score = same ? 0 : kInf;
    } else {
      abs_error = std::fabs(av - ev);
      score = abs_error / (atol + tolerance.rtol * std::fabs(ev));
    }
    tracker.Offer(i, abs_error, Relative(abs_error, ev), score,
                  [&] { return std::pair(Number(ev), Number(av)); });
  }
}

void CompareTensors(const Tensor& expected, const Tensor& actual, Comparison& result) {
  if (expected.elem_type() != actual.elem_type()) {
    result.ok = false;
    result.mismatch = absl::StrCat("element type ", ElementTypeName(actual.elem_type()),
                                   ", expected ", ElementTypeName(expected.elem_type()));
    return;
  }
  if (expected.dims() != actual.dims()) {
    result.ok = false;
    result.mismatch =
        absl::StrCat("shape ", Dims(actual.dims()), ", expected ", Dims(expected.dims()));
    return;
  }
  Tracker tracker{result, expected};
  Tolerance tolerance = ToleranceFor(expected.elem_type());
  if (expected.elem_type() == onnx::TensorProto::STRING) {
    CompareStrings(expected, actual, tracker);
  } else {
    VisitElementType(expected.elem_type(), [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) {
        CompareExact<T>(expected, actual, tracker);
      } else {
        CompareFloats<T>(expected, actual, tolerance, tracker);
      }
    });
  }
  if (result.elements_off > 0) result.ok = false;
}

// Folds the comparison of element `k` of a sequence or map into `result`.
void Fold(const Comparison& part, int64_t k, Comparison& result) {
  result.elements += part.elements;
  result.elements_off += part.elements_off;
  if (!part.ok) result.ok = false;
  if (!part.mismatch.empty() && result.mismatch.empty()) {
    result.mismatch = absl::StrCat("element ", k, ": ", part.mismatch);
  }
  if (!part.worst) return;
  if (!result.worst || part.worst->score > result.worst->score) {
    result.worst = *part.worst;
    result.worst->index = absl::StrCat("element ", k, " ", part.worst->index);
  }
}

}  // namespace

Tolerance ToleranceFor(int32_t elem_type) {
  for (const ToleranceRow& row : kTolerances) {
    if (row.elem_type == elem_type) return row.tolerance;
  }
  return Tolerance{};
}

Comparison CompareValues(const Value& expected, const Value& actual) {
  Comparison result;
  if (expected.kind() != actual.kind()) {
    result.ok = false;
    result.mismatch = absl::StrCat("a ", KindName(actual.kind()), ", expected a ",
                                   KindName(expected.kind()));
    return result;
  }
  if (expected.is_tensor()) {
    CompareTensors(expected.tensor(), actual.tensor(), result);
    return result;
  }
  if (expected.kind() == Value::Kind::kMap) {
    Comparison keys;
    CompareTensors(expected.tensor(), actual.tensor(), keys);
    if (!keys.ok) {
      result.ok = false;
      result.mismatch = absl::StrCat("keys: ", keys.mismatch.empty() ? "differ" : keys.mismatch);
      return result;
    }
  }
  const std::vector<Value>& e = expected.elements();
  const std::vector<Value>& a = actual.elements();
  if (e.size() != a.size()) {
    result.ok = false;
    result.mismatch = expected.kind() == Value::Kind::kOptional
                          ? absl::StrCat(a.empty() ? "empty" : "not empty", ", expected ",
                                         e.empty() ? "empty" : "a value")
                          : absl::StrCat(a.size(), " elements, expected ", e.size());
    return result;
  }
  for (size_t k = 0; k < e.size(); ++k) {
    Fold(CompareValues(e[k], a[k]), static_cast<int64_t>(k), result);
  }
  return result;
}

std::string Comparison::ToString() const {
  std::string text = ok ? "pass" : "FAIL";
  if (!mismatch.empty()) return absl::StrCat(text, ": ", mismatch);
  if (!ok) absl::StrAppend(&text, ": ", elements_off, " of ", elements, " elements differ");
  if (worst) {
    absl::StrAppend(&text, "; worst ", worst->index, ": expected ",
                    worst->expected, ", actual ", worst->actual, ", abs ",
                    Number(worst->abs_error), ", rel ", Number(worst->rel_error));
  }
  return text;
}

}  // namespace onnxconvert::eval
