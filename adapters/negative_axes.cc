// Negative axes count from the back from opset 11 on; earlier versions of
// the same ops take only axes from 0. Downgrading across 11 resolves them
// with the rank of the value they index.

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"

namespace onnxconvert::adapters {
namespace {

// Which rank an op's axis attribute is relative to.
enum class RankOf { kInput0, kOutput0 };

struct AxisAttribute {
  const char* op;
  const char* attribute;
  RankOf rank;
};

constexpr AxisAttribute kAxisAttributes[] = {
    {"ArgMax", "axis", RankOf::kInput0},        {"ArgMin", "axis", RankOf::kInput0},
    {"Compress", "axis", RankOf::kInput0},      {"Concat", "axis", RankOf::kInput0},
    {"Flatten", "axis", RankOf::kInput0},       {"Gather", "axis", RankOf::kInput0},
    {"Hardmax", "axis", RankOf::kInput0},       {"LogSoftmax", "axis", RankOf::kInput0},
    {"Softmax", "axis", RankOf::kInput0},       {"OneHot", "axis", RankOf::kOutput0},
    {"Scatter", "axis", RankOf::kInput0},       {"Split", "axis", RankOf::kInput0},
    {"TopK", "axis", RankOf::kInput0},          {"Squeeze", "axes", RankOf::kInput0},
    {"Unsqueeze", "axes", RankOf::kOutput0},    {"ReduceL1", "axes", RankOf::kInput0},
    {"ReduceL2", "axes", RankOf::kInput0},      {"ReduceLogSum", "axes", RankOf::kInput0},
    {"ReduceLogSumExp", "axes", RankOf::kInput0}, {"ReduceMax", "axes", RankOf::kInput0},
    {"ReduceMean", "axes", RankOf::kInput0},    {"ReduceMin", "axes", RankOf::kInput0},
    {"ReduceProd", "axes", RankOf::kInput0},    {"ReduceSum", "axes", RankOf::kInput0},
    {"ReduceSumSquare", "axes", RankOf::kInput0},
};

// The rank the axis of `row` counts in, or -1 when unknown.
int64_t RankFor(const AdapterContext& ctx, const AxisAttribute& row,
                const onnx::AttributeProto& attribute) {
  if (row.rank == RankOf::kInput0) return adapters::RankOf(ctx, ctx.node.input(0));
  if (ctx.node.output_size() > 0) {
    int64_t out = adapters::RankOf(ctx, ctx.node.output(0));
    if (out >= 0) return out;
  }
  // Unsqueeze's output rank: the input's plus one per axis.
  int64_t in = adapters::RankOf(ctx, ctx.node.input(0));
  if (in < 0 || row.op != std::string_view("Unsqueeze")) return -1;
  return in + attribute.ints_size();
}

}  // namespace

bool NegativeAxesMatter(const schema::OpSchema& from, const schema::OpSchema& to) {
  if (!from.domain.empty() || from.since_version < 11 || to.since_version >= 11) return false;
  for (const AxisAttribute& row : kAxisAttributes) {
    if (from.name == row.op) return true;
  }
  return false;
}

absl::Status ResolveNegativeAxes(AdapterContext& ctx) {
  if (!NegativeAxesMatter(ctx.from, ctx.to)) return absl::OkStatus();
  for (const AxisAttribute& row : kAxisAttributes) {
    if (ctx.from.name != row.op) continue;
    onnx::AttributeProto* attribute = nullptr;
    for (onnx::AttributeProto& a : *ctx.node.mutable_attribute()) {
      if (a.name() == row.attribute) attribute = &a;
    }
    if (attribute == nullptr) return absl::OkStatus();
    bool is_list = attribute->type() == onnx::AttributeProto::INTS;
    bool negative = is_list ? std::any_of(attribute->ints().begin(), attribute->ints().end(),
                                          [](int64_t v) { return v < 0; })
                            : attribute->i() < 0;
    if (!negative) return absl::OkStatus();
    int64_t rank = RankFor(ctx, row, *attribute);
    if (rank < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          row.attribute, " is negative and the rank it counts in is unknown; ", ctx.to.Label(),
          " takes only axes from 0"));
    }
    if (is_list) {
      for (int64_t& v : *attribute->mutable_ints()) v = v < 0 ? v + rank : v;
    } else {
      attribute->set_i(attribute->i() + rank);
    }
    ctx.changes.push_back(
        {ChangeKind::kAttributeSet, absl::StrCat(row.attribute, " resolved against rank ", rank)});
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
