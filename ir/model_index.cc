// ModelIndex (the indexes of every graph and function of a model) and the
// fresh names the graphs of a model share: NamePool collects the names in
// use, NameGenerator hands out fresh ones without an index.

#include "ir/graph_index.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/graph_index_internal.h"

namespace onnxconvert {
namespace {

// Calls `note` with every name used in `model`: values, nodes, graph and
// function interfaces, at any depth (iteratively: no recursion limit).
template <typename Fn>
void ForEachNameIn(const onnx::ModelProto& model, Fn note) {
  std::vector<const onnx::GraphProto*> graphs;
  auto add_nodes = [&](const auto& nodes) {
    for (const onnx::NodeProto& node : nodes) {
      note(node.name());
      for (const std::string& name : node.input()) note(name);
      for (const std::string& name : node.output()) note(name);
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.has_g()) graphs.push_back(&attribute.g());
        for (const onnx::GraphProto& graph : attribute.graphs()) graphs.push_back(&graph);
      }
    }
  };
  if (model.has_graph()) graphs.push_back(&model.graph());
  for (const onnx::TrainingInfoProto& info : model.training_info()) {
    if (info.has_initialization()) graphs.push_back(&info.initialization());
    if (info.has_algorithm()) graphs.push_back(&info.algorithm());
  }
  for (const onnx::FunctionProto& function : model.functions()) {
    for (const std::string& name : function.input()) note(name);
    for (const std::string& name : function.output()) note(name);
    add_nodes(function.node());
  }
  while (!graphs.empty()) {
    const onnx::GraphProto& graph = *graphs.back();
    graphs.pop_back();
    for (const onnx::ValueInfoProto& value : graph.input()) note(value.name());
    for (const onnx::ValueInfoProto& value : graph.output()) note(value.name());
    for (const onnx::ValueInfoProto& value : graph.value_info()) note(value.name());
    for (const onnx::TensorProto& tensor : graph.initializer()) note(tensor.name());
    for (const onnx::SparseTensorProto& sparse : graph.sparse_initializer()) {
      note(sparse.values().name());
    }
    add_nodes(graph.node());
  }
}

std::string FunctionPath(const onnx::FunctionProto& function) {
  return absl::StrCat("function '", function.domain(), function.domain().empty() ? "" : ":",
                      function.name(), function.overload().empty() ? "" : "@",
                      function.overload(), "'");
}

}  // namespace

// Collects the names in use, once.
void NamePool::Collect() {
  if (collected_) return;
  collected_ = true;
  for (const GraphIndex* root : roots_) {
    for (const GraphIndex* graph : root->GraphsInTree()) {
      for (const GraphIndex::ValueRecord& record : graph->values_) Note(record.name);
      for (const onnx::NodeProto& node : graph->nodes()) Note(node.name());
      if (graph->graph_ == nullptr) continue;
      for (const onnx::ValueInfoProto& info : graph->graph_->value_info()) Note(info.name());
    }
  }
  for (const onnx::ModelProto* model : models_) {
    ForEachNameIn(*model, [this](absl::string_view name) { Note(name); });
  }
}

// ---------------------------------------------------------------------------
// ModelIndex.

ModelIndex::ModelIndex() : names_(std::make_unique<NamePool>()) {}

ModelIndex::~ModelIndex() = default;

absl::StatusOr<std::unique_ptr<ModelIndex>> ModelIndex::Build(onnx::ModelProto* model) {
  if (model == nullptr) return absl::InvalidArgumentError("ModelIndex::Build: no model");
  return BuildMutable(model);
}

absl::StatusOr<std::unique_ptr<const ModelIndex>> ModelIndex::Build(
    const onnx::ModelProto& model) {
  // Read-only: nothing reachable from a const index writes to the model.
  OC_ASSIGN_OR_RETURN(std::unique_ptr<ModelIndex> index,
                      BuildMutable(const_cast<onnx::ModelProto*>(&model)));
  return std::unique_ptr<const ModelIndex>(std::move(index));
}

absl::StatusOr<std::unique_ptr<ModelIndex>> ModelIndex::BuildMutable(onnx::ModelProto* model) {
  // Graphs are held as mutable for editing; building only reads them (the
  // mutable_ accessors of singular fields would write has-bits).
  auto held = [](const onnx::GraphProto& graph) { return const_cast<onnx::GraphProto*>(&graph); };
  std::unique_ptr<ModelIndex> index(new ModelIndex());
  NamePool* names = index->names_.get();
  if (model->has_graph()) {
    OC_ASSIGN_OR_RETURN(index->main_, GraphIndex::BuildRoot(held(model->graph()), nullptr,
                                                            "main", nullptr, names));
    names->AddRoot(index->main_.get());
  }
  for (int i = 0; i < model->training_info_size(); ++i) {
    const onnx::TrainingInfoProto& info = model->training_info(i);
    const std::string prefix = absl::StrCat("training_info[", i, "]/");
    std::unique_ptr<GraphIndex> initialization;
    std::unique_ptr<GraphIndex> algorithm;
    if (info.has_initialization()) {
      OC_ASSIGN_OR_RETURN(initialization,
                          GraphIndex::BuildRoot(held(info.initialization()), nullptr,
                                                prefix + "initialization", nullptr, names));
    }
    if (info.has_algorithm()) {
      // The algorithm runs together with the main graph and may use its values.
      OC_ASSIGN_OR_RETURN(algorithm,
                          GraphIndex::BuildRoot(held(info.algorithm()), nullptr,
                                                prefix + "algorithm", index->main_.get(), names));
    }
    names->AddRoot(initialization.get());
    names->AddRoot(algorithm.get());
    index->training_.push_back(std::move(initialization));
    index->training_.push_back(std::move(algorithm));
  }
  for (int i = 0; i < model->functions_size(); ++i) {
    const onnx::FunctionProto& function = model->functions(i);
    OC_ASSIGN_OR_RETURN(
        std::unique_ptr<GraphIndex> graph,
        GraphIndex::BuildRoot(nullptr, const_cast<onnx::FunctionProto*>(&function),
                              FunctionPath(function), nullptr, names));
    names->AddRoot(graph.get());
    index->functions_.push_back(std::move(graph));
  }
  return index;
}

std::vector<const GraphIndex*> ModelIndex::Graphs() const {
  std::vector<const GraphIndex*> graphs;
  auto add_tree = [&](const GraphIndex* root) {
    if (root == nullptr) return;
    for (const GraphIndex* graph : root->GraphsInTree()) graphs.push_back(graph);
  };
  add_tree(main_.get());
  for (const std::unique_ptr<GraphIndex>& root : training_) add_tree(root.get());
  for (const std::unique_ptr<GraphIndex>& root : functions_) add_tree(root.get());
  return graphs;
}

std::vector<GraphIndex*> ModelIndex::Graphs() {
  return graph_index_internal::Editable(std::as_const(*this).Graphs());
}

const GraphIndex* ModelIndex::FindGraph(absl::string_view path) const {
  for (const GraphIndex* graph : Graphs()) {
    if (graph->path() == path) return graph;
  }
  return nullptr;
}

std::string ModelIndex::FreshName(absl::string_view prefix) { return names_->Fresh(prefix); }

absl::Status ModelIndex::Commit() {
  for (GraphIndex* graph : Graphs()) OC_RETURN_IF_ERROR(graph->Commit());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// NameGenerator.

NameGenerator::NameGenerator(const onnx::ModelProto& model)
    : pool_(std::make_unique<NamePool>()) {
  pool_->AddModel(&model);
  pool_->Collect();  // now: `model` need not outlive the generator
}

NameGenerator::~NameGenerator() = default;

std::string NameGenerator::FreshName(absl::string_view prefix) {
  if (observer_) observer_(prefix);
  return pool_->Fresh(prefix);
}

void NameGenerator::Reserve(absl::string_view name) { pool_->Note(name); }

}  // namespace onnxconvert
