#ifndef ONNX_CONVERT_ADAPTERS_REWRITES_H_
#define ONNX_CONVERT_ADAPTERS_REWRITES_H_

// The table of adapters written as code (as opposed to the derived ones):
// RewriteTable, the RewriteRow each operator family file lists its adapters
// in, and the registration function of each family. The converter looks
// adapters up here through Rewrites().

#include <any>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "adapters/adapter.h"

namespace onnxconvert::adapters {

// The adapters written as code, keyed by (domain, op, from, to) since
// versions. Registering the same key twice aborts at start-up: a silently
// shadowed adapter is a bug.
class RewriteTable {
 public:
  // Adds the adapter converting (domain, op) from `from` to `to`; `row`, a
  // pointer to the family table's row it was made from, reaches `fn` as
  // AdapterContext::TableRow.
  void Register(absl::string_view domain, absl::string_view op, int from, int to, AdapterFn fn,
                absl::string_view what, std::any row = {});
  // The adapter for the key, or null.
  const AdapterEntry* Find(absl::string_view domain, absl::string_view op, int from,
                           int to) const;
  // Number of registered adapters.
  size_t size() const { return entries_.size(); }

 private:
  absl::flat_hash_map<std::string, AdapterEntry> entries_;
};

// One row of an operator family's adapter table.
struct RewriteRow {
  const char* op;
  int from;  // since_version of the node's version
  int to;    // since_version it converts to; 0: the op is gone there
  AdapterFn fn;
  const char* what;
};

// Registers every row of `rows` for ops of `domain`.
void RegisterRows(RewriteTable& table, absl::string_view domain,
                  absl::Span<const RewriteRow> rows);

// The table of every rewrite adapter, built once.
const RewriteTable& Rewrites();

// Registration functions, one per operator family file.
void RegisterSoftmaxAdapters(RewriteTable& table);
void RegisterAttributeInputAdapters(RewriteTable& table);
void RegisterBroadcastAdapters(RewriteTable& table);
void RegisterReplacementAdapters(RewriteTable& table);
void RegisterShapeOpAdapters(RewriteTable& table);
void RegisterAddedAttributeAdapters(RewriteTable& table);
void RegisterResizeAdapters(RewriteTable& table);
void RegisterControlFlowAdapters(RewriteTable& table);
void RegisterNormalizationAdapters(RewriteTable& table);
void RegisterMlAdapters(RewriteTable& table);
void RegisterLegacyAdapters(RewriteTable& table);
void RegisterRecurrentAdapters(RewriteTable& table);
void RegisterDropoutMaskAdapters(RewriteTable& table);
void RegisterCompositionAdapters(RewriteTable& table);
void RegisterAttributeCompositionAdapters(RewriteTable& table);

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_REWRITES_H_
