// The evaluator against the ONNX backend corpus (node, simple and
// pytorch-operator cases), node by node: every case whose graph is flat
// (no subgraphs) and whose nodes all have kernels (or are Constant with a
// tensor value) is evaluated with EvaluateNode, in graph order, on each of
// its test data sets, and compared with the expected outputs. Integers,
// bool, strings and the narrow types match exactly; floats within rtol
// 1e-5 and an atol of 1e-6 times the largest expected magnitude (float16
// and bfloat16 outputs: 1e-3 each); the random ops' outputs by type and
// shape only. Prints the pass count per op (single-node cases) and for the
// multi-node graphs (the *_expanded function bodies, ...). Fails for every
// case that does not pass, except the known gaps, each with its reason; a
// gap that passes fails too, so the list stays true.
//
// NODE_CASES_FILTER=<substring of the case name> narrows the run.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"
#include "eval/kernel.h"
#include "gtest/gtest.h"
#include "schema/registry.h"
#include "tests/corpus.h"

namespace onnxconvert::eval {
namespace {

// Cases known not to pass, with the reason.
const std::map<std::string, std::string>& KnownGaps() {
  static const auto* gaps = new std::map<std::string, std::string>{
      {"node/test_roialign_aligned_false",
       "the expected output is written to 4 digits (0.4664 for 0.466421)"},
      {"node/test_roialign_aligned_true",
       "the expected output is written to 4 digits (0.5178 for 0.517783)"},
      {"node/test_averagepool_2d_ceil_last_window_starts_on_pad",
       "the expected output is written to 4 digits (0.1511 for 0.151056)"},
      {"node/test_gridsample_bicubic",
       "the expected output is written to 4 digits (-0.1406 for -0.140625)"},
  };
  return *gaps;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The elements of a floating-point tensor (narrow floats too) as double,
// or nullopt for other types.
std::optional<std::vector<double>> FloatValues(const Tensor& t) {
  int32_t type = t.elem_type();
  std::vector<double> values;
  if (IsNarrowFloat(type) || type == onnx::TensorProto::FLOAT8E8M0) {
    for (uint8_t b : t.data<uint8_t>()) values.push_back(NarrowFloatToFloat(type, b));
    return values;
  }
  bool floating = false;
  VisitElementType(type, [&](auto x) {
    using T = decltype(x);
    floating = !std::is_integral_v<T>;
    if (floating) {
      for (const T& e : t.data<T>()) values.push_back(ToDouble(e));
    }
  });
  if (!floating) return std::nullopt;
  return values;
}

// Whether `got` matches `want` (see the file comment): "" when it does,
// else why not.
std::string Compare(const Tensor& got, const Tensor& want, bool shape_only) {
  if (got.elem_type() != want.elem_type() || got.dims() != want.dims()) {
    return absl::StrCat("got ", DebugString(got).substr(0, 200), " want ",
                        DebugString(want).substr(0, 200));
  }
  if (shape_only) return "";
  auto mismatch = [&](int64_t i) {
    return absl::StrCat("element ", i, ": got ", DebugString(got).substr(0, 300), " want ",
                        DebugString(want).substr(0, 300));
  };
  if (want.elem_type() == onnx::TensorProto::STRING) {
    for (int64_t i = 0; i < want.size(); ++i) {
      if (got.strings()[i] != want.strings()[i]) return mismatch(i);
    }
    return "";
  }
  std::optional<std::vector<double>> g = FloatValues(got), w = FloatValues(want);
  if (!w) {  // integers, bool, narrow integers: every byte
    int size = ElementSize(want.elem_type());
    const uint8_t* a = got.data<uint8_t>().data();
    const uint8_t* b = want.data<uint8_t>().data();
    for (int64_t i = 0; i < want.size(); ++i) {
      if (!std::equal(a + i * size, a + (i + 1) * size, b + i * size)) return mismatch(i);
    }
    return "";
  }
  bool exact = IsNarrow(want.elem_type());
  bool half = want.elem_type() == onnx::TensorProto::FLOAT16 ||
              want.elem_type() == onnx::TensorProto::BFLOAT16;
  double largest = 0;
  for (double x : *w) {
    if (std::isfinite(x)) largest = std::max(largest, std::fabs(x));
  }
  double rtol = exact ? 0 : half ? 1e-3 : 1e-5;
  double atol = exact ? 0 : (half ? 1e-3 : 1e-6) * std::max(1.0, largest);
  for (size_t i = 0; i < w->size(); ++i) {
    double a = (*g)[i], b = (*w)[i];
    bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                std::fabs(a - b) <= atol + rtol * std::fabs(b);
    if (!same) return absl::StrCat("element ", i, ": got ", a, " want ", b);
  }
  return "";
}

// The since_version `node` binds to in `model`, or 0 when it has none.
int SinceVersion(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (CanonicalDomain(import.domain()) ==
        CanonicalDomain(node.domain())) {
      opset = import.version();
    }
  }
  const schema::OpSchema* op =
      schema::Registry::Get().Lookup(node.domain(), node.op_type(), opset);
  return op == nullptr ? 0 : op->since_version;
}

bool IsConstant(const onnx::NodeProto& node) {
  return node.domain().empty() && node.op_type() == "Constant" && node.attribute_size() == 1 &&
         node.attribute(0).name() == "value";
}

// Whether every node of the flat graph has a kernel (or is a Constant of
// a tensor) and every input is a tensor.
bool Runnable(const onnx::ModelProto& model) {
  const onnx::GraphProto& graph = model.graph();
  for (const onnx::ValueInfoProto& value : graph.input()) {
    if (!value.type().has_tensor_type()) return false;
  }
  if (graph.node_size() == 0) return false;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) return false;
    }
    if (IsConstant(node)) continue;
    int since = SinceVersion(model, node);
    if (since == 0 || FindKernel(node.domain(), node.op_type(), since) == nullptr) return false;
  }
  return true;
}

// Evaluates the graph on the data set in `dir`: "" when its outputs match,
// else why not.
std::string RunDataSet(const onnx::ModelProto& model, const std::string& dir, bool shape_only) {
  const onnx::GraphProto& graph = model.graph();
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
    if (!pb.ok()) continue;  // an optional input left out
    onnx::TensorProto proto;
    if (!proto.ParseFromString(*pb)) return "unreadable input";
    absl::StatusOr<Tensor> t = FromProto(proto);
    if (!t.ok()) return absl::StrCat("input: ", t.status().message());
    values[input.name()] = *std::move(t);
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (IsConstant(node)) {
      absl::StatusOr<Tensor> t = FromProto(node.attribute(0).t());
      if (!t.ok()) return std::string(t.status().message());
      values[node.output(0)] = *std::move(t);
      continue;
    }
    std::vector<const Tensor*> inputs;
    for (const std::string& name : node.input()) {
      auto it = values.find(name);
      inputs.push_back(name.empty() || it == values.end() ? nullptr : &it->second);
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
    if (it == values.end()) return "an output is not computed";
    std::string why = Compare(it->second, *want, shape_only);
    if (!why.empty()) return absl::StrCat("output ", i, ": ", why);
  }
  return "";
}

// Runs one case: "" when it passes, "skip" when it is not runnable, else
// why it fails. `label` gets the op (a single node) or "(multi-node)".
std::string RunCase(const testing::CorpusCase& c, std::string* label) {
  absl::StatusOr<std::string> bytes = ReadFile(c.model_path);
  onnx::ModelProto model;
  if (!bytes.ok() || !model.ParseFromString(*bytes) || !Runnable(model)) return "skip";
  const onnx::GraphProto& graph = model.graph();
  const onnx::NodeProto& first = graph.node(0);
  *label = graph.node_size() > 1
               ? "(multi-node)"
               : absl::StrCat(first.domain().empty() ? "" : first.domain() + ".", first.op_type());
  bool shape_only = false;
  for (const onnx::NodeProto& node : graph.node()) {
    shape_only = shape_only || !IsDeterministic(node.domain(), node.op_type());
  }
  int sets = 0;
  for (;; ++sets) {
    std::string dir = absl::StrCat(c.dir, "/test_data_set_", sets);
    if (!std::ifstream(dir + "/output_0.pb")) break;
    std::string why = RunDataSet(model, dir, shape_only);
    if (!why.empty()) return absl::StrCat("data set ", sets, ": ", why);
  }
  return sets == 0 ? "skip" : "";
}

TEST(NodeCasesTest, PassExceptKnownGaps) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  const char* filter = std::getenv("NODE_CASES_FILTER");
  std::map<std::string, std::pair<int, int>> counts;  // label: passed, attempted
  int attempted = 0, passed = 0;
  for (const testing::CorpusCase& c : *cases) {
    if (absl::StartsWith(c.name, "real/")) continue;
    if (filter != nullptr && !absl::StrContains(c.name, filter)) continue;
    std::string label;
    std::string why = RunCase(c, &label);
    if (why == "skip") continue;
    auto& [label_passed, label_attempted] = counts[label];
    ++label_attempted;
    ++attempted;
    if (why.empty()) {
      ++label_passed;
      ++passed;
    } else {
      std::cout << "FAIL " << c.name << ": " << why.substr(0, 400) << "\n";
    }
    if (KnownGaps().contains(c.name)) {
      EXPECT_FALSE(why.empty()) << c.name << " passes: drop it from the known gaps";
    } else {
      EXPECT_TRUE(why.empty()) << c.name << ": " << why.substr(0, 400);
    }
  }
  for (const auto& [label, count] : counts) {
    std::cout << label << " " << count.first << "/" << count.second << "\n";
  }
  std::cout << "total " << passed << "/" << attempted << "\n";
}

}  // namespace
}  // namespace onnxconvert::eval
