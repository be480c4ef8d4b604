#include "converter/windowed.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/container/node_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/heap_trimmer.h"
#include "base/op_key.h"
#include "base/status_macros.h"
#include "converter/bytes_behind.h"
#include "converter/incremental_validation.h"
#include "converter/model_shell.h"
#include "converter/name_walk.h"
#include "converter/node_writer.h"
#include "converter/plain_node_memo.h"
#include "converter/step_runner.h"
#include "converter/step_validation.h"
#include "converter/subgraph_check.h"
#include "converter/tracks.h"
#include "converter/window_ops.h"
#include "converter/window_report.h"
#include "converter/wire_scan.h"
#include "google/protobuf/arena.h"
#include "ir/wire.h"
#include "schema/checker.h"

namespace onnxconvert::converter {
namespace {

using schema::Registry;

absl::Status NotWindowed(absl::string_view why) { return absl::UnimplementedError(why); }

// The lengths of a set of names, as bits: a name of a length not among them
// is not in the set (a test cheaper than a lookup).
class NameLengths {
 public:
  void Add(absl::string_view name) { bits_ |= Bit(name.size()); }
  bool MayHold(absl::string_view name) const { return (bits_ & Bit(name.size())) != 0; }

 private:
  static uint64_t Bit(size_t length) { return uint64_t{1} << std::min<size_t>(length, 63); }
  uint64_t bits_ = 0;
};

// One conversion of a model's bytes, window by window (see ConvertWindowed).
class WindowedConversion {
 public:
  WindowedConversion(absl::string_view bytes, const ConvertOptions& options,
                     const WindowOptions& windows, ModelSink& out)
      : bytes_(bytes), options_(options), windows_(windows), out_(out) {}

  absl::StatusOr<ConversionReport> Run() {
    OC_RETURN_IF_ERROR(CheckOptions());
    OC_RETURN_IF_ERROR(Split());
    OC_RETURN_IF_ERROR(ScanNames());
    OC_RETURN_IF_ERROR(Prepare());
    out_.Expect(bytes_.size());
    forward_.emplace(graph_payload_);
    BytesBehind behind(&windows_.release, graph_payload_.data());
    for (int64_t begin = 0; begin < node_count_; begin += windows_.window_nodes) {
      OC_RETURN_IF_ERROR(
          ConvertWindow(begin, std::min(node_count_, begin + windows_.window_nodes)));
      behind.Forwards(graph_payload_.data() + forward_->offset());
    }
    OC_RETURN_IF_ERROR(Finish());
    return std::move(report_);
  }

 private:
  // A plain node of the window (see WindowOps::Read) as read from the model.
  struct WireNode {
    absl::string_view whole;  // the field, as Emit writes it
    absl::string_view payload;
    absl::string_view attributes;
    const schema::OpSchema* op;
    uint32_t first_name;  // its inputs, then outputs, in wire_names_
    uint32_t inputs;
    uint32_t outputs;
    bool parsed;  // else left unparsed, an empty node standing for it
  };

  absl::Status CheckOptions() const {
    if (options_.ml_target_opset) return NotWindowed("ai.onnx.ml is converted too");
    if (options_.dry_run) return NotWindowed("a dry run");
    if (options_.full_validation || options_.cross_check || !options_.validate_each_step) {
      return NotWindowed("the options ask for whole-model validation (or none)");
    }
    if (windows_.window_nodes < 1) return NotWindowed("no window size");
    return absl::OkStatus();
  }

  // Splits the model into its main graph's nodes (counted, a checkpoint
  // every kCheckpointNodes) and the rest, parsed into window_.
  absl::Status Split() {
    std::string shell;
    wire::FieldReader model(bytes_);
    wire::Field field;
    bool found;
    bool has_graph = false;
    while (true) {
      if (!model.Next(field, found).ok()) return NotWindowed("the model does not parse");
      if (!found) break;
      if (field.number != kModelGraph) {
        shell.append(field.whole.data(), field.whole.size());
        continue;
      }
      if (has_graph || field.wire_type != wire::kLengthDelimited) {
        return NotWindowed("the graph field is not one message");
      }
      has_graph = true;
      graph_payload_ = field.payload;
    }
    if (!has_graph) return NotWindowed("the model has no graph");
    if (graph_payload_.size() > UINT32_MAX) return NotWindowed("the graph is over 4 GiB");
    if (!window_.ParseFromString(shell)) return NotWindowed("the model does not parse");
    for (const onnx::FunctionProto& function : window_.functions()) {
      local_functions_.insert(OpKey(function.domain(), function.name()));
    }
    if (window_.training_info_size() > 0) return NotWindowed("the model has training graphs");
    std::string rest;
    wire::FieldReader graph(graph_payload_);
    BytesBehind behind(&windows_.release, graph_payload_.data());
    while (true) {
      if (!graph.Next(field, found).ok()) return NotWindowed("the graph does not parse");
      if (!found) break;
      behind.Forwards(field.whole.data());
      if (field.number == kGraphNode && field.wire_type == wire::kLengthDelimited) {
        if (node_count_ % kCheckpointNodes == 0) {
          checkpoints_.push_back(static_cast<uint32_t>(field.whole.data() - graph_payload_.data()));
        }
        ++node_count_;
        continue;
      }
      if (field.number == kGraphInitializer && field.wire_type == wire::kLengthDelimited) {
        std::optional<TensorHeader> header;
        if (static_cast<int64_t>(field.payload.size()) >= windows_.header_only_bytes) {
          header = FloatTensorHeader(field.payload);
        }
        initializer_bytes_.push_back(header ? field.whole : absl::string_view());
        initializer_sizes_.push_back(header ? header->sizes : schema::TensorDataSizes());
        if (header) {
          wire::AppendLengthDelimitedHeader(kGraphInitializer, header->bytes.size(), rest);
          rest.append(header->bytes);
          continue;
        }
      }
      rest.append(field.whole.data(), field.whole.size());
    }
    if (node_count_ < windows_.min_nodes &&
        static_cast<int64_t>(bytes_.size()) < windows_.min_bytes) {
      return NotWindowed(absl::StrCat("the graph has ", node_count_, " nodes, fewer than ",
                                      windows_.min_nodes, ", in ", bytes_.size(), " bytes"));
    }
    graph_ = window_.mutable_graph();
    if (!graph_->ParseFromString(rest)) return NotWindowed("the graph does not parse");
    if (graph_->sparse_initializer_size() > 0) {
      return NotWindowed("the graph has sparse initializers");
    }
    for (const onnx::TensorProto& tensor : graph_->initializer()) {
      if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
        return NotWindowed("tensors are kept in external files");
      }
    }
    original_initializers_ = graph_->initializer_size();
    if (initializer_bytes_.size() != static_cast<size_t>(original_initializers_)) {
      return NotWindowed("the initializers do not parse");
    }
    return absl::OkStatus();
  }

  // Reserves the nodes' names, looks for a value defined twice, and notes
  // where each value is used for the last time (WalkNames).
  absl::Status ScanNames() {
    names_.emplace(window_);
    for (const auto& input : graph_->input()) graph_level_.insert(input.name());
    for (const auto& tensor : graph_->initializer()) graph_level_.insert(tensor.name());
    for (const std::string& name : graph_level_) graph_level_lengths_.Add(name);
    WalkedGraph walked{graph_payload_, checkpoints_,       node_count_,       &graph_level_,
                       {},             &local_functions_, &windows_.release};
    for (const auto& output : graph_->output()) walked.outputs.push_back(output.name());
    absl::StatusOr<std::vector<bool>> uses = WalkNames(walked, *names_);
    if (!uses.ok()) return NotWindowed(uses.status().message());
    uses_ = *std::move(uses);
    std::vector<uint32_t>().swap(checkpoints_);
    return absl::OkStatus();
  }

  // Checks and infers what the graph declares; sets up the steps.
  absl::Status Prepare() {
    // Initializers read as headers are checked against their data's sizes.
    absl::flat_hash_map<const onnx::TensorProto*, schema::TensorDataSizes> sizes;
    for (int i = 0; i < original_initializers_; ++i) {
      if (!initializer_bytes_[i].empty()) sizes[&graph_->initializer(i)] = initializer_sizes_[i];
    }
    schema::CheckOptions check_options;
    check_options.sizes_read_apart = &sizes;
    schema::CheckReport check = schema::CheckModel(window_, check_options);
    for (const schema::CheckIssue& issue : check.issues) {
      // The graph's outputs are defined by the nodes, not here.
      bool output_undefined = issue.code == schema::CheckCode::kUndefinedInput &&
                              issue.node.empty() &&
                              absl::StartsWith(issue.message, "graph output");
      if (!issue.is_warning && !output_undefined) {
        return NotWindowed(absl::StrCat("the model does not check: ", issue.ToString()));
      }
    }
    absl::StatusOr<schema::InferenceResult> inferred = InferStrictly(window_);
    if (!inferred.ok()) return NotWindowed("the graph's declarations do not infer");
    types_.emplace(window_);
    types_->Reset(std::make_unique<TypeTable::Result>(std::move(inferred)), /*strict=*/true);
    result_ = types_->strict();
    live_ = &result_->graphs.at(graph_);
    // Initializers read as headers have no value to infer from.
    for (int i = 0; i < graph_->initializer_size(); ++i) {
      if (initializer_bytes_[i].empty()) continue;
      live_->facts.erase(graph_->initializer(i).name());
      headers_only_.insert(graph_->initializer(i).name());
    }
    constants_.SetOpaque(&headers_only_);
    for (const onnx::TensorProto& tensor : graph_->initializer()) {
      initializer_names_.insert(tensor.name());
      initializer_lengths_.Add(tensor.name());
      initializer_tensors_.insert(&tensor);
    }
    for (const auto& [name, type] : live_->declared) declared_lengths_.Add(name);
    plain_memo_.emplace(*result_->arena);
    checker_.emplace(window_);
    incremental_.emplace(window_);
    constants_.SetCarried(&carried_constants_);
    absl::StatusOr<std::vector<Track>> tracks = PlanTracks(window_, options_);
    if (!tracks.ok()) return NotWindowed(tracks.status().message());
    if (tracks->size() != 1 || !tracks->front().domain.empty()) {
      return NotWindowed("a domain other than ai.onnx is converted");
    }
    track_ = tracks->front();
    source_imports_ = window_.opset_import();
    report_.source_opset = track_.source;
    report_.target_opset = track_.target;
    report_.source_ir_version = window_.ir_version();
    int64_t direction = track_.target > track_.source ? 1 : -1;
    std::vector<std::pair<int64_t, int64_t>> steps;
    for (int64_t from = track_.source; from != track_.target; from += direction) {
      steps.emplace_back(from, from + direction);
      StepParts& parts = steps_.emplace_back();
      parts.report.from_opset = from;
      parts.report.to_opset = from + direction;
      int rank = 0;
      for (const schema::OpSchema* op :
           Registry::Get().ChangedAt("", std::max(from, from + direction))) {
        parts.rank_of.try_emplace(op->name, rank++);
      }
    }
    ops_.emplace(track_.source, std::move(steps));
    names_->Observe([this](absl::string_view prefix) {
      int64_t order = *order_;
      auto [it, inserted] = prefix_orders_.try_emplace(prefix, order);
      if (inserted) return;
      if (order < it->second) out_of_order_ = true;
      it->second = std::max(it->second, order);
    });
    return absl::OkStatus();
  }

  // Parses, validates, converts and writes nodes [begin, end).
  absl::Status ConvertWindow(int64_t begin, int64_t end) {
    // The function bodies are converted once, with the last window.
    with_functions_ = end == node_count_ && window_.functions_size() > 0;
    *window_.mutable_opset_import() = source_imports_;
    constants_.Clear();
    OC_RETURN_IF_ERROR(ParseWindow(end - begin));
    std::optional<ir::OpIndex> indexed;
    OC_RETURN_IF_ERROR(ValidateWindow(indexed));
    {
      ir::OpIndex& index = *indexed;
      ir::NodeEdits edits;
      StepTouches touches(edits, graph_);
      touches.LogTouched(&touched_);
      ir::Retired retired;
      for (size_t s = 0; s < steps_.size(); ++s) {
        OC_RETURN_IF_ERROR(RunWindowStep(s, index, edits, touches, retired));
      }
      for (const onnx::NodeProto* node : touched_) {
        if (originals_.contains(node)) continue;
        // A node of a subgraph changes the window's node holding it. (A
        // node a step inserted is written as it ends up, whatever changed
        // it; inserted into a subgraph, around a node whose change made its
        // owner dirty. The functions are written whole, at the end.)
        auto owner = inner_owners_.find(node);
        if (owner != inner_owners_.end()) dirty_.insert(owner->second);
      }
      if (out_of_order_ || added_.out_of_order()) {
        return NotWindowed("a name or constant would be shared in another order");
      }
      OC_RETURN_IF_ERROR(Emit());
      ForgetWindow();
    }
    graph_->mutable_node()->Clear();
    heap_.Tick();
    return absl::OkStatus();
  }

  absl::Status ParseWindow(int64_t count) {
    originals_.clear();
    touched_.clear();
    captures_.clear();
    inner_owners_.clear();
    dirty_.clear();
    // (A cleared table of this size gives back its memory: grown again one
    // doubling at a time, it would move every entry ~twice.)
    originals_.reserve(static_cast<size_t>(count));
    defined_.reserve(static_cast<size_t>(count));
    wire_nodes_.clear();
    wire_names_.clear();
    wire_node_of_.clear();
    passed_.clear();
    subgraph_ops_.clear();
    wire::Field field;
    bool found;
    for (int64_t i = 0; i < count;) {
      OC_RETURN_IF_ERROR(forward_->Next(field, found));
      if (!found) return absl::InternalError("fewer nodes than counted");
      if (field.number != kGraphNode || field.wire_type != wire::kLengthDelimited) continue;
      // An empty node stands for one left unparsed.
      onnx::NodeProto* node = graph_->add_node();
      const WindowOp op = ops_->Read(field.payload, plain_);
      if (op.unparsed) {
        NoteWireNode(op.schema, field, /*parsed=*/false);
        NoteUses(plain_.inputs, plain_.outputs, /*parsed=*/false);
        ++i;
        continue;
      }
      wire_node_of_.push_back(-1);
      originals_.emplace(node, field.whole);
      if (!node->ParseFromArray(field.payload.data(), static_cast<int>(field.payload.size()))) {
        return NotWindowed("a node does not parse");
      }
      bool subgraphs = NoteSubgraphs(*node, *node, graph_->node_size() - 1, 0);
      if (op.schema != nullptr && !subgraphs) {
        wire_node_of_.pop_back();
        NoteWireNode(op.schema, field, /*parsed=*/true);
        NoteUses(plain_.inputs, plain_.outputs, /*parsed=*/true);
      } else {
        // It parsed.
        (subgraphs ? ScanNode(field.payload, scanned_) : ScanWiring(field.payload, scanned_))
            .IgnoreError();
        NoteUses(scanned_.inputs, scanned_.outputs, /*parsed=*/true);
      }
      if (subgraphs) {
        captures_[node].assign(scanned_.inputs.begin() + node->input_size(),
                               scanned_.inputs.end());
      }
      ++i;
    }
    return absl::OkStatus();
  }

  // Notes the nodes and graphs within the subgraphs of `node` (at `depth`),
  // which the window's node `owner`, at `position`, holds, and the ai.onnx
  // ops of those nodes where none came before; whether it holds any.
  bool NoteSubgraphs(const onnx::NodeProto& node, const onnx::NodeProto& owner, int position,
                     int depth) {
    if (depth > kMaxSubgraphDepth) return true;  // WalkNames refused it
    bool any = false;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      auto note = [&](const onnx::GraphProto& graph) {
        any = true;
        subgraphs_.push_back(&graph);
        for (const onnx::NodeProto& inner : graph.node()) {
          inner_owners_.emplace(&inner, &owner);
          if (CanonicalDomain(inner.domain()).empty()) {
            subgraph_ops_.try_emplace(inner.op_type(), position);
          }
          NoteSubgraphs(inner, owner, position, depth + 1);
        }
      };
      if (attribute.has_g()) note(attribute.g());
      for (const onnx::GraphProto& graph : attribute.graphs()) note(graph);
    }
    return any;
  }

  // Notes the window's node `field`, read into plain_, of op `schema`,
  // `parsed` or not.
  void NoteWireNode(const schema::OpSchema* schema, const wire::Field& field, bool parsed) {
    wire_node_of_.push_back(static_cast<int32_t>(wire_nodes_.size()));
    wire_nodes_.push_back({field.whole, field.payload, plain_.attributes, schema,
                           static_cast<uint32_t>(wire_names_.size()),
                           static_cast<uint32_t>(plain_.inputs.size()),
                           static_cast<uint32_t>(plain_.outputs.size()), parsed});
    for (absl::string_view input : plain_.inputs) wire_names_.push_back(input);
    for (absl::string_view output : plain_.outputs) wire_names_.push_back(output);
  }

  // Notes the values a node reading `inputs` and defining `outputs` (views
  // of the model's bytes) uses for the last time and, when it is `parsed`,
  // those it defines. (The values of a node left unparsed are keyed by the
  // model's bytes, with types that outlive the window: nothing is kept of
  // them when the window is forgotten, unless ValidateWindow parses it.)
  void NoteUses(absl::Span<const absl::string_view> inputs,
                absl::Span<const absl::string_view> outputs, bool parsed) {
    for (absl::string_view input : inputs) {
      if (uses_.back()) dying_.push_back(input);
      uses_.pop_back();
    }
    for (auto output = outputs.rbegin(); output != outputs.rend(); ++output) {
      bool dead = uses_.back();
      uses_.pop_back();
      if (output->empty()) continue;
      if (parsed) defined_.insert(*output);
      if (dead) (parsed ? dying_ : dying_unparsed_).push_back(*output);
    }
  }

  // Checks and infers the window's nodes as they came, as the whole model's
  // check and strict inference would (the check sees the inferred types,
  // which hold to the declared ones), and indexes them by op into `index`.
  absl::Status ValidateWindow(std::optional<ir::OpIndex>& index) {
    absl::StatusOr<std::unique_ptr<schema::NodeReinferencer>> reinfer =
        schema::NodeReinferencer::CreateInPlace(window_, *graph_, *result_);
    if (!reinfer.ok()) return NotWindowed(reinfer.status().message());
    plain_memo_->ForgetRecent();
    recent_values_.fill({});
    maybe_constant_.clear();
    unparsed_counts_.clear();
    for (int i = 0; i < graph_->node_size(); ++i) {
      const onnx::NodeProto& node = graph_->node(i);
      const int32_t read = wire_node_of_[i];
      bool learn = false;  // whether to remember what the node is found to be
      if (read >= 0) {
        const WireNode& wired = wire_nodes_[read];
        OC_ASSIGN_OR_RETURN(Typing typing, TypeAsAlike(wired, wired.parsed ? &node : nullptr));
        if (typing == Typing::kAlike) {
          // Checked and inferred as the node alike was.
          if (wired.parsed) continue;
          CountPassed(*wired.op, i);
          passed_.push_back({&node, wired.whole});
          continue;
        }
        learn = typing == Typing::kInferAndLearn;
        if (!wired.parsed) {
          originals_.emplace(&node, wired.whole);
          if (!graph_->mutable_node(i)->ParseFromArray(wired.payload.data(),
                                                       static_cast<int>(wired.payload.size()))) {
            return NotWindowed("a node does not parse");
          }
          // Typed by inference, keyed by the node's names: kept as a
          // parsed node's.
          for (const std::string& output : node.output()) {
            if (!output.empty()) defined_.insert(output);
          }
        }
      }
      auto captures = captures_.find(&node);
      if (captures != captures_.end()) {
        const schema::NodeReinferencer& types = **reinfer;
        OC_RETURN_IF_ERROR(CheckNodeApart(window_, *graph_->mutable_node(i), captures->second,
                                          [&types](absl::string_view name) {
                                            return types.TypeOf(name);
                                          }));
      }
      absl::Status valid = InferAndCheck(*checker_, **reinfer, node, "main");
      // (Inference looked every input up: one it found no type for is
      // defined nowhere before the node.)
      if (int untyped = (*reinfer)->UntypedInput(); untyped >= 0) {
        return NotWindowed(
            absl::StrCat("input '", node.input(untyped), "' is not defined before its use"));
      }
      if (!valid.ok()) return NotWindowed(valid.message());
      absl::Span<const schema::InputFact> facts;
      if (learn && (*reinfer)->LastInferredPurely(facts) && AllLasting(facts)) {
        output_types_.clear();
        for (const std::string& output : node.output()) {
          output_types_.push_back(output.empty() ? nullptr : (*reinfer)->TypeOf(output));
        }
        plain_memo_->Remember(output_types_, facts);
      }
      NoteConstness(node.op_type() == "Constant", node.input(), node.output());
    }
    (*reinfer)->Commit();
    index.emplace(window_, absl::flat_hash_set<std::string>{""}, with_functions_);
    for (const auto& [op, count] : index->others()) untouched_ops_[op] += count;
    return absl::OkStatus();
  }

  // How a window's plain node is checked and its outputs typed.
  enum class Typing {
    kAlike,          // as a node alike was: not checked or inferred again
    kInfer,          // parsed (if it is not), checked and inferred
    kInferAndLearn,  // the same, what it is found to be remembered
  };

  // Types the outputs of `node` as the check and strict inference of a
  // node alike found (PlainNodeMemo), when one was found and its outputs
  // cannot be constants nor have declared types; the types are keyed by the
  // names of `parsed`, the node parsed, if it is (as inference keys them).
  absl::StatusOr<Typing> TypeAsAlike(const WireNode& node, const onnx::NodeProto* parsed) {
    absl::Span<const absl::string_view> names(wire_names_);
    absl::Span<const absl::string_view> inputs = names.subspan(node.first_name, node.inputs);
    absl::Span<const absl::string_view> outputs =
        names.subspan(node.first_name + node.inputs, node.outputs);
    input_types_.clear();
    for (absl::string_view input : inputs) {
      if (input.empty()) {
        input_types_.push_back(nullptr);
        continue;
      }
      const onnx::TypeProto* type = RecentValue(input);
      if (type == nullptr) {
        auto it = live_->types.find(input);
        if (it == live_->types.end()) {
          return NotWindowed(absl::StrCat("input '", input, "' is not defined before its use"));
        }
        type = it->second;
      }
      input_types_.push_back(type);
    }
    // (A node that may fold, or whose output has a declared type, is
    // parsed: the steps see it.)
    if (AllMayBeConstants(inputs)) return Typing::kInfer;
    for (absl::string_view output : outputs) {
      if (declared_lengths_.MayHold(output) && live_->declared.contains(output)) {
        return Typing::kInfer;
      }
    }
    const PlainNodeMemo::Entry* alike =
        plain_memo_->Recall(*node.op, node.attributes, input_types_, outputs);
    if (alike == nullptr) return Typing::kInferAndLearn;
    for (const schema::InputFact& fact : alike->facts) {
      if (!FoundAsBefore(inputs[fact.input], fact)) return Typing::kInfer;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].empty()) continue;
      absl::string_view key = parsed != nullptr ? absl::string_view(parsed->output(i)) : outputs[i];
      if (live_->types.emplace(key, alike->types[i]).second) {
        recent_values_[next_recent_value_++ % recent_values_.size()] = {outputs[i],
                                                                         alike->types[i]};
      }
    }
    return Typing::kAlike;
  }

  // The type of value `name` if a plain node typed it last, else null.
  const onnx::TypeProto* RecentValue(absl::string_view name) const {
    for (const auto& [value, type] : recent_values_) {
      if (value == name) return type;
    }
    return nullptr;
  }

  // Whether the values of inputs an inference rule asked for, as `facts`
  // hold them, outlive the window: unknown, or initializers'.
  bool AllLasting(absl::Span<const schema::InputFact> facts) const {
    return std::all_of(facts.begin(), facts.end(), [this](const schema::InputFact& fact) {
      return fact.shape_data == nullptr &&
             (fact.constant == nullptr || initializer_tensors_.contains(fact.constant));
    });
  }

  // Whether what is known of the value of `input` is what `fact` found.
  bool FoundAsBefore(absl::string_view input, const schema::InputFact& fact) const {
    const schema::ValueFacts* known = nullptr;
    if (!input.empty() && !live_->facts.empty()) {
      auto it = live_->facts.find(input);
      if (it != live_->facts.end()) known = &it->second;
    }
    return (known != nullptr ? known->constant : nullptr) == fact.constant &&
           (known != nullptr ? known->shape_data : nullptr) == fact.shape_data;
  }

  // Counts a node of `op` passed through unparsed, the window's node
  // `position`.
  void CountPassed(const schema::OpSchema& op, int position) {
    for (auto it = unparsed_counts_.rbegin(); it != unparsed_counts_.rend(); ++it) {
      if (it->op == &op) {
        ++it->count;
        return;
      }
    }
    unparsed_counts_.push_back({&op, 1, position});
  }

  // The nodes of ai.onnx op `op` passed through unparsed in the window, for
  // RunStep.
  UnindexedNodes UnparsedOf(absl::string_view op) const {
    for (const UnparsedCount& unparsed : unparsed_counts_) {
      if (unparsed.op->name != op) continue;
      auto within = subgraph_ops_.find(op);
      return {unparsed.count, within == subgraph_ops_.end() || unparsed.first < within->second};
    }
    return {};
  }

  // Whether every one of `inputs` may be a constant (an initializer, a
  // carried constant, or a value of the window that may be one): a node
  // reading them may fold.
  bool AllMayBeConstants(absl::Span<const absl::string_view> inputs) const {
    for (absl::string_view input : inputs) {
      if (input.empty()) continue;
      if (!maybe_constant_.empty() && maybe_constant_.contains(input)) continue;
      if (!carried_constants_.empty() && carried_constants_.contains(input)) continue;
      if (initializer_lengths_.MayHold(input) && initializer_names_.contains(input)) continue;
      return false;
    }
    return true;
  }

  // Notes the outputs of a window's parsed node, a Constant or not, that
  // may be constants: those of a node whose inputs all may be.
  void NoteConstness(bool constant, const google::protobuf::RepeatedPtrField<std::string>& inputs,
                     const google::protobuf::RepeatedPtrField<std::string>& outputs) {
    if (!constant) {
      for (const std::string& input : inputs) {
        if (!AllMayBeConstants({absl::string_view(input)})) return;
      }
    }
    for (const std::string& output : outputs) maybe_constant_.insert(output);
  }

  absl::Status RunWindowStep(size_t s, ir::OpIndex& index, ir::NodeEdits& edits,
                             StepTouches& touches, ir::Retired& retired) {
    auto start = std::chrono::steady_clock::now();
    StepParts& parts = steps_[s];
    int64_t from = parts.report.from_opset;
    int64_t to = parts.report.to_opset;
    if (options_.should_stop && options_.should_stop()) return Stopped("", from, to);
    StepContext context{index, *types_, *names_, edits, touches, constants_, added_, "", from, to,
                        false, options_.expand_functions, !options_.no_casts,
                        options_.should_stop};
    context.step_rank = static_cast<int64_t>(s);
    context.whole_graphs = false;
    context.node_as_read = [this](const onnx::NodeProto& node) { return NodeAsRead(node); };
    context.texts_full = [&parts](int64_t rank) { return parts.TextsFull(rank); };
    context.unindexed_nodes = [this](absl::string_view op) { return UnparsedOf(op); };
    order_ = &context.order;
    absl::StatusOr<StepReport> step = RunStep(context);
    order_ = &no_order_;
    if (!step.ok()) return Windowless(step.status());
    StepChanges changes = ApplyStep(*step, touches, edits, index, retired, constants_, graph_);
    for (const onnx::TensorProto* tensor : changes.added) added_names_.push_back(tensor);
    SetImportedOpset(*window_.mutable_opset_import(), "", to);
    if (with_functions_) {
      for (auto& function : *window_.mutable_functions()) {
        SetImportedOpset(*function.mutable_opset_import(), "", to);
      }
    }
    if (!step->nodes.empty() || !step->bumps.empty()) {
      absl::Status valid = ValidateStep(window_, changes, options_, index, *types_,
                                        *incremental_, *step, /*whole_model_allowed=*/false);
      if (!valid.ok()) return Windowless(valid);
    }
    step->milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    parts.Merge(*step);
    return absl::OkStatus();
  }

  // The fields of the window's `node` as read, while no step touched it;
  // else empty (and for a node with subgraphs, which a step may have
  // changed within).
  absl::string_view NodeAsRead(const onnx::NodeProto& node) const {
    if (touched_.contains(&node) || captures_.contains(&node)) return {};
    auto original = originals_.find(&node);
    if (original == originals_.end()) return {};
    wire::FieldReader reader(original->second);
    wire::Field field;
    bool found;
    if (!reader.Next(field, found).ok() || !found) return {};
    return field.payload;
  }

  // `status` as it ends the windowed conversion: stopping stays stopping;
  // any other failure leaves it to the whole conversion to say.
  static absl::Status Windowless(const absl::Status& status) {
    if (status.code() == absl::StatusCode::kCancelled) return status;
    return NotWindowed(status.message());
  }

  // Writes the window's nodes: those no step touched as they came (runs of
  // them as they lie in the model), the others encoded anew.
  absl::Status Emit() {
    size_t passed = 0;
    for (const onnx::NodeProto& node : graph_->node()) {
      if (passed < passed_.size() && passed_[passed].first == &node) {
        OC_RETURN_IF_ERROR(writer_.AddAsRead(passed_[passed++].second));
        continue;
      }
      auto original = originals_.find(&node);
      if (original != originals_.end() && !touched_.contains(&node) && !dirty_.contains(&node)) {
        OC_RETURN_IF_ERROR(writer_.AddAsRead(original->second));
      } else {
        OC_RETURN_IF_ERROR(writer_.AddEncoded(node));
      }
    }
    return absl::OkStatus();
  }

  // Forgets what later windows will not read: the types of values used for
  // the last time, and of values the steps made up around the window's
  // nodes; keeps the rest in storage of its own (the window's nodes and
  // inference arenas are freed).
  void ForgetWindow() {
    for (const onnx::NodeProto& node : graph_->node()) {
      for (const std::string& output : node.output()) {
        if (!output.empty() && !defined_.contains(output)) Evict(output);
      }
    }
    // (Most windows carry no constant and few names: the sets are looked
    // into only when they hold some.)
    for (absl::string_view name : dying_unparsed_) {
      if (!defined_.empty()) defined_.erase(name);
      Evict(name);
    }
    for (absl::string_view name : dying_) {
      // Defined here, it is neither graph-level nor carried.
      if (!defined_.empty() && defined_.erase(name) > 0) {
        Evict(name);
        continue;
      }
      if (graph_level_lengths_.MayHold(name) && graph_level_.contains(name)) continue;
      // Evicted first: the tables' keys may be the carried names.
      Evict(name);
      if (!carried_constants_.empty()) carried_constants_.erase(name);
      if (!carried_names_.empty()) carried_names_.erase(name);
    }
    for (const onnx::NodeProto& node : graph_->node()) {
      if (node.op_type() == "Constant" && node.output_size() == 1 &&
          defined_.contains(node.output(0))) {
        CarryConstant(node);
      }
    }
    for (absl::string_view name : defined_) Keep(name);
    for (const onnx::TensorProto* tensor : added_names_) {
      auto it = live_->types.find(tensor->name());
      if (it != live_->types.end()) it->second = Persist(*it->second);
    }
    // The subgraphs go with their nodes.
    for (const onnx::GraphProto* graph : subgraphs_) {
      result_->graphs.erase(graph);
      added_.ForgetGraph(graph);
    }
    subgraphs_.clear();
    result_->kept_arenas.clear();
    result_->kept_constants.clear();
    dying_.clear();
    dying_unparsed_.clear();
    defined_.clear();
    added_names_.clear();
  }

  // Frees what the windows kept for the next (the cleared nodes a node list
  // keeps to reuse, the scratch tables' room), so that the report, unpacked
  // next, takes that memory rather than more.
  void ReleaseWindow() {
    google::protobuf::RepeatedPtrField<onnx::NodeProto>().Swap(graph_->mutable_node());
    decltype(originals_)().swap(originals_);
    decltype(touched_)().swap(touched_);
    decltype(captures_)().swap(captures_);
    decltype(inner_owners_)().swap(inner_owners_);
    decltype(dirty_)().swap(dirty_);
    decltype(defined_)().swap(defined_);
    decltype(wire_nodes_)().swap(wire_nodes_);
    decltype(wire_names_)().swap(wire_names_);
    decltype(wire_node_of_)().swap(wire_node_of_);
    decltype(passed_)().swap(passed_);
    decltype(maybe_constant_)().swap(maybe_constant_);
    writer_.Release();
  }

  void Evict(absl::string_view name) {
    live_->types.erase(name);
    if (!live_->facts.empty()) live_->facts.erase(name);
  }

  const onnx::TypeProto* Persist(const onnx::TypeProto& type) {
    auto* copy = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(result_->arena.get());
    *copy = type;
    return copy;
  }

  // Keys the type and facts of `name` anew, by a name and in storage that
  // outlive the window.
  void Keep(absl::string_view name) {
    auto type = live_->types.find(name);
    if (type == live_->types.end()) return;
    absl::string_view key = *carried_names_.insert(std::string(name)).first;
    const onnx::TypeProto* kept = Persist(*type->second);
    live_->types.erase(type);
    live_->types.emplace(key, kept);
    auto facts = live_->facts.find(name);
    if (facts == live_->facts.end()) return;
    schema::ValueFacts value = facts->second;
    if (value.constant != nullptr) {
      value.constant = &carried_facts_.emplace_back(*value.constant);
    }
    if (value.shape_data != nullptr) {
      auto* data = google::protobuf::Arena::CreateMessage<onnx::TensorShapeProto>(
          result_->arena.get());
      *data = *value.shape_data;
      value.shape_data = data;
    }
    live_->facts.erase(facts);
    live_->facts.emplace(key, value);
  }

  // Keeps the value of Constant `node` for the adapters of later windows.
  void CarryConstant(const onnx::NodeProto& node) {
    std::deque<onnx::TensorProto> owned;
    if (const onnx::TensorProto* value = ConstantNodeValue(node, owned)) {
      carried_constants_[node.output(0)] = *value;
    }
  }

  absl::Status Finish() {
    OC_RETURN_IF_ERROR(writer_.Flush());
    for (const auto& output : graph_->output()) {
      if (!live_->types.contains(output.name())) {
        return NotWindowed(absl::StrCat("graph output '", output.name(), "' is not defined"));
      }
    }
    // The constants the steps added, in the order a whole conversion adds
    // them.
    auto* initializers = graph_->mutable_initializer();
    if (initializers->size() > original_initializers_ &&
        TargetIrVersion(options_, report_.source_ir_version, report_.target_opset) < 4) {
      return NotWindowed("constants added below IR version 4 are listed as graph inputs too");
    }
    std::vector<onnx::TensorProto> added;
    for (int i = original_initializers_; i < initializers->size(); ++i) {
      added.push_back(std::move(*initializers->Mutable(i)));
    }
    std::stable_sort(added.begin(), added.end(),
                     [this](const onnx::TensorProto& a, const onnx::TensorProto& b) {
                       return added_.OrderOf(a.name()) < added_.OrderOf(b.name());
                     });
    initializers->DeleteSubrange(original_initializers_,
                                 initializers->size() - original_initializers_);
    for (onnx::TensorProto& tensor : added) *initializers->Add() = std::move(tensor);
    int64_t ir = TargetIrVersion(options_, report_.source_ir_version, report_.target_opset);
    window_.set_ir_version(ir);
    report_.target_ir_version = ir;
    for (const auto& [op, count] : untouched_ops_) report_.untouched_ops.emplace_back(op, count);
    ReleaseWindow();
    for (StepParts& parts : steps_) AddStep(std::move(parts).Done(), report_);
    // (ReleaseWindow left the graph without nodes.)
    return FinishAroundNodes(window_, initializer_bytes_, out_);
  }

  absl::string_view bytes_;
  const ConvertOptions& options_;
  const WindowOptions& windows_;
  ModelSink& out_;

  // The model without its main graph's nodes; the nodes of one window at a
  // time.
  onnx::ModelProto window_;
  onnx::GraphProto* graph_ = nullptr;
  absl::string_view graph_payload_;
  // Where every kCheckpointNodes-th node starts in graph_payload_, until
  // WalkNames is done.
  std::vector<uint32_t> checkpoints_;
  int64_t node_count_ = 0;
  int original_initializers_ = 0;
  // Per original initializer: its field as it came when it was read as a
  // header, else empty; and the names of those read as headers.
  std::vector<absl::string_view> initializer_bytes_;
  // The sizes of the data of those read as headers.
  std::vector<schema::TensorDataSizes> initializer_sizes_;
  absl::flat_hash_set<std::string> headers_only_;
  std::optional<wire::FieldReader> forward_;
  // Per node input, then per output in reverse, from the last node to the
  // first (read from the back): the last use of a value, an unused output.
  std::vector<bool> uses_;
  absl::flat_hash_set<std::string> graph_level_;  // inputs and initializers
  NameLengths graph_level_lengths_;
  absl::flat_hash_set<std::string> initializer_names_;
  NameLengths initializer_lengths_, declared_lengths_;
  absl::flat_hash_set<const onnx::TensorProto*> initializer_tensors_;
  // The model's functions (OpKey of domain and name), and whether the
  // window converts their bodies (the last does).
  absl::flat_hash_set<std::string> local_functions_;
  bool with_functions_ = false;
  // How many nodes of each op of other domains the windows left as they are
  // (calls of the functions, say), as the report lists them.
  std::map<std::string, int> untouched_ops_;
  // The ai.onnx ops read so far, as the windows take them.
  std::optional<WindowOps> ops_;
  // What the check and inference of nodes alike found, for good.
  std::optional<PlainNodeMemo> plain_memo_;

  std::optional<NameGenerator> names_;
  std::optional<TypeTable> types_;
  schema::InferenceResult* result_ = nullptr;
  schema::GraphTypes* live_ = nullptr;  // the main graph's types
  std::optional<schema::NodeChecker> checker_;
  std::optional<IncrementalValidator> incremental_;
  ConstantTable constants_;
  AddedConstants added_;
  Track track_;
  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> source_imports_;
  std::vector<StepParts> steps_;
  ConversionReport report_;

  // Names and values kept across windows.
  absl::node_hash_set<std::string> carried_names_;
  absl::flat_hash_map<std::string, onnx::TensorProto> carried_constants_;
  std::deque<onnx::TensorProto> carried_facts_;

  // The order of the work RunStep is doing, and the latest order each
  // fresh-name prefix was used at.
  int64_t no_order_ = 0;
  const int64_t* order_ = &no_order_;
  absl::flat_hash_map<std::string, int64_t> prefix_orders_;
  bool out_of_order_ = false;

  // The window's.
  absl::flat_hash_map<const onnx::NodeProto*, absl::string_view> originals_;
  absl::flat_hash_set<const onnx::NodeProto*> touched_;
  // The window's nodes with subgraphs: what their subgraphs read from the
  // main graph (views of the model's bytes); the nodes within the subgraphs,
  // by the window's node holding them, and the subgraphs; the window's
  // nodes holding a node some step touched.
  absl::flat_hash_map<const onnx::NodeProto*, std::vector<absl::string_view>> captures_;
  absl::flat_hash_map<const onnx::NodeProto*, const onnx::NodeProto*> inner_owners_;
  std::vector<const onnx::GraphProto*> subgraphs_;
  absl::flat_hash_set<const onnx::NodeProto*> dirty_;
  // Values last used, or never used, here; values the window's parsed
  // nodes define as they came (views of the model's bytes).
  std::vector<absl::string_view> dying_;
  // Outputs of nodes left unparsed used for the last time, or never, here.
  std::vector<absl::string_view> dying_unparsed_;
  absl::flat_hash_set<absl::string_view> defined_;
  NodeNames scanned_;  // scratch
  // The window's plain nodes (see WindowOps::Read), parsed or each standing as an
  // empty node: their fields as read, by the index of their node (-1: a
  // node not plain).
  std::vector<WireNode> wire_nodes_;
  std::vector<absl::string_view> wire_names_;
  std::vector<int32_t> wire_node_of_;
  // Of the unparsed nodes whose outputs were typed, how many per op, and
  // the position of the first in the window.
  struct UnparsedCount {
    const schema::OpSchema* op;
    int64_t count;
    int first;
  };
  std::vector<UnparsedCount> unparsed_counts_;
  // The ai.onnx ops of the window's subgraph nodes, by the position of the
  // first window node holding one.
  absl::flat_hash_map<absl::string_view, int> subgraph_ops_;
  // The nodes passed through unparsed, in order, with their fields as read.
  std::vector<std::pair<const onnx::NodeProto*, absl::string_view>> passed_;
  // The window's values that may be constants (views of its parsed nodes).
  absl::flat_hash_set<absl::string_view> maybe_constant_;
  PlainNode plain_;  // scratch
  std::vector<const onnx::TypeProto*> input_types_, output_types_;  // scratch
  // The values the window's plain nodes typed last (views of the model's
  // bytes), with their types: a node mostly reads what the one before it
  // wrote, found here without a lookup.
  std::array<std::pair<absl::string_view, const onnx::TypeProto*>, 4> recent_values_{};
  size_t next_recent_value_ = 0;
  std::vector<const onnx::TensorProto*> added_names_;
  NodeFieldWriter writer_{out_};
  // Gives the memory the windows free back to the system as they go.
  PeriodicHeapTrimmer heap_;
};

}  // namespace

absl::StatusOr<ConversionReport> ConvertWindowed(absl::string_view bytes,
                                                 const ConvertOptions& options, ModelSink& out,
                                                 const WindowOptions& windows) {
  return WindowedConversion(bytes, options, windows, out).Run();
}

}  // namespace onnxconvert::converter
