#ifndef ONNX_CONVERT_CONVERTER_STEP_TOUCHES_H_
#define ONNX_CONVERT_CONVERTER_STEP_TOUCHES_H_

// Internal to the converter: what one step touched, for its validation.
// The step's edits themselves are an ir::NodeEdits batch (ir/node_edits.h).

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "converter/incremental_validation.h"
#include "converter/side_by_side.h"
#include "ir/node_edits.h"
#include "ir/op_index.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"

namespace onnxconvert::converter {

// What a step changed, for validating it.
struct StepChanges {
  // Where the step changed the main graph and subgraphs, node by node; they
  // view the storage below.
  std::vector<TouchedGroup> groups;
  std::vector<const onnx::NodeProto*> nodes;
  std::vector<absl::string_view> names;
  std::vector<char> chars;

  // Initializers the step added to the main graph, and to subgraphs.
  std::vector<const onnx::TensorProto*> added;
  std::vector<SubgraphInitializer> added_to_subgraphs;
  // Why only a validation of the whole model will do ("" when the touched
  // nodes suffice): a node with subgraphs changed, say.
  std::string needs_full;
  // Whether some function body changed: the functions are checked again
  // (schema::CheckFunctions), the touched nodes of the graphs one by one.
  bool functions_changed = false;
  // The nodes rewritten in place and validated while the step went on (not
  // among `groups`), if the step validated any early.
  std::unique_ptr<EarlyValidator> early;
  // Whether some node's op type changed.
  bool retyped = false;
};

// What one step touches, noted as it goes, and the early validation of the
// nodes it rewrites in place; read with the step's edits at its end
// (Collect).
class StepTouches {
 public:
  // `edits` holds the step's edits; `main` is the main graph.
  StepTouches(ir::NodeEdits& edits, const onnx::GraphProto* main) : edits_(edits), main_(main) {}
  StepTouches(const StepTouches&) = delete;
  StepTouches& operator=(const StepTouches&) = delete;

  // Notes that the step changes `site`'s node (or what is around it), before
  // it does: its inputs and outputs as they are now. Once per node and step.
  // `rebound`: the step only binds the node to another version of its op
  // (its attributes put in their canonical form, say), nothing around it
  // and nothing within its subgraphs: a node with subgraphs is then
  // validated as any other, its subgraphs inferred again with it.
  void Touch(const ir::NodeSite& site, bool rebound = false) {
    if (touched_log_ != nullptr) touched_log_->insert(site.node);
    if (site.graph == nullptr) {
      // (Its insertions are counted with the others'.)
      function_sites_.push_back(site);
      return;
    }
    for (const onnx::AttributeProto& attribute : site.node->attribute()) {
      if (!rebound && (attribute.has_g() || attribute.graphs_size() > 0)) {
        NeedFull("a node with subgraphs changed");
        return;
      }
    }
    TouchedSite& touched = touched_sites_.emplace_back();
    touched.node = site.node;
    touched.graph = site.graph;
    touched.list = site.list;
    touched.first_name = name_spans_.size();
    touched.inputs = site.node->input_size();
    touched.outputs = site.node->output_size();
    touched.rebound = rebound;
    for (const std::string& input : site.node->input()) KeepName(input);
    for (const std::string& output : site.node->output()) KeepName(output);
  }
  // Adds every node the step touches to `log` (null: none), as it does.
  void LogTouched(absl::flat_hash_set<const onnx::NodeProto*>* log) { touched_log_ = log; }
  // Makes room for `more` nodes to be touched; once many are, starts
  // validating early the nodes rewritten in place, if armed.
  void Reserve(size_t more);
  // Lets this step validate early the nodes it rewrites in place, once it
  // has many to touch: `make` starts the validator, `wiring` checks each
  // node's wiring against `base`, the inference before the step.
  void ArmEarly(std::function<std::unique_ptr<EarlyValidator>()> make,
                IncrementalValidator* wiring, const schema::GraphTypes* base) {
    make_early_ = std::move(make);
    wiring_ = wiring;
    base_ = base;
  }
  // Notes that the step is done with `site`'s node: if the node was
  // rewritten in place, it goes to the early validator.
  void Finished(const ir::NodeSite& site) {
    if (early_ == nullptr || FullNeeded() || touched_sites_.empty()) return;
    TouchedSite& touched = touched_sites_.back();
    if (touched.node != site.node || site.graph != main_) return;
    // Validated with what was inserted around it, after the step.
    if (edits_.EditedAround(site)) return;
    ValidateEarly(touched);
  }
  // Notes that only a validation of the whole model will do, and why.
  void NeedFull(absl::string_view why) {
    if (needs_full_.empty()) needs_full_ = std::string(why);
  }
  // Adds `tensor` to `graph`'s initializers (an edit of the step).
  const onnx::TensorProto* AddInitializer(onnx::GraphProto& graph, onnx::TensorProto tensor);
  // Inserts a Constant node of value `tensor` defining `name` before the
  // node of `site`, a touched node of a function body (an edit of the step).
  void AddConstantNode(const ir::NodeSite& site, std::string name, onnx::TensorProto tensor);

  // What the step changed: call before its edits are applied. Forgets the
  // step.
  StepChanges Collect();

 private:
  // A node noted by Touch, with its inputs and outputs before the step.
  struct TouchedSite {
    onnx::NodeProto* node;
    onnx::GraphProto* graph;
    ir::NodeList* list;
    size_t first_name;  // in name_spans_: the inputs, then the outputs
    int inputs;
    int outputs;
    bool early = false;  // validated early, on its own
    bool rebound = false;  // see Touch
  };

  // A node with more inputs and outputs than this is validated after the
  // step, not early.
  static constexpr size_t kMaxEarlyNames = 64;

  // Copies `name` into the step's buffer of names.
  void KeepName(absl::string_view name) {
    name_spans_.emplace_back(chars_.size(), name.size());
    chars_.insert(chars_.end(), name.begin(), name.end());
  }
  // The `i`th name kept, viewing the buffer (until it grows).
  absl::string_view KeptName(size_t i) const {
    return absl::string_view(chars_.data() + name_spans_[i].first, name_spans_[i].second);
  }
  // The site of `touched`'s node (without its path).
  static ir::NodeSite SiteOf(const TouchedSite& touched) {
    return {touched.node, touched.graph, touched.list, {}};
  }
  // Hands `touched`'s node, rewritten in place, to the early validator if
  // its wiring checks.
  void ValidateEarly(TouchedSite& touched);
  // Why only a validation of the whole model will do, or "".
  std::string NeedsFull() const;
  // Whether NeedsFull() is not "".
  bool FullNeeded() const { return !needs_full_.empty() || edits_.built_subgraphs(); }
  // The touched nodes with what was inserted around them, grouped.
  void CollectGroups(StepChanges& changes);

  ir::NodeEdits& edits_;
  const onnx::GraphProto* main_;
  absl::flat_hash_set<const onnx::NodeProto*>* touched_log_ = nullptr;
  std::vector<TouchedSite> touched_sites_;
  // The function nodes touched (their names not kept: not validated apart).
  std::vector<ir::NodeSite> function_sites_;
  std::vector<std::pair<size_t, size_t>> name_spans_;  // (offset, size) in chars_
  std::vector<char> chars_;
  // Early validation: armed for the step, started once it touches enough.
  std::function<std::unique_ptr<EarlyValidator>()> make_early_;
  IncrementalValidator* wiring_ = nullptr;
  const schema::GraphTypes* base_ = nullptr;
  std::unique_ptr<EarlyValidator> early_;
  size_t touchable_ = 0;
  std::vector<const onnx::TensorProto*> added_initializers_;
  std::vector<SubgraphInitializer> subgraph_initializers_;
  std::string needs_full_;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_TOUCHES_H_
