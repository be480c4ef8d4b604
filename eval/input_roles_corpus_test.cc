// Over the backend corpus's node cases: how many originals evaluate on two
// random input sets (symbolic dims 1, then 3), with the plain generator
// and with values by role (eval/input_roles.h). Prints both figures and the
// cases that evaluate only with one of them, and asserts a floor on the
// cases that evaluate by role.

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "eval/data_sets.h"
#include "eval/graph.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "tests/corpus.h"

namespace onnxconvert::eval {
namespace {

// The fewest node cases whose original must evaluate on both role-based
// random sets: a little under what the roles reach, so that a role that
// gets worse fails the test.
constexpr int kByRoleFloor = 1680;

// The seed of the sets, as `convert --verify` fixes one.
constexpr uint64_t kSeed = 19;

// Every symbolic dim of the fed inputs of `graph` at `extent`.
absl::flat_hash_map<std::string, int64_t> SymbolicDims(const onnx::GraphProto& graph,
                                                       int64_t extent) {
  absl::flat_hash_map<std::string, int64_t> dims;
  for (const onnx::ValueInfoProto* input : FedInputs(graph)) {
    if (!input->type().has_tensor_type()) continue;
    for (const auto& dim : input->type().tensor_type().shape().dim()) {
      if (!dim.dim_param().empty()) dims[dim.dim_param()] = extent;
    }
  }
  return dims;
}

// Whether `model` evaluates on two random sets (dims 1, then 3).
bool EvaluatesOnRandomSets(const onnx::ModelProto& model, bool by_role) {
  std::mt19937_64 rng(kSeed);
  for (int64_t extent : {1, 3}) {
    RandomInputOptions options;
    options.dims = SymbolicDims(model.graph(), extent);
    options.by_role = by_role;
    options.edge_values = by_role;
    absl::StatusOr<std::vector<NamedValue>> inputs = RandomInputs(model.graph(), options, rng);
    if (!inputs.ok()) return false;
    if (!EvaluateModel(model, *std::move(inputs)).ok()) return false;
  }
  return true;
}

TEST(InputRolesCorpusTest, MoreOriginalsEvaluateOnInputsByRole) {
  absl::StatusOr<std::vector<testing::CorpusCase>> all = testing::ListCorpusCases();
  ASSERT_TRUE(all.ok()) << all.status();
  int cases = 0, plain = 0, by_role = 0;
  std::vector<std::string> gained, lost, failing;
  for (const testing::CorpusCase& c : *all) {
    if (!absl::StartsWith(c.name, "node/")) continue;
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    if (!loaded.ok()) continue;
    ++cases;
    bool old_ok = EvaluatesOnRandomSets(loaded->model, false);
    bool new_ok = EvaluatesOnRandomSets(loaded->model, true);
    plain += old_ok;
    by_role += new_ok;
    if (new_ok && !old_ok) gained.push_back(c.name);
    if (old_ok && !new_ok) lost.push_back(c.name);
    if (!new_ok) failing.push_back(c.name);
  }
  std::cout << "node cases: " << cases << "\noriginals evaluable on 2 random sets: plain "
            << plain << ", by role " << by_role << "\ngained (" << gained.size()
            << "): " << absl::StrJoin(gained, " ") << "\nlost (" << lost.size()
            << "): " << absl::StrJoin(lost, " ") << "\nfailing by role (" << failing.size()
            << "): " << absl::StrJoin(failing, " ") << "\n";
  EXPECT_GE(by_role, kByRoleFloor);
  EXPECT_GT(by_role, plain);
}

}  // namespace
}  // namespace onnxconvert::eval
