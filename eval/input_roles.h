#ifndef ONNX_CONVERT_EVAL_INPUT_ROLES_H_
#define ONNX_CONVERT_EVAL_INPUT_ROLES_H_

// Roles of graph inputs for random verification inputs (issue 19): what a
// graph input's values stand for, known from the node slot it feeds (an
// index into an axis of another input, a shape, a count, ...), and values
// that keep such a slot valid so the model evaluates. Also edge values
// (+0, -0, large magnitudes) for float inputs.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// What the values of a node input stand for.
enum class Role {
  kIndex,            // an index into an axis of the reference input
  kIndexTuple,       // GatherND/ScatterND indices: tuples over the leading axes
  kClassIndex,       // a class in [0, extent) of the reference's axis (no negatives)
  kOneHotIndex,      // an index below the depth input's value
  kDepth,            // OneHot depth: small, at least 2
  kReshapeShape,     // the reference's own shape, maybe with one -1
  kExpandShape,      // ones or the reference's own shape
  kRepeats,          // Tile repeats: 1 or 2
  kSmallShape,       // a shape of small extents (1..3)
  kSizes,            // the reference's own extents
  kScales,           // scales of 1 or 2
  kRangeBound,       // a small number (-5..5)
  kRangeDelta,       // a small nonzero number
  kTopK,             // 1..the extent of the axis
  kSplit,            // parts summing to the extent of the axis
  kSliceBound,       // a start or end within -extent..extent of its axis
  kSliceAxes,        // the leading axes in order, each maybe negative
  kSliceSteps,       // nonzero small steps
  kPads,             // small non-negative pads
  kAxes,             // distinct valid axes of the reference
  kSqueezeAxes,      // distinct axes of extent 1 of the reference
  kUnsqueezeAxes,    // distinct valid axes of the output
  kAxis,             // one valid axis of the reference
  kCount,            // a small non-negative count (0..3)
  kUnitInterval,     // a number in [0, 1)
  kNonZero,          // a nonzero divisor
  kScale,            // a positive number in [0.5, 2): a quantization scale, a variance
  kSequenceLengths,  // 1..the extent of the time axis
};

// A row of the role table: the role of input `input` of ai.onnx `op`.
struct RoleRule {
  absl::string_view op;
  int input;
  Role role;
  int reference = -1;          // the node input the values depend on, or -1
  absl::string_view axis_attr;  // the attribute naming the axis, or ""
  int64_t default_axis = 0;     // the axis when the attribute is absent
};

// The rule for input `input` of the ai.onnx op `op_type`, or nullptr.
const RoleRule* FindRoleRule(absl::string_view op_type, int input);

// A node slot with a rule that a graph input feeds.
struct RoleUse {
  const RoleRule* rule = nullptr;
  const onnx::NodeProto* node = nullptr;
};

// The first slot with a rule that value `name` of `graph` feeds, directly
// or through Identity, Cast, Squeeze, Unsqueeze and Reshape (data) nodes.
std::optional<RoleUse> FindRoleUse(const onnx::GraphProto& graph, const std::string& name);

// Whether value `name` of `graph` feeds an op that overflows or saturates
// for large inputs (Exp, Softmax, Sigmoid, Tanh, ...; see kExpLikeOps),
// directly or through the chains FindRoleUse follows.
bool FeedsExpLikeOp(const onnx::GraphProto& graph, const std::string& name);

// The shapes and small integer values known while inputs are made: the
// graph's initializers and the inputs made so far.
struct KnownValues {
  absl::flat_hash_map<std::string, std::vector<int64_t>> dims;
  absl::flat_hash_map<std::string, Tensor> values;  // small integer tensors only

  // Notes `tensor` as the value of `name`.
  void Add(const std::string& name, const Tensor& tensor);
};

// The shapes and small integer values of `graph`'s initializers.
KnownValues InitializerValues(const onnx::GraphProto& graph);

// A random tensor of `elem_type` for the slot `use`, of `dims`: a rank-1
// tensor whose extent is not `fixed` takes the length the role needs (the
// reference's rank, ...). Values the role needs that cannot be known are
// those valid for any extent >= 1 (index 0, ones). Fails for strings and
// types the evaluator does not hold.
absl::StatusOr<Tensor> RoleTensor(const RoleUse& use, int32_t elem_type,
                                  std::vector<int64_t> dims, bool fixed,
                                  const KnownValues& known, std::mt19937_64& rng);

// Puts edge values into a float, double, float16 or bfloat16 `tensor` of 4
// or more elements at random positions: +0 and -0, and with `exp_like`
// also the large magnitudes of kLargeMagnitudes as space allows (at most
// half the elements are edge values).
void AddEdgeValues(Tensor& tensor, bool exp_like, std::mt19937_64& rng);

// The large magnitudes AddEdgeValues puts into inputs of exp-like ops.
inline constexpr double kLargeMagnitudes[] = {20.0, -20.0, 88.0, -88.0};

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_INPUT_ROLES_H_
