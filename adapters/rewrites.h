#ifndef ONNX_CONVERT_ADAPTERS_REWRITES_H_
#define ONNX_CONVERT_ADAPTERS_REWRITES_H_

// The table of adapters written as code (as opposed to the derived ones):
// RewriteTable and the RewriteRow of the one table that lists them
// (registry.cc; each family file's adapters are declared in families.h).
// The converter looks adapters up here through Rewrites().

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

// One row of the table of rewrite adapters (registry.cc).
struct RewriteRow {
  const char* op;
  int from;  // since_version of the node's version
  int to;    // since_version it converts to; 0: the op is gone there
  AdapterFn fn;
  const char* what;
  const char* domain = "";  // "" for ai.onnx
};

// The table of every rewrite adapter, built once (registry.cc: its rows, then
// the families whose rows come from a data table of their own).
const RewriteTable& Rewrites();

}  // namespace onnxconvert::adapters

#endif  // ONNX_CONVERT_ADAPTERS_REWRITES_H_
