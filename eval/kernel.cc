#include "eval/kernel.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace onnxconvert::eval {

const onnx::AttributeProto* NodeAttribute(const onnx::NodeProto& node, absl::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

const onnx::AttributeProto* KernelCall::attribute(absl::string_view name) const {
  return NodeAttribute(node, name);
}

int64_t KernelCall::Int(absl::string_view name, int64_t fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

float KernelCall::Float(absl::string_view name, float fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  return a != nullptr && a->has_f() ? a->f() : fallback;
}

std::optional<std::vector<int64_t>> KernelCall::Ints(absl::string_view name) const {
  const onnx::AttributeProto* a = attribute(name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::Status KernelCall::Error(absl::string_view why) const {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name(), "' (", node.op_type(), "-", since_version_, "): ", why));
}

KernelFn FindKernel(absl::string_view domain, absl::string_view op, int since_version) {
  using Key = std::pair<std::string, std::string>;
  static const auto* by_op = [] {
    auto* map = new absl::flat_hash_map<Key, std::vector<const KernelRow*>>;
    for (const KernelRow& row : KernelTable()) {
      (*map)[Key(row.domain, row.op)].push_back(&row);
    }
    return map;
  }();
  absl::string_view canonical = domain == "ai.onnx" ? "" : domain;
  auto it = by_op->find(Key(canonical, op));
  if (it == by_op->end()) return nullptr;
  for (const KernelRow* row : it->second) {
    if (row->first <= since_version && since_version <= row->last) return row->fn;
  }
  return nullptr;
}

}  // namespace onnxconvert::eval
