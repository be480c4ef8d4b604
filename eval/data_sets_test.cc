// Data sets in the backend test layout and random inputs.

#include "eval/data_sets.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "tests/test_files.h"

namespace onnxconvert::eval {
namespace {

namespace fs = std::filesystem;

onnx::GraphProto Graph(const std::string& text) {
  absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(text);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *graph : onnx::GraphProto();
}

// Values of every kind survive a write and a read, each read as the graph
// declares it; the initializer's input takes no file.
TEST(DataSetsTest, ValuesOfEveryKindRoundTrip) {
  fs::path dir = testing::FreshTestDir("data_sets_roundtrip");
  onnx::GraphProto graph = Graph(
      "g (int64[2] a, seq(float) s, optional(int64[1]) o, optional(float) e, float[1] w) "
      "=> (int64[2] y) <float[1] w = {1}> { y = Identity(a) }");
  std::vector<NamedValue> values;
  values.push_back({"a", Value(Int64Tensor({1, 2}))});
  onnx::TypeProto float_type;
  float_type.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  std::vector<Value> elements;
  elements.emplace_back(Tensor(onnx::TensorProto::FLOAT, {2}));
  values.push_back({"s", Value::Sequence(float_type, std::move(elements))});
  values.push_back({"o", Value::Optional(onnx::TypeProto(), Value(Int64Tensor({7})))});
  values.push_back({"e", Value::Optional(float_type, std::nullopt)});
  ASSERT_TRUE(WriteValues((dir / "test_data_set_0").string(), "input", values).ok());

  absl::StatusOr<std::vector<DataSet>> sets = ListDataSets(dir.string());
  ASSERT_TRUE(sets.ok()) << sets.status();
  ASSERT_EQ(sets->size(), 1u);
  absl::StatusOr<std::vector<NamedValue>> read = LoadInputs(sets->front(), graph);
  ASSERT_TRUE(read.ok()) << read.status();
  std::vector<std::string> shown;
  for (const NamedValue& value : *read) {
    shown.push_back(value.name + " = " + DebugString(value.value));
  }
  EXPECT_EQ(absl::StrJoin(shown, "; "),
            "a = int64[2] {1, 2}; s = seq(float[2] {0, 0}); o = optional(int64[1] {7}); "
            "e = optional()");
}

// Sets come in numeric order; a folder of input_*.pb is one set.
TEST(DataSetsTest, SetsInNumericOrder) {
  fs::path dir = testing::FreshTestDir("data_sets_order");
  for (const char* name : {"test_data_set_10", "test_data_set_2", "notes"}) {
    fs::create_directories(dir / name);
    testing::WriteTestFile(dir / name / "input_0.pb", "");
  }
  absl::StatusOr<std::vector<DataSet>> sets = ListDataSets(dir.string());
  ASSERT_TRUE(sets.ok()) << sets.status();
  std::vector<std::string> names;
  for (const DataSet& set : *sets) names.push_back(set.name);
  EXPECT_EQ(absl::StrJoin(names, ","), "test_data_set_2,test_data_set_10");

  absl::StatusOr<std::vector<DataSet>> flat = ListDataSets((dir / "notes").string());
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(flat->front().name, "");
  EXPECT_EQ(flat->front().input_files.size(), 1u);

  absl::StatusOr<std::vector<DataSet>> none = ListDataSets((dir / "nowhere").string());
  EXPECT_EQ(none.status().message(), (dir / "nowhere").string() + ": no such folder");
}

// Random inputs: declared dims, --dim for symbols, 1 for the rest, a scalar
// for an unknown rank; values in their ranges; the seed fixes them.
TEST(DataSetsTest, RandomInputsFollowTheDeclaredTypes) {
  onnx::GraphProto graph = Graph(
      "g (float[N,2] x, int32[M] i, uint8[3] u, bool b, seq(int64[2]) s) => (float[N,2] y) "
      "{ y = Identity(x) }");
  RandomInputOptions options;
  options.dims["N"] = 3;
  std::mt19937_64 rng(42);
  absl::StatusOr<std::vector<NamedValue>> inputs = RandomInputs(graph, options, rng);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<std::string> types;
  for (const NamedValue& input : *inputs) types.push_back(TypeString(input.value));
  EXPECT_EQ(absl::StrJoin(types, "; "),
            "float[3,2]; int32[1]; uint8[3]; bool[]; seq(int64[2]) of 2");
  for (float x : (*inputs)[0].value.tensor().data<float>()) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
  }
  for (uint8_t x : (*inputs)[2].value.tensor().data<uint8_t>()) EXPECT_LE(x, 10);
  std::mt19937_64 again(42);
  absl::StatusOr<std::vector<NamedValue>> same = RandomInputs(graph, options, again);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(DebugString((*same)[0].value), DebugString((*inputs)[0].value));
}

}  // namespace
}  // namespace onnxconvert::eval
