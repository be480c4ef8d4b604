#ifndef ONNX_CONVERT_ADAPTERS_ADAPTER_H_
#define ONNX_CONVERT_ADAPTERS_ADAPTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/rewriter.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::adapters {

// What kind of change an adapter (or the step around it) made to a node;
// the report prints each as its word (ChangeKindName).
enum class ChangeKind {
  kVersionBump,        // "version-bump": rebound to the next version as it is
  kAttributeSet,       // "attribute-set": an attribute added or given a value
  kAttributeRemoved,   // "attribute-removed"
  kAttributeRenamed,   // "attribute-renamed"
  kAttributeToInput,   // "attribute-to-input": an attribute moved to an input
  kInputAdded,         // "input-added"
  kInputRemoved,       // "input-removed"
  kInputDropped,       // "input-dropped": an input that means its default
  kInputReplaced,      // "input-replaced": another value in an input's place
  kInputSet,           // "input-set": an absent input given a value
  kInputToAttribute,   // "input-to-attribute": a constant input moved to an attribute
  kInputToInput,       // "input-to-input": one input expressed as another
  kOutputAdded,        // "output-added"
  kOutputRemoved,      // "output-removed"
  kTypeSet,            // "type-set": a value's type written out
  kCastInserted,       // "cast-inserted"
  kNodeInserted,       // "node-inserted": nodes added around the node
  kNodeReplaced,       // "node-replaced": the node replaced by others
  kNodeFolded,         // "node-folded": the node replaced by its constant value
  kFunctionExpanded,   // "function-expanded": the node replaced by its function body
  kInitializerAdded,   // "initializer-added"
  kRoundingChanged,    // "rounding-changed": float results may round differently
  kNanChanged,         // "nan-changed": what a NaN input gives changed
};

// The last ChangeKind, for walking them all.
inline constexpr ChangeKind kLastChangeKind = ChangeKind::kNanChanged;

// The report's word for `kind`, e.g. "attribute-to-input".
absl::string_view ChangeKindName(ChangeKind kind);

// The kind the report word `word` names, or nullopt for a word this build
// does not know.
std::optional<ChangeKind> ParseChangeKind(absl::string_view word);

// One change an adapter made, for the conversion report.
struct Change {
  ChangeKind kind;
  std::string detail;  // human-readable, e.g. "axes moved to input 'axes__0'"

  bool operator==(const Change& other) const {
    return kind == other.kind && detail == other.detail;
  }
};

// What an adapter sees of the node it converts from one operator version to
// the next (or previous) one.
struct AdapterContext {
  onnx::NodeProto& node;
  const schema::OpSchema& from;  // the version the node binds to now
  const schema::OpSchema& to;    // the version it must bind to after the step
  std::vector<Change>& changes;
  // The ai.onnx opset the step converts to; inserted nodes must be valid
  // there.
  int64_t to_opset = 0;
  // What is known around the node and the edits made there; its anchor is
  // `node`.
  ir::Rewriter& rewriter;
};

// Converts one node between two adjacent versions of its operator. Returns
// FailedPrecondition, with the reason, when the node cannot be expressed in
// the target version.
using AdapterFn = absl::Status (*)(AdapterContext& ctx);

// How a version change of an operator is handled.
struct AdapterEntry {
  enum Kind {
    kCompatible,   // same signature; types checked against the target
    kRewrite,      // `fn` rewrites the node
    kUnsupported,  // cannot be expressed (or not written yet): `reason`
  };
  Kind kind;
  AdapterFn fn = nullptr;
  std::string reason;
  std::string name;  // e.g. "Softmax 12->13: axis semantics"
};

// What FindAdapter decides once per pair of versions, before looking at
// nodes: the rewrite registered for the pair, if any, and the pair's name.
struct AdapterPlan {
  const schema::OpSchema* from;
  const schema::OpSchema* to;
  const AdapterEntry* rewrite;  // null: derived from the registry
  std::string name;             // e.g. "Relu 13->14"
  // Every type a value may have under `from` is allowed by `to` in the same
  // place, with no new same-type requirement: nodes need no type check.
  bool types_widen = false;
  // A node that validates bound to `from` validates bound to `to`, with the
  // same output types (schema::NodeValidationUnchanged).
  bool validates_alike = false;
  // Every node valid under `from` is valid under `to` as it is, with the
  // same output types: same signature, attributes and inference, wider
  // types, no rewrite, no change of meaning. FindAdapter says kCompatible
  // for every valid node without looking at it.
  bool rebinds_only = false;
};

// The plan for converting between two adjacent versions of an operator.
AdapterPlan PlanAdapter(const schema::OpSchema& from, const schema::OpSchema& to);

// The adapter for converting `node` between the plan's two adjacent
// operator versions (either direction): the registered rewrite, else one
// derived from the registry. Compatible changes have identical inputs and
// outputs, and attributes that mean the same for this node (those it sets
// exist with the same type, those it leaves unset keep their default);
// type sets are checked by the caller. Changes the spec lists as semantic
// are never treated as compatible.
AdapterEntry FindAdapter(const AdapterPlan& plan, const onnx::NodeProto& node);

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

// An int64 tensor (1-D, or a scalar when `scalar`) holding `values`.
onnx::TensorProto Int64Tensor(absl::Span<const int64_t> values, bool scalar = false);

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

// The tensor a Constant's shorthand attribute (value_int, value_ints,
// value_float, value_floats, value_string, value_strings) stands for, or
// nullopt for any other attribute.
std::optional<onnx::TensorProto> ShorthandTensor(const onnx::AttributeProto& attribute);

// The rank of `value` when its type has a shape, or -1.
int64_t RankOf(const AdapterContext& ctx, absl::string_view value);

// The shape of `value` when its type has one, or null.
const onnx::TensorShapeProto* ShapeOf(const AdapterContext& ctx, absl::string_view value);

// Why `node` does not fit operator version `to` (an attribute `to` lacks or
// types differently, a required attribute or input missing, too many
// inputs or outputs), or "" when it fits. Run after a rewrite.
std::string NodeFitsVersion(const schema::OpSchema& to, const onnx::NodeProto& node);

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

#endif  // ONNX_CONVERT_ADAPTERS_ADAPTER_H_
