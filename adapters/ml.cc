// ai.onnx.ml: LabelEncoder 1 <-> 2 (classes_strings <-> key/value lists)
// and 4 -> 2 (tensor attributes to lists); TreeEnsembleRegressor and
// TreeEnsembleClassifier 3 -> 1 (the *_as_tensor attributes to float
// lists); TreeEnsembleRegressor 3 <-> TreeEnsemble 5 (the classic node
// table <-> tree roots with separate leaves).

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

constexpr char kMl[] = "ai.onnx.ml";

std::vector<int64_t> Ints(const onnx::NodeProto& node, absl::string_view name) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  return a == nullptr ? std::vector<int64_t>() : std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<std::string> Strings(const onnx::NodeProto& node, absl::string_view name) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  return a == nullptr ? std::vector<std::string>()
                      : std::vector<std::string>(a->strings().begin(), a->strings().end());
}

// A new attribute of `node`, `name` of `type`, for the caller to fill.
onnx::AttributeProto* AddAttribute(onnx::NodeProto& node, absl::string_view name,
                                   onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(std::string(name));
  a->set_type(type);
  return a;
}

void AddStrings(onnx::NodeProto& node, absl::string_view name,
                const std::vector<std::string>& values) {
  onnx::AttributeProto* a = AddAttribute(node, name, onnx::AttributeProto::STRINGS);
  for (const std::string& v : values) a->add_strings(v);
}

void AddFloats(onnx::NodeProto& node, absl::string_view name, const std::vector<double>& values) {
  onnx::AttributeProto* a = AddAttribute(node, name, onnx::AttributeProto::FLOATS);
  for (double v : values) a->add_floats(static_cast<float>(v));
}

void AddTensor(onnx::NodeProto& node, absl::string_view name, onnx::TensorProto tensor) {
  *AddAttribute(node, name, onnx::AttributeProto::TENSOR)->mutable_t() = std::move(tensor);
}

// One ints attribute of `node` per (name, values) of `columns`, in order.
void AddIntsColumns(
    onnx::NodeProto& node,
    std::initializer_list<std::pair<absl::string_view, const std::vector<int64_t>&>> columns) {
  for (const auto& [name, values] : columns) AddIntsAttribute(node, name, values);
}

// The interior-node columns both tree-ensemble forms have, by the same
// names: split feature, true and false branch, missing-value direction.
struct SplitColumns {
  std::vector<int64_t> features;
  std::vector<int64_t> true_ids;
  std::vector<int64_t> false_ids;
  std::vector<int64_t> missing;
};

SplitColumns ReadSplitColumns(const onnx::NodeProto& node) {
  return {Ints(node, "nodes_featureids"), Ints(node, "nodes_truenodeids"),
          Ints(node, "nodes_falsenodeids"), Ints(node, "nodes_missing_value_tracks_true")};
}

bool IsCount(const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

int32_t ElemTypeOf(const AdapterContext& ctx, const std::string& value) {
  const onnx::TypeProto* type = ctx.rewriter.TypeOf(value);
  return type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

}  // namespace

// LabelEncoder-1 maps strings to their index in classes_strings, or
// indices to strings; LabelEncoder-2 writes the same map as keys and values.
absl::Status LabelEncoderClassesToKeys(AdapterContext& ctx) {
  std::vector<std::string> classes = Strings(ctx.node, "classes_strings");
  std::vector<int64_t> indices(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) indices[i] = static_cast<int64_t>(i);
  int32_t input = ElemTypeOf(ctx, ctx.node.input(0));
  RemoveAttribute(ctx.node, "classes_strings");
  if (input == onnx::TensorProto::STRING) {
    AddStrings(ctx.node, "keys_strings", classes);
    AddIntsAttribute(ctx.node, "values_int64s", indices);
  } else if (input == onnx::TensorProto::INT64) {
    AddIntsAttribute(ctx.node, "keys_int64s", indices);
    AddStrings(ctx.node, "values_strings", classes);
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        "the element type of '", ctx.node.input(0), "' is unknown, so the direction of the "
        "classes_strings map cannot be told"));
  }
  ctx.changes.push_back({ChangeKind::kAttributeSet,
                         absl::StrCat("classes_strings as ", classes.size(), " keys and values")});
  return absl::OkStatus();
}

absl::Status LabelEncoderKeysToClasses(AdapterContext& ctx) {
  std::vector<std::string> key_strings = Strings(ctx.node, "keys_strings");
  std::vector<std::string> value_strings = Strings(ctx.node, "values_strings");
  std::vector<int64_t> key_ints = Ints(ctx.node, "keys_int64s");
  std::vector<int64_t> value_ints = Ints(ctx.node, "values_int64s");
  std::vector<std::string> classes;
  if (!key_strings.empty() && IsCount(value_ints) && value_ints.size() == key_strings.size()) {
    classes = key_strings;
  } else if (!value_strings.empty() && IsCount(key_ints) && key_ints.size() == value_strings.size()) {
    classes = value_strings;
  } else {
    return absl::FailedPreconditionError(
        "the map is not between strings and their positions 0, 1, ..., which is all "
        "LabelEncoder-1 can express");
  }
  if (FindAttribute(ctx.node, "default_float") != nullptr) {
    return absl::FailedPreconditionError("default_float is set; LabelEncoder-1 maps no floats");
  }
  for (const char* name : {"keys_strings", "values_strings", "keys_int64s", "values_int64s"}) {
    RemoveAttribute(ctx.node, name);
  }
  AddStrings(ctx.node, "classes_strings", classes);
  ctx.changes.push_back(
      {ChangeKind::kAttributeSet, absl::StrCat(classes.size(), " keys as classes_strings")});
  return absl::OkStatus();
}

// LabelEncoder-4's tensor attributes as version 2's lists (string, int64
// and float tensors only).
absl::Status LabelEncoderTensorsToLists(AdapterContext& ctx) {
  struct Moved {
    const char* tensor;
    const char* prefix;  // "keys" / "values" / "default"
  };
  for (const Moved& moved : {Moved{"keys_tensor", "keys"}, Moved{"values_tensor", "values"},
                             Moved{"default_tensor", "default"}}) {
    const onnx::AttributeProto* attribute = FindAttribute(ctx.node, moved.tensor);
    if (attribute == nullptr) continue;
    const onnx::TensorProto tensor = attribute->t();
    bool scalar = std::string_view(moved.prefix) == "default";
    std::string suffix;
    if (tensor.data_type() == onnx::TensorProto::STRING) {
      std::vector<std::string> values(tensor.string_data().begin(), tensor.string_data().end());
      RemoveAttribute(ctx.node, moved.tensor);
      if (scalar && values.size() == 1) SetStringAttribute(ctx.node, "default_string", values[0]);
      else AddStrings(ctx.node, absl::StrCat(moved.prefix, "_strings"), values);
    } else if (std::optional<std::vector<int64_t>> ints = IntValues(tensor);
               ints && tensor.data_type() == onnx::TensorProto::INT64) {
      RemoveAttribute(ctx.node, moved.tensor);
      if (scalar && ints->size() == 1) AddIntAttribute(ctx.node, "default_int64", (*ints)[0]);
      else AddIntsAttribute(ctx.node, absl::StrCat(moved.prefix, "_int64s"), *ints);
    } else if (std::optional<std::vector<double>> floats = FloatValues(tensor);
               floats && tensor.data_type() == onnx::TensorProto::FLOAT) {
      RemoveAttribute(ctx.node, moved.tensor);
      if (scalar && floats->size() == 1) {
        onnx::AttributeProto* a = ctx.node.add_attribute();
        a->set_name("default_float");
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(static_cast<float>((*floats)[0]));
      } else {
        AddFloats(ctx.node, absl::StrCat(moved.prefix, "_floats"), *floats);
      }
    } else {
      return absl::FailedPreconditionError(absl::StrCat(
          moved.tensor, " holds a type LabelEncoder-2 cannot express (it has string, int64 and "
          "float lists)"));
    }
    if (scalar && FindAttribute(ctx.node, "default_tensor") != nullptr) {
      return absl::FailedPreconditionError("default_tensor is not a single value");
    }
    ctx.changes.push_back({ChangeKind::kAttributeSet, absl::StrCat(moved.tensor, " as a list")});
  }
  return absl::OkStatus();
}

// The *_as_tensor attributes of tree ensembles (version 3) as version 1's
// float lists, when their values are floats.
absl::Status TreeTensorsToFloats(AdapterContext& ctx) {
  for (const char* name : {"base_values", "nodes_hitrates", "nodes_values", "target_weights",
                           "class_weights"}) {
    std::string tensor_name = absl::StrCat(name, "_as_tensor");
    const onnx::AttributeProto* attribute = FindAttribute(ctx.node, tensor_name);
    if (attribute == nullptr) continue;
    std::optional<std::vector<double>> values = FloatValues(attribute->t());
    bool exact = values.has_value();
    for (size_t i = 0; exact && i < values->size(); ++i) {
      exact = static_cast<double>(static_cast<float>((*values)[i])) == (*values)[i];
    }
    if (!exact) {
      return absl::FailedPreconditionError(absl::StrCat(
          tensor_name, " holds values a float cannot represent exactly; ", ctx.to.Label(),
          " has only float lists"));
    }
    RemoveAttribute(ctx.node, tensor_name);
    AddFloats(ctx.node, name, *values);
    ctx.changes.push_back(
        {ChangeKind::kAttributeSet, absl::StrCat(tensor_name, " as float list ", name)});
  }
  return absl::OkStatus();
}

namespace {

// TreeEnsemble's output takes its input's type; TreeEnsembleRegressor's is
// always float: the two agree only on float inputs.
absl::Status RequireFloatInput(const AdapterContext& ctx) {
  if (ElemTypeOf(ctx, ctx.node.input(0)) == onnx::TensorProto::FLOAT) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "'", ctx.node.input(0), "' is not known to be float; TreeEnsemble's output takes the "
      "input's type and TreeEnsembleRegressor's is always float: ", ctx.to.Label(),
      " cannot express the node"));
}

// TreeEnsemble-5's enumerations, by their classic names.
constexpr const char* kAggregates[] = {"AVERAGE", "SUM", "MIN", "MAX"};
constexpr const char* kTransforms[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
constexpr const char* kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",   "BRANCH_GT",
                                  "BRANCH_EQ",  "BRANCH_NEQ", "BRANCH_MEMBER"};

std::optional<int64_t> IndexOf(absl::Span<const char* const> names, absl::string_view name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

}  // namespace

// TreeEnsemble-5 -> TreeEnsembleRegressor-3: every tree's interior nodes
// and leaves numbered in one classic node table per tree.
absl::Status TreeEnsembleToRegressor(AdapterContext& ctx) {
  onnx::NodeProto& node = ctx.node;
  OC_RETURN_IF_ERROR(RequireFloatInput(ctx));
  const std::vector<int64_t> roots = Ints(node, "tree_roots");
  const auto [features, true_ids, false_ids, missing] = ReadSplitColumns(node);
  const std::vector<int64_t> true_leafs = Ints(node, "nodes_trueleafs");
  const std::vector<int64_t> false_leafs = Ints(node, "nodes_falseleafs");
  const std::vector<int64_t> leaf_targets = Ints(node, "leaf_targetids");
  const onnx::AttributeProto* modes_attribute = FindAttribute(node, "nodes_modes");
  const onnx::AttributeProto* splits_attribute = FindAttribute(node, "nodes_splits");
  const onnx::AttributeProto* weights_attribute = FindAttribute(node, "leaf_weights");
  if (modes_attribute == nullptr || splits_attribute == nullptr || weights_attribute == nullptr) {
    return absl::FailedPreconditionError("nodes_modes, nodes_splits or leaf_weights is missing");
  }
  const std::string& modes = modes_attribute->t().raw_data().empty()
                                 ? std::string()
                                 : modes_attribute->t().raw_data();
  std::vector<int64_t> mode_values;
  if (!modes.empty()) {
    for (unsigned char m : modes) mode_values.push_back(m);
  } else {
    mode_values.assign(modes_attribute->t().int32_data().begin(),
                       modes_attribute->t().int32_data().end());
  }
  std::optional<std::vector<double>> splits = FloatValues(splits_attribute->t());
  std::optional<std::vector<double>> weights = FloatValues(weights_attribute->t());
  size_t n = features.size();
  if (!splits || !weights || splits->size() != n || mode_values.size() != n ||
      true_ids.size() != n || false_ids.size() != n || true_leafs.size() != n ||
      false_leafs.size() != n || weights->size() != leaf_targets.size()) {
    return absl::FailedPreconditionError("the tree arrays do not have matching lengths");
  }
  for (int64_t m : mode_values) {
    if (m < 0 || m >= 6) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a node splits by ", m == 6 ? "set membership (BRANCH_MEMBER)" : "an unknown mode",
          ", which TreeEnsembleRegressor cannot express"));
    }
  }
  std::vector<int64_t> tree_ids, node_ids, classic_features, classic_true, classic_false,
      classic_missing, target_tree, target_node, target_id;
  std::vector<std::string> classic_modes;
  std::vector<double> classic_values, target_weights;
  for (size_t t = 0; t < roots.size(); ++t) {
    // Numbers each reached interior node and leaf of tree t, depth first.
    int64_t next_id = 0;
    std::vector<std::pair<int64_t, bool>> stack;  // in numbering order
    std::map<std::pair<int64_t, bool>, int64_t> ids;
    auto id_of = [&](int64_t index, bool leaf) {
      auto [it, inserted] = ids.try_emplace({index, leaf}, next_id);
      if (inserted) {
        ++next_id;
        stack.emplace_back(index, leaf);
      }
      return it->second;
    };
    id_of(roots[t], false);
    for (size_t k = 0; k < stack.size(); ++k) {
      auto [index, leaf] = stack[k];
      int64_t id = ids[{index, leaf}];
      if (index < 0 || (leaf ? index >= static_cast<int64_t>(leaf_targets.size())
                             : index >= static_cast<int64_t>(n))) {
        return absl::FailedPreconditionError(absl::StrCat("tree ", t, " refers to node ", index,
                                                          ", which does not exist"));
      }
      tree_ids.push_back(static_cast<int64_t>(t));
      node_ids.push_back(id);
      if (leaf) {
        classic_features.push_back(0);
        classic_modes.push_back("LEAF");
        classic_values.push_back(0);
        classic_true.push_back(0);
        classic_false.push_back(0);
        classic_missing.push_back(0);
        target_tree.push_back(static_cast<int64_t>(t));
        target_node.push_back(id);
        target_id.push_back(leaf_targets[index]);
        target_weights.push_back((*weights)[index]);
        continue;
      }
      classic_features.push_back(features[index]);
      classic_modes.push_back(kModes[mode_values[index]]);
      classic_values.push_back((*splits)[index]);
      classic_true.push_back(id_of(true_ids[index], true_leafs[index] != 0));
      classic_false.push_back(id_of(false_ids[index], false_leafs[index] != 0));
      classic_missing.push_back(static_cast<size_t>(index) < missing.size() ? missing[index] : 0);
    }
  }
  int64_t aggregate = 1, transform = 0;
  if (const onnx::AttributeProto* a = FindAttribute(node, "aggregate_function")) aggregate = a->i();
  if (const onnx::AttributeProto* a = FindAttribute(node, "post_transform")) transform = a->i();
  if (aggregate < 0 || aggregate > 3 || transform < 0 || transform > 4) {
    return absl::FailedPreconditionError("aggregate_function or post_transform is out of range");
  }
  bool double_splits = splits_attribute->t().data_type() == onnx::TensorProto::DOUBLE;
  int64_t targets = 1;
  if (const onnx::AttributeProto* a = FindAttribute(node, "n_targets")) targets = a->i();
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> none;
  node.mutable_attribute()->Swap(&none);
  node.set_op_type("TreeEnsembleRegressor");
  SetStringAttribute(node, "aggregate_function", kAggregates[aggregate]);
  SetStringAttribute(node, "post_transform", kTransforms[transform]);
  AddIntAttribute(node, "n_targets", targets);
  AddIntsColumns(node, {{"nodes_treeids", tree_ids},
                       {"nodes_nodeids", node_ids},
                       {"nodes_featureids", classic_features}});
  AddStrings(node, "nodes_modes", classic_modes);
  if (double_splits) {
    onnx::TensorProto values;
    values.set_data_type(onnx::TensorProto::DOUBLE);
    values.add_dims(static_cast<int64_t>(classic_values.size()));
    for (double v : classic_values) values.add_double_data(v);
    AddTensor(node, "nodes_values_as_tensor", std::move(values));
  } else {
    AddFloats(node, "nodes_values", classic_values);
  }
  AddIntsColumns(node, {{"nodes_truenodeids", classic_true},
                       {"nodes_falsenodeids", classic_false},
                       {"nodes_missing_value_tracks_true", classic_missing},
                       {"target_treeids", target_tree},
                       {"target_nodeids", target_node},
                       {"target_ids", target_id}});
  AddFloats(node, "target_weights", target_weights);
  ctx.changes.push_back({ChangeKind::kNodeReplaced,
                         absl::StrCat("TreeEnsemble -> TreeEnsembleRegressor: ", roots.size(),
                                      " trees, ", tree_ids.size(), " nodes")});
  return absl::OkStatus();
}

namespace {

// A float tensor attribute or, failing that, a float list attribute.
std::optional<std::vector<double>> FloatsOrTensor(const onnx::NodeProto& node,
                                                  absl::string_view name) {
  if (const onnx::AttributeProto* t = FindAttribute(node, absl::StrCat(name, "_as_tensor"))) {
    return FloatValues(t->t());
  }
  const onnx::AttributeProto* a = FindAttribute(node, name);
  if (a == nullptr) return std::vector<double>();
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

// A 1-D tensor of `elem_type` (float or double) holding `values`.
onnx::TensorProto RealTensor(int32_t elem_type, const std::vector<double>& values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(elem_type);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (double v : values) {
    if (elem_type == onnx::TensorProto::DOUBLE) tensor.add_double_data(v);
    else tensor.add_float_data(static_cast<float>(v));
  }
  return tensor;
}

}  // namespace

// TreeEnsembleRegressor-3 (deprecated in version 5) -> TreeEnsemble-5:
// interior nodes and leaves in separate tables, trees by their roots.
absl::Status RegressorToTreeEnsemble(AdapterContext& ctx) {
  onnx::NodeProto& node = ctx.node;
  OC_RETURN_IF_ERROR(RequireFloatInput(ctx));
  const std::vector<int64_t> tree_ids = Ints(node, "nodes_treeids");
  const std::vector<int64_t> node_ids = Ints(node, "nodes_nodeids");
  const auto [features, true_ids, false_ids, missing] = ReadSplitColumns(node);
  const std::vector<std::string> modes = Strings(node, "nodes_modes");
  std::optional<std::vector<double>> values = FloatsOrTensor(node, "nodes_values");
  std::optional<std::vector<double>> weights = FloatsOrTensor(node, "target_weights");
  std::optional<std::vector<double>> base = FloatsOrTensor(node, "base_values");
  const std::vector<int64_t> target_trees = Ints(node, "target_treeids");
  const std::vector<int64_t> target_nodes = Ints(node, "target_nodeids");
  const std::vector<int64_t> target_ids = Ints(node, "target_ids");
  size_t n = node_ids.size();
  if (!values || !weights || !base || tree_ids.size() != n || features.size() != n ||
      modes.size() != n || true_ids.size() != n || false_ids.size() != n ||
      (!values->empty() && values->size() != n) || weights->size() != target_ids.size()) {
    return absl::FailedPreconditionError("the tree arrays do not have matching lengths");
  }
  std::string aggregate = "SUM", transform = "NONE";
  if (const onnx::AttributeProto* a = FindAttribute(node, "aggregate_function")) aggregate = a->s();
  if (const onnx::AttributeProto* a = FindAttribute(node, "post_transform")) transform = a->s();
  std::optional<int64_t> aggregate_index = IndexOf(kAggregates, aggregate);
  std::optional<int64_t> transform_index = IndexOf(kTransforms, transform);
  bool has_base = std::any_of(base->begin(), base->end(), [](double v) { return v != 0; });
  if (!aggregate_index || !transform_index || (has_base && transform != "NONE")) {
    return absl::FailedPreconditionError(
        "base values before a post transform have no place in TreeEnsemble");
  }
  // Leaf targets by (tree, node): at most one each.
  std::map<std::pair<int64_t, int64_t>, size_t> target_of;
  for (size_t k = 0; k < target_ids.size(); ++k) {
    if (!target_of.try_emplace({target_trees[k], target_nodes[k]}, k).second) {
      return absl::FailedPreconditionError(
          "a leaf has several target weights; a TreeEnsemble leaf has one");
    }
  }
  std::map<std::pair<int64_t, int64_t>, size_t> classic;  // (tree, node id) -> index
  for (size_t i = 0; i < n; ++i) classic[{tree_ids[i], node_ids[i]}] = i;
  std::vector<int64_t> interior_index(n, -1), leaf_index(n, -1);
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
  int64_t interiors = 0;
  for (size_t i = 0; i < n; ++i) {
    if (modes[i] != "LEAF") {
      interior_index[i] = interiors++;
      continue;
    }
    auto target = target_of.find({tree_ids[i], node_ids[i]});
    if (target == target_of.end() && (aggregate == "MIN" || aggregate == "MAX")) {
      return absl::FailedPreconditionError("a leaf without a target weight under MIN or MAX");
    }
    leaf_index[i] = static_cast<int64_t>(leaf_targets.size());
    leaf_targets.push_back(target == target_of.end() ? 0 : target_ids[target->second]);
    leaf_weights.push_back(target == target_of.end() ? 0.0 : (*weights)[target->second]);
  }
  std::vector<int64_t> te_features, te_true, te_false, te_true_leaf, te_false_leaf, te_missing,
      roots;
  std::vector<double> te_splits;
  std::string te_modes;
  auto child = [&](size_t i, int64_t id, std::vector<int64_t>& ids,
                   std::vector<int64_t>& leafs) -> absl::Status {
    auto it = classic.find({tree_ids[i], id});
    if (it == classic.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("tree ", tree_ids[i], " refers to node ", id, ", which does not exist"));
    }
    bool leaf = leaf_index[it->second] >= 0;
    ids.push_back(leaf ? leaf_index[it->second] : interior_index[it->second]);
    leafs.push_back(leaf ? 1 : 0);
    return absl::OkStatus();
  };
  for (size_t i = 0; i < n; ++i) {
    if (interior_index[i] < 0) continue;
    std::optional<int64_t> mode = IndexOf(kModes, modes[i]);
    if (!mode) return absl::FailedPreconditionError(absl::StrCat("unknown mode ", modes[i]));
    te_features.push_back(features[i]);
    te_modes.push_back(static_cast<char>(*mode));
    te_splits.push_back(values->empty() ? 0.0 : (*values)[i]);
    te_missing.push_back(i < missing.size() ? missing[i] : 0);
    OC_RETURN_IF_ERROR(child(i, true_ids[i], te_true, te_true_leaf));
    OC_RETURN_IF_ERROR(child(i, false_ids[i], te_false, te_false_leaf));
  }
  // Each tree's root: its node that no node of the tree points to.
  std::set<int64_t> trees(tree_ids.begin(), tree_ids.end());
  std::map<std::pair<int64_t, int64_t>, bool> is_child;
  for (size_t i = 0; i < n; ++i) {
    if (interior_index[i] < 0) continue;
    is_child[{tree_ids[i], true_ids[i]}] = true;
    is_child[{tree_ids[i], false_ids[i]}] = true;
  }
  for (int64_t tree : trees) {
    std::optional<size_t> root;
    for (size_t i = 0; i < n; ++i) {
      if (tree_ids[i] == tree && !is_child.contains({tree, node_ids[i]})) root = i;
    }
    if (!root) return absl::FailedPreconditionError(absl::StrCat("tree ", tree, " has no root"));
    if (interior_index[*root] >= 0) {
      roots.push_back(interior_index[*root]);
      continue;
    }
    // A tree that is one leaf: a split whose both branches reach it.
    roots.push_back(static_cast<int64_t>(te_features.size()));
    te_features.push_back(0);
    te_modes.push_back(0);
    te_splits.push_back(0.0);
    te_missing.push_back(0);
    for (auto* ids : {&te_true, &te_false}) ids->push_back(leaf_index[*root]);
    for (auto* leafs : {&te_true_leaf, &te_false_leaf}) leafs->push_back(1);
  }
  int64_t targets = 1;
  if (const onnx::AttributeProto* a = FindAttribute(node, "n_targets")) targets = a->i();
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> none;
  node.mutable_attribute()->Swap(&none);
  node.set_op_type("TreeEnsemble");
  AddIntAttribute(node, "aggregate_function", *aggregate_index);
  AddIntAttribute(node, "post_transform", *transform_index);
  AddIntAttribute(node, "n_targets", targets);
  AddIntsColumns(node, {{"tree_roots", roots}, {"nodes_featureids", te_features}});
  onnx::TensorProto modes_tensor;
  modes_tensor.set_data_type(onnx::TensorProto::UINT8);
  modes_tensor.add_dims(static_cast<int64_t>(te_modes.size()));
  modes_tensor.set_raw_data(te_modes);
  AddTensor(node, "nodes_modes", std::move(modes_tensor));
  AddTensor(node, "nodes_splits", RealTensor(onnx::TensorProto::FLOAT, te_splits));
  AddIntsColumns(node, {{"nodes_truenodeids", te_true},
                       {"nodes_trueleafs", te_true_leaf},
                       {"nodes_falsenodeids", te_false},
                       {"nodes_falseleafs", te_false_leaf},
                       {"nodes_missing_value_tracks_true", te_missing},
                       {"leaf_targetids", leaf_targets}});
  AddTensor(node, "leaf_weights", RealTensor(onnx::TensorProto::FLOAT, leaf_weights));
  if (has_base) {
    absl::StatusOr<std::string> base_name =
        ctx.rewriter.AddConstant(RealTensor(onnx::TensorProto::FLOAT, *base));
    if (!base_name.ok()) return base_name.status();
    onnx::NodeProto add;
    add.set_op_type("Add");
    add.set_name(ctx.rewriter.FreshName(node.name().empty() ? "TreeEnsemble_base" : node.name()));
    const std::string original = node.output(0);
    add.add_input(ctx.rewriter.DetachOutput(0));
    add.add_input(*base_name);
    add.add_output(original);
    ctx.rewriter.InsertAfter(std::move(add));
  }
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced,
       absl::StrCat("TreeEnsembleRegressor -> TreeEnsemble: ", roots.size(), " trees")});
  return absl::OkStatus();
}

// TreeEnsembleClassifier is deprecated in ai.onnx.ml 5 and TreeEnsemble
// gives scores only.
absl::Status ClassifierHasNoSuccessor(AdapterContext& ctx) {
  return absl::FailedPreconditionError(absl::StrCat(
      ctx.to.Label(), " is deprecated, and TreeEnsemble, its successor, gives no labels"));
}

}  // namespace onnxconvert::adapters
