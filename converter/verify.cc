#include "converter/verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/op_key.h"
#include "base/status_macros.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "schema/registry.h"

namespace onnxconvert::converter {
namespace {

// The seed of random verification inputs: the same sets everywhere.
constexpr uint64_t kVerifySeed = 0x5eed;
// The extents symbolic dims are tried at in the first random set and in
// the others, in order: the next is taken when the original refuses the
// inputs (an image smaller than a pooling window, ...). Dims found only on
// the first axis of inputs stay at the first extent.
constexpr int64_t kFirstSetExtents[] = {1, 3, 16, 64, 256};
constexpr int64_t kOtherSetExtents[] = {3, 16, 64, 256};
// Most sets options.verify may ask for.
constexpr int kMaxVerifySets = 64;

// The symbolic dims of the fed inputs of `graph`: at `extent` those found
// past the first axis of an input, at `leading` those found only first (a
// batch: a larger one costs time and lets no more inputs through).
absl::flat_hash_map<std::string, int64_t> SymbolicDims(const onnx::GraphProto& graph,
                                                       int64_t leading, int64_t extent) {
  absl::flat_hash_map<std::string, int64_t> dims;
  for (const onnx::ValueInfoProto* input : eval::FedInputs(graph)) {
    if (!input->type().has_tensor_type()) continue;
    const auto& shape = input->type().tensor_type().shape();
    for (int axis = 0; axis < shape.dim_size(); ++axis) {
      const std::string& name = shape.dim(axis).dim_param();
      if (name.empty()) continue;
      int64_t& at = dims.try_emplace(name, leading).first->second;
      if (axis > 0) at = extent;
    }
  }
  return dims;
}

// Random set `index` for `graph` with symbolic dims at `extent`.
absl::StatusOr<VerifyInputSet> RandomSet(const onnx::GraphProto& graph, int index,
                                         int64_t leading, int64_t extent,
                                         bool has_symbolic_dims) {
  std::mt19937_64 rng(kVerifySeed + static_cast<uint64_t>(index));
  eval::RandomInputOptions options;
  options.dims = SymbolicDims(graph, std::min(extent, leading), extent);
  OC_ASSIGN_OR_RETURN(std::vector<eval::NamedValue> inputs,
                      eval::RandomInputs(graph, options, rng));
  std::string name = absl::StrCat("random set ", index);
  if (has_symbolic_dims && leading < extent) {
    absl::StrAppend(&name, " (symbolic dims ", extent, ", leading ", leading, ")");
  } else if (has_symbolic_dims) {
    absl::StrAppend(&name, " (symbolic dims ", extent, ")");
  }
  return VerifyInputSet{std::move(name), std::move(inputs)};
}

// The input sets of the test_data_set_* folders of `dir`.
absl::StatusOr<std::vector<VerifyInputSet>> LoadedSets(const onnx::GraphProto& graph,
                                                       const std::string& dir) {
  absl::StatusOr<std::vector<eval::DataSet>> listed = eval::ListDataSets(dir);
  if (!listed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--verify-inputs '", dir, "': ", listed.status().message()));
  }
  std::vector<VerifyInputSet> sets;
  for (const eval::DataSet& set : *listed) {
    absl::StatusOr<std::vector<eval::NamedValue>> inputs = eval::LoadInputs(set, graph);
    if (!inputs.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("verification inputs '", set.dir,
                                                     "': ", inputs.status().message()));
    }
    sets.push_back({set.name.empty() ? set.dir : set.name, *std::move(inputs)});
  }
  return sets;
}

// Why an evaluation error means "not verified": "no kernel for Foo-3: ...".
std::string SkipReason(absl::string_view what, const absl::Status& status) {
  std::optional<std::string> op = eval::FailedOp(status);
  if (status.code() == absl::StatusCode::kUnimplemented && op) {
    return absl::StrCat(what, ": no kernel for ", *op, " (", status.message(), ")");
  }
  return absl::StrCat(what, ": ", status.message());
}

// While alive, `model`'s main graph also outputs every value its nodes
// compute, so that they can be recorded by name; the added outputs go when
// it ends, leaving the model as it was (no copy of its weights is made).
// Constant nodes' values are not outputs: they are taken from the prepared
// model once its runs are done (eval::PreparedModel::TakeConstants).
class ExposedIntermediates {
 public:
  explicit ExposedIntermediates(onnx::ModelProto& model)
      : graph_(*model.mutable_graph()), declared_(graph_.output_size()) {
    absl::flat_hash_set<std::string> outputs;
    for (const onnx::ValueInfoProto& output : graph_.output()) outputs.insert(output.name());
    for (const onnx::NodeProto& node : graph_.node()) {
      if (node.op_type() == "Constant" &&
          CanonicalDomain(node.domain()).empty()) {
        continue;
      }
      for (const std::string& name : node.output()) {
        if (!name.empty() && outputs.insert(name).second) graph_.add_output()->set_name(name);
      }
    }
  }
  ~ExposedIntermediates() {
    graph_.mutable_output()->DeleteSubrange(declared_, graph_.output_size() - declared_);
  }
  ExposedIntermediates(const ExposedIntermediates&) = delete;
  ExposedIntermediates& operator=(const ExposedIntermediates&) = delete;

 private:
  onnx::GraphProto& graph_;
  int declared_;
};

// " max abs 0.5, rel 0.5" from a failed comparison.
std::string ErrorText(const eval::Comparison& comparison) {
  if (!comparison.mismatch.empty()) return absl::StrCat(" (", comparison.mismatch, ")");
  if (!comparison.worst) return "";
  return absl::StrFormat(": max abs error %g, rel %g (at %s: expected %s, got %s)",
                         comparison.worst->abs_error, comparison.worst->rel_error,
                         comparison.worst->index, comparison.worst->expected,
                         comparison.worst->actual);
}

// Whether two tensors hold the same elements to the bit: most values a
// step recomputes, compared without a pass in double.
bool SameBits(const eval::Value& a, const eval::Value& b) {
  if (!a.is_tensor() || !b.is_tensor()) return false;
  const eval::Tensor& x = a.tensor();
  const eval::Tensor& y = b.tensor();
  if (x.elem_type() != y.elem_type() || x.dims() != y.dims()) return false;
  if (x.elem_type() == onnx::TensorProto::STRING) return x.strings() == y.strings();
  bool same = false;
  bool held = eval::VisitElementType(x.elem_type(), [&](auto v) {
    using T = decltype(v);
    same = std::memcmp(x.data<T>().data(), y.data<T>().data(), sizeof(T) * x.size()) == 0;
  });
  return held && same;
}

// Whether a comparison found the values the same to the bit (NaN as NaN).
bool Identical(const eval::Comparison& comparison) {
  return comparison.ok && comparison.mismatch.empty() &&
         (!comparison.worst || comparison.worst->abs_error == 0);
}

// How many times the original's own change, when the values a conversion
// computes differently move by the differences their steps showed, an
// end-to-end error may be and still be taken for amplified rounding.
constexpr double kSensitivityFactor = 2;

// `value` with every float and double element moved by `delta` (at least
// one ulp), all up or all down: a bias as large as the difference a step
// was allowed.
eval::Value Shifted(const eval::Value& value, double delta, bool up) {
  eval::Value moved = value;
  if (!moved.is_tensor()) return moved;
  eval::Tensor& tensor = moved.tensor();
  auto move = [delta, up](auto span) {
    using T = typename decltype(span)::value_type;
    T toward = up ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    for (T& element : span) {
      if (!std::isfinite(element)) continue;
      T shifted = static_cast<T>(up ? element + delta : element - delta);
      element = shifted == element ? std::nextafter(element, toward) : shifted;
    }
  };
  if (tensor.elem_type() == onnx::TensorProto::FLOAT) move(tensor.data<float>());
  if (tensor.elem_type() == onnx::TensorProto::DOUBLE) move(tensor.data<double>());
  return moved;
}

// The largest errors seen so far.
struct Errors {
  double abs = 0;
  double rel = 0;

  void Add(const eval::Comparison& comparison) {
    if (!comparison.worst) return;
    abs = std::max(abs, comparison.worst->abs_error);
    if (std::isfinite(comparison.worst->rel_error)) rel = std::max(rel, comparison.worst->rel_error);
  }
};

// The change of `step` that converted the node named `node`, or null.
const NodeChange* ChangeOf(const StepReport& step, absl::string_view node) {
  if (node.empty()) return nullptr;
  for (const NodeChange& change : step.nodes) {
    if (change.graph != "main") continue;
    if (change.node == node) return &change;
    for (absl::string_view alike : change.alike) {
      if (alike == node) return &change;
    }
  }
  return nullptr;
}

// The change of `step` to an unnamed main-graph node of `op`, or null.
const NodeChange* UnnamedChangeOf(const StepReport& step, absl::string_view op) {
  for (const NodeChange& change : step.nodes) {
    if (change.graph == "main" && change.node.empty() && change.op == op) return &change;
  }
  return nullptr;
}

// Adds to `names` what `graph` uses without defining it: for a subgraph,
// the values it takes from the scopes around it.
void AddFreeNames(const onnx::GraphProto& graph, absl::flat_hash_set<std::string>& names) {
  absl::flat_hash_set<absl::string_view> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const auto& tensor : graph.sparse_initializer()) defined.insert(tensor.values().name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && !defined.contains(input)) names.insert(input);
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      absl::flat_hash_set<std::string> inner;
      if (attribute.has_g()) AddFreeNames(attribute.g(), inner);
      for (const onnx::GraphProto& g : attribute.graphs()) AddFreeNames(g, inner);
      for (const std::string& name : inner) {
        if (!defined.contains(name)) names.insert(name);
      }
    }
    for (const std::string& output : node.output()) defined.insert(output);
  }
}

// The values `node` reads: its inputs and what its subgraphs take from
// outside them.
std::vector<std::string> NodeUses(const onnx::NodeProto& node) {
  std::vector<std::string> uses;
  for (const std::string& input : node.input()) {
    if (!input.empty()) uses.push_back(input);
  }
  absl::flat_hash_set<std::string> free;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g()) AddFreeNames(attribute.g(), free);
    for (const onnx::GraphProto& g : attribute.graphs()) AddFreeNames(g, free);
  }
  uses.insert(uses.end(), free.begin(), free.end());
  return uses;
}

std::string Serialized(const google::protobuf::MessageLite& message) {
  std::string bytes;
  message.SerializeToString(&bytes);
  return bytes;
}

std::string FunctionId(absl::string_view domain, absl::string_view name) {
  return OpKey(CanonicalDomain(domain), name);
}

// Whether `node` holds subgraphs.
bool HasSubgraphs(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0) return true;
  }
  return false;
}

// `node` serialized into `out` (replacing what it held, its capacity kept)
// without the bodies of its subgraphs (a change inside them shows in the
// step report's graph paths instead): a node of the main graph as a step
// may leave it.
void PrintInto(const onnx::NodeProto& node, std::string& out) {
  out.clear();
  if (!HasSubgraphs(node)) {
    node.AppendToString(&out);
    return;
  }
  onnx::NodeProto shallow;
  shallow.set_name(node.name());
  shallow.set_op_type(node.op_type());
  shallow.set_domain(node.domain());
  *shallow.mutable_input() = node.input();
  *shallow.mutable_output() = node.output();
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0) {
      shallow.add_attribute()->set_name(attribute.name());
    } else {
      *shallow.add_attribute() = attribute;
    }
  }
  shallow.AppendToString(&out);
}

// The main-graph node, as OpKey(name, op), a report's graph path lies under:
// "main/then_branch of 'if' (If)/..." gives OpKey("if", "If"); "" for "main".
std::string OwnerInMain(absl::string_view path) {
  if (!absl::ConsumePrefix(&path, "main/")) return "";
  path = path.substr(0, path.find('/'));
  size_t name_start = path.find(" of '");
  size_t name_end = path.rfind("' (");
  if (name_start == absl::string_view::npos || name_end == absl::string_view::npos ||
      name_end < name_start + 5 || !absl::EndsWith(path, ")")) {
    return "";
  }
  absl::string_view name = path.substr(name_start + 5, name_end - name_start - 5);
  absl::string_view op = path.substr(name_end + 3, path.size() - name_end - 4);
  return OpKey(name, op);
}

// Serialized functions of `model`, by FunctionId.
absl::flat_hash_map<std::string, std::string> FunctionPrints(const onnx::ModelProto& model) {
  absl::flat_hash_map<std::string, std::string> prints;
  for (const onnx::FunctionProto& function : model.functions()) {
    prints[FunctionId(function.domain(), function.name())] = Serialized(function);
  }
  return prints;
}

// A graph of some nodes of a model's main graph, able to run on their own:
// the values they read from other nodes and graph inputs are its inputs
// (fed from a set's recorded values), the initializers they read copied.
struct NodeSubset {
  onnx::GraphProto graph;
  std::vector<std::string> fed;  // its inputs, in order
  std::string unknown;           // a value read that no set records, or ""
};

// The graph of `nodes` of `model`'s main graph, in graph order, fed from
// the values `recorded` knows.
NodeSubset SubsetOf(const onnx::GraphProto& main, const std::vector<int>& nodes,
                    const std::function<bool(const std::string&)>& recorded) {
  NodeSubset subset;
  subset.graph.set_name(main.name());
  absl::flat_hash_set<std::string> produced;
  absl::flat_hash_set<std::string> read;
  absl::flat_hash_map<absl::string_view, const onnx::TensorProto*> initializers;
  for (const auto& tensor : main.initializer()) initializers[tensor.name()] = &tensor;
  for (int i : nodes) {
    const onnx::NodeProto& node = main.node(i);
    for (const std::string& name : NodeUses(node)) {
      if (produced.contains(name) || !read.insert(name).second) continue;
      if (recorded(name)) {
        subset.fed.push_back(name);
        subset.graph.add_input()->set_name(name);
      } else if (auto it = initializers.find(name); it != initializers.end()) {
        *subset.graph.add_initializer() = *it->second;
      } else if (subset.unknown.empty()) {
        subset.unknown = name;
      }
    }
    *subset.graph.add_node() = node;
    for (const std::string& output : node.output()) {
      if (output.empty()) continue;
      produced.insert(output);
      subset.graph.add_output()->set_name(output);
    }
  }
  // The values it is fed come back as outputs (RunSubset lends them).
  for (const std::string& name : subset.fed) subset.graph.add_output()->set_name(name);
  for (const auto& tensor : main.sparse_initializer()) {
    if (read.contains(tensor.values().name()) && !produced.contains(tensor.values().name()) &&
        !recorded(tensor.values().name())) {
      *subset.graph.add_sparse_initializer() = tensor;
      if (subset.unknown == tensor.values().name()) subset.unknown.clear();
    }
  }
  return subset;
}

// Runs `subset` of `model` on `values`, which lend it the values it is
// fed (moved in and back: the activations a step's nodes read are not
// copied). The result holds the outputs of the subset's nodes. When the run
// fails, the lent values are gone from `values`.
absl::StatusOr<eval::EvalResult> RunSubset(const onnx::ModelProto& model,
                                           const NodeSubset& subset,
                                           absl::flat_hash_map<std::string, eval::Value>& values) {
  std::vector<eval::NamedValue> inputs;
  inputs.reserve(subset.fed.size());
  for (const std::string& name : subset.fed) {
    auto lent = values.extract(name);
    inputs.push_back({name, std::move(lent.mapped())});
  }
  absl::StatusOr<eval::EvalResult> result = eval::EvaluateGraph(
      subset.graph, model.opset_import(), model.functions(), std::move(inputs));
  if (!result.ok()) return result;
  size_t own = result->outputs.size() - subset.fed.size();
  for (size_t i = own; i < result->outputs.size(); ++i) {
    values.insert_or_assign(result->outputs[i].name, std::move(result->outputs[i].value));
  }
  result->outputs.resize(own);
  return result;
}

// "node 'sub' (Sub; Sub 7 -> 6 by adapter '...'; replaces node 'old')".
std::string NodeText(const onnx::NodeProto& node, const StepReport& step,
                     absl::string_view original_node) {
  const NodeChange* change = ChangeOf(step, node.name());
  if (change == nullptr) change = ChangeOf(step, original_node);
  if (change == nullptr && node.name().empty()) change = UnnamedChangeOf(step, node.op_type());
  std::string versions =
      change == nullptr
          ? absl::StrCat(node.op_type(), " at opset ", step.to_opset)
          : absl::StrCat(change->op, " ", change->from_version, " -> ", change->to_version,
                         " by adapter '", change->adapter, "'");
  return absl::StrCat("node '", node.name(), "' (", node.op_type(), "; ", versions,
                      !original_node.empty() && original_node != node.name()
                          ? absl::StrCat("; replaces node '", original_node, "'")
                          : "",
                      ")");
}

}  // namespace

absl::Status ConversionVerifier::Record(eval::PreparedModel& exposed, VerifyInputSet set) {
  OC_ASSIGN_OR_RETURN(eval::EvalResult result, exposed.Evaluate(set.inputs));
  if (!result.deterministic) {
    return absl::FailedPreconditionError("the original has a non-deterministic op");
  }
  SetState& state = sets_.emplace_back();
  for (const eval::NamedValue& input : set.inputs) state.values.emplace(input.name, input.value);
  for (eval::NamedValue& output : result.outputs) {
    state.values.emplace(output.name, std::move(output.value));
  }
  state.set = std::move(set);
  return absl::OkStatus();
}

absl::Status ConversionVerifier::RecordRandomSet(const onnx::GraphProto& graph,
                                                 eval::PreparedModel& exposed, int index) {
  bool symbolic = !SymbolicDims(graph, 1, 1).empty();
  absl::Span<const int64_t> extents =
      index == 0 ? absl::Span<const int64_t>(kFirstSetExtents) : kOtherSetExtents;
  absl::Status first = absl::OkStatus();
  for (int64_t extent : extents) {
    absl::StatusOr<VerifyInputSet> set = RandomSet(graph, index, extents.front(), extent, symbolic);
    if (!set.ok()) {
      skipped_ = absl::StrCat("no random inputs: ", set.status().message());
      return absl::OkStatus();
    }
    absl::Status recorded = Record(exposed, *std::move(set));
    // Inputs the model refuses at these extents: the next may fit.
    if (recorded.code() == absl::StatusCode::kInvalidArgument && symbolic) {
      if (first.ok()) first = recorded;
      continue;
    }
    return recorded;
  }
  return first;
}

absl::StatusOr<std::unique_ptr<ConversionVerifier>> ConversionVerifier::Begin(
    onnx::ModelProto& original, const ConvertOptions& options) {
  if (options.verify > kMaxVerifySets || options.verify < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("verify takes a number of input sets from 1 to ", kMaxVerifySets));
  }
  std::unique_ptr<ConversionVerifier> verifier(new ConversionVerifier());
  for (const auto& output : original.graph().output()) {
    verifier->output_names_.push_back(output.name());
  }
  OC_RETURN_IF_ERROR(verifier->RecordSets(original, options));
  if (!verifier->skipped_.empty()) {
    verifier->sets_.clear();
    return verifier;
  }
  for (const onnx::NodeProto& node : original.graph().node()) {
    for (const std::string& output : node.output()) {
      verifier->original_producer_.emplace(output, node.name());
    }
  }
  verifier->functions_before_ = FunctionPrints(original);
  return verifier;
}

absl::Status ConversionVerifier::RecordSets(onnx::ModelProto& original,
                                            const ConvertOptions& options) {
  ExposedIntermediates exposing(original);
  eval::PreparedModel exposed(original);
  absl::Status recorded = absl::OkStatus();
  if (!options.verify_inputs.empty()) {
    OC_ASSIGN_OR_RETURN(std::vector<VerifyInputSet> sets,
                        LoadedSets(original.graph(), options.verify_inputs));
    for (VerifyInputSet& set : sets) {
      recorded = Record(exposed, std::move(set));
      if (!recorded.ok()) break;
    }
  } else {
    for (int i = 0; i < options.verify && recorded.ok() && skipped_.empty(); ++i) {
      recorded = RecordRandomSet(original.graph(), exposed, i);
    }
  }
  if (!recorded.ok()) {
    skipped_ = recorded.code() == absl::StatusCode::kFailedPrecondition
                   ? std::string(recorded.message())
                   : SkipReason("the original cannot be evaluated", recorded);
    return absl::OkStatus();
  }
  RecordConstants(exposed);
  NoteNodes(original, exposed);
  return absl::OkStatus();
}

void ConversionVerifier::RecordConstants(eval::PreparedModel& exposed) {
  std::vector<eval::NamedValue> constants = exposed.TakeConstants();
  for (size_t k = 0; k < sets_.size(); ++k) {
    const bool last = k + 1 == sets_.size();
    for (eval::NamedValue& constant : constants) {
      if (last) {
        sets_[k].values.emplace(constant.name, std::move(constant.value));
      } else {
        sets_[k].values.emplace(constant.name, constant.value);
      }
    }
  }
}

void ConversionVerifier::NoteNodes(const onnx::ModelProto& original,
                                   const eval::PreparedModel& exposed) {
  for (const onnx::OperatorSetIdProto& opset : original.opset_import()) {
    original_opsets_[CanonicalDomain(opset.domain())] = opset.version();
  }
  const onnx::GraphProto& main = original.graph();
  for (int i = 0; i < main.node_size(); ++i) {
    SeenNode& seen = nodes_before_[&main.node(i)];
    PrintInto(main.node(i), seen.print);
    seen.version_blind = exposed.RanVersionBlind(i);
  }
}

bool ConversionVerifier::ComputesAsOriginal(const onnx::NodeProto& node,
                                            const StepReport& step) const {
  auto opset = original_opsets_.find(step.domain);
  if (opset == original_opsets_.end()) return false;
  const schema::Registry& registry = schema::Registry::Get();
  const schema::OpSchema* before = registry.Lookup(step.domain, node.op_type(), opset->second);
  const schema::OpSchema* after = registry.Lookup(step.domain, node.op_type(), step.to_opset);
  return before != nullptr && after != nullptr &&
         eval::SameOpAtVersions(step.domain, node.op_type(), before->since_version,
                                after->since_version);
}

absl::Status ConversionVerifier::AfterStep(const onnx::ModelProto& model, StepReport& step) {
  if (!skipped_.empty()) return absl::OkStatus();
  const onnx::GraphProto& main = model.graph();
  StepVerification& verification = step.verification.emplace();
  // A step that changed and rebound nothing left every node as it was.
  if (step.nodes.empty() && step.bumps.empty()) return absl::OkStatus();

  // The nodes the step changed, added or rebound: those not found alike
  // before it, those of an op it rebound, those calling a function it
  // changed.
  absl::flat_hash_set<absl::string_view> rebound_ops;
  absl::flat_hash_set<std::string> changed_inside;  // main nodes whose subgraphs the step changed
  for (const VersionBump& bump : step.bumps) {
    if (bump.graph == "main") rebound_ops.insert(bump.op);
    changed_inside.insert(OwnerInMain(bump.graph));
  }
  for (const NodeChange& change : step.nodes) changed_inside.insert(OwnerInMain(change.graph));
  changed_inside.erase("");
  absl::flat_hash_set<absl::string_view> changed_names;  // main nodes the report names
  for (const NodeChange& change : step.nodes) {
    if (change.graph != "main") continue;
    if (!change.node.empty()) changed_names.insert(change.node);
    for (absl::string_view alike : change.alike) {
      if (!alike.empty()) changed_names.insert(alike);
    }
  }
  absl::flat_hash_map<std::string, std::string> functions = FunctionPrints(model);
  absl::flat_hash_set<std::string> changed_functions;
  for (const auto& [id, print] : functions) {
    auto before = functions_before_.find(id);
    if (before == functions_before_.end() || before->second != print) changed_functions.insert(id);
  }
  std::vector<int> touched;
  absl::flat_hash_map<const onnx::NodeProto*, SeenNode> seen;
  seen.reserve(main.node_size());
  std::string print;
  for (int i = 0; i < main.node_size(); ++i) {
    const onnx::NodeProto& node = main.node(i);
    PrintInto(node, print);
    auto before = nodes_before_.find(&node);
    bool same = before != nodes_before_.end() && before->second.print == print;
    SeenNode now = same ? std::move(before->second) : SeenNode{print, false};
    bool function_changed = !changed_functions.empty() &&
                            changed_functions.contains(FunctionId(node.domain(), node.op_type()));
    bool rebound = CanonicalDomain(node.domain()) == step.domain &&
                   rebound_ops.contains(node.op_type());
    bool inside = HasSubgraphs(node) &&
                  changed_inside.contains(OpKey(node.name(), node.op_type()));
    bool changed = !same || inside || function_changed || changed_names.contains(node.name());
    if (changed || (rebound && !(now.version_blind && ComputesAsOriginal(node, step)))) {
      touched.push_back(i);
    } else if (rebound) {
      ++verification.rebound_alike;
    }
    seen.emplace(&node, std::move(now));
  }
  nodes_before_ = std::move(seen);
  functions_before_ = std::move(functions);
  verification.nodes = static_cast<int>(touched.size());

  // Per set, the touched nodes' outputs whose values are not the recorded
  // ones to the bit.
  std::vector<absl::flat_hash_set<std::string>> differs(sets_.size());
  auto settle = [&] {
    for (size_t k = 0; k < sets_.size(); ++k) Settle(main, differs[k], sets_[k]);
  };
  if (touched.empty()) return settle(), absl::OkStatus();
  auto skip = [&](std::string why) {
    verification.skipped = std::move(why);
    for (size_t k = 0; k < sets_.size(); ++k) {
      for (int i : touched) {
        for (const std::string& output : main.node(i).output()) differs[k].insert(output);
      }
    }
    settle();
    return absl::OkStatus();
  };
  for (int i : touched) {
    if (!eval::IsDeterministic(main.node(i).domain(), main.node(i).op_type())) {
      return skip(absl::StrCat("node '", main.node(i).name(), "' (", main.node(i).op_type(),
                               ") is not deterministic"));
    }
  }
  const auto& first = sets_.front().values;
  NodeSubset subset =
      SubsetOf(main, touched, [&](const std::string& name) { return first.contains(name); });
  if (!subset.unknown.empty()) {
    return skip(absl::StrCat("the value '", subset.unknown,
                             "' is not known (a step before could not be verified)"));
  }
  absl::flat_hash_map<absl::string_view, int> producer;  // output name -> node index
  for (int i : touched) {
    for (const std::string& output : main.node(i).output()) producer[output] = i;
  }
  Errors errors;
  for (size_t k = 0; k < sets_.size(); ++k) {
    SetState& state = sets_[k];
    absl::StatusOr<eval::EvalResult> result = RunSubset(model, subset, state.values);
    if (!result.ok()) {
      if (result.status().code() == absl::StatusCode::kUnimplemented ||
          result.status().code() == absl::StatusCode::kResourceExhausted) {
        return skip(SkipReason("its nodes cannot be evaluated", result.status()));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed at ", StepName(step.domain, step.from_opset, step.to_opset),
          ": graph 'main': the step's nodes fail on input set '", state.set.name,
          "' where the original runs: ", result.status().message()));
    }
    if (!result->deterministic) return skip("a node of the step is not deterministic");
    for (eval::NamedValue& output : result->outputs) {
      auto recorded = state.values.find(output.name);
      if (recorded == state.values.end()) {
        // A value the step added: recorded as computed.
        state.values.emplace(output.name, std::move(output.value));
        continue;
      }
      if (SameBits(recorded->second, output.value)) {
        ++verification.values;
        state.rounded.erase(output.name);
        continue;
      }
      eval::Comparison comparison = eval::CompareValues(recorded->second, output.value);
      if (!comparison.ok) {
        const onnx::NodeProto& node = main.node(producer.at(output.name));
        auto original = original_producer_.find(output.name);
        return absl::FailedPreconditionError(absl::StrCat(
            "verification failed at ", StepName(step.domain, step.from_opset, step.to_opset),
            ": graph 'main', ",
            NodeText(node, step, original == original_producer_.end() ? "" : original->second),
            ": output '", output.name, "' differs from the original on input set '",
            state.set.name, "'", ErrorText(comparison)));
      }
      errors.Add(comparison);
      ++verification.values;
      if (Identical(comparison)) {
        state.rounded.erase(output.name);
      } else {
        differs[k].insert(output.name);
        state.rounded[output.name] = comparison.worst ? comparison.worst->abs_error : 0;
      }
    }
    ++verification.sets;
  }
  verification.values /= std::max(verification.sets, 1);
  verification.max_abs_error = errors.abs;
  verification.max_rel_error = errors.rel;
  settle();
  return absl::OkStatus();
}

void ConversionVerifier::Settle(const onnx::GraphProto& main,
                                const absl::flat_hash_set<std::string>& differs,
                                SetState& state) {
  absl::flat_hash_set<std::string> live;
  for (const auto& input : main.input()) live.insert(input.name());
  for (const onnx::NodeProto& node : main.node()) {
    bool changed = false;
    for (const std::string& name : NodeUses(node)) changed = changed || state.changed.contains(name);
    for (const std::string& output : node.output()) {
      if (output.empty()) continue;
      live.insert(output);
      if (changed || differs.contains(output) || !state.values.contains(output)) {
        state.changed.insert(output);
      } else {
        state.changed.erase(output);
      }
    }
  }
  absl::erase_if(state.values, [&](const auto& entry) { return !live.contains(entry.first); });
  absl::erase_if(state.changed, [&](const std::string& name) { return !live.contains(name); });
  absl::erase_if(state.rounded, [&](const auto& entry) { return !live.contains(entry.first); });
}

absl::StatusOr<double> ConversionVerifier::RoundingSensitivity(const onnx::ModelProto& converted,
                                                               const std::vector<int>& cone,
                                                               const SetState& state,
                                                               const std::string& output) const {
  double largest = 0;
  for (bool up : {true, false}) {
    OC_ASSIGN_OR_RETURN(double moved, OutputMovement(converted, cone, state, output, up));
    largest = std::max(largest, moved);
  }
  return largest;
}

absl::StatusOr<double> ConversionVerifier::OutputMovement(const onnx::ModelProto& converted,
                                                          const std::vector<int>& cone,
                                                          const SetState& state,
                                                          const std::string& output,
                                                          bool up) const {
  const onnx::GraphProto& main = converted.graph();
  absl::flat_hash_map<std::string, eval::Value> feeds;
  for (const auto& [name, value] : state.values) {
    if (!state.changed.contains(name)) feeds.emplace(name, value);
  }
  // The nodes that round differently are replaced by their original
  // values, moved by the largest difference their step showed.
  std::vector<int> rest;
  for (int i : cone) {
    bool rounds = false;
    for (const std::string& name : main.node(i).output()) rounds = rounds || state.rounded.contains(name);
    if (!rounds) {
      rest.push_back(i);
      continue;
    }
    for (const std::string& name : main.node(i).output()) {
      auto recorded = state.values.find(name);
      if (recorded == state.values.end()) continue;
      auto rounded = state.rounded.find(name);
      feeds[name] = rounded == state.rounded.end()
                        ? recorded->second
                        : Shifted(recorded->second, rounded->second, up);
    }
  }
  NodeSubset subset =
      SubsetOf(main, rest, [&](const std::string& name) { return feeds.contains(name); });
  if (!subset.unknown.empty()) return absl::NotFoundError(subset.unknown);
  OC_ASSIGN_OR_RETURN(eval::EvalResult result, RunSubset(converted, subset, feeds));
  for (const eval::NamedValue& value : result.outputs) {
    if (value.name != output) continue;
    eval::Comparison comparison = eval::CompareValues(state.values.at(output), value.value);
    if (!comparison.worst) break;
    return comparison.worst->abs_error;
  }
  return absl::NotFoundError(output);
}

absl::StatusOr<VerificationReport> ConversionVerifier::Finish(const onnx::ModelProto& converted) {
  VerificationReport report;
  if (!skipped_.empty()) {
    report.skipped = skipped_;
    return report;
  }
  const onnx::GraphProto& main = converted.graph();
  std::vector<int> cone;
  for (int i = 0; i < main.node_size(); ++i) {
    bool changed = false;
    for (const std::string& output : main.node(i).output()) {
      for (const SetState& state : sets_) changed = changed || state.changed.contains(output);
    }
    if (changed) cone.push_back(i);
  }
  report.end_to_end_nodes = static_cast<int>(cone.size());
  report.outputs = static_cast<int>(output_names_.size());
  Errors errors;
  for (SetState& state : sets_) {
    absl::flat_hash_map<std::string, eval::Value> computed;
    if (!cone.empty()) {
      // Values the cone does not compute are the recorded ones: the
      // original's, by name.
      NodeSubset subset = SubsetOf(main, cone, [&](const std::string& name) {
        return state.values.contains(name) && !state.changed.contains(name);
      });
      if (!subset.unknown.empty()) {
        report.skipped = absl::StrCat("end to end: the value '", subset.unknown, "' is not known");
        return report;
      }
      absl::StatusOr<eval::EvalResult> result = RunSubset(converted, subset, state.values);
      if (!result.ok()) {
        if (result.status().code() == absl::StatusCode::kUnimplemented ||
            result.status().code() == absl::StatusCode::kResourceExhausted) {
          report.skipped = SkipReason("the converted model cannot be evaluated", result.status());
          return report;
        }
        return absl::FailedPreconditionError(absl::StrCat(
            "verification failed: the converted model fails on input set '", state.set.name,
            "' where the original runs: ", result.status().message()));
      }
      for (eval::NamedValue& output : result->outputs) {
        computed.emplace(output.name, std::move(output.value));
      }
    }
    for (const std::string& name : output_names_) {
      auto actual = computed.find(name);
      if (actual == computed.end()) continue;  // not in the cone: the original's value
      auto expected = state.values.find(name);
      if (expected == state.values.end()) continue;
      eval::Comparison comparison = eval::CompareValues(expected->second, actual->second);
      if (!comparison.ok) {
        // Every step agreed within tolerance: is this the model amplifying
        // those differences, as it amplifies the same shift of the
        // original's values?
        absl::StatusOr<double> sensitivity = RoundingSensitivity(converted, cone, state, name);
        if (!comparison.worst || !sensitivity.ok() ||
            comparison.worst->abs_error > kSensitivityFactor * *sensitivity) {
          return absl::FailedPreconditionError(absl::StrCat(
              "verification failed: output '", name,
              "' differs from the original on input set '", state.set.name, "'",
              ErrorText(comparison),
              sensitivity.ok()
                  ? absl::StrFormat(" (each step agreed within tolerance; moving the values "
                                    "they compute differently by the differences the steps "
                                    "showed moves it by %g)",
                                    *sensitivity)
                  : ""));
        }
        report.rounding_sensitivity = std::max(report.rounding_sensitivity, *sensitivity);
      }
      errors.Add(comparison);
    }
    ++report.sets;
  }
  report.max_abs_error = errors.abs;
  report.max_rel_error = errors.rel;
  return report;
}

namespace internal {

FaultInjection& FaultForTesting() {
  static FaultInjection* fault = new FaultInjection();
  return *fault;
}

void InjectFault(onnx::ModelProto& model, const StepReport& step) {
  const std::string& adapter = FaultForTesting().adapter;
  if (adapter.empty()) return;
  for (const NodeChange& change : step.nodes) {
    if (!absl::StartsWith(change.adapter, adapter) || change.graph != "main") continue;
    for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
      if (node.name() != change.node || node.op_type() != change.op) continue;
      bool moved = false;
      for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
        if (attribute.type() == onnx::AttributeProto::FLOAT) {
          attribute.set_f(attribute.f() + 0.5f);
          moved = true;
          break;
        }
      }
      if (!moved && node.input_size() >= 2) {
        node.mutable_input()->SwapElements(0, 1);
      }
    }
  }
}

}  // namespace internal
}  // namespace onnxconvert::converter
