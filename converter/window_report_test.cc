// StepParts: a step's report gathered from windows, packed between them,
// comes out as the windows' entries merged in rank order (names changed
// alike, coded against the one before, come back as they went in).

#include "converter/window_report.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

namespace onnxconvert::converter {
namespace {

NodeChange Change(std::string graph, std::string node, std::vector<std::string> alike,
                  std::string op = "Squeeze", std::string detail = "axes moved to input") {
  NodeChange change;
  change.graph = std::move(graph);
  change.node = std::move(node);
  for (const std::string& name : alike) change.alike.push_back(name);
  change.op = std::move(op);
  change.from_version = 11;
  change.to_version = 13;
  change.adapter = change.op + " 11->13";
  change.changes.push_back({adapters::ChangeKind::kAttributeToInput, std::move(detail)});
  return change;
}

VersionBump Bump(std::string graph, std::string op, int nodes) {
  return {std::move(graph), std::move(op), 12, 13, nodes};
}

// The nodes an entry stands for: its node, then those changed alike.
std::vector<std::string> NodesOf(const NodeChange& change) {
  std::vector<std::string> nodes = {change.node};
  for (absl::string_view name : change.alike) nodes.emplace_back(name);
  return nodes;
}

// The step StepParts makes of `windows`, each window's report holding its
// entries in `field`, ops ranked by `rank_of`.
template <typename Entry>
StepReport MergedStep(absl::flat_hash_map<std::string, int> rank_of,
                      const std::vector<std::vector<Entry>>& windows,
                      std::vector<Entry> StepReport::*field) {
  StepParts parts;
  parts.rank_of = std::move(rank_of);
  for (const std::vector<Entry>& window : windows) {
    StepReport report;
    report.*field = window;
    parts.Merge(report);
  }
  return std::move(parts).Done();
}

struct Case {
  const char* name;
  std::vector<std::vector<NodeChange>> windows;
  // Per entry of the step's report: graph, then its nodes.
  std::vector<std::vector<std::string>> expected;
};

TEST(WindowReportTest, EntriesMergeAcrossWindowsWithTheirNames) {
  const std::vector<Case> cases = {
      {"names sharing front and back",
       {{Change("main", "b123_relu", {"b124_relu", "b125_relu"})},
        {Change("main", "b126_relu", {"b1260_relu", "b99_relu"})}},
       {{"main", "b123_relu", "b124_relu", "b125_relu", "b126_relu", "b1260_relu", "b99_relu"}}},
      {"names empty, repeated, inside one another",
       {{Change("main", "", {"", "aa", "a", "aaa", "aba", "ab"})}, {Change("main", "ab", {"ab"})}},
       {{"main", "", "", "aa", "a", "aaa", "aba", "ab", "ab", "ab"}}},
      {"bytes past ASCII",
       {{Change("main", "n\xc3\xa9u", {"n\xc3\xa8u"})}, {Change("main", "\xc3\xa9", {})}},
       {{"main", "n\xc3\xa9u", "n\xc3\xa8u", "\xc3\xa9"}}},
      {"a subgraph's entry between the main graph's",
       {{Change("main", "m1", {"m2"}), Change("main/If 'i'/then_branch", "t1", {}),
         Change("main", "m3", {})},
        {Change("main", "m4", {})}},
       {{"main", "m1", "m2"}, {"main/If 'i'/then_branch", "t1"}, {"main", "m3", "m4"}}},
      {"another change starts an entry",
       {{Change("main", "a", {}), Change("main", "b", {}, "Squeeze", "other")},
        {Change("main", "c", {}, "Squeeze", "other"), Change("main", "d", {})}},
       {{"main", "a"}, {"main", "b", "c"}, {"main", "d"}}},
      {"ops by rank, not by window",
       {{Change("main", "u1", {}, "Unsqueeze"), Change("main", "s1", {})},
        {Change("main", "u2", {}, "Unsqueeze"), Change("main", "s2", {})}},
       {{"main", "s1", "s2"}, {"main", "u1", "u2"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StepReport step =
        MergedStep({{"Squeeze", 0}, {"Unsqueeze", 1}}, c.windows, &StepReport::nodes);
    ASSERT_EQ(step.nodes.size(), c.expected.size());
    for (size_t i = 0; i < step.nodes.size(); ++i) {
      std::vector<std::string> got = {step.nodes[i].graph};
      for (const std::string& node : NodesOf(step.nodes[i])) got.push_back(node);
      EXPECT_EQ(got, c.expected[i]) << "entry " << i;
      // Everything but the names is the window's entry as it came.
      const NodeChange& like = Change(step.nodes[i].graph, "", {}, step.nodes[i].op,
                                      step.nodes[i].changes[0].detail);
      EXPECT_EQ(step.nodes[i].adapter, like.adapter);
      EXPECT_EQ(step.nodes[i].changes, like.changes);
      EXPECT_EQ(step.nodes[i].from_version, 11);
      EXPECT_EQ(step.nodes[i].to_version, 13);
    }
    EXPECT_EQ(step.validation, StepValidation::kIncremental);
  }
}

TEST(WindowReportTest, BumpsAddUpPerGraphInTheOrderGraphsCome) {
  struct BumpCase {
    const char* name;
    std::vector<std::vector<VersionBump>> windows;
    std::vector<VersionBump> expected;
  };
  const std::vector<BumpCase> cases = {
      {"the main graph across windows, subgraphs between",
       {{Bump("main", "Relu", 3), Bump("main/If 'a'/else_branch", "Relu", 1)},
        {Bump("main/If 'b'/else_branch", "Relu", 1), Bump("main", "Relu", 4)}},
       {Bump("main", "Relu", 7), Bump("main/If 'a'/else_branch", "Relu", 1),
        Bump("main/If 'b'/else_branch", "Relu", 1)}},
      {"ops by rank",
       {{Bump("main", "Add", 2), Bump("main", "Relu", 1)}, {Bump("g", "Add", 5)}},
       {Bump("main", "Relu", 1), Bump("main", "Add", 2), Bump("g", "Add", 5)}},
  };
  for (const BumpCase& c : cases) {
    SCOPED_TRACE(c.name);
    StepReport step = MergedStep({{"Relu", 0}, {"Add", 1}}, c.windows, &StepReport::bumps);
    ASSERT_EQ(step.bumps.size(), c.expected.size());
    for (size_t i = 0; i < step.bumps.size(); ++i) {
      EXPECT_EQ(step.bumps[i].graph, c.expected[i].graph) << i;
      EXPECT_EQ(step.bumps[i].op, c.expected[i].op) << i;
      EXPECT_EQ(step.bumps[i].nodes, c.expected[i].nodes) << i;
      EXPECT_EQ(step.bumps[i].from_version, 12);
      EXPECT_EQ(step.bumps[i].to_version, 13);
    }
  }
}

TEST(WindowReportTest, TextsKeptForTheStepsFirstRestructuredNodes) {
  StepParts parts;
  parts.rank_of = {{"Squeeze", 0}};
  // Each window's entries in distinct graphs, each with its texts.
  for (int w = 0; w < 3; ++w) {
    // Later windows need keep no texts once the first kept enough.
    EXPECT_EQ(parts.TextsFull(0), w > 0) << w;
    StepReport report;
    for (int i = 0; i < kRestructuredTexts; ++i) {
      NodeChange change = Change("g" + std::to_string(w * kRestructuredTexts + i), "n", {});
      change.before_text = "before\n";
      change.after_text = "after\n";
      report.nodes.push_back(change);
    }
    parts.Merge(report);
  }
  StepReport step = std::move(parts).Done();
  ASSERT_EQ(step.nodes.size(), 3u * kRestructuredTexts);
  for (size_t i = 0; i < step.nodes.size(); ++i) {
    bool kept = i < static_cast<size_t>(kRestructuredTexts);
    EXPECT_EQ(step.nodes[i].before_text, kept ? "before\n" : "") << i;
    EXPECT_EQ(step.nodes[i].after_text, kept ? "after\n" : "") << i;
  }
}

}  // namespace
}  // namespace onnxconvert::converter
