// Cast and CastLike between the numeric and bool element types.

#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "eval/kernel.h"
#include "eval/kernel_util.h"
#include "ir/status_macros.h"

namespace onnxconvert::eval {
namespace {

// `value` as `To`: float16/bfloat16 through float; a float becomes an
// integer by truncation and must be in range (else an error, not UB).
template <typename To, typename From>
absl::StatusOr<To> Convert(From from) {
  double value = ToDouble(from);
  if constexpr (std::is_same_v<To, Half>) {
    return FloatToHalf(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, BHalf>) {
    return FloatToBHalf(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != 0;
  } else if constexpr (std::is_floating_point_v<To>) {
    if constexpr (std::is_same_v<From, int64_t> || std::is_same_v<From, uint64_t>) {
      return static_cast<To>(from);  // exact rounding from the integer itself
    }
    return static_cast<To>(value);
  } else if constexpr (std::is_integral_v<From> && !std::is_same_v<From, bool>) {
    // Integer to integer: two's complement wrap, as C++20 defines.
    return static_cast<To>(from);
  } else {
    double truncated = std::trunc(value);
    if (!(truncated >= static_cast<double>(std::numeric_limits<To>::lowest()) &&
          truncated <= static_cast<double>(std::numeric_limits<To>::max()) &&
          truncated != 9223372036854775808.0 && truncated != 18446744073709551616.0)) {
      return absl::InvalidArgumentError(absl::StrCat("the value ", value, " is outside ",
                                                     "the target type's range"));
    }
    return static_cast<To>(truncated);
  }
}

absl::StatusOr<std::vector<Tensor>> CastTo(const KernelCall& call, const Tensor& input,
                                           int32_t to) {
  if (!Holds(to) || to == onnx::TensorProto::STRING ||
      input.elem_type() == onnx::TensorProto::STRING || !Holds(input.elem_type())) {
    return call.Error(absl::StrCat("casts from ", ElementTypeName(input.elem_type()), " to ",
                                   ElementTypeName(to), " are not supported by the evaluator"));
  }
  Tensor out(to, input.dims());
  absl::Status status;
  VisitElementType(input.elem_type(), [&](auto f) {
    using From = decltype(f);
    VisitElementType(to, [&](auto t) {
      using To = decltype(t);
      absl::Span<const From> in = input.data<From>();
      absl::Span<To> o = out.data<To>();
      for (size_t i = 0; i < in.size() && status.ok(); ++i) {
        absl::StatusOr<To> v = Convert<To>(in[i]);
        if (!v.ok()) {
          status = call.Error(v.status().message());
        } else {
          o[i] = *v;
        }
      }
    });
  });
  OC_RETURN_IF_ERROR(status);
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(out));
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> CastKernel(const KernelCall& call) {
  const Tensor* input = call.input(0);
  if (input == nullptr) return call.Error("input is absent");
  const onnx::AttributeProto* to = call.attribute("to");
  if (to == nullptr) return call.Error("attribute 'to' is unset");
  if (to->has_i()) return CastTo(call, *input, static_cast<int32_t>(to->i()));
  // Cast-1 names the type as a string.
  onnx::TensorProto::DataType type;
  if (!onnx::TensorProto::DataType_Parse(absl::AsciiStrToUpper(to->s()), &type)) {
    return call.Error(absl::StrCat("'to' names no type: ", to->s()));
  }
  return CastTo(call, *input, type);
}

absl::StatusOr<std::vector<Tensor>> CastLikeKernel(const KernelCall& call) {
  const Tensor* input = call.input(0);
  const Tensor* like = call.input(1);
  if (input == nullptr || like == nullptr) return call.Error("an input is absent");
  return CastTo(call, *input, like->elem_type());
}

constexpr KernelRow kRows[] = {
    {"", "Cast", 1, kLast, CastKernel},
    {"", "CastLike", 15, kLast, CastLikeKernel},
};

}  // namespace

absl::Span<const KernelRow> CastKernels() { return kRows; }

}  // namespace onnxconvert::eval
