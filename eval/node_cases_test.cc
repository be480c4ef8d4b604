// The evaluator against the ONNX backend corpus, one node at a time: every
// case whose graph is one node of an op the elementwise, math, reduction,
// indexing, resize, string, ml and cast kernels compute is evaluated
// through EvaluateNode on the case's inputs and compared with its expected
// outputs (integers, bool and strings exactly; float and double with rtol
// 1e-5, atol 1e-6; float16 and bfloat16 in their own precision). So are
// the flat multi-node graphs (the *_expanded function bodies) whose nodes
// all have kernels, node after node in graph order, counted apart. Prints
// the pass count per op, and fails for every case that does not pass.
//
// NODE_CASES_FILTER=<substring of the case name> narrows the run.

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"
#include "eval/kernel.h"
#include "gtest/gtest.h"
#include "schema/registry.h"
#include "tests/corpus.h"

namespace onnxconvert::eval {
namespace {

// The kernel families this test checks.
bool InScope(absl::string_view domain, absl::string_view op) {
  static const auto* ops = [] {
    auto* set = new absl::flat_hash_set<std::string>;
    for (absl::Span<const KernelRow> family :
         {ElementwiseKernels(), MathKernels(), ReduceKernels(), IndexKernels(), ResizeKernels(),
          StringKernels(), MlKernels(), CastKernels()}) {
      for (const KernelRow& row : family) set->insert(absl::StrCat(row.domain, "/", row.op));
    }
    return set;
  }();
  return ops->contains(absl::StrCat(domain == "ai.onnx" ? "" : domain, "/", op));
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Whether `got` matches `want`: empty when it does, else why not.
std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.elem_type() != want.elem_type() || got.dims() != want.dims()) {
    return absl::StrCat("got ", DebugString(got).substr(0, 200), " want ",
                        DebugString(want).substr(0, 200));
  }
  if (want.elem_type() == onnx::TensorProto::STRING) {
    for (int64_t i = 0; i < want.size(); ++i) {
      if (got.strings()[i] != want.strings()[i]) {
        return absl::StrCat("string ", i, ": got \"", got.strings()[i], "\" want \"",
                            want.strings()[i], "\"");
      }
    }
    return "";
  }
  std::string why;
  VisitElementType(want.elem_type(), [&](auto v) {
    using T = decltype(v);
    double rtol = 1e-5, atol = 1e-6;
    if constexpr (std::is_same_v<T, Half>) rtol = atol = 1e-3;
    if constexpr (std::is_same_v<T, BHalf>) rtol = atol = 1e-2;
    for (int64_t i = 0; i < want.size() && why.empty(); ++i) {
      double g = ToDouble(got.data<T>()[i]);
      double w = ToDouble(want.data<T>()[i]);
      bool same;
      if constexpr (std::is_integral_v<T>) {
        same = got.data<T>()[i] == want.data<T>()[i];
      } else {
        same = (std::isnan(g) && std::isnan(w)) || g == w ||
               std::fabs(g - w) <= atol + rtol * std::fabs(w);
      }
      if (!same) why = absl::StrCat("element ", i, ": got ", g, " want ", w);
    }
  });
  return why;
}

struct Tally {
  int attempted = 0;
  int passed = 0;
};

// The since_version `node` binds to in `model`, or 0 when it has none.
int SinceVersion(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (schema::Registry::CanonicalDomain(import.domain()) ==
        schema::Registry::CanonicalDomain(node.domain())) {
      opset = import.version();
    }
  }
  const schema::OpSchema* op =
      schema::Registry::Get().Lookup(node.domain(), node.op_type(), opset);
  return op == nullptr ? 0 : op->since_version;
}

// Whether the case is one to run: a single node of an op in scope, or
// (`multi`) a flat graph of several nodes that all have kernels.
bool Runnable(const onnx::ModelProto& model, bool* multi) {
  const onnx::GraphProto& graph = model.graph();
  for (const onnx::ValueInfoProto& value : graph.input()) {
    if (!value.type().has_tensor_type()) return false;
  }
  *multi = graph.node_size() > 1;
  if (!*multi) {
    return graph.node_size() == 1 && InScope(graph.node(0).domain(), graph.node(0).op_type());
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) return false;
    }
    int since = SinceVersion(model, node);
    if (since == 0 || FindKernel(node.domain(), node.op_type(), since) == nullptr) return false;
  }
  return true;
}

// Runs one case: "" when it passes, "skip" when it is not runnable, else
// why it fails. `label` gets the op (single node) or "(multi-node)".
std::string RunCase(const testing::CorpusCase& c, std::string* label) {
  absl::StatusOr<std::string> bytes = ReadFile(c.model_path);
  onnx::ModelProto model;
  if (!bytes.ok() || !model.ParseFromString(*bytes)) return "skip";
  bool multi = false;
  if (!Runnable(model, &multi)) return "skip";
  const onnx::GraphProto& graph = model.graph();
  const onnx::NodeProto& first = graph.node(0);
  *label = multi ? "(multi-node graphs)"
                 : absl::StrCat(first.domain().empty() ? "" : first.domain() + ".",
                                first.op_type());
  std::vector<std::string> sets;
  for (int k = 0;; ++k) {
    std::string dir = absl::StrCat(c.dir, "/test_data_set_", k);
    if (!std::ifstream(dir + "/output_0.pb")) break;
    sets.push_back(dir);
  }
  if (sets.empty()) return "skip";
  for (const std::string& dir : sets) {
    absl::flat_hash_map<std::string, Tensor> values;
    for (const onnx::TensorProto& init : graph.initializer()) {
      absl::StatusOr<Tensor> t = FromProto(init);
      if (!t.ok()) return std::string(t.status().message());
      values[init.name()] = *std::move(t);
    }
    // The inputs that are not initializers (older models list those too)
    // are input_0.pb, input_1.pb, ... in order.
    int next = 0;
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (values.contains(input.name())) continue;
      absl::StatusOr<std::string> pb = ReadFile(absl::StrCat(dir, "/input_", next++, ".pb"));
      onnx::TensorProto proto;
      if (!pb.ok() || !proto.ParseFromString(*pb)) return "unreadable input";
      absl::StatusOr<Tensor> t = FromProto(proto);
      if (!t.ok()) return absl::StrCat("input: ", t.status().message());
      values[input.name()] = *std::move(t);
    }
    for (const onnx::NodeProto& node : graph.node()) {
      std::vector<const Tensor*> inputs;
      for (const std::string& name : node.input()) {
        auto it = values.find(name);
        if (!name.empty() && it == values.end()) return absl::StrCat("no value for ", name);
        inputs.push_back(name.empty() ? nullptr : &it->second);
      }
      absl::StatusOr<std::vector<Tensor>> outputs =
          EvaluateNode(node, SinceVersion(model, node), inputs);
      if (!outputs.ok()) return std::string(outputs.status().message());
      for (int k = 0; k < node.output_size(); ++k) {
        if (!node.output(k).empty()) values[node.output(k)] = (*outputs)[k];
      }
    }
    for (int i = 0; i < graph.output_size(); ++i) {
      absl::StatusOr<std::string> pb = ReadFile(absl::StrCat(dir, "/output_", i, ".pb"));
      onnx::TensorProto proto;
      if (!pb.ok() || !proto.ParseFromString(*pb)) return "unreadable output";
      absl::StatusOr<Tensor> want = FromProto(proto);
      if (!want.ok()) return absl::StrCat("output: ", want.status().message());
      auto it = values.find(graph.output(i).name());
      if (it == values.end()) return "output not computed";
      std::string why = Compare(it->second, *want);
      if (!why.empty()) return absl::StrCat("output ", i, ": ", why);
    }
  }
  return "";
}

TEST(NodeCasesTest, CasesPass) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  const char* filter = std::getenv("NODE_CASES_FILTER");
  std::map<std::string, Tally> per_op;
  std::vector<std::string> failed;
  int attempted = 0, passed = 0;
  for (const testing::CorpusCase& c : *cases) {
    if (absl::StartsWith(c.name, "real/")) continue;
    if (filter != nullptr && !absl::StrContains(c.name, filter)) continue;
    std::string op;
    std::string why = RunCase(c, &op);
    if (why == "skip") continue;
    Tally& tally = per_op[op];
    ++tally.attempted;
    ++attempted;
    if (why.empty()) {
      ++tally.passed;
      ++passed;
      continue;
    }
    std::cout << "FAIL " << c.name << ": " << why.substr(0, 400) << "\n";
    failed.push_back(c.name);
  }
  for (const auto& [op, tally] : per_op) {
    std::cout << op << " " << tally.passed << "/" << tally.attempted << "\n";
  }
  std::cout << "total " << passed << "/" << attempted << "\n";
  for (const std::string& name : failed) ADD_FAILURE() << name << " fails";
}

}  // namespace
}  // namespace onnxconvert::eval
