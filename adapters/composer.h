#ifndef ONNX_CONVERT_ADAPTERS_COMPOSER_H_
#define ONNX_CONVERT_ADAPTERS_COMPOSER_H_

// What adapters build compositions with: nodes placed around the node being
// converted, named after it, and the attributes they take.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "adapters/adapter_helpers.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::adapters {

// The INT attribute `name` = `value`.
inline onnx::AttributeProto IntAttribute(absl::string_view name, int64_t value) {
  onnx::AttributeProto attribute;
  attribute.set_name(std::string(name));
  attribute.set_type(onnx::AttributeProto::INT);
  attribute.set_i(value);
  return attribute;
}

// The FLOAT attribute `name` = `value`.
inline onnx::AttributeProto FloatAttribute(absl::string_view name, double value) {
  onnx::AttributeProto attribute;
  attribute.set_name(std::string(name));
  attribute.set_type(onnx::AttributeProto::FLOAT);
  attribute.set_f(static_cast<float>(value));
  return attribute;
}

// The INTS attribute `name` = `values`.
inline onnx::AttributeProto IntsAttribute(absl::string_view name,
                                          const std::vector<int64_t>& values) {
  onnx::AttributeProto attribute;
  attribute.set_name(std::string(name));
  attribute.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute.add_ints(v);
  return attribute;
}

// The nodes of one composition, placed around the node being converted and
// named after it.
class Composer {
 public:
  explicit Composer(AdapterContext& ctx)
      : ctx_(ctx), base_(ctx.node.name().empty() ? ctx.node.op_type() : ctx.node.name()) {}

  // `op`(inputs) placed before the node; returns its output.
  std::string Before(absl::string_view op, std::vector<std::string> inputs,
                     std::vector<onnx::AttributeProto> attributes = {}) {
    std::string output = ctx_.rewriter.FreshName(absl::StrCat(base_, "_", op));
    ctx_.rewriter.InsertBefore(Make(op, std::move(inputs), output, std::move(attributes)));
    return output;
  }

  // `op`(inputs) placed after the node (and the nodes placed after it
  // before), writing `output`, or a fresh value when `output` is empty;
  // returns the output.
  std::string After(absl::string_view op, std::vector<std::string> inputs, std::string output = "",
                    std::vector<onnx::AttributeProto> attributes = {}) {
    if (output.empty()) output = ctx_.rewriter.FreshName(absl::StrCat(base_, "_", op));
    ctx_.rewriter.InsertAfter(Make(op, std::move(inputs), output, std::move(attributes)));
    return output;
  }

  // `op`(input) over the constant `axes` placed before the node, the axes
  // as an input from opset 13 (ReduceSum, Unsqueeze), else as an attribute.
  absl::StatusOr<std::string> BeforeOverAxes(absl::string_view op, const std::string& input,
                                             std::vector<int64_t> axes,
                                             std::vector<onnx::AttributeProto> attributes = {}) {
    if (ctx_.to_opset >= 13) {
      absl::StatusOr<std::string> axes_name = Ints(std::move(axes));
      if (!axes_name.ok()) return axes_name.status();
      return Before(op, {input, *axes_name}, std::move(attributes));
    }
    onnx::AttributeProto list;
    list.set_name("axes");
    list.set_type(onnx::AttributeProto::INTS);
    for (int64_t axis : axes) list.add_ints(axis);
    attributes.push_back(std::move(list));
    return Before(op, {input}, std::move(attributes));
  }

  // An int64 constant: 1-D, or a scalar when `scalar`.
  absl::StatusOr<std::string> Ints(std::vector<int64_t> values, bool scalar = false) {
    return ctx_.rewriter.AddConstant(Int64Tensor(values, scalar));
  }

 private:
  onnx::NodeProto Make(absl::string_view op, std::vector<std::string> inputs,
                       const std::string& output, std::vector<onnx::AttributeProto> attributes) {
    onnx::NodeProto node;
    node.set_op_type(std::string(op));
    node.set_name(ctx_.rewriter.FreshName(base_));
    for (std::string& input : inputs) node.add_input(std::move(input));
    node.add_output(output);
    for (onnx::AttributeProto& attribute : attributes) *node.add_attribute() = std::move(attribute);
    return node;
  }

  AdapterContext& ctx_;
  std::string base_;
};

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_COMPOSER_H_
