#include "schema/checker.h"

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/limits.h"
#include "base/op_key.h"
#include "schema/registry.h"
#include "schema/type_strings.h"

namespace onnxconvert::schema {
namespace {

// How many nodes ahead the scope is prefetched.
constexpr int kLookahead = 8;
// Graphs with fewer nodes stay in the cache: fetching ahead only costs.
constexpr int kLookaheadNodes = 262144;
constexpr int64_t kNewestIrVersion = 13;

// The IR version that introduced each element type (by TensorProto.DataType).
int64_t IrVersionForElemType(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::BFLOAT16: return 4;
    case onnx::TensorProto::FLOAT8E4M3FN:
    case onnx::TensorProto::FLOAT8E4M3FNUZ:
    case onnx::TensorProto::FLOAT8E5M2:
    case onnx::TensorProto::FLOAT8E5M2FNUZ: return 9;
    case onnx::TensorProto::UINT4:
    case onnx::TensorProto::INT4: return 10;
    case onnx::TensorProto::FLOAT4E2M1: return 11;
    case onnx::TensorProto::FLOAT8E8M0: return 12;
    case onnx::TensorProto::UINT2:
    case onnx::TensorProto::INT2: return 13;
    default: return 1;
  }
}

using Attribute = onnx::AttributeProto;

// The fields an attribute's value can be in, and the attribute type each
// is for; a field's index is its bit in ValueFieldBits.
struct ValueField {
  Attribute::AttributeType type;
  const char* name;
};

constexpr ValueField kValueFields[] = {
    {Attribute::FLOAT, "f"},
    {Attribute::INT, "i"},
    {Attribute::STRING, "s"},
    {Attribute::TENSOR, "t"},
    {Attribute::GRAPH, "g"},
    {Attribute::SPARSE_TENSOR, "sparse_tensor"},
    {Attribute::TYPE_PROTO, "tp"},
    {Attribute::FLOATS, "floats"},
    {Attribute::INTS, "ints"},
    {Attribute::STRINGS, "strings"},
    {Attribute::TENSORS, "tensors"},
    {Attribute::GRAPHS, "graphs"},
    {Attribute::SPARSE_TENSORS, "sparse_tensors"},
    {Attribute::TYPE_PROTOS, "type_protos"},
};

// The bits of the fields of kValueFields that hold tensors.
constexpr uint32_t kTensorFieldBits = (1u << 3) | (1u << 5) | (1u << 10) | (1u << 12);

// Bit i set when field kValueFields[i] of `a` holds a value (branch-free: it
// runs for every attribute).
uint32_t ValueFieldBits(const Attribute& a) {
  return uint32_t{a.has_f()} | uint32_t{a.has_i()} << 1 | uint32_t{a.has_s()} << 2 |
         uint32_t{a.has_t()} << 3 | uint32_t{a.has_g()} << 4 |
         uint32_t{a.has_sparse_tensor()} << 5 | uint32_t{a.has_tp()} << 6 |
         uint32_t{a.floats_size() > 0} << 7 | uint32_t{a.ints_size() > 0} << 8 |
         uint32_t{a.strings_size() > 0} << 9 | uint32_t{a.tensors_size() > 0} << 10 |
         uint32_t{a.graphs_size() > 0} << 11 | uint32_t{a.sparse_tensors_size() > 0} << 12 |
         uint32_t{a.type_protos_size() > 0} << 13;
}

// The field of the lowest bit of `bits` (not 0).
const ValueField& FirstField(uint32_t bits) { return kValueFields[std::countr_zero(bits)]; }

// The attribute type of an AttributeProto, deduced from its value when the
// `type` field is absent (IR version 1).
Attribute::AttributeType ActualType(const Attribute& a) {
  if (a.has_type()) return a.type();
  uint32_t bits = ValueFieldBits(a);
  return bits != 0 ? FirstField(bits).type : Attribute::UNDEFINED;
}

// A function's name as a node calls it: "domain.name", ":overload" after.
std::string FunctionName(const onnx::FunctionProto& function) {
  return function.overload().empty()
             ? absl::StrCat(function.domain(), ".", function.name())
             : absl::StrCat(function.domain(), ".", function.name(), ":", function.overload());
}

// The key of a model-local function: its domain, name and overload.
std::string FunctionKey(absl::string_view domain, absl::string_view name,
                        absl::string_view overload) {
  return absl::StrCat(OpKey(domain, name), kKeySeparator, overload);
}

// Names defined so far in a graph and its enclosing graphs, with the
// declared types of those that have one.
class Scope {
 public:
  explicit Scope(const Scope* parent) : parent_(parent) {}

  // Names are views of the model's strings, which outlive the scope.
  void Define(absl::string_view name) {
    if (!name.empty()) defined_.insert(name);
  }
  bool IsDefined(absl::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent_) {
      if (s->defined_.contains(name)) return true;
    }
    return false;
  }
  void Declare(absl::string_view name, const onnx::TypeProto& type) {
    if (!name.empty() && type.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      types_.try_emplace(name, &type);
    }
  }
  // Declares an initializer: a tensor of `elem_type` (one shared type per
  // element type, however many initializers there are).
  void DeclareTensor(absl::string_view name, int32_t elem_type) {
    auto [it, inserted] = tensor_types_.try_emplace(elem_type);
    if (inserted) it->second.mutable_tensor_type()->set_elem_type(elem_type);
    types_.try_emplace(name, &it->second);
  }
  const onnx::TypeProto* TypeOf(absl::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent_) {
      if (auto it = s->types_.find(name); it != s->types_.end()) return it->second;
    }
    return nullptr;
  }
  void Reserve(size_t names) { defined_.reserve(names); }
  // Brings the table slots of `node`'s outputs into the cache.
  void Prefetch(const onnx::NodeProto& node) const {
    for (const std::string& output : node.output()) defined_.prefetch(output);
  }

 private:
  const Scope* parent_;
  absl::flat_hash_set<absl::string_view> defined_;
  absl::flat_hash_map<absl::string_view, const onnx::TypeProto*> types_;
  absl::node_hash_map<int32_t, onnx::TypeProto> tensor_types_;
};

using OpsetMap = absl::flat_hash_map<std::string, int64_t>;

// A node's label ("node 'Add_3' (Add-14)"), built only when reported.
class NodeLabel {
 public:
  NodeLabel(const onnx::NodeProto& node, int index, const OpSchema* schema)
      : node_(node), index_(index), schema_(schema) {}
  std::string str() const {
    std::string op = schema_ != nullptr ? schema_->Label() : node_.op_type();
    if (schema_ == nullptr && !node_.domain().empty()) {
      op = absl::StrCat(node_.domain(), ".", op);
    }
    if (!node_.name().empty()) return absl::StrCat("node '", node_.name(), "' (", op, ")");
    return index_ >= 0 ? absl::StrCat("node #", index_, " (", op, ")")
                       : absl::StrCat("unnamed node (", op, ")");
  }

 private:
  const onnx::NodeProto& node_;
  int index_;
  const OpSchema* schema_;
};

// The label of an issue that is not at a node: none.
struct NoNode {
  std::string str() const { return {}; }
};

// "has 3 inputs; Op-13 takes 1 to 2" (`what` "inputs", `allows` "Op-13
// takes") when `count` is outside [min, max]; "" within.
std::string CountOutside(int count, absl::string_view what, absl::string_view allows, int min,
                         int max) {
  if (count >= min && count <= max) return "";
  return absl::StrCat("has ", count, " ", what, "; ", allows, " ", min,
                      max == min ? std::string() : absl::StrCat(" to ", max));
}

class Checker {
 public:
  Checker(const onnx::ModelProto& model, CheckReport& report, const CheckOptions& options = {})
      : model_(model), report_(report), options_(options) {
    for (const onnx::FunctionProto& f : model.functions()) {
      local_functions_[OpKey(f.domain(), f.name())] = &f;
    }
  }

  // Checks `node` of a graph at `path` on its own (not its subgraphs, not
  // whether its inputs are defined): op known at the model's opsets, arity,
  // attributes, and the types `types` gives its values.
  template <typename TypeSource>
  void CheckOneNode(const onnx::NodeProto& node, const std::string& path, const OpsetMap& opsets,
                    const TypeSource& types) {
    ++report_.nodes_checked;
    const OpSchema* schema = ResolveSchema(node, -1, path, opsets);
    NodeLabel label(node, -1, schema);
    CheckAttributeValues(node, path, label, /*in_function=*/false);
    if (schema != nullptr) CheckAgainstSchema(node, *schema, path, label, types);
  }

  OpsetMap ImportedOpsets(
      const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    return ImportOpsets(imports, "model");
  }

  void Run() {
    CheckIrVersion();
    OpsetMap opsets = ImportOpsets(model_.opset_import(), "model");
    if (!model_.has_graph()) {
      Report(CheckCode::kEmptyGraph, "main", "", "the model has no graph");
    } else {
      CheckGraph(model_.graph(), "main", nullptr, opsets, 0, /*in_function=*/false);
    }
    CheckFunctions(opsets);
    CheckTrainingGraphs(opsets);
  }

  // The model's functions alone (see schema::CheckFunctions).
  void RunFunctions() { CheckFunctions(ImportOpsets(model_.opset_import(), "model")); }

 private:
  void CheckFunctions(const OpsetMap& model_opsets) {
    for (const onnx::FunctionProto& function : model_.functions()) {
      CheckFunction(function, model_opsets);
    }
    CheckFunctionCalls();
  }

  void CheckTrainingGraphs(const OpsetMap& opsets) {
    for (int i = 0; i < model_.training_info_size(); ++i) {
      const auto& info = model_.training_info(i);
      if (info.has_initialization()) {
        CheckGraph(info.initialization(), absl::StrCat("training[", i, "]/initialization"),
                   nullptr, opsets, 0, /*in_function=*/false);
      }
      if (info.has_algorithm()) {
        CheckGraph(info.algorithm(), absl::StrCat("training[", i, "]/algorithm"), nullptr,
                   opsets, 0, /*in_function=*/false);
      }
    }
  }

  void Report(CheckCode code, const std::string& path, const std::string& node,
              std::string message, bool warning = false) {
    report_.issues.push_back({code, warning, path, node, std::move(message)});
  }

  void CheckIrVersion() {
    int64_t ir = model_.ir_version();
    if (!model_.has_ir_version() || ir == 0) {
      Report(CheckCode::kIrVersion, "model", "", "ir_version is missing");
    } else if (ir < 0) {
      Report(CheckCode::kIrVersion, "model", "",
             absl::StrCat("ir_version ", ir, " is invalid: IR versions start at 1"));
    } else if (ir > kNewestIrVersion) {
      Report(CheckCode::kIrVersion, "model", "",
             absl::StrCat("ir_version ", ir, " is newer than the newest known (",
                          kNewestIrVersion, ")"));
    }
    if (ir >= 3 && model_.opset_import_size() == 0) {
      Report(CheckCode::kOpsetImport, "model", "",
             "a model of IR version 3 or later must import an opset");
    }
    if (model_.functions_size() > 0 && ir > 0 && ir < 8) {
      Report(CheckCode::kIrVersion, "model", "",
             absl::StrCat("model-local functions need IR version 8, the model has ", ir));
    }
  }

  OpsetMap ImportOpsets(
      const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
      const std::string& where) {
    OpsetMap opsets;
    const Registry& registry = Registry::Get();
    for (const onnx::OperatorSetIdProto& opset : imports) {
      std::string domain(CanonicalDomain(opset.domain()));
      if (!opsets.try_emplace(domain, opset.version()).second) {
        Report(CheckCode::kOpsetImport, where, "",
               absl::StrCat("domain '", opset.domain(), "' is imported twice"));
      }
      int64_t newest = registry.MaxOpset(domain);
      if (newest > 0 && (opset.version() < 1 || opset.version() > newest)) {
        Report(CheckCode::kOpsetImport, where, "",
               absl::StrCat("opset ", opset.version(), " of domain '",
                            domain.empty() ? "ai.onnx" : domain,
                            "' does not exist (known: 1 to ", newest, ")"));
      }
    }
    return opsets;
  }

  void CheckElemTypeIr(const onnx::TypeProto& type, const std::string& path,
                       const std::string& value) {
    if (!type.has_tensor_type()) return;
    int64_t needed = IrVersionForElemType(type.tensor_type().elem_type());
    if (model_.ir_version() > 0 && needed > model_.ir_version()) {
      Report(CheckCode::kIrVersion, path, "",
             absl::StrCat("value '", value, "' has type ", TypeString(type),
                          ", which needs IR version ", needed, "; the model has ",
                          model_.ir_version()));
    }
  }

  void CheckFunction(const onnx::FunctionProto& function, const OpsetMap& model_opsets) {
    ++report_.functions_checked;
    std::string path = absl::StrCat("function '", function.domain(), ".", function.name(), "'");
    OpsetMap opsets = ImportOpsets(function.opset_import(), path);
    for (const auto& [domain, version] : model_opsets) opsets.try_emplace(domain, version);
    for (const Attribute& attribute : function.attribute_proto()) {
      CheckAttributeValue(attribute, path, NoNode(), /*in_function=*/false);
    }
    Scope scope(nullptr);
    for (const std::string& input : function.input()) scope.Define(input);
    CheckNodes(function.node(), path, scope, opsets, 0, /*in_function=*/true);
    for (const std::string& output : function.output()) {
      if (!scope.IsDefined(output)) {
        Report(CheckCode::kUndefinedInput, path, "",
               absl::StrCat("function output '", output, "' is not defined"));
      }
    }
  }

  void CheckGraph(const onnx::GraphProto& graph, const std::string& path, const Scope* parent,
                  const OpsetMap& opsets, int depth, bool in_function) {
    ++report_.graphs_checked;
    Scope scope(parent);
    // Most nodes have one output; a table sized for two would be twice as big.
    scope.Reserve(graph.input_size() + graph.initializer_size() + graph.node_size());
    for (const auto& input : graph.input()) {
      scope.Define(input.name());
      scope.Declare(input.name(), input.type());
      CheckElemTypeIr(input.type(), path, input.name());
    }
    for (const auto& tensor : graph.initializer()) {
      scope.Define(tensor.name());
      scope.DeclareTensor(tensor.name(), tensor.data_type());
      ReportTensor(CheckTensorHere(tensor), CheckCode::kTensor, path, NoNode(), "");
    }
    for (const auto& sparse : graph.sparse_initializer()) {
      scope.Define(sparse.values().name());
      ReportTensor(CheckSparseTensor(sparse), CheckCode::kSparseTensor, path, NoNode(), "");
    }
    for (const auto& value : graph.value_info()) scope.Declare(value.name(), value.type());
    for (const auto& output : graph.output()) {
      scope.Declare(output.name(), output.type());
      CheckElemTypeIr(output.type(), path, output.name());
    }
    CheckNodes(graph.node(), path, scope, opsets, depth, in_function);
    for (const auto& output : graph.output()) {
      if (!scope.IsDefined(output.name())) {
        Report(CheckCode::kUndefinedInput, path, "",
               absl::StrCat("graph output '", output.name(), "' is not defined"));
      }
    }
  }

  void CheckNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                  const std::string& path, Scope& scope, const OpsetMap& opsets, int depth,
                  bool in_function) {
    // Where each output is produced, built only once an input is missing.
    absl::flat_hash_map<std::string, int> later_outputs;
    bool later_outputs_built = false;
    auto outputs_index = [&]() -> const absl::flat_hash_map<std::string, int>& {
      if (!later_outputs_built) {
        for (int i = 0; i < nodes.size(); ++i) {
          for (const std::string& output : nodes[i].output()) later_outputs.try_emplace(output, i);
        }
        later_outputs_built = true;
      }
      return later_outputs;
    };
    for (int i = 0; i < nodes.size(); ++i) {
      const onnx::NodeProto& node = nodes[i];
      ++report_.nodes_checked;
      // Large graphs miss the cache on every new value: fetch ahead.
      if (nodes.size() >= kLookaheadNodes && i + kLookahead < nodes.size()) {
        scope.Prefetch(nodes[i + kLookahead]);
      }
      const OpSchema* schema = ResolveSchema(node, i, path, opsets);
      NodeLabel label(node, i, schema);
      CheckInputsDefined(node, i, path, label, scope, outputs_index);
      CheckAttributeValues(node, path, label, in_function);
      if (schema != nullptr) CheckAgainstSchema(node, *schema, path, label, scope);
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        CheckSubgraphs(attribute, node, path, scope, opsets, depth, in_function);
      }
      for (const std::string& output : node.output()) {
        if (output.empty()) continue;
        if (scope.IsDefined(output)) {
          Report(CheckCode::kDuplicateValue, path, label.str(),
                 absl::StrCat("value '", output, "' is defined more than once"));
        }
        scope.Define(output);
      }
    }
  }

  void CheckInputsDefined(const onnx::NodeProto& node, int index, const std::string& path,
                          const NodeLabel& label, const Scope& scope,
                          const std::function<const absl::flat_hash_map<std::string, int>&()>&
                              outputs_index) {
    for (const std::string& input : node.input()) {
      if (input.empty() || scope.IsDefined(input)) continue;
      const absl::flat_hash_map<std::string, int>& later_outputs = outputs_index();
      auto later = later_outputs.find(input);
      if (later != later_outputs.end() && later->second == index) {
        Report(CheckCode::kCycle, path, label.str(),
               absl::StrCat("input '", input, "' is the node's own output"));
      } else if (later != later_outputs.end()) {
        Report(CheckCode::kNotTopological, path, label.str(),
               absl::StrCat("input '", input, "' is defined only by a later node (#",
                            later->second, "): the nodes are not in topological order"));
      } else {
        Report(CheckCode::kUndefinedInput, path, label.str(),
               absl::StrCat("input '", input, "' is not defined"));
      }
    }
  }

  const OpSchema* ResolveSchema(const onnx::NodeProto& node, int index, const std::string& path,
                                const OpsetMap& opsets) {
    absl::string_view domain = CanonicalDomain(node.domain());
    NodeLabel label(node, index, nullptr);
    auto opset = opsets.find(domain);
    if (opset == opsets.end()) {
      Report(CheckCode::kOpsetImport, path, label.str(),
             absl::StrCat("domain '", domain.empty() ? "ai.onnx" : domain,
                          "' is used but not imported"));
      return nullptr;
    }
    if (!local_functions_.empty() &&
        local_functions_.contains(OpKey(node.domain(), node.op_type()))) {
      return nullptr;  // a call of a model-local function
    }
    const OpSchema* schema = Remembered(domain, node.op_type(), opset->second);
    const Registry& registry = Registry::Get();
    if (schema == nullptr) {
      if (!registry.KnowsDomain(domain)) return nullptr;  // a vendor domain
      schema = registry.Lookup(domain, node.op_type(), opset->second);
      if (schema != nullptr) Remember(domain, node.op_type(), opset->second, schema);
    }
    if (schema == nullptr) {
      absl::Span<const int> versions = registry.VersionsOf(domain, node.op_type());
      Report(CheckCode::kUnknownOperator, path, label.str(),
             versions.empty()
                 ? absl::StrCat("no operator '", node.op_type(), "' in domain '",
                                domain.empty() ? "ai.onnx" : domain, "'")
                 : absl::StrCat("'", node.op_type(), "' does not exist at opset ", opset->second,
                                " (it was introduced at opset ", versions.front(), ")"));
      return nullptr;
    }
    if (schema->deprecated) {
      Report(CheckCode::kDeprecatedOperator, path, label.str(),
             absl::StrCat(schema->Label(), " is deprecated"), /*warning=*/true);
    }
    return schema;
  }

  // The schema of (domain, op) at `opset` if it is among the last few
  // resolved (graphs repeat a few ops), else null.
  const OpSchema* Remembered(absl::string_view domain, absl::string_view op, int64_t opset) const {
    for (const Resolved& known : resolved_) {
      if (known.opset == opset && known.op == op && known.domain == domain) return known.schema;
    }
    return nullptr;
  }
  void Remember(absl::string_view domain, absl::string_view op, int64_t opset,
                const OpSchema* schema) {
    Resolved& slot = resolved_[next_resolved_++ % resolved_.size()];
    slot = {std::string(domain), std::string(op), opset, schema};
  }

  template <typename TypeSource>
  void CheckAgainstSchema(const onnx::NodeProto& node, const OpSchema& schema,
                          const std::string& path, const NodeLabel& label,
                          const TypeSource& scope) {
    CheckArity(node, schema, path, label);
    CheckAttributes(node, schema, path, label);
    CheckTypes(node, schema, path, label, scope);
  }

  void CheckAttributeValues(const onnx::NodeProto& node, const std::string& path,
                            const NodeLabel& label, bool in_function) {
    for (const Attribute& attribute : node.attribute()) {
      CheckAttributeValue(attribute, path, label, in_function);
    }
  }

  // Checks an attribute on its own: a name, one value in the field its type
  // says, a reference to a function's attribute only in a function body and
  // then without a value, and its tensors.
  template <typename Label>
  void CheckAttributeValue(const Attribute& attribute, const std::string& path,
                           const Label& label, bool in_function) {
    const std::string& name = attribute.name();
    if (name.empty()) {
      Report(CheckCode::kAttributeType, path, label.str(), "an attribute has no name");
    }
    uint32_t bits = ValueFieldBits(attribute);
    if (std::popcount(bits) > 1) {
      Report(CheckCode::kAttributeType, path, label.str(),
             absl::StrCat("attribute '", name, "' has values in both ", FirstField(bits).name,
                          " and ", FirstField(bits & (bits - 1)).name,
                          "; an attribute has one value"));
    } else if (bits != 0 && attribute.has_type() && attribute.type() != FirstField(bits).type) {
      Report(CheckCode::kAttributeType, path, label.str(),
             absl::StrCat("attribute '", name, "' is of type ",
                          Attribute::AttributeType_Name(attribute.type()),
                          " but its value is in ", FirstField(bits).name));
    } else if (!attribute.has_type() && model_.ir_version() >= 2) {
      Report(CheckCode::kAttributeType, path, label.str(),
             absl::StrCat("attribute '", name,
                          "' has no type (IR version 2 and later require one)"));
    }
    if (attribute.has_ref_attr_name()) {
      if (!in_function) {
        Report(CheckCode::kAttributeType, path, label.str(),
               absl::StrCat("attribute '", name,
                            "' refers to a function attribute outside a function"));
      } else if (bits != 0) {
        Report(CheckCode::kAttributeType, path, label.str(),
               absl::StrCat("attribute '", name, "' refers to function attribute '",
                            attribute.ref_attr_name(), "' but also has a value"));
      }
    }
    if (bits & kTensorFieldBits) CheckAttributeTensors(attribute, path, label);
  }

  template <typename Label>
  void CheckAttributeTensors(const Attribute& attribute, const std::string& path,
                             const Label& label) {
    if (attribute.has_t()) {
      ReportTensor(CheckTensorHere(attribute.t()), CheckCode::kTensor, path, label,
                   attribute.name());
    }
    for (const onnx::TensorProto& tensor : attribute.tensors()) {
      ReportTensor(CheckTensorHere(tensor), CheckCode::kTensor, path, label, attribute.name());
    }
    if (attribute.has_sparse_tensor()) {
      ReportTensor(CheckSparseTensor(attribute.sparse_tensor()), CheckCode::kSparseTensor, path,
                   label, attribute.name());
    }
    for (const onnx::SparseTensorProto& sparse : attribute.sparse_tensors()) {
      ReportTensor(CheckSparseTensor(sparse), CheckCode::kSparseTensor, path, label,
                   attribute.name());
    }
  }

  // CheckTensor, against the sizes its data has in the file when it was
  // read without it.
  absl::Status CheckTensorHere(const onnx::TensorProto& tensor) const {
    if (options_.sizes_read_apart != nullptr) {
      auto it = options_.sizes_read_apart->find(&tensor);
      if (it != options_.sizes_read_apart->end()) return CheckTensor(tensor, it->second);
    }
    return CheckTensor(tensor);
  }

  // Reports a tensor's error, if any, as the value of `attribute` when not "".
  template <typename Label>
  void ReportTensor(const absl::Status& status, CheckCode code, const std::string& path,
                    const Label& label, const std::string& attribute) {
    if (status.ok()) return;
    Report(code, path, label.str(),
           attribute.empty() ? std::string(status.message())
                             : absl::StrCat("attribute '", attribute, "': ", status.message()));
  }

  // Reports each cycle of model-local functions that call each other, in
  // their bodies or their bodies' subgraphs.
  void CheckFunctionCalls() {
    int count = model_.functions_size();
    if (count == 0) return;
    absl::flat_hash_map<std::string, int> index;
    for (int f = 0; f < count; ++f) {
      const onnx::FunctionProto& function = model_.functions(f);
      index.try_emplace(FunctionKey(function.domain(), function.name(), function.overload()), f);
    }
    std::vector<std::vector<int>> calls(count);
    for (int f = 0; f < count; ++f) {
      CollectCalls(model_.functions(f).node(), index, calls[f], 0);
    }
    FindCallCycles(calls);
  }

  // Appends to `calls` the model-local functions `nodes` call (each once).
  void CollectCalls(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                    const absl::flat_hash_map<std::string, int>& index, std::vector<int>& calls,
                    int depth) {
    if (depth >= kMaxGraphDepth) return;  // reported by the graph's check
    for (const onnx::NodeProto& node : nodes) {
      auto it = index.find(FunctionKey(node.domain(), node.op_type(), node.overload()));
      if (it != index.end() && std::find(calls.begin(), calls.end(), it->second) == calls.end()) {
        calls.push_back(it->second);
      }
      for (const Attribute& attribute : node.attribute()) {
        if (attribute.has_g()) CollectCalls(attribute.g().node(), index, calls, depth + 1);
        for (const onnx::GraphProto& graph : attribute.graphs()) {
          CollectCalls(graph.node(), index, calls, depth + 1);
        }
      }
    }
  }

  // A depth-first walk of the call graph `calls`, without recursion; each
  // call back into a function still being walked closes a cycle.
  void FindCallCycles(const std::vector<std::vector<int>>& calls) {
    enum : int8_t { kNew, kOnPath, kDone };
    std::vector<int8_t> state(calls.size(), kNew);
    std::vector<std::pair<int, size_t>> path;  // function, next call to follow
    for (size_t root = 0; root < calls.size(); ++root) {
      if (state[root] != kNew) continue;
      state[root] = kOnPath;
      path.push_back({static_cast<int>(root), 0});
      while (!path.empty()) {
        auto& [function, next] = path.back();
        if (next == calls[function].size()) {
          state[function] = kDone;
          path.pop_back();
          continue;
        }
        int callee = calls[function][next++];
        if (state[callee] == kOnPath) {
          ReportCallCycle(path, callee);
        } else if (state[callee] == kNew) {
          state[callee] = kOnPath;
          path.push_back({callee, 0});
        }
      }
    }
  }

  void ReportCallCycle(const std::vector<std::pair<int, size_t>>& path, int callee) {
    std::vector<std::string> names;
    bool in_cycle = false;
    for (const auto& [function, next] : path) {
      in_cycle |= function == callee;
      if (in_cycle) names.push_back(FunctionName(model_.functions(function)));
    }
    names.push_back(FunctionName(model_.functions(callee)));
    std::string where = absl::StrCat("function '", names.front(), "'");
    Report(CheckCode::kFunctionCycle, where, "",
           names.size() == 2
               ? absl::StrCat("calls itself: ", absl::StrJoin(names, " -> "))
               : absl::StrCat("model-local functions call each other in a cycle: ",
                              absl::StrJoin(names, " -> ")));
  }

  void CheckArity(const onnx::NodeProto& node, const OpSchema& schema, const std::string& path,
                  const NodeLabel& label) {
    int inputs = node.input_size();
    if (std::string why = CountOutside(inputs, "inputs", schema.Label() + " takes",
                                       schema.min_input, schema.max_input);
        !why.empty()) {
      Report(CheckCode::kArity, path, label.str(), why);
    }
    for (int i = 0; i < inputs && i < static_cast<int>(schema.inputs.size()); ++i) {
      if (schema.inputs[i].option == ParamOption::kSingle && node.input(i).empty()) {
        Report(CheckCode::kArity, path, label.str(),
               absl::StrCat("required input '", schema.inputs[i].name, "' (#", i,
                            ") is missing"));
      }
    }
    if (std::string why = CountOutside(node.output_size(), "outputs", schema.Label() + " gives",
                                       schema.min_output, schema.max_output);
        !why.empty()) {
      Report(CheckCode::kArity, path, label.str(), why);
    }
  }

  void CheckAttributes(const onnx::NodeProto& node, const OpSchema& schema,
                       const std::string& path, const NodeLabel& label) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      const AttrSpec* spec = schema.FindAttr(attribute.name());
      if (spec == nullptr) {
        Report(CheckCode::kUnknownAttribute, path, label.str(),
               absl::StrCat(schema.Label(), " has no attribute '", attribute.name(), "'"));
        continue;
      }
      onnx::AttributeProto::AttributeType actual = ActualType(attribute);
      if (actual != spec->type && !attribute.has_ref_attr_name()) {
        Report(CheckCode::kAttributeType, path, label.str(),
               absl::StrCat("attribute '", attribute.name(), "' is ",
                            onnx::AttributeProto::AttributeType_Name(actual), "; ",
                            schema.Label(), " wants ",
                            onnx::AttributeProto::AttributeType_Name(spec->type)));
      }
    }
    auto given = [&node](absl::string_view name) {
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.name() == name) return true;
      }
      return false;
    };
    for (const AttrSpec& spec : schema.attributes) {
      if (spec.required && !given(spec.name)) {
        Report(CheckCode::kMissingAttribute, path, label.str(),
               absl::StrCat("required attribute '", spec.name, "' is missing"));
      }
    }
  }

  // Checks the types `scope` gives the node's values (TypeOf(name)) against
  // the type constraints.
  template <typename TypeSource>
  void CheckTypes(const onnx::NodeProto& node, const OpSchema& schema, const std::string& path,
                  const NodeLabel& label, const TypeSource& scope) {
    // Type parameters bound so far, to check homogeneity: to a tensor's
    // element type, or to the type string of another type (elem 0).
    struct Binding {
      absl::string_view param;
      int32_t elem;
      std::string other;
    };
    absl::InlinedVector<Binding, 4> bound;
    auto check = [&](const std::string& value, const FormalParam* formal, const char* role) {
      if (value.empty() || formal == nullptr) return;
      const onnx::TypeProto* type = scope.TypeOf(value);
      if (type == nullptr) return;
      bool is_tensor = type->has_tensor_type();
      int32_t elem = is_tensor ? type->tensor_type().elem_type() : 0;
      if (is_tensor && (elem <= 0 || elem >= 64)) return;
      const TypeConstraint* constraint = schema.FindConstraint(formal->type_str);
      absl::Span<const absl::string_view> allowed = schema.AllowedTypes(*formal);
      bool ok;
      std::string other;  // the type string of a type other than a tensor
      if (is_tensor) {
        ok = (TensorElemMask(allowed) >> elem) & 1;
      } else {
        other = TypeString(*type);
        if (other.empty()) return;
        ok = false;
        for (absl::string_view t : allowed) ok |= t == other;
      }
      if (!ok) {
        Report(CheckCode::kTypeConstraint, path, label.str(),
               constraint == nullptr
                   ? absl::StrCat(role, " '", value, "' (", formal->name, ") is ",
                                  TypeString(*type), "; ", schema.Label(), " wants ",
                                  formal->type_str)
                   : absl::StrCat(role, " '", value, "' (", formal->name, ") is ",
                                  TypeString(*type), ", not allowed for ", formal->type_str,
                                  " by ", schema.Label(), " (allowed: ",
                                  absl::StrJoin(constraint->allowed_types, ", "), ")"));
        return;
      }
      if (constraint == nullptr || !formal->is_homogeneous) return;
      for (const Binding& binding : bound) {
        if (binding.param != formal->type_str) continue;
        if (binding.elem != elem || binding.other != other) {
          Report(CheckCode::kTypeConstraint, path, label.str(),
                 absl::StrCat(role, " '", value, "' (", formal->name, ") is ", TypeString(*type),
                              ", but ", formal->type_str, " is already bound to ",
                              BoundTypeName(binding.elem, binding.other)));
        }
        return;
      }
      bound.push_back({formal->type_str, elem, std::move(other)});
    };
    for (int i = 0; i < node.input_size(); ++i) {
      check(node.input(i), FormalFor(schema.inputs, i), "input");
    }
    for (int i = 0; i < node.output_size(); ++i) {
      check(node.output(i), FormalFor(schema.outputs, i), "output");
    }
  }

  // The type string of a binding: tensor element type `elem`, or `other`.
  static std::string BoundTypeName(int32_t elem, const std::string& other) {
    if (elem == 0) return other;
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(elem);
    return TypeString(type);
  }

  void CheckSubgraphs(const onnx::AttributeProto& attribute, const onnx::NodeProto& node,
                      const std::string& path, const Scope& scope, const OpsetMap& opsets,
                      int depth, bool in_function) {
    if (!attribute.has_g() && attribute.graphs_size() == 0) return;
    std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
    if (depth >= kMaxGraphDepth) {
      Report(CheckCode::kEmptyGraph, path, "", "subgraphs nested too deeply");
      return;
    }
    if (attribute.has_g()) {
      CheckGraph(attribute.g(), absl::StrCat(path, "/", attribute.name(), owner), &scope,
                 opsets, depth + 1, in_function);
    }
    for (int i = 0; i < attribute.graphs_size(); ++i) {
      CheckGraph(attribute.graphs(i), absl::StrCat(path, "/", attribute.name(), "[", i, "]", owner),
                 &scope, opsets, depth + 1, in_function);
    }
  }

  const onnx::ModelProto& model_;
  CheckReport& report_;
  CheckOptions options_;
  absl::flat_hash_map<std::string, const onnx::FunctionProto*> local_functions_;
  // The last few (domain, op, opset) resolved to a schema.
  struct Resolved {
    std::string domain = "\x01";  // matches no node until filled
    std::string op;
    int64_t opset = 0;
    const OpSchema* schema = nullptr;
  };
  std::array<Resolved, 8> resolved_;
  size_t next_resolved_ = 0;
};

}  // namespace

const char* CheckCodeName(CheckCode code) {
  static constexpr const char* kNames[] = {
      "ir-version",          "opset-import",      "duplicate-value",  "undefined-input",
      "not-topological",     "cycle",             "unknown-operator", "deprecated-operator",
      "arity",               "unknown-attribute", "attribute-type",   "missing-attribute",
      "type-constraint",     "tensor",            "sparse-tensor",    "function-cycle",
      "empty-graph",
  };
  return kNames[static_cast<int>(code)];
}

std::string CheckIssue::ToString() const {
  std::string where = node.empty() ? path : absl::StrCat(path, " \xE2\x80\xBA ", node);
  return absl::StrCat(where, ": ", is_warning ? "warning: " : "", CheckCodeName(code), ": ",
                      message);
}

int CheckReport::error_count() const {
  int errors = 0;
  for (const CheckIssue& issue : issues) errors += !issue.is_warning;
  return errors;
}

absl::Status CheckReport::status() const {
  for (const CheckIssue& issue : issues) {
    if (!issue.is_warning) return absl::InvalidArgumentError(issue.ToString());
  }
  return absl::OkStatus();
}

CheckReport CheckModel(const onnx::ModelProto& model, const CheckOptions& options) {
  CheckReport report;
  Checker(model, report, options).Run();
  return report;
}

CheckReport CheckFunctions(const onnx::ModelProto& model) {
  CheckReport report;
  Checker(model, report).RunFunctions();
  return report;
}

namespace {

// Types from a NodeChecker::TypeSource, for Checker::CheckTypes.
struct TypeLookup {
  const NodeChecker::TypeSource& types;
  const onnx::TypeProto* TypeOf(absl::string_view name) const { return types.TypeOf(name); }
};

}  // namespace

struct NodeChecker::State {
  State(const onnx::ModelProto& model, const Imports& imports) : checker(model, report) {
    opsets = checker.ImportedOpsets(imports);
    report.issues.clear();  // the imports are the full check's business
  }
  CheckReport report;
  Checker checker;
  OpsetMap opsets;
};

NodeChecker::NodeChecker(const onnx::ModelProto& model)
    : NodeChecker(model, model.opset_import()) {}

NodeChecker::NodeChecker(const onnx::ModelProto& model, const Imports& imports)
    : state_(std::make_unique<State>(model, imports)) {}

NodeChecker::~NodeChecker() = default;

absl::Status NodeChecker::Check(const onnx::NodeProto& node, const std::string& path,
                                const TypeSource& types) {
  CheckReport& report = state_->report;
  size_t before = report.issues.size();
  state_->checker.CheckOneNode(node, path, state_->opsets, TypeLookup{types});
  for (size_t i = before; i < report.issues.size(); ++i) {
    if (!report.issues[i].is_warning) {
      return absl::InvalidArgumentError(report.issues[i].ToString());
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::schema
