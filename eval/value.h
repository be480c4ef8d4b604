#ifndef ONNX_CONVERT_EVAL_VALUE_H_
#define ONNX_CONVERT_EVAL_VALUE_H_

// What flows between the nodes of a graph the evaluator runs: a dense
// tensor, or a sequence, optional or map of values. Kernels compute with
// Tensors; the graph runner handles the rest.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// A value of a graph: a tensor, a sequence of values, an optional value
// (empty or holding one) or a map from integer or string keys to values.
// Sequences, optionals and maps keep the type of what they hold, so that an
// empty one still has a type.
class Value {
 public:
  // What the value is.
  enum class Kind : uint8_t { kTensor, kSequence, kOptional, kMap };

  // A tensor of no element type and no elements (a placeholder).
  Value() = default;
  // A tensor value.
  Value(Tensor tensor);  // NOLINT: a tensor is a value
  // A sequence of `elements`, each of type `element_type`.
  static Value Sequence(onnx::TypeProto element_type, std::vector<Value> elements);
  // An optional of type optional(`type`), holding `content` or empty.
  static Value Optional(onnx::TypeProto type, std::optional<Value> content);
  // A map from `keys` (a rank-1 integer or string tensor) to `values` (one
  // per key, each of type `value_type`).
  static Value Map(Tensor keys, onnx::TypeProto value_type, std::vector<Value> values);

  // What the value is, and whether it is a tensor.
  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }

  // The tensor (of a tensor value) or the keys (of a map).
  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  // The elements of a sequence, the content of an optional (none or one),
  // the values of a map.
  const std::vector<Value>& elements() const { return elements_; }
  std::vector<Value>& elements() { return elements_; }
  // The type of each element of a sequence or map, or of an optional's
  // content.
  const onnx::TypeProto& element_type() const;
  // Whether an optional holds a value.
  bool has_content() const { return kind_ == Kind::kOptional && !elements_.empty(); }

  // Bytes the value's elements take (tensors' elements and strings).
  int64_t ByteSize() const;
  // Elements of the largest tensor within the value.
  int64_t MaxTensorSize() const;
  // The value's type with its concrete dims ("tensor(float)[2,3]" as a
  // TypeProto).
  onnx::TypeProto Type() const;

 private:
  Kind kind_ = Kind::kTensor;
  Tensor tensor_;
  std::vector<Value> elements_;
  std::shared_ptr<const onnx::TypeProto> element_type_;
};

// "tensor", "sequence", "optional" or "map", for messages.
absl::string_view KindName(Value::Kind kind);

// The TypeProto of a tensor of `elem_type` and `dims`.
onnx::TypeProto TensorType(int32_t elem_type, absl::Span<const int64_t> dims);

// The dense tensor `proto` describes: its values at its indices (linear, or
// one row of coordinates each), zero elsewhere. Fails for indices out of
// range and more than `max_elements` elements.
absl::StatusOr<Tensor> FromSparseProto(const onnx::SparseTensorProto& proto,
                                       int64_t max_elements = int64_t{1} << 40);

// The value `bytes` (a serialized TensorProto, SequenceProto, OptionalProto
// or MapProto) holds. `declared` (may be null) is the type the value has in
// the model and says which message the bytes are; without it they are a
// TensorProto. Fails, naming `source`, for bytes that do not parse, types the
// evaluator does not hold, and tensors of more than `max_elements`.
absl::StatusOr<Value> ParseValue(absl::string_view bytes, const onnx::TypeProto* declared,
                                 absl::string_view source,
                                 int64_t max_elements = int64_t{1} << 40);

// `value` serialized as the message its kind is stored as, named `name`.
std::string SerializeValue(const Value& value, const std::string& name);

// "float[2] {1, 2}", "seq(float[1] {1}, float[1] {2})", "optional()",
// "map(int64 -> ...)": the value for tests and messages.
std::string DebugString(const Value& value);

// "float[2,3]", "seq(float[2])", "optional(seq(int64[]))": the value's type
// with its dims, for messages.
std::string TypeString(const Value& value);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_VALUE_H_
