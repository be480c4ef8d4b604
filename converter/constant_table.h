#ifndef ONNX_CONVERT_CONVERTER_CONSTANT_TABLE_H_
#define ONNX_CONVERT_CONVERTER_CONSTANT_TABLE_H_

// Internal to the converter: the values adapters may take as constants.

#include <cstdint>
#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/op_index.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// The most elements a value folded from constants (and each of the
// constants it is computed from) may hold.
inline constexpr int64_t kMaxFoldedElements = 1 << 16;

// The value Constant `node` produces, or null (sparse values): its
// `value` tensor, or the tensor a shorthand attribute stands for, kept in
// `owned`.
const onnx::TensorProto* ConstantNodeValue(const onnx::NodeProto& node,
                                           std::deque<onnx::TensorProto>& owned);

// The constants of each graph, by name: initializers, the outputs of
// Constant nodes, and the outputs of deterministic ai.onnx nodes computed
// from constants only (small ones, folded by the reference evaluator when
// first asked for). Collected once per graph when first asked for and
// forgotten when a step changes the graphs.
class ConstantTable {
 public:
  // The constant `name` as seen from `graph`: its own, or an enclosing
  // graph's (the outer scope).
  const onnx::TensorProto* Find(const ir::OpIndex& index, const onnx::GraphProto* graph,
                                absl::string_view name);
  // The value of the Constant node among `nodes`, a function body, that
  // defines `name`, or null (a function body holds no initializers, and
  // its values are not folded).
  const onnx::TensorProto* FindInFunction(const ir::NodeList& nodes, absl::string_view name);
  // The ai.onnx opset the graphs' nodes bind at, for folding; 0 turns
  // folding off (values folded before stay known).
  void SetOpset(int64_t opset) { opset_ = opset; }
  void Clear();
  // Constants of the graphs asked about that their node lists no longer
  // hold (the Constant nodes of windows already converted), by name; null:
  // none. Not owned.
  void SetCarried(const absl::flat_hash_map<std::string, onnx::TensorProto>* carried) {
    carried_ = carried;
  }
  // Names of initializers whose values the table does not know (their data
  // was not read); null: none. Not owned.
  void SetOpaque(const absl::flat_hash_set<std::string>* opaque) { opaque_ = opaque; }
  // Brings the table up to date after a step that changed no Constant node
  // and added `added` to `graph`'s initializers.
  void AddInitializers(const onnx::GraphProto* graph,
                       absl::Span<const onnx::TensorProto* const> added);

 private:
  struct Scope {
    // Small values of Constant nodes are copies: a step may rewrite the
    // node (into an Identity of an initializer, say) while they are in use.
    absl::flat_hash_map<std::string, const onnx::TensorProto*> constants;
    // The ai.onnx nodes that may fold (whose inputs may all be constants),
    // by output name; an entry is erased once its node has been tried.
    absl::flat_hash_map<std::string, const onnx::NodeProto*> foldable;
  };

  Scope& ScopeOf(const ir::OpIndex& index, const onnx::GraphProto* graph);
  // Collects the constants and foldable nodes of `graph` (the main graph
  // when `main`) into `scope`.
  void Collect(const onnx::GraphProto& graph, bool main, Scope& scope);
  // Folds the node producing `name` in `graph`'s scope, if it can.
  const onnx::TensorProto* Fold(const ir::OpIndex& index, const onnx::GraphProto* graph,
                                Scope& scope, absl::string_view name, int depth);
  const onnx::TensorProto* FindAt(const ir::OpIndex& index, const onnx::GraphProto* graph,
                                  absl::string_view name, int depth);

  // Node-based: a fold that reaches an enclosing graph adds its scope
  // while the inner one is in use.
  absl::node_hash_map<const onnx::GraphProto*, Scope> graphs_;
  std::deque<onnx::TensorProto> owned_;
  const absl::flat_hash_map<std::string, onnx::TensorProto>* carried_ = nullptr;
  const absl::flat_hash_set<std::string>* opaque_ = nullptr;
  int64_t opset_ = 0;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_CONSTANT_TABLE_H_
