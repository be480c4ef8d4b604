#include "service/capabilities.h"

#include "schema/version.h"

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"
#include "converter/adapter_plan.h"
#include "converter/converter.h"
#include "rewrites/pass.h"
#include "schema/registry.h"

namespace onnxconvert::service {
namespace {

using schema::OpSchema;
using schema::Registry;

// The kind a written adapter entry reports.
v1::AdapterInfo::Kind KindOf(const adapters::AdapterEntry& entry) {
  static constexpr v1::AdapterInfo::Kind kKinds[] = {
      /*kCompatible=*/v1::AdapterInfo::DERIVED,
      /*kRewrite=*/v1::AdapterInfo::REWRITE,
      /*kUnsupported=*/v1::AdapterInfo::UNSUPPORTED,
  };
  return kKinds[entry.kind];
}

// The op as AdapterInfo names it: "Softmax", "ai.onnx.ml.LabelEncoder".
std::string OpName(const OpSchema& op) {
  absl::string_view domain = CanonicalDomain(op.domain);
  return domain.empty() ? std::string(op.name) : absl::StrCat(domain, ".", op.name);
}

// How converting from `from` to the adjacent `to` is handled.
v1::AdapterInfo DescribeChange(const OpSchema& from, const OpSchema& to) {
  converter::AdapterPlan plan = converter::PlanAdapter(from, to);
  v1::AdapterInfo info;
  info.set_op(OpName(from));
  info.set_from_version(from.since_version);
  info.set_to_version(to.since_version);
  info.set_name(plan.name);
  info.set_kind(plan.rewrite == nullptr ? v1::AdapterInfo::DERIVED : KindOf(*plan.rewrite));
  if (plan.rewrite != nullptr) info.set_reason(plan.rewrite->reason);
  return info;
}

// How a node of `first` (the op's first version) is converted below it.
v1::AdapterInfo DescribeVanishing(const OpSchema& first) {
  v1::AdapterInfo info;
  info.set_op(OpName(first));
  info.set_from_version(first.since_version);
  info.set_to_version(0);
  const adapters::AdapterEntry* replacement = adapters::Rewrites().Find(
      CanonicalDomain(first.domain), first.name, first.since_version, 0);
  if (replacement != nullptr) {
    info.set_kind(v1::AdapterInfo::REPLACEMENT);
    info.set_name(replacement->name);
  } else if (!first.function_bodies.empty() ||
             !first.context_dependent_function_opsets.empty()) {
    info.set_kind(v1::AdapterInfo::FUNCTION_EXPANSION);
    info.set_name(absl::StrCat(first.Label(), ": function body expanded"));
  } else {
    info.set_kind(v1::AdapterInfo::UNSUPPORTED);
    info.set_reason(absl::StrCat(first.name, " does not exist before opset ",
                                 first.since_version,
                                 " and the spec gives no function body to expand it into"));
  }
  return info;
}

void AddOpsetRanges(v1::CapabilitiesResponse& response) {
  std::map<std::string, int64_t> min_opset;
  for (const OpSchema& op : Registry::Get().All()) {
    std::string domain(CanonicalDomain(op.domain));
    auto [it, added] = min_opset.emplace(domain, op.since_version);
    if (!added && op.since_version < it->second) it->second = op.since_version;
  }
  for (const auto& [domain, first] : min_opset) {
    v1::OpsetRange* range = response.add_opsets();
    range->set_domain(domain);
    range->set_min_opset(first);
    range->set_max_opset(Registry::Get().MaxOpset(domain));
  }
}

// True for the domains the converter converts.
bool IsConverted(absl::string_view domain) {
  return domain.empty() || domain == "ai.onnx.ml";
}

// Adds the op's versions, and for converted domains how each change is
// handled.
void AddOperator(const OpSchema& op, v1::CapabilitiesResponse& response) {
  const Registry& registry = Registry::Get();
  absl::string_view domain = CanonicalDomain(op.domain);
  absl::Span<const int> versions = registry.VersionsOf(domain, op.name);
  v1::OperatorVersions* entry = response.add_operators();
  entry->set_domain(std::string(domain));
  entry->set_name(std::string(op.name));
  entry->mutable_since_versions()->Add(versions.begin(), versions.end());
  if (!IsConverted(domain)) return;
  for (size_t i = 0; i + 1 < versions.size(); ++i) {
    const OpSchema* older = registry.Exact(domain, op.name, versions[i]);
    const OpSchema* newer = registry.Exact(domain, op.name, versions[i + 1]);
    if (older == nullptr || newer == nullptr) continue;
    *response.add_adapters() = DescribeChange(*older, *newer);
    *response.add_adapters() = DescribeChange(*newer, *older);
  }
  if (versions.front() > 1) *response.add_adapters() = DescribeVanishing(op);
}

}  // namespace

const v1::CapabilitiesResponse& BuildCapabilities() {
  static const auto* capabilities = [] {
    auto* response = new v1::CapabilitiesResponse();
    const Registry& registry = Registry::Get();
    AddOpsetRanges(*response);
    response->set_tool_version(kToolVersion);
    response->set_commit(BuildCommit());
    response->set_onnx_spec(kOnnxSpecVersion);
    response->set_max_ir_version(converter::MinIrVersionForOpset(registry.MaxOpset("")));
    // All() is sorted by domain, name and since_version: the first schema
    // of each op stands for it.
    const OpSchema* previous = nullptr;
    for (const OpSchema& op : registry.All()) {
      if (previous == nullptr || previous->domain != op.domain || previous->name != op.name) {
        AddOperator(op, *response);
      }
      previous = &op;
    }
    for (const rewrites::PassEntry& entry : rewrites::Passes()) {
      v1::PassInfo* pass = response->add_passes();
      pass->set_name(entry.name);
      for (absl::string_view profile : absl::StrSplit(entry.profiles, ' ', absl::SkipEmpty())) {
        pass->add_profiles(std::string(profile));
      }
      pass->set_summary(entry.summary);
    }
    return response;
  }();
  return *capabilities;
}

}  // namespace onnxconvert::service
