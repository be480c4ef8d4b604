#ifndef ONNX_CONVERT_ADAPTERS_ADAPTER_HELPERS_H_
#define ONNX_CONVERT_ADAPTERS_ADAPTER_HELPERS_H_

// Helpers version adapters share: attributes, constants, types and shapes
// around the node, and the steps many adapters take (dropping defaulted
// attributes, resolving negative axes, inserting casts).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "adapters/adapter.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"
#include "schema/shape_util.h"

namespace onnxconvert::adapters {

// What the versions of `from`'s op before it do in place of `attribute`
// when `from` added it with a default unlike that and `to` predates it
// (e.g. "asymmetric" for Resize-11's coordinate_transformation_mode), or
// null: unset or at its default, the node then means something else at `to`.
const char* OlderBehaviour(const schema::OpSchema& from, const schema::OpSchema& to,
                           absl::string_view attribute);

// The attribute `name` of `node`, or null.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, absl::string_view name);

// Whether `attribute` holds the default value `spec` gives it (false when
// `spec` has no default or the value is of another type).
bool HoldsDefault(const schema::AttrSpec& spec, const onnx::AttributeProto& attribute);

// Removes the attributes the node sets to the default `ctx.from` gives them
// and `ctx.to` lacks: written out or left unset, they mean the same, and
// the target version keeps what unset means. Each removal is recorded in
// `ctx.changes`. The one place every step treats default-valued attributes.
void DropDefaultedAttributes(AdapterContext& ctx);

// Removes the attribute `name` of `node` if present.
void RemoveAttribute(onnx::NodeProto& node, absl::string_view name);

// Adds the INT attribute `name` = `value` to `node`.
void AddIntAttribute(onnx::NodeProto& node, absl::string_view name, int64_t value);

// Adds the INTS attribute `name` = `values` to `node`.
void AddIntsAttribute(onnx::NodeProto& node, absl::string_view name,
                      absl::Span<const int64_t> values);

// Sets the STRING attribute `name` of `node` to `value`, adding it if absent.
void SetStringAttribute(onnx::NodeProto& node, absl::string_view name, absl::string_view value);

// Int64 and float tensors of values, and the tensors of Constant's
// shorthand attributes (schema/shape_util.h), which the adapters and passes
// build often.
using schema::FloatTensor;
using schema::Int64Tensor;
using schema::ShorthandTensor;

// The values of an integer constant (int64, int32 or bool, raw or typed), or
// nullopt for other element types.
std::optional<std::vector<int64_t>> IntValues(const onnx::TensorProto& tensor);

// The values of a float or double constant (raw or typed), or nullopt.
std::optional<std::vector<double>> FloatValues(const onnx::TensorProto& tensor);

// Inserts before the node a ScatterElements writing `updates` at
// `indices` (constant positions) into the constant `base`, and returns the
// name of the result: a full-rank vector built from per-axis values that
// are known only at run time.
absl::StatusOr<std::string> ScatterIntoConstant(AdapterContext& ctx, onnx::TensorProto base,
                                                absl::Span<const int64_t> indices,
                                                const std::string& updates);

// The rank of `value` when its type has a shape, or -1.
int64_t RankOf(const AdapterContext& ctx, absl::string_view value);

// The shape of `value` when its type has one, or null.
const onnx::TensorShapeProto* ShapeOf(const AdapterContext& ctx, absl::string_view value);

// Downgrading from opset 11 or later to an earlier version: resolves the
// node's negative axis attributes (which count from the back from 11 on)
// with the rank they index; fails when that rank is unknown.
absl::Status ResolveNegativeAxes(AdapterContext& ctx);

// Whether ResolveNegativeAxes may change a node going from `from` to `to`.
bool NegativeAxesMatter(const schema::OpSchema& from, const schema::OpSchema& to);

// Casts the node's inputs whose element types `to` does not allow to the
// nearest wider type it does (exactly holding every value), and its outputs
// of those type parameters back; fails naming the value when no such type
// exists. Used instead of refusing when the conversion allows casts.
absl::Status InsertCasts(AdapterContext& ctx);

// A Cast of `in` to element type `to` producing `out`, named after the
// node and spelled as Cast is at the step's target opset.
onnx::NodeProto CastNode(const AdapterContext& ctx, const std::string& in, const std::string& out,
                         int32_t to);

// The element type of `value` when known, else 0.
int32_t ElemOf(const AdapterContext& ctx, const std::string& value);

// Whether InsertCasts would succeed on the node, changing nothing (a dry
// run's verdict; output types not known are taken to fit).
absl::Status CastsWouldFit(AdapterContext& ctx);

// Checks that the element types a node uses are allowed by `to`'s type
// constraints (used by compatible downgrades); the error names the value,
// its type and the allowed ones.
absl::Status CheckTypesAllowed(AdapterContext& ctx);

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_ADAPTER_HELPERS_H_
