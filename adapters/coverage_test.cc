// Every version change in the registry, in both directions, is handled:
// a rewrite adapter, a registry-derived version bump that converts a node
// using the version's required inputs, attributes and nothing else, an
// explicit semantic-change entry with its reason, or (for downgrades past
// an op's introduction) a replacement or function body. The pairs where a
// plain node would be refused without an explicit entry are the gaps; the
// test lists them and fails when there is one the table below does not
// name with its reason.

#include <iostream>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "converter/adapter_plan.h"
#include "adapters/rewrites.h"
#include "gtest/gtest.h"
#include "schema/registry.h"

namespace onnxconvert::adapters {
namespace {

using schema::OpSchema;
using schema::Registry;

// The version changes of ONNX 1.22 (ai.onnx 1-27: 202 ops in 609 versions;
// ai.onnx.ml 1-5: 19 ops in 25 versions), both ways: an op of v versions has
// v - 1 upgrades and v downgrades (the first one past its introduction), so
// 2 * 634 - 221. Pinned so that a new spec, or a registry that loses or
// gains a version, shows here and in the docs that quote the figure.
constexpr int kVersionChanges = 1047;

// The registry's version changes counted op by op (2 * versions - 1 each),
// independently of the schema-by-schema walk of the coverage test.
int CountVersionChanges(const Registry& registry) {
  std::map<std::pair<std::string, std::string>, int> versions;  // (domain, op) -> count
  for (const OpSchema& schema : registry.All()) {
    if (schema.domain != "" && schema.domain != "ai.onnx.ml") continue;
    ++versions[{std::string(schema.domain), std::string(schema.name)}];
  }
  int changes = 0;
  for (const auto& [op, count] : versions) changes += 2 * count - 1;
  return changes;
}

// A node of `schema` that uses what the version requires and nothing more:
// its required inputs and outputs, and its required attributes.
onnx::NodeProto PlainNode(const OpSchema& schema) {
  onnx::NodeProto node;
  node.set_op_type(std::string(schema.name));
  node.set_domain(std::string(schema.domain));
  for (int i = 0; i < schema.min_input; ++i) node.add_input(absl::StrCat("in", i));
  for (int i = 0; i < std::max(schema.min_output, 1); ++i) node.add_output(absl::StrCat("out", i));
  for (const schema::AttrSpec& attribute : schema.attributes) {
    if (!attribute.required) continue;
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(std::string(attribute.name));
    a->set_type(attribute.type);
  }
  return node;
}

// How one direction of one version change is handled.
std::string Classify(const OpSchema& from, const OpSchema* to) {
  const RewriteTable& rewrites = Rewrites();
  if (to == nullptr) {
    if (rewrites.Find(from.domain, from.name, from.since_version, 0) != nullptr) {
      return "replacement";
    }
    if (!from.function_bodies.empty()) return "function body";
    if (!from.context_dependent_function_opsets.empty()) return "function body (call-dependent)";
    return "gone: no function body (cannot be expressed)";
  }
  converter::AdapterPlan plan = converter::PlanAdapter(from, *to);
  if (plan.rewrite != nullptr) return "rewrite";
  AdapterEntry entry = converter::FindAdapter(plan, PlainNode(from));
  if (entry.kind == AdapterEntry::kCompatible) return "version bump";
  return absl::StrCat("refused: ", entry.reason);
}

TEST(AdapterCoverageTest, EveryVersionChangeIsHandledBothWays) {
  const Registry& registry = Registry::Get();
  std::map<std::string, int> counts;
  std::vector<std::string> gaps;
  int pairs = 0;
  for (const OpSchema& schema : registry.All()) {
    if (schema.domain != "" && schema.domain != "ai.onnx.ml") continue;
    absl::Span<const int> versions = registry.VersionsOf(schema.domain, schema.name);
    auto at = std::find(versions.begin(), versions.end(), schema.since_version);
    const OpSchema* previous =
        at == versions.begin() ? nullptr : registry.Exact(schema.domain, schema.name, *(at - 1));
    // Up: previous -> schema; down: schema -> previous (or gone).
    std::vector<std::pair<std::string, std::string>> directions;
    if (previous != nullptr) {
      directions.emplace_back(absl::StrCat(previous->Label(), " up"), Classify(*previous, &schema));
    }
    directions.emplace_back(absl::StrCat(schema.Label(), " down"), Classify(schema, previous));
    for (const auto& [pair, how] : directions) {
      ++pairs;
      std::string kind = how.substr(0, how.find(':'));
      ++counts[kind];
      EXPECT_FALSE(how.empty()) << pair;
      if (kind == "refused" && how.find("no adapter yet") != std::string::npos) {
        gaps.push_back(absl::StrCat(pair, ": ", how));
      }
    }
  }
  std::cerr << pairs << " version changes (both directions):\n";
  for (const auto& [kind, count] : counts) std::cerr << "  " << count << "  " << kind << "\n";
  std::cerr << "plain nodes refused without an explicit entry (" << gaps.size() << "):\n";
  for (const std::string& gap : gaps) std::cerr << "  " << gap << "\n";
  EXPECT_EQ(pairs, CountVersionChanges(registry));
  EXPECT_EQ(pairs, kVersionChanges) << "the registry's version changes are no longer ONNX 1.22's";
  EXPECT_TRUE(gaps.empty()) << gaps.size() << " version changes have neither an adapter nor an "
                            << "explicit entry; the first: " << (gaps.empty() ? "" : gaps[0]);
}

}  // namespace
}  // namespace onnxconvert::adapters
