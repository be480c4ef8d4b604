#ifndef ONNX_CONVERT_CONVERTER_STEP_TABLES_H_
#define ONNX_CONVERT_CONVERTER_STEP_TABLES_H_

// Internal to the converter: what the steps of one conversion look up and
// add to as they go: the types of values (TypeTable) and the constants
// adapters add (AddedConstants).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/step_touches.h"
#include "ir/graph_index.h"
#include "ir/wire.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"

namespace onnxconvert::converter {

// The types of every value, looked up by graph and name: inferred when
// first asked for, and replaced by the validation of each changed step.
class TypeTable {
 public:
  using Result = absl::StatusOr<schema::InferenceResult>;

  explicit TypeTable(const onnx::ModelProto& model) : model_(model) {}

  const onnx::TypeProto* TypeOf(const onnx::GraphProto* graph, absl::string_view name) const {
    if (graph == nullptr) return nullptr;
    if (result_ == nullptr) result_ = std::make_unique<Result>(schema::InferModel(model_));
    if (!result_->ok()) return nullptr;
    auto g = (*result_)->graphs.find(graph);
    if (g == (*result_)->graphs.end()) return nullptr;
    auto it = g->second.types.find(name);
    return it == g->second.types.end() ? nullptr : it->second;
  }
  // What inference knows of `name`'s value in `graph` besides its type, or
  // null.
  const schema::ValueFacts* FactsOf(const onnx::GraphProto* graph, absl::string_view name) const {
    if (TypeOf(graph, name) == nullptr) return nullptr;  // infers when first asked
    const schema::GraphTypes& types = (*result_)->graphs.at(graph);
    auto it = types.facts.find(name);
    return it == types.facts.end() ? nullptr : &it->second;
  }
  // Uses `result`, inferred (strictly, if `strict`) for the model as it is
  // now.
  void Reset(std::unique_ptr<Result> result, bool strict) {
    result_ = std::move(result);
    strict_ = strict;
  }
  // Forgets the types: the model changed; the next lookup infers again.
  void Invalidate() {
    result_.reset();
    strict_ = false;
  }
  // The strict inference of the model as it is now, or null.
  schema::InferenceResult* strict() {
    return strict_ && result_ != nullptr && result_->ok() ? &**result_ : nullptr;
  }

 private:
  const onnx::ModelProto& model_;
  mutable std::unique_ptr<Result> result_;
  bool strict_ = false;
};


// The constants adapters add, under fresh names: one initializer per
// distinct small value, graph and piece of work (a thousand Unsqueeze nodes
// moving axes = [0] to an input share one; the Squeeze nodes of the step
// share another, so that which op comes first in the graph does not name
// it); in a function body, which holds no initializers, a Constant node
// before the node that reads it.
class AddedConstants {
 public:
  // The name of `value` for the node at `site`, work of order `order`
  // (StepContext::order).
  absl::StatusOr<std::string> Add(const ir::NodeSite& site, NameGenerator& names,
                                  StepTouches& touches, onnx::TensorProto&& value,
                                  int64_t order = 0) {
    // Fresh names take the node's name, or its op's.
    const onnx::NodeProto& node = *site.node;
    const std::string& hint = node.name().empty() ? node.op_type() : node.name();
    if (site.graph == nullptr) {
      std::string name = names.FreshName(hint);
      touches.AddConstantNode(site, name, std::move(value));
      return name;
    }
    onnx::GraphProto* graph = site.graph;
    value.clear_name();
    size_t bytes = value.ByteSizeLong();
    bool shareable = bytes <= kShareableBytes;
    Shared& shared = added_[graph];
    if (shareable) {
      key_.assign(reinterpret_cast<const char*>(&order), sizeof order);  // reuses the buffer
      wire::AppendSerialized(value, bytes, key_);
      auto it = shared.find(key_);
      if (it != shared.end()) {
        // Work that comes before the constant's creator in a whole
        // conversion would have created it.
        if (order < it->second.order) out_of_order_ = true;
        return it->second.name;
      }
    }
    std::string name = names.FreshName(hint);
    value.set_name(name);
    touches.AddInitializer(*graph, std::move(value));
    if (shareable) shared.emplace(key_, Created{name, order});
    orders_.emplace(name, order);
    return name;
  }

  // Forgets the constants added to `graph`, a subgraph about to be freed
  // (ConvertBytes: its address may name another graph later).
  void ForgetGraph(const onnx::GraphProto* graph) { added_.erase(graph); }

  // Whether a constant was shared with work ordered before its creator's
  // (ConvertBytes: the windows then disagree with a whole conversion).
  bool out_of_order() const { return out_of_order_; }
  // The order of the work that created the constant `name`, or 0.
  int64_t OrderOf(absl::string_view name) const {
    auto it = orders_.find(name);
    return it == orders_.end() ? 0 : it->second;
  }

 private:
  static constexpr size_t kShareableBytes = 256;
  // Names of the constants added to a graph, by serialized value.
  struct Created {
    std::string name;
    int64_t order;
  };
  using Shared = absl::flat_hash_map<std::string, Created>;
  absl::flat_hash_map<const onnx::GraphProto*, Shared> added_;
  absl::flat_hash_map<std::string, int64_t> orders_;
  bool out_of_order_ = false;
  std::string key_;  // scratch
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_TABLES_H_
