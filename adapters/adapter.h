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

// One change an adapter made, for the conversion report.
struct Change {
  std::string kind;    // "version-bump", "attribute-to-input", "node-replaced", ...
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
  std::any row;

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
  std::any row;
};

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_ADAPTER_H_
