#include "eval/input_roles.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/tensor_util.h"

namespace onnxconvert::eval {
namespace {

// The role table: (op, input) -> role, with the input and axis it depends on.
constexpr RoleRule kRoleRules[] = {
    {"Gather", 1, Role::kIndex, 0, "axis", 0},
    {"GatherElements", 1, Role::kIndex, 0, "axis", 0},
    {"Scatter", 1, Role::kIndex, 0, "axis", 0},
    {"ScatterElements", 1, Role::kIndex, 0, "axis", 0},
    {"GatherND", 1, Role::kIndexTuple, 0, "batch_dims", 0},
    {"ScatterND", 1, Role::kIndexTuple, 0, "", 0},
    {"OneHot", 0, Role::kOneHotIndex, 1, "", 0},
    {"OneHot", 1, Role::kDepth, -1, "", 0},
    {"Reshape", 1, Role::kReshapeShape, 0, "", 0},
    {"Expand", 1, Role::kExpandShape, 0, "", 0},
    {"Tile", 1, Role::kRepeats, 0, "", 0},
    {"ConstantOfShape", 0, Role::kSmallShape, -1, "", 0},
    {"Resize", 2, Role::kScales, 0, "", 0},
    {"Resize", 3, Role::kSizes, 0, "", 0},
    {"Upsample", 1, Role::kScales, 0, "", 0},
    {"CenterCropPad", 1, Role::kSizes, 0, "", 0},
    {"Range", 0, Role::kRangeBound, -1, "", 0},
    {"Range", 1, Role::kRangeBound, -1, "", 0},
    {"Range", 2, Role::kRangeDelta, -1, "", 0},
    {"TopK", 1, Role::kTopK, 0, "axis", -1},
    {"Split", 1, Role::kSplit, 0, "axis", 0},
    {"Slice", 1, Role::kSliceBound, 0, "", 0},
    {"Slice", 2, Role::kSliceBound, 0, "", 0},
    {"Slice", 3, Role::kSliceAxes, 0, "", 0},
    {"Slice", 4, Role::kSliceSteps, -1, "", 0},
    {"Pad", 1, Role::kPads, 0, "", 0},
    {"Pad", 3, Role::kAxes, 0, "", 0},
    {"Squeeze", 1, Role::kSqueezeAxes, 0, "", 0},
    {"Unsqueeze", 1, Role::kUnsqueezeAxes, 0, "", 0},
    {"ReduceL1", 1, Role::kAxes, 0, "", 0},
    {"ReduceL2", 1, Role::kAxes, 0, "", 0},
    {"ReduceLogSum", 1, Role::kAxes, 0, "", 0},
    {"ReduceLogSumExp", 1, Role::kAxes, 0, "", 0},
    {"ReduceMax", 1, Role::kAxes, 0, "", 0},
    {"ReduceMean", 1, Role::kAxes, 0, "", 0},
    {"ReduceMin", 1, Role::kAxes, 0, "", 0},
    {"ReduceProd", 1, Role::kAxes, 0, "", 0},
    {"ReduceSum", 1, Role::kAxes, 0, "", 0},
    {"ReduceSumSquare", 1, Role::kAxes, 0, "", 0},
    {"CumSum", 1, Role::kAxis, 0, "", 0},
    {"CumProd", 1, Role::kAxis, 0, "", 0},
    {"NegativeLogLikelihoodLoss", 1, Role::kClassIndex, 0, "", 1},
    {"SoftmaxCrossEntropyLoss", 1, Role::kClassIndex, 0, "", 1},
    {"NonMaxSuppression", 2, Role::kCount, -1, "", 0},
    {"NonMaxSuppression", 3, Role::kUnitInterval, -1, "", 0},
    {"NonMaxSuppression", 4, Role::kUnitInterval, -1, "", 0},
    {"Loop", 0, Role::kCount, -1, "", 0},
    {"Dropout", 1, Role::kUnitInterval, -1, "", 0},
    {"Bernoulli", 0, Role::kUnitInterval, -1, "", 0},
    {"Div", 1, Role::kNonZero, -1, "", 0},
    {"Mod", 1, Role::kNonZero, -1, "", 0},
    {"QuantizeLinear", 1, Role::kScale, -1, "", 0},
    {"DequantizeLinear", 1, Role::kScale, -1, "", 0},
    {"BatchNormalization", 4, Role::kScale, -1, "", 0},  // a variance
    {"ReverseSequence", 1, Role::kSequenceLengths, 0, "time_axis", 0},
};

// Ops whose input 0 passes its values on to their output 0.
constexpr absl::string_view kPassThroughOps[] = {"Identity", "Cast", "Squeeze", "Unsqueeze",
                                                 "Reshape"};

// Exp-like ops and the input that overflows or saturates for large values.
constexpr std::pair<absl::string_view, int> kExpLikeOps[] = {
    {"Exp", 0},      {"Softmax", 0},     {"LogSoftmax", 0}, {"Sigmoid", 0},
    {"Softplus", 0}, {"Tanh", 0},        {"Elu", 0},        {"Selu", 0},
    {"Celu", 0},     {"HardSigmoid", 0}, {"Erf", 0},        {"Pow", 1},
    {"Cosh", 0},     {"Sinh", 0},        {"Mish", 0},       {"Gelu", 0},
    {"HardSwish", 0}, {"ReduceLogSumExp", 0},
};

// Steps through pass-through chains at most this deep.
constexpr int kMaxChain = 4;

bool IsOnnxDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

bool IsPassThrough(const onnx::NodeProto& node) {
  return IsOnnxDomain(node) && std::find(std::begin(kPassThroughOps), std::end(kPassThroughOps),
                                         node.op_type()) != std::end(kPassThroughOps);
}

// Calls `visit(node, k)` for every slot (node, input k) that `name` feeds
// directly or through pass-through chains, until `visit` returns true.
template <typename F>
bool VisitUses(const onnx::GraphProto& graph, const std::string& name, int depth, F&& visit) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (int k = 0; k < node.input_size(); ++k) {
      if (node.input(k) != name) continue;
      if (visit(node, k)) return true;
      if (k == 0 && depth < kMaxChain && IsPassThrough(node) && node.output_size() > 0 &&
          VisitUses(graph, node.output(0), depth + 1, visit)) {
        return true;
      }
    }
  }
  return false;
}

// Uniform integer in [lo, hi].
int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  if (hi < lo) return lo;
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

// What a role's values are made from.
struct RoleContext {
  const onnx::NodeProto& node;
  const RoleRule& rule;
  const std::vector<int64_t>& dims;  // of the tensor being made
  int64_t count;                     // its elements
  const KnownValues& known;
  std::mt19937_64& rng;

  // The reference input's dims, or nullptr when unknown.
  const std::vector<int64_t>* Reference() const {
    if (rule.reference < 0 || rule.reference >= node.input_size()) return nullptr;
    auto it = known.dims.find(node.input(rule.reference));
    return it == known.dims.end() ? nullptr : &it->second;
  }
  // The reference's rank, or -1.
  int64_t Rank() const {
    const std::vector<int64_t>* ref = Reference();
    return ref == nullptr ? -1 : static_cast<int64_t>(ref->size());
  }
  // The integer attribute `name`, or `fallback`.
  int64_t IntAttr(absl::string_view name, int64_t fallback) const {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == name) return attr.i();
    }
    return fallback;
  }
  // The extent of the reference's axis `axis` (negative counts from the
  // end), or -1 when unknown.
  int64_t ExtentOf(int64_t axis) const {
    const std::vector<int64_t>* ref = Reference();
    if (ref == nullptr) return -1;
    int64_t rank = static_cast<int64_t>(ref->size());
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank ? (*ref)[axis] : -1;
  }
  // The extent of the rule's axis, or -1.
  int64_t Extent() const { return ExtentOf(IntAttr(rule.axis_attr, rule.default_axis)); }
};

using Values = std::vector<double>;

// `count` values, each `make(i)`.
template <typename F>
Values Each(const RoleContext& c, F&& make) {
  Values values;
  for (int64_t i = 0; i < c.count; ++i) values.push_back(static_cast<double>(make(i)));
  return values;
}

// An index in [-extent, extent - 1]; 0 when the extent is unknown or 0.
int64_t IndexBelow(std::mt19937_64& rng, int64_t extent) {
  return extent > 0 ? Uniform(rng, -extent, extent - 1) : 0;
}

Values IndexValues(const RoleContext& c) {
  int64_t extent = c.Extent();
  return Each(c, [&](int64_t) { return IndexBelow(c.rng, extent); });
}

Values IndexTupleValues(const RoleContext& c) {
  int64_t tuple = c.dims.empty() ? 1 : std::max<int64_t>(c.dims.back(), 1);
  int64_t batch = c.IntAttr("batch_dims", 0);
  return Each(c, [&](int64_t i) { return IndexBelow(c.rng, c.ExtentOf(batch + i % tuple)); });
}

Values ClassIndexValues(const RoleContext& c) {
  int64_t extent = c.Extent();
  return Each(c, [&](int64_t) { return Uniform(c.rng, 0, std::max<int64_t>(extent, 1) - 1); });
}

Values OneHotIndexValues(const RoleContext& c) {
  int64_t depth = 2;
  if (auto it = c.known.values.find(c.node.input(1)); it != c.known.values.end()) {
    absl::StatusOr<std::vector<int64_t>> given = ToInt64s(it->second);
    if (given.ok() && !given->empty()) depth = (*given)[0];
  }
  return Each(c, [&](int64_t) { return IndexBelow(c.rng, depth); });
}

Values DepthValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 2, 5); });
}

Values ReshapeShapeValues(const RoleContext& c) {
  const std::vector<int64_t>* ref = c.Reference();
  Values shape(c.count, 1.0);
  if (shape.empty()) return shape;
  if (ref == nullptr) {
    shape[0] = -1;  // [-1, 1, ...] holds any data
    return shape;
  }
  if (static_cast<int64_t>(ref->size()) == c.count) {
    shape.assign(ref->begin(), ref->end());
    if (c.rng() & 1) shape[Uniform(c.rng, 0, c.count - 1)] = -1;
    return shape;
  }
  int64_t total = 1;
  for (int64_t extent : *ref) total *= extent;
  shape[0] = static_cast<double>(total);
  return shape;
}

Values ExpandShapeValues(const RoleContext& c) {
  const std::vector<int64_t>* ref = c.Reference();
  Values shape(c.count, 1.0);
  if (ref == nullptr || static_cast<int64_t>(ref->size()) > c.count) return shape;
  int64_t lead = c.count - static_cast<int64_t>(ref->size());
  for (size_t d = 0; d < ref->size(); ++d) {
    if (c.rng() & 1) shape[lead + d] = static_cast<double>((*ref)[d]);
  }
  return shape;
}

Values RepeatsValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 1, 2); });
}

Values SmallShapeValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 1, 3); });
}

Values SizesValues(const RoleContext& c) {
  const std::vector<int64_t>* ref = c.Reference();
  int64_t skip = ref == nullptr ? 0 : static_cast<int64_t>(ref->size()) - c.count;
  return Each(c, [&](int64_t i) {
    return ref == nullptr || skip + i < 0 ? int64_t{1} : (*ref)[skip + i];
  });
}

Values ScalesValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 1, 2); });
}

Values RangeBoundValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, -5, 5); });
}

Values NonZeroSmall(const RoleContext& c, int64_t magnitude) {
  return Each(c, [&](int64_t) {
    int64_t value = Uniform(c.rng, 1, magnitude);
    return (c.rng() & 1) ? value : -value;
  });
}

Values RangeDeltaValues(const RoleContext& c) { return NonZeroSmall(c, 3); }

Values TopKValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 1, std::max<int64_t>(c.Extent(), 1)); });
}

Values SplitValues(const RoleContext& c) {
  Values parts(c.count, 1.0);  // ones: right when the extent is the number of parts
  int64_t extent = c.Extent();
  if (extent < 0 || c.count == 0) return parts;
  std::fill(parts.begin(), parts.end(), 0.0);
  for (int64_t unit = 0; unit < extent; ++unit) parts[Uniform(c.rng, 0, c.count - 1)] += 1;
  return parts;
}

// The axis the i-th element of a Slice starts/ends/steps input is for.
int64_t SliceAxis(const RoleContext& c, int64_t i) {
  if (c.node.input_size() > 3) {
    if (auto it = c.known.values.find(c.node.input(3)); it != c.known.values.end()) {
      absl::StatusOr<std::vector<int64_t>> axes = ToInt64s(it->second);
      if (axes.ok() && i < static_cast<int64_t>(axes->size())) return (*axes)[i];
    }
  }
  return i;  // the axes kSliceAxes makes, or the default
}

Values SliceBoundValues(const RoleContext& c) {
  return Each(c, [&](int64_t i) {
    int64_t extent = std::max<int64_t>(c.ExtentOf(SliceAxis(c, i)), 0);
    return Uniform(c.rng, -extent, extent);
  });
}

Values SliceAxesValues(const RoleContext& c) {
  int64_t rank = c.Rank();
  return Each(c, [&](int64_t i) { return rank > i && (c.rng() & 1) ? i - rank : i; });
}

Values SliceStepsValues(const RoleContext& c) { return NonZeroSmall(c, 2); }

Values PadsValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 0, 2); });
}

// `count` distinct axes drawn from `candidates` (all of [0, rank) when it
// is empty), each maybe written negative; 0, 1, ... when there are too few.
Values DistinctAxes(const RoleContext& c, std::vector<int64_t> candidates, int64_t rank) {
  if (static_cast<int64_t>(candidates.size()) < c.count) {
    return Each(c, [](int64_t i) { return i; });
  }
  std::shuffle(candidates.begin(), candidates.end(), c.rng);
  return Each(c, [&](int64_t i) {
    return (c.rng() & 1) ? candidates[i] - rank : candidates[i];
  });
}

std::vector<int64_t> AllAxes(int64_t rank) {
  std::vector<int64_t> axes(std::max<int64_t>(rank, 0));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

Values AxesValues(const RoleContext& c) { return DistinctAxes(c, AllAxes(c.Rank()), c.Rank()); }

std::vector<int64_t> UnitAxes(const RoleContext& c) {
  std::vector<int64_t> axes;
  if (const std::vector<int64_t>* ref = c.Reference()) {
    for (size_t d = 0; d < ref->size(); ++d) {
      if ((*ref)[d] == 1) axes.push_back(static_cast<int64_t>(d));
    }
  }
  return axes;
}

Values SqueezeAxesValues(const RoleContext& c) {
  return DistinctAxes(c, UnitAxes(c), c.Rank());
}

Values UnsqueezeAxesValues(const RoleContext& c) {
  int64_t rank = std::max<int64_t>(c.Rank(), 0) + c.count;
  return DistinctAxes(c, AllAxes(rank), rank);
}

Values AxisValues(const RoleContext& c) {
  int64_t rank = c.Rank();
  return Each(c, [&](int64_t) { return rank > 0 ? Uniform(c.rng, -rank, rank - 1) : 0; });
}

Values CountValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 0, 3); });
}

Values UnitIntervalValues(const RoleContext& c) {
  Values values;
  for (int64_t i = 0; i < c.count; ++i) {
    values.push_back(static_cast<double>(c.rng() >> 40) * 0x1.0p-24);
  }
  return values;
}

Values NonZeroValues(const RoleContext& c) { return NonZeroSmall(c, 10); }

Values ScaleValues(const RoleContext& c) {
  Values values = UnitIntervalValues(c);
  for (double& value : values) value = 0.5 + 1.5 * value;
  return values;
}

Values SequenceLengthsValues(const RoleContext& c) {
  return Each(c, [&](int64_t) { return Uniform(c.rng, 1, std::max<int64_t>(c.Extent(), 1)); });
}

// The reference's rank, at least 1.
int64_t RankLength(const RoleContext& c) { return std::max<int64_t>(c.Rank(), 1); }
int64_t PadsLength(const RoleContext& c) { return 2 * RankLength(c); }
int64_t SplitLength(const RoleContext& c) { return std::max(c.node.output_size(), 1); }
int64_t SqueezeLength(const RoleContext& c) { return UnitAxes(c).empty() ? 0 : 1; }

// How a role makes its values, and the length of a rank-1 input whose
// extent the model leaves open (nullptr: as sized from the declared type).
struct RoleMaker {
  Role role;
  Values (*make)(const RoleContext&);
  int64_t (*length)(const RoleContext&);
};

constexpr RoleMaker kRoleMakers[] = {
    {Role::kIndex, IndexValues, nullptr},
    {Role::kIndexTuple, IndexTupleValues, nullptr},
    {Role::kClassIndex, ClassIndexValues, nullptr},
    {Role::kOneHotIndex, OneHotIndexValues, nullptr},
    {Role::kDepth, DepthValues, nullptr},
    {Role::kReshapeShape, ReshapeShapeValues, RankLength},
    {Role::kExpandShape, ExpandShapeValues, RankLength},
    {Role::kRepeats, RepeatsValues, RankLength},
    {Role::kSmallShape, SmallShapeValues, nullptr},
    {Role::kSizes, SizesValues, RankLength},
    {Role::kScales, ScalesValues, RankLength},
    {Role::kRangeBound, RangeBoundValues, nullptr},
    {Role::kRangeDelta, RangeDeltaValues, nullptr},
    {Role::kTopK, TopKValues, nullptr},
    {Role::kSplit, SplitValues, SplitLength},
    {Role::kSliceBound, SliceBoundValues, RankLength},
    {Role::kSliceAxes, SliceAxesValues, RankLength},
    {Role::kSliceSteps, SliceStepsValues, nullptr},
    {Role::kPads, PadsValues, PadsLength},
    {Role::kAxes, AxesValues, nullptr},
    {Role::kSqueezeAxes, SqueezeAxesValues, SqueezeLength},
    {Role::kUnsqueezeAxes, UnsqueezeAxesValues, nullptr},
    {Role::kAxis, AxisValues, nullptr},
    {Role::kCount, CountValues, nullptr},
    {Role::kUnitInterval, UnitIntervalValues, nullptr},
    {Role::kNonZero, NonZeroValues, nullptr},
    {Role::kScale, ScaleValues, nullptr},
    {Role::kSequenceLengths, SequenceLengthsValues, nullptr},
};

const RoleMaker* FindMaker(Role role) {
  for (const RoleMaker& maker : kRoleMakers) {
    if (maker.role == role) return &maker;
  }
  return nullptr;
}

// Stores `values` into `tensor`, in order.
void Store(const Values& values, Tensor& tensor) {
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    absl::Span<T> data = tensor.data<T>();
    for (size_t i = 0; i < data.size() && i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = values[i] != 0;
      } else if constexpr (std::is_same_v<T, Half>) {
        data[i] = FloatToHalf(static_cast<float>(values[i]));
      } else if constexpr (std::is_same_v<T, BHalf>) {
        data[i] = FloatToBHalf(static_cast<float>(values[i]));
      } else if constexpr (std::is_unsigned_v<T>) {
        data[i] = static_cast<T>(std::abs(values[i]));
      } else {
        data[i] = static_cast<T>(values[i]);
      }
    }
  });
}

// Small integer tensors are kept as values: axes, depths, ...
constexpr int64_t kMaxKnownElements = 64;

}  // namespace

const RoleRule* FindRoleRule(absl::string_view op_type, int input) {
  for (const RoleRule& rule : kRoleRules) {
    if (rule.op == op_type && rule.input == input) return &rule;
  }
  return nullptr;
}

std::optional<RoleUse> FindRoleUse(const onnx::GraphProto& graph, const std::string& name) {
  std::optional<RoleUse> found;
  VisitUses(graph, name, 0, [&](const onnx::NodeProto& node, int k) {
    if (!IsOnnxDomain(node)) return false;
    const RoleRule* rule = FindRoleRule(node.op_type(), k);
    if (rule == nullptr) return false;
    found = RoleUse{rule, &node};
    return true;
  });
  return found;
}

bool FeedsExpLikeOp(const onnx::GraphProto& graph, const std::string& name) {
  return VisitUses(graph, name, 0, [](const onnx::NodeProto& node, int k) {
    if (!IsOnnxDomain(node)) return false;
    return std::find(std::begin(kExpLikeOps), std::end(kExpLikeOps),
                     std::pair<absl::string_view, int>(node.op_type(), k)) !=
           std::end(kExpLikeOps);
  });
}

void KnownValues::Add(const std::string& name, const Tensor& tensor) {
  dims[name] = tensor.dims();
  if (IsIntegerElementType(tensor.elem_type()) && tensor.size() <= kMaxKnownElements) {
    values[name] = tensor;
  }
}

KnownValues InitializerValues(const onnx::GraphProto& graph) {
  KnownValues known;
  for (const onnx::TensorProto& init : graph.initializer()) {
    known.dims[init.name()] = {init.dims().begin(), init.dims().end()};
    int64_t count = 1;
    for (int64_t extent : init.dims()) count *= extent;
    if (!IsIntegerElementType(init.data_type()) || count > kMaxKnownElements) continue;
    absl::StatusOr<Tensor> tensor = FromProto(init, kMaxKnownElements);
    if (tensor.ok()) known.values[init.name()] = *std::move(tensor);
  }
  return known;
}

absl::StatusOr<Tensor> RoleTensor(const RoleUse& use, int32_t elem_type,
                                  std::vector<int64_t> dims, bool fixed,
                                  const KnownValues& known, std::mt19937_64& rng) {
  const RoleMaker* maker = FindMaker(use.rule->role);
  if (!Holds(elem_type) || elem_type == onnx::TensorProto::STRING || maker == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no values by role for an input of ",
                                                 ElementTypeName(elem_type), " feeding ",
                                                 use.rule->op, " input ", use.rule->input));
  }
  RoleContext context{*use.node, *use.rule, dims, 0, known, rng};
  if (dims.size() == 1 && !fixed && maker->length != nullptr) dims[0] = maker->length(context);
  int64_t count = 1;
  for (int64_t extent : dims) count *= extent;
  Tensor tensor(elem_type, dims);
  RoleContext sized{*use.node, *use.rule, dims, count, known, rng};
  Store(maker->make(sized), tensor);
  return tensor;
}

void AddEdgeValues(Tensor& tensor, bool exp_like, std::mt19937_64& rng) {
  std::vector<double> edges = {0.0, -0.0};
  if (exp_like) edges.insert(edges.end(), std::begin(kLargeMagnitudes), std::end(kLargeMagnitudes));
  int64_t room = std::min<int64_t>(static_cast<int64_t>(edges.size()), tensor.size() / 2);
  if (tensor.size() < 4 || room <= 0) return;
  // Distinct random positions: a partial shuffle of the first `room`.
  std::vector<int64_t> positions(tensor.size());
  std::iota(positions.begin(), positions.end(), 0);
  for (int64_t i = 0; i < room; ++i) {
    std::swap(positions[i], positions[Uniform(rng, i, tensor.size() - 1)]);
  }
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BHalf> ||
                  std::is_floating_point_v<T>) {
      absl::Span<T> data = tensor.data<T>();
      for (int64_t i = 0; i < room; ++i) {
        float edge = static_cast<float>(edges[i]);
        if constexpr (std::is_same_v<T, Half>) {
          data[positions[i]] = FloatToHalf(edge);
        } else if constexpr (std::is_same_v<T, BHalf>) {
          data[positions[i]] = FloatToBHalf(edge);
        } else {
          data[positions[i]] = static_cast<T>(edges[i]);
        }
      }
    }
  });
}

}  // namespace onnxconvert::eval
