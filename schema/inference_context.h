#ifndef ONNX_CONVERT_SCHEMA_INFERENCE_CONTEXT_H_
#define ONNX_CONVERT_SCHEMA_INFERENCE_CONTEXT_H_

// What a per-operator inference rule sees of its node (InferenceContext) and
// the shape of the rule tables; implemented by the inference engine, used
// by every rule family file.

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::schema {

// What a per-operator inference function sees of one node: its schema, its
// inputs' types and (where known) values, its attributes, and where to put
// its outputs' types. Implemented by the inference engine.
class InferenceContext {
 public:
  virtual ~InferenceContext() = default;

  // The node being inferred.
  virtual const onnx::NodeProto& node() const = 0;
  // The operator version the node binds to.
  virtual const OpSchema& op() const = 0;
  // The opset version imported for the node's domain.
  virtual int64_t opset() const = 0;

  // The node, for its input and output slots only (num_inputs, HasInput,
  // num_outputs, HasOutput). The engine tells these reads apart from
  // node(): a rule that reads no more than its inputs' types and values
  // gives the same outputs for the same ones, which the engine remembers.
  virtual const onnx::NodeProto& wiring() const { return node(); }
  // The node's attributes, as Attr and the Attr* readers see them. The
  // engine tells these reads apart from node() too: it remembers outputs by
  // the attributes' values as well.
  virtual const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& attributes() const {
    return node().attribute();
  }

  // Number of input slots the node lists (including empty optional ones).
  size_t num_inputs() const { return wiring().input_size(); }
  // True if input `i` is listed and not the empty name of a missing optional.
  bool HasInput(size_t i) const {
    return i < num_inputs() && !wiring().input(i).empty();
  }
  // The type of input `i`, or nullptr when absent or unknown.
  virtual const onnx::TypeProto* InputType(size_t i) const = 0;
  // The value of input `i` when it is constant (initializer, Constant node,
  // or folded by propagation), or nullptr.
  virtual const onnx::TensorProto* InputConstant(size_t i) const = 0;
  // The value of a 0-D or 1-D integer input as symbolic dims (dim_value or
  // dim_param per element) when known, e.g. the output of Shape(X) or of a
  // Gather/Concat/Slice over it; nullptr otherwise.
  virtual const onnx::TensorShapeProto* InputShapeData(size_t i) const = 0;

  // The attribute `name` as given on the node, or nullptr.
  const onnx::AttributeProto* Attr(absl::string_view name) const;
  // The INT attribute `name`, or `fallback` when absent.
  int64_t AttrInt(absl::string_view name, int64_t fallback) const;
  // The FLOAT attribute `name`, or `fallback` when absent.
  float AttrFloat(absl::string_view name, float fallback) const;
  // The STRING attribute `name`, or `fallback` when absent.
  std::string AttrString(absl::string_view name, absl::string_view fallback) const;
  // The INTS attribute `name`, or nullopt when absent.
  std::optional<std::vector<int64_t>> AttrInts(absl::string_view name) const;

  // Number of output slots the node lists.
  size_t num_outputs() const { return wiring().output_size(); }
  // True if output `i` is listed and not empty.
  bool HasOutput(size_t i) const {
    return i < num_outputs() && !wiring().output(i).empty();
  }
  // The type inferred so far for output `i` (starts empty); write into it.
  virtual onnx::TypeProto* MutableOutputType(size_t i) = 0;
  // The type of output `i` if anything set it, else null.
  virtual const onnx::TypeProto* OutputTypeIfSet(size_t i) const = 0;
  // Gives output `out` exactly input `in`'s type (element type and shape),
  // sharing it rather than copying when the engine can.
  virtual void ShareInputType(size_t in, size_t out) {
    if (const onnx::TypeProto* type = InputType(in)) *MutableOutputType(out) = *type;
  }
  // True if output `out` and input `in` bind to the same type parameter (or
  // the same concrete type) of the op, so they have one element type.
  bool SameTypeParam(size_t in, size_t out) const;
  // Records the symbolic value of integer output `i` (see InputShapeData).
  virtual void SetOutputShapeData(size_t i, onnx::TensorShapeProto data) = 0;
  // Records the value of output `i` (small constant folding for shapes).
  virtual void SetOutputConstant(size_t i, onnx::TensorProto value) = 0;
  // Records `value`, which outlives the inference (an input's constant),
  // as output `i`'s value, without copying it where the engine can.
  virtual void ShareOutputConstant(size_t i, const onnx::TensorProto& value) {
    SetOutputConstant(i, value);
  }

  // Infers the graph attribute `attr_name` given its inputs' types; returns
  // its outputs' types (entries may be empty TypeProtos when unknown).
  virtual absl::StatusOr<std::vector<onnx::TypeProto>> InferSubgraph(
      absl::string_view attr_name,
      absl::Span<const onnx::TypeProto* const> input_types) = 0;

  // A dim_param name unique within this inference run, for dimensions that
  // are unknown but equal between outputs (e.g. "unk__3").
  virtual std::string FreshSymbol() = 0;

  // An error naming this node, op and version, with `message`.
  absl::Status Error(absl::string_view message) const;
};

// Infers the output types (and shape data) of one node. Return an error
// only for a real inconsistency (e.g. incompatible shapes, a rank that the
// op forbids); leave what cannot be known unset.
using InferenceFn = absl::Status (*)(InferenceContext& ctx);

// Registers inference for every version of (domain, op) with since_version
// in [first_version, last_version].
struct InferenceRule {
  absl::string_view domain;  // "" for ai.onnx
  absl::string_view op;
  int first_version;
  int last_version;
  InferenceFn fn;
};

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_INFERENCE_CONTEXT_H_
