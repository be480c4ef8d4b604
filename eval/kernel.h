#ifndef ONNX_CONVERT_EVAL_KERNEL_H_
#define ONNX_CONVERT_EVAL_KERNEL_H_

// What a kernel of the reference evaluator sees, and the table of kernels.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "eval/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// The attribute `name` of `node`, or null.
const onnx::AttributeProto* NodeAttribute(const onnx::NodeProto& node, absl::string_view name);

// One node to compute: its proto (attributes), the operator version it binds
// to, and its inputs (null where an optional input is absent).
struct KernelCall {
  KernelCall(const onnx::NodeProto& node, int since_version, std::vector<const Tensor*> inputs,
             Tensor* donor = nullptr)
      : node(node), inputs(std::move(inputs)), donor(donor), since_version_(since_version) {}

  const onnx::NodeProto& node;
  std::vector<const Tensor*> inputs;
  // Input 0 when the runner gives it up (its last use, owned by the
  // node's scope): a kernel that passes its elements on may move them out
  // (after its last read of input 0) instead of copying. Null otherwise.
  Tensor* donor = nullptr;

  // The operator version the node binds to. Reading it marks the call as
  // one whose result may depend on it (version_read): a kernel must ask
  // here for every behaviour that differs between the versions it serves.
  int since_version() const {
    version_read_ = true;
    return since_version_;
  }
  // Whether the kernel asked for the operator version.
  bool version_read() const { return version_read_; }

  // Input 0's tensor, moved out of the donor when there is one, else
  // copied.
  Tensor TakeInput0() const { return donor != nullptr ? std::move(*donor) : *inputs[0]; }

  // Input `i`, or null when absent.
  const Tensor* input(int i) const {
    return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr;
  }
  // The attribute `name`, or null.
  const onnx::AttributeProto* attribute(absl::string_view name) const;
  // The INT attribute `name`, or `fallback` when unset.
  int64_t Int(absl::string_view name, int64_t fallback) const;
  // The FLOAT attribute `name`, or `fallback` when unset.
  float Float(absl::string_view name, float fallback) const;
  // The INTS attribute `name`, or nullopt when unset.
  std::optional<std::vector<int64_t>> Ints(absl::string_view name) const;
  // An error naming the node and op: "node 'n' (Op): <why>".
  absl::Status Error(absl::string_view why) const;

 private:
  int since_version_;
  mutable bool version_read_ = false;
};

// Computes a node's outputs from its inputs.
using KernelFn = absl::StatusOr<std::vector<Tensor>> (*)(const KernelCall& call);

// The `last` of a kernel row that follows an op up to its newest version.
constexpr int kLast = 1 << 20;

// A row of the kernel table: `fn` computes `op` of `domain` for the
// operator versions since `first` up to `last` (inclusive) whose
// behaviour it follows.
struct KernelRow {
  const char* domain;  // "" for ai.onnx
  const char* op;
  int first;
  int last;
  KernelFn fn;
};

// The kernel for `op` of `domain` at operator version `since_version`, or
// null.
KernelFn FindKernel(absl::string_view domain, absl::string_view op, int since_version);

// Every row of the kernel table (kernel_table.cc: one row a kernel, in
// op-family order), for listing.
absl::Span<const KernelRow> KernelTable();

// A score_mod or prob_mod of FlexAttention as the graph runner applies it:
// the [batch, q heads, q sequence, kv sequence] scores or probabilities,
// in the softmax precision's type, to a tensor of that type and shape.
using AttentionMod = std::function<absl::StatusOr<Tensor>(Tensor)>;
// FlexAttention (ai.onnx.preview 1) with `score_mod` and `prob_mod`
// (empty: none) applied to its scores and probabilities; its output Y.
absl::StatusOr<Tensor> FlexAttention(const KernelCall& call, const AttentionMod& score_mod,
                                     const AttentionMod& prob_mod);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_KERNEL_H_
