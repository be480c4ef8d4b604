// The ai.onnx.ml kernels the backend corpus exercises: ArrayFeatureExtractor,
// Binarizer, LabelEncoder (1, 2 and 4) and TreeEnsemble (5).

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <type_traits>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::ml_ops {

// ArrayFeatureExtractor: the elements of the last axis that Y's indices
// (flattened) name; a 1-D input gives one row.
Outputs ArrayFeatureExtractorKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [x, y] = inputs;
  if (x->rank() == 0) return call.Error("X is a scalar");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> indices, Int64s(call, *y));
  int64_t last = x->dims().back();
  for (int64_t i : indices) {
    if (i < 0 || i >= last) return call.Error(absl::StrCat("index ", i, " is out of range"));
  }
  int64_t n = static_cast<int64_t>(indices.size());
  std::vector<int64_t> dims = x->rank() == 1 ? std::vector<int64_t>{1, n} : x->dims();
  dims.back() = n;
  int64_t rows = last == 0 ? 0 : x->size() / last;
  std::vector<int64_t> offsets;
  offsets.reserve(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i : indices) offsets.push_back(r * last + i);
  }
  return One(Pick(*x, dims, offsets));
}

// Binarizer: 1 where X > threshold, else 0.
Outputs BinarizerKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  double threshold = call.Float("threshold", 0);
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    absl::StatusOr<Tensor> t = MapUnary<T, T>(call, *x, x->elem_type(), [&](Compute<T> a, absl::Status&) {
      return static_cast<double>(a) > threshold ? Compute<T>{1} : Compute<T>{0};
    });
    return t.ok() ? One(*std::move(t)) : Outputs(t.status());
  });
}

// A LabelEncoder key: a string, an integer or a float (NaN equal to NaN).
using Key = std::variant<std::string, int64_t, double>;

// The keys of a tensor (or of an attribute's list) as Keys.
absl::StatusOr<std::vector<Key>> KeysOf(const KernelCall& call, const Tensor& t) {
  std::vector<Key> keys;
  if (t.elem_type() == onnx::TensorProto::STRING) {
    for (const std::string& s : t.strings()) keys.emplace_back(s);
    return keys;
  }
  bool held = VisitElementType(t.elem_type(), [&](auto v) {
    using T = decltype(v);
    for (const T& x : t.data<T>()) {
      if constexpr (kIsFloat<T>) {
        double d = Load(x);
        keys.emplace_back(std::isnan(d) ? std::numeric_limits<double>::quiet_NaN() : d);
      } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, uint64_t>) {
        keys.emplace_back(static_cast<int64_t>(x));
      }
    }
  });
  if (!held || static_cast<int64_t>(keys.size()) != t.size()) {
    return call.Error(absl::StrCat("keys of ", ElementTypeName(t.elem_type()))); 
  }
  return keys;
}

// Orders keys with NaN equal to NaN (and above every other number).
struct KeyLess {
  bool operator()(const Key& a, const Key& b) const {
    if (a.index() != b.index()) return a.index() < b.index();
    if (const double* x = std::get_if<double>(&a)) {
      double y = std::get<double>(b);
      if (std::isnan(*x) || std::isnan(y)) return !std::isnan(*x) && std::isnan(y);
      return *x < y;
    }
    return a < b;
  }
};

// A tensor of `type` and `values` given as attribute lists.
Tensor ListTensor(int32_t type, const onnx::AttributeProto& a) {
  if (type == onnx::TensorProto::STRING) {
    Tensor t(type, {a.strings_size()});
    for (int i = 0; i < a.strings_size(); ++i) t.strings()[i] = a.strings(i);
    return t;
  }
  if (type == onnx::TensorProto::INT64) {
    Tensor t(type, {a.ints_size()});
    for (int i = 0; i < a.ints_size(); ++i) t.data<int64_t>()[i] = a.ints(i);
    return t;
  }
  Tensor t(type, {a.floats_size()});
  for (int i = 0; i < a.floats_size(); ++i) t.data<float>()[i] = a.floats(i);
  return t;
}

// The first of the attributes `names` (their types in `types`) the node
// sets, as a tensor; nullopt when none is set.
absl::StatusOr<std::optional<Tensor>> FirstList(const KernelCall& call,
                                                const std::vector<std::string>& names,
                                                const std::vector<int32_t>& types,
                                                const char* tensor_name) {
  if (call.since_version() >= 4) {
    if (const onnx::AttributeProto* a = call.attribute(tensor_name); a != nullptr && a->has_t()) {
      absl::StatusOr<Tensor> t = FromProto(a->t());
      if (!t.ok()) return call.Error(t.status().message());
      return std::optional<Tensor>(*std::move(t));
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const onnx::AttributeProto* a = call.attribute(names[i]);
    if (a != nullptr && (a->strings_size() + a->ints_size() + a->floats_size() > 0)) {
      return std::optional<Tensor>(ListTensor(types[i], *a));
    }
  }
  return std::optional<Tensor>();
}

// The default value of a LabelEncoder whose values are of `type`.
absl::StatusOr<Tensor> DefaultValue(const KernelCall& call, int32_t type) {
  if (call.since_version() >= 4) {
    if (const onnx::AttributeProto* a = call.attribute("default_tensor"); a != nullptr) {
      absl::StatusOr<Tensor> t = FromProto(a->t());
      if (!t.ok()) return call.Error(t.status().message());
      if (t->size() != 1 || t->elem_type() != type) {
        return call.Error("default_tensor is not one element of the values' type");
      }
      t->Reshape({1});
      return t;
    }
  }
  Tensor t(type, {1});
  if (type == onnx::TensorProto::STRING) {
    const onnx::AttributeProto* a = call.attribute("default_string");
    t.strings()[0] = a == nullptr ? "_Unused" : a->s();
    return t;
  }
  if (type == onnx::TensorProto::FLOAT) {
    t.data<float>()[0] = call.Float("default_float", 0);
    return t;
  }
  if (type == onnx::TensorProto::DOUBLE) {
    t.data<double>()[0] = -0.0;  // default_tensor's default for floats
    return t;
  }
  int64_t fallback = call.Int("default_int64", -1);
  bool held = VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T> && kIsNumber<T>) t.data<T>()[0] = static_cast<T>(fallback);
  });
  if (!held || !(type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32 ||
                 type == onnx::TensorProto::INT16)) {
    return call.Error(NoKernel(type));
  }
  return t;
}

// LabelEncoder: each element of X mapped through keys -> values (from
// the attribute lists, or the tensors from 4; classes_strings in 1), the
// default where X's element is no key.
Outputs LabelEncoderKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  std::optional<Tensor> keys, values;
  if (call.since_version() < 2) {
    const onnx::AttributeProto* classes = call.attribute("classes_strings");
    if (classes == nullptr) return call.Error("classes_strings is unset");
    Tensor names = ListTensor(onnx::TensorProto::STRING, *classes);
    Tensor positions(onnx::TensorProto::INT64, names.dims());
    for (int64_t i = 0; i < names.size(); ++i) positions.data<int64_t>()[i] = i;
    bool to_int = x->elem_type() == onnx::TensorProto::STRING;
    keys = to_int ? names : positions;
    values = to_int ? positions : names;
  } else {
    const std::vector<int32_t> types = {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64,
                                        onnx::TensorProto::STRING};
    OC_ASSIGN_OR_RETURN(keys, FirstList(call, {"keys_floats", "keys_int64s", "keys_strings"},
                                        types, "keys_tensor"));
    OC_ASSIGN_OR_RETURN(values,
                        FirstList(call, {"values_floats", "values_int64s", "values_strings"},
                                  types, "values_tensor"));
  }
  if (!keys || !values || keys->size() != values->size()) {
    return call.Error("keys and values are unset or differ in length");
  }
  if (keys->elem_type() != x->elem_type()) return call.Error("X's type is not the keys' type");
  OC_ASSIGN_OR_RETURN(std::vector<Key> key_list, KeysOf(call, *keys));
  OC_ASSIGN_OR_RETURN(std::vector<Key> inputs, KeysOf(call, *x));
  std::map<Key, int64_t, KeyLess> index;
  for (size_t i = 0; i < key_list.size(); ++i) index.emplace(key_list[i], static_cast<int64_t>(i));
  // The values with the default appended at the end.
  OC_ASSIGN_OR_RETURN(Tensor fallback, DefaultValue(call, values->elem_type()));
  Tensor table(values->elem_type(), {values->size() + 1});
  for (int64_t i = 0; i < values->size(); ++i) CopyElement(*values, i, table, i);
  CopyElement(fallback, 0, table, values->size());
  std::vector<int64_t> offsets(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto it = index.find(inputs[i]);
    offsets[i] = it == index.end() ? values->size() : it->second;
  }
  return One(Pick(table, x->dims(), offsets));
}

// ---------------------------------------------------------------- TreeEnsemble

enum class Aggregate { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };
enum class PostTransform { kNone = 0, kSoftmax = 1, kLogistic = 2 };
enum class Branch { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };

// The elements of a TENSOR attribute as doubles (or an error naming it).
absl::StatusOr<std::vector<double>> DoublesOf(const KernelCall& call, const char* name,
                                              bool required) {
  const onnx::AttributeProto* a = call.attribute(name);
  if (a == nullptr || !a->has_t()) {
    if (required) return call.Error(absl::StrCat(name, " is unset"));
    return std::vector<double>();
  }
  absl::StatusOr<Tensor> t = FromProto(a->t());
  if (!t.ok()) return call.Error(t.status().message());
  return Doubles(call, *t);
}

std::vector<int64_t> IntsOr(const KernelCall& call, const char* name) {
  return call.Ints(name).value_or(std::vector<int64_t>());
}

// The trees of a TreeEnsemble node, checked.
struct Ensemble {
  std::vector<double> splits;
  std::vector<int64_t> features, true_ids, false_ids, true_leafs, false_leafs, missing_true;
  std::vector<Branch> modes;
  std::vector<std::vector<double>> members;  // per node (kMember only)
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
  std::vector<int64_t> roots;
  int64_t targets = 0;
};

absl::StatusOr<Ensemble> ReadEnsemble(const KernelCall& call) {
  Ensemble e;
  OC_ASSIGN_OR_RETURN(e.splits, DoublesOf(call, "nodes_splits", true));
  OC_ASSIGN_OR_RETURN(std::vector<double> modes, DoublesOf(call, "nodes_modes", true));
  OC_ASSIGN_OR_RETURN(e.leaf_weights, DoublesOf(call, "leaf_weights", true));
  OC_ASSIGN_OR_RETURN(std::vector<double> members, DoublesOf(call, "membership_values", false));
  e.features = IntsOr(call, "nodes_featureids");
  e.true_ids = IntsOr(call, "nodes_truenodeids");
  e.false_ids = IntsOr(call, "nodes_falsenodeids");
  e.true_leafs = IntsOr(call, "nodes_trueleafs");
  e.false_leafs = IntsOr(call, "nodes_falseleafs");
  e.missing_true = IntsOr(call, "nodes_missing_value_tracks_true");
  e.leaf_targets = IntsOr(call, "leaf_targetids");
  e.roots = IntsOr(call, "tree_roots");
  e.targets = call.Int("n_targets", 0);
  size_t n = e.splits.size();
  if (modes.size() != n || e.features.size() != n || e.true_ids.size() != n ||
      e.false_ids.size() != n || e.true_leafs.size() != n || e.false_leafs.size() != n ||
      (!e.missing_true.empty() && e.missing_true.size() != n)) {
    return call.Error("the nodes_* attributes differ in length");
  }
  if (e.missing_true.empty()) e.missing_true.assign(n, 0);
  if (e.leaf_targets.size() != e.leaf_weights.size()) {
    return call.Error("leaf_targetids and leaf_weights differ in length");
  }
  for (int64_t t : e.leaf_targets) {
    if (t < 0 || t >= e.targets) return call.Error("a leaf's target is out of range");
  }
  // The members of each set-membership node, in node order, NaN-delimited.
  size_t next = 0;
  e.members.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!(modes[i] >= 0 && modes[i] <= 6)) return call.Error("a node's mode is unknown");
    e.modes.push_back(static_cast<Branch>(static_cast<int>(modes[i])));
    if (e.modes[i] != Branch::kMember) continue;
    while (next < members.size() && !std::isnan(members[next])) e.members[i].push_back(members[next++]);
    if (next >= members.size()) return call.Error("membership_values end before a member node's set");
    ++next;
  }
  auto bad = [&](int64_t id, bool leaf) {
    return id < 0 || id >= static_cast<int64_t>(leaf ? e.leaf_weights.size() : n);
  };
  for (size_t i = 0; i < n; ++i) {
    if (bad(e.true_ids[i], e.true_leafs[i] != 0) || bad(e.false_ids[i], e.false_leafs[i] != 0)) {
      return call.Error("a node's branch is out of range");
    }
  }
  for (int64_t root : e.roots) {
    if (root < 0 || (root >= static_cast<int64_t>(n) && root >= static_cast<int64_t>(e.leaf_weights.size()))) {
      return call.Error("a tree root is out of range");
    }
  }
  return e;
}

bool Takes(Branch mode, double x, double split, const std::vector<double>& members) {
  switch (mode) {
    case Branch::kLeq: return x <= split;
    case Branch::kLt: return x < split;
    case Branch::kGte: return x >= split;
    case Branch::kGt: return x > split;
    case Branch::kEq: return x == split;
    case Branch::kNeq: return x != split;
    case Branch::kMember: return std::find(members.begin(), members.end(), x) != members.end();
  }
  return false;
}

// The leaf one tree sends `row` to, or -1 for a cycle.
int64_t LeafOf(const Ensemble& e, int64_t root, absl::Span<const double> row) {
  size_t n = e.splits.size();
  // A root whose branches both lead to one leaf is that leaf itself.
  if (root < static_cast<int64_t>(n) && e.true_leafs[root] && e.false_leafs[root] &&
      e.true_ids[root] == e.false_ids[root]) {
    return root;
  }
  if (root >= static_cast<int64_t>(n)) return -1;
  int64_t node = root;
  for (size_t steps = 0; steps <= n; ++steps) {
    double x = row[e.features[node]];
    bool take = Takes(e.modes[node], x, e.splits[node], e.members[node]) ||
                (std::isnan(x) && e.missing_true[node] != 0);
    int64_t id = take ? e.true_ids[node] : e.false_ids[node];
    if (take ? e.true_leafs[node] : e.false_leafs[node]) return id;
    node = id;
  }
  return -1;
}

// TreeEnsemble-5: each row of X sent down every tree; the leaves' weights
// aggregated per target (sum, average, min, max) and post-transformed
// (none, softmax, logistic; the others are refused).
Outputs TreeEnsembleKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  if (x->rank() != 2) return call.Error("X is not 2-D");
  OC_ASSIGN_OR_RETURN(Ensemble e, ReadEnsemble(call));
  int64_t aggregate = call.Int("aggregate_function", 1);
  int64_t transform = call.Int("post_transform", 0);
  if (aggregate < 0 || aggregate > 3) return call.Error("aggregate_function is unknown");
  if (transform < 0 || transform > 2) {
    return call.Error(absl::StrCat("post_transform ", transform, " is not supported"));
  }
  int64_t rows = x->dims()[0], features = x->dims()[1];
  for (int64_t f : e.features) {
    if (f < 0 || f >= features) return call.Error("a node's feature is out of range");
  }
  std::vector<double> data;
  double type_max = 0;  // the largest finite value of X's type
  VisitElementType(x->elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsFloat<T>) {
      for (const T& a : x->data<T>()) data.push_back(Load(a));
      type_max = std::is_same_v<T, Half>    ? 65504.0
                 : std::is_same_v<T, BHalf> ? 3.3895313892515355e38
                                            : static_cast<double>(std::numeric_limits<Compute<T>>::max());
    }
  });
  if (static_cast<int64_t>(data.size()) != x->size() || type_max == 0) {
    return call.Error(NoKernel(x->elem_type()));
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, {rows, e.targets}));
  // Min and max start from the extremes of X's type, as the reference does.
  double start = aggregate == 2 ? type_max : aggregate == 3 ? -type_max : 0.0;
  std::vector<double> out(count, start);
  for (int64_t r = 0; r < rows; ++r) {
    absl::Span<const double> row(data.data() + r * features, features);
    double* target = out.data() + r * e.targets;
    for (int64_t root : e.roots) {
      int64_t leaf = LeafOf(e, root, row);
      if (leaf < 0 || leaf >= static_cast<int64_t>(e.leaf_weights.size())) {
        return call.Error("a tree does not reach a leaf");
      }
      double w = e.leaf_weights[leaf];
      double& t = target[e.leaf_targets[leaf]];
      switch (static_cast<Aggregate>(aggregate)) {
        case Aggregate::kSum: t += w; break;
        case Aggregate::kAverage: t += w / static_cast<double>(e.roots.size()); break;
        case Aggregate::kMin: t = std::min(t, w); break;
        case Aggregate::kMax: t = std::max(t, w); break;
      }
    }
    if (transform == static_cast<int64_t>(PostTransform::kLogistic)) {
      for (int64_t k = 0; k < e.targets; ++k) target[k] = 1 / (1 + std::exp(-target[k]));
    } else if (transform == static_cast<int64_t>(PostTransform::kSoftmax) && e.targets > 0) {
      double max = *std::max_element(target, target + e.targets);
      double sum = 0;
      for (int64_t k = 0; k < e.targets; ++k) sum += std::exp(target[k] - max);
      for (int64_t k = 0; k < e.targets; ++k) target[k] = std::exp(target[k] - max) / sum;
    }
  }
  return One(FloatTensor(x->elem_type(), {rows, e.targets}, out));
}

}  // namespace onnxconvert::eval::ml_ops
