#ifndef ONNX_CONVERT_ADAPTERS_ADAPTER_H_
#define ONNX_CONVERT_ADAPTERS_ADAPTER_H_

// The contract of a version adapter: what it is given (AdapterContext), what
// it returns, and how it is registered (AdapterEntry, see rewrites.h). The
// helpers adapters share are in adapter_helpers.h; how the converter picks an
// adapter for a node is in converter/adapter_plan.h.

#include <any>
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
  // The row of its family's table the adapter was registered with (see
  // RewriteTable::Register), or empty.
  std::any row = {};

  // The registered row as the `Row` its family's table holds; throws
  // std::bad_any_cast when the adapter was registered without one or with
  // another type.
  template <typename Row>
  const Row& TableRow() const {
    return *std::any_cast<const Row*>(row);
  }
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
  // The table row `fn` was registered with (AdapterContext::TableRow), or
  // empty.
  std::any row = {};
};

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_ADAPTER_H_
