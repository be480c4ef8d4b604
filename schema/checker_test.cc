#include "schema/checker.h"

#include <functional>
#include <map>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"
#include "ir/model_io.h"
#include "ir/text_parser.h"
#include "tests/corpus.h"

namespace onnxconvert::schema {
namespace {

onnx::ModelProto Model(absl::string_view text) { return testing::ModelFromText(text); }

TEST(CheckerTest, ValidModelHasNoIssues) {
  CheckReport report = CheckModel(Model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N,4] X, bool C) => (float[N,4] Y) <float[4] W = {1.0, 2.0, 3.0, 4.0}> {
  [add] T = Add(X, W)
  [if] Y = If <then_branch = t () => (float[N,4] A) { A = Relu(T) },
               else_branch = e () => (float[N,4] B) { B = Neg(T) }> (C)
})"));
  EXPECT_TRUE(report.issues.empty()) << report.issues[0].ToString();
  EXPECT_EQ(report.nodes_checked, 4);
  EXPECT_EQ(report.graphs_checked, 3);
}

struct BrokenCase {
  std::string name;
  std::string text;
  CheckCode code;
  std::string expected;  // the whole first issue, as ToString() prints it
};

constexpr absl::string_view kHeader = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

TEST(CheckerTest, BrokenModelsAreRejectedWithTheNodeNamed) {
  const BrokenCase cases[] = {
      {"dangling_input", "g (float X) => (float Y) { [relu] Y = Relu(Q) }",
       CheckCode::kUndefinedInput,
       "main \xE2\x80\xBA node 'relu' (Relu-13): undefined-input: input 'Q' is not defined"},
      {"wrong_attribute_type", "g (float X) => (float Y) { [sm] Y = Softmax <axis = 1.5> (X) }",
       CheckCode::kAttributeType,
       "main \xE2\x80\xBA node 'sm' (Softmax-13): attribute-type: attribute 'axis' is FLOAT; "
       "Softmax-13 wants INT"},
      {"op_before_it_existed",
       "g (float X) => (float Y) { [gn] Y = GroupNormalization <num_groups = 1> (X, X, X) }",
       CheckCode::kUnknownOperator,
       "main \xE2\x80\xBA node 'gn' (GroupNormalization): unknown-operator: 'GroupNormalization' "
       "does not exist at opset 13 (it was introduced at opset 18)"},
      {"cycle", "g (float X) => (float Y) { [a] A = Add(X, B) \n [b] B = Relu(A) \n Y = Identity(B) }",
       CheckCode::kNotTopological,
       "main \xE2\x80\xBA node 'a' (Add-13): not-topological: input 'B' is defined only by a "
       "later node (#1): the nodes are not in topological order"},
      {"unknown_attribute", "g (float X) => (float Y) { [r] Y = Relu <alpha = 1.0> (X) }",
       CheckCode::kUnknownAttribute,
       "main \xE2\x80\xBA node 'r' (Relu-13): unknown-attribute: Relu-13 has no attribute 'alpha'"},
      {"missing_attribute", "g (float X) => (float Y) { [c] Y = Cast(X) }",
       CheckCode::kMissingAttribute,
       "main \xE2\x80\xBA node 'c' (Cast-13): missing-attribute: required attribute 'to' is missing"},
      {"arity", "g (float X) => (float Y) { [a] Y = Add(X) }", CheckCode::kArity,
       "main \xE2\x80\xBA node 'a' (Add-13): arity: has 1 inputs; Add-13 takes 2"},
      {"type_constraint", "g (int8[2] X) => (int8[2] Y) { [r] Y = Relu(X) }",
       CheckCode::kTypeConstraint,
       "main \xE2\x80\xBA node 'r' (Relu-13): type-constraint: input 'X' (X) is tensor(int8), "
       "not allowed for T by Relu-13"},
      {"mixed_types", "g (float[2] X, double[2] Z) => (float[2] Y) { [a] Y = Add(X, Z) }",
       CheckCode::kTypeConstraint,
       "main \xE2\x80\xBA node 'a' (Add-13): type-constraint: input 'Z' (B) is tensor(double), "
       "but T is already bound to tensor(float)"},
      {"duplicate", "g (float X) => (float Y) { [a] Y = Relu(X) \n [b] Y = Neg(X) }",
       CheckCode::kDuplicateValue,
       "main \xE2\x80\xBA node 'b' (Neg-13): duplicate-value: value 'Y' is defined more than once"},
      {"in_subgraph",
       "g (bool C, float X) => (float Y) { [if] Y = If <then_branch = t () => (float A) "
       "{ [inner] A = Relu(Nope) }, else_branch = e () => (float B) { B = Neg(X) }> (C) }",
       CheckCode::kUndefinedInput,
       "main/then_branch of 'if' (If) \xE2\x80\xBA node 'inner' (Relu-13): undefined-input: "
       "input 'Nope' is not defined"},
  };
  for (const BrokenCase& c : cases) {
    CheckReport report = CheckModel(Model(absl::StrCat(kHeader, c.text)));
    ASSERT_FALSE(report.issues.empty()) << c.name;
    EXPECT_EQ(report.issues[0].code, c.code) << c.name << ": " << report.issues[0].ToString();
    EXPECT_TRUE(absl::StartsWith(report.issues[0].ToString(), c.expected))
        << c.name << ":\n  got      " << report.issues[0].ToString() << "\n  expected "
        << c.expected;
    EXPECT_FALSE(report.status().ok());
  }
}

TEST(CheckerTest, ModelLevelRules) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case cases[] = {
      {"<ir_version: 8, opset_import: [\"\" : 28]> g () => () {}", "opset 28 of domain 'ai.onnx' does not exist"},
      {"<ir_version: 14, opset_import: [\"\" : 13]> g () => () {}", "ir_version 14 is newer"},
      {"<ir_version: -5, opset_import: [\"\" : 13]> g () => () {}",
       "ir_version -5 is invalid: IR versions start at 1"},
      {"<opset_import: [\"\" : 13]> g () => () {}", "ir_version is missing"},
      {"<ir_version: 8, opset_import: [\"\" : 13, \"\" : 14]> g () => () {}", "imported twice"},
      {"<ir_version: 8, opset_import: [\"\" : 13]> g (float X) => (float Y) { Y = com.x.Op(X) }",
       "domain 'com.x' is used but not imported"},
      {"<ir_version: 8, opset_import: [\"\" : 13]> g (float8e4m3fn X) => (float8e4m3fn Y) "
       "{ Y = Identity(X) }", "needs IR version 9"},
  };
  for (const Case& c : cases) {
    CheckReport report = CheckModel(Model(c.text));
    ASSERT_FALSE(report.status().ok()) << c.text;
    EXPECT_TRUE(absl::StrContains(report.status().message(), c.expected))
        << c.text << " -> " << report.status();
  }
}

TEST(CheckerTest, FunctionsAndVendorOpsAreChecked) {
  CheckReport report = CheckModel(Model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1, "com.vendor" : 1]>
g (float X) => (float Y) {
  T = local.Twice(X)
  Y = com.vendor.Fancy(T)
}
<domain: "local", opset_import: ["" : 13]>
Twice (A) => (B) {
  [bad] B = Add(A, Missing)
})"));
  ASSERT_EQ(report.error_count(), 1) << report.issues[0].ToString();
  EXPECT_EQ(report.issues[0].ToString(),
            "function 'local.Twice' \xE2\x80\xBA node 'bad' (Add-13): undefined-input: input "
            "'Missing' is not defined");
  EXPECT_EQ(report.functions_checked, 1);
}

// A model that breaks one rule: its text, then what `edit` does to it where
// the text syntax cannot say it.
struct MalformedCase {
  std::string name;
  std::string text;
  std::function<void(onnx::ModelProto&)> edit;  // null: the text says it all
  CheckCode code;
  std::string expected;  // the whole first error, as ToString() prints it
};

void ExpectFirstError(const MalformedCase& c) {
  onnx::ModelProto model = Model(c.text);
  if (c.edit) c.edit(model);
  CheckReport report = CheckModel(model);
  absl::Status status = report.status();
  ASSERT_FALSE(status.ok()) << c.name;
  const CheckIssue* first = nullptr;
  for (const CheckIssue& issue : report.issues) {
    if (!issue.is_warning && first == nullptr) first = &issue;
  }
  EXPECT_EQ(first->code, c.code) << c.name << ": " << first->ToString();
  EXPECT_EQ(first->ToString(), c.expected) << c.name;
}

void ExpectValid(const std::string& name, const std::string& text,
                 const std::function<void(onnx::ModelProto&)>& edit = nullptr) {
  onnx::ModelProto model = Model(text);
  if (edit) edit(model);
  CheckReport report = CheckModel(model);
  EXPECT_TRUE(report.status().ok()) << name << ": " << report.status();
}

// The main graph's first initializer.
onnx::TensorProto& W(onnx::ModelProto& model) {
  return *model.mutable_graph()->mutable_initializer(0);
}

// A graph of one initializer W that is its output.
std::string WithInitializer(absl::string_view w) {
  return absl::StrCat(kHeader, "g () => (W) <", w, "> {}");
}

constexpr absl::string_view kMain = "main: tensor: tensor 'W': ";

TEST(CheckerTest, TensorsHoldWhatTheirDataTypeAndDimsSay) {
  const MalformedCase cases[] = {
      {"unknown_data_type", WithInitializer("float[2] W = {1.0, 2.0}"),
       [](onnx::ModelProto& m) { W(m).set_data_type(99); }, CheckCode::kTensor,
       absl::StrCat(kMain, "data_type 99 is not a data type of ONNX 1.22")},
      {"undefined_data_type_with_data", WithInitializer("float[2] W = {1.0, 2.0}"),
       [](onnx::ModelProto& m) { W(m).set_data_type(onnx::TensorProto::UNDEFINED); },
       CheckCode::kTensor, absl::StrCat(kMain, "data_type is UNDEFINED (or missing)")},
      {"negative_dim", WithInitializer("float[2, 1] W = {1.0, 2.0}"),
       [](onnx::ModelProto& m) { W(m).set_dims(1, -1); }, CheckCode::kTensor,
       absl::StrCat(kMain, "dim 1 is -1; dims cannot be negative")},
      {"dims_overflow_int64", WithInitializer("float[4294967296, 4294967296] W = {}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "dims [4294967296, 4294967296] describe more than 2^63-1 elements")},
      {"float_data_short", WithInitializer("float[2, 2] W = {1.0, 2.0, 3.0}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "float_data holds 3 values; dims [2, 2] of FLOAT need 4")},
      {"float_data_long", WithInitializer("float[1] W = {1.0, 2.0}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "float_data holds 2 values; dims [1] of FLOAT need 1")},
      {"no_data", WithInitializer("float[2] W = {}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "no data; dims [2] of FLOAT need 2 elements")},
      {"scalar_without_data", WithInitializer("float[] W = {}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "no data; dims [] of FLOAT need 1 element")},
      {"data_for_no_elements", WithInitializer("float[0] W = {1.0}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "float_data holds 1 value; dims [0] of FLOAT need 0")},
      {"int32_data_short", WithInitializer("int32[3] W = {1, 2}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "int32_data holds 2 values; dims [3] of INT32 need 3")},
      {"int64_data_long", WithInitializer("int64[1] W = {1, 2}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "int64_data holds 2 values; dims [1] of INT64 need 1")},
      {"double_data_short", WithInitializer("double[2] W = {1.0}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "double_data holds 1 value; dims [2] of DOUBLE need 2")},
      {"uint64_data_short", WithInitializer("uint32[2] W = {1}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "uint64_data holds 1 value; dims [2] of UINT32 need 2")},
      {"string_data_long", WithInitializer("string[1] W = {\"a\", \"b\"}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "string_data holds 2 values; dims [1] of STRING need 1")},
      // A complex number is two floats.
      {"complex64_one_float_each", WithInitializer("complex64[2] W = {1.0, 2.0}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "float_data holds 2 values; dims [2] of COMPLEX64 need 4")},
      // float16 and bfloat16 keep their bits in int32_data, one to a value.
      {"float16_in_int32_data", WithInitializer("float16[2] W = {15360}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "int32_data holds 1 value; dims [2] of FLOAT16 need 2")},
      {"bfloat16_in_int32_data", WithInitializer("bfloat16[1] W = {16256, 16256}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "int32_data holds 2 values; dims [1] of BFLOAT16 need 1")},
      // 4-bit types are two to an int32_data value, 2-bit types four.
      {"int4_one_per_int32", WithInitializer("int4[3] W = {1, 2, 3}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "int32_data holds 3 values; dims [3] of INT4 need 2")},
      {"uint2_one_per_int32", WithInitializer("uint2[5] W = {1, 2, 3, 0, 1}"), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "int32_data holds 5 values; dims [5] of UINT2 need 2")},
      {"raw_data_short", WithInitializer("float[2] W = raw {1.0}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "raw_data holds 4 bytes; dims [2] of FLOAT need 8")},
      {"raw_data_long", WithInitializer("int16[1] W = raw {1, 2}"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "raw_data holds 4 bytes; dims [1] of INT16 need 2")},
      {"int4_raw_short", WithInitializer("int4[3] W = raw \"21\""), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "raw_data holds 1 byte; dims [3] of INT4 need 2")},
      {"float4_raw_long", WithInitializer("float4e2m1[2] W = raw \"2100\""), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "raw_data holds 2 bytes; dims [2] of FLOAT4E2M1 need 1")},
      {"string_in_raw_data", WithInitializer("string[1] W = raw \"61\""), nullptr,
       CheckCode::kTensor,
       absl::StrCat(kMain, "STRING data in raw_data; it belongs in string_data")},
      // Data in two fields at once.
      {"float_data_and_raw_data", WithInitializer("float[1] W = {1.0}"),
       [](onnx::ModelProto& m) { W(m).set_raw_data(std::string(4, '\0')); },
       CheckCode::kTensor,
       absl::StrCat(kMain,
                    "data in both float_data and raw_data; a tensor's data is in one field")},
      // FLOAT data in the field of another type.
      {"float_in_int64_data", WithInitializer("int64[1] W = {1}"),
       [](onnx::ModelProto& m) { W(m).set_data_type(onnx::TensorProto::FLOAT); },
       CheckCode::kTensor,
       absl::StrCat(kMain, "FLOAT data in int64_data; it belongs in float_data or raw_data")},
      {"external_with_data", WithInitializer("float[1] W = external [\"location\" : \"w.bin\"]"),
       [](onnx::ModelProto& m) { W(m).add_float_data(1.0); }, CheckCode::kTensor,
       absl::StrCat(kMain,
                    "stored externally (data_location EXTERNAL) but has data in float_data")},
      {"external_without_location",
       WithInitializer("float[1] W = external [\"offset\" : \"0\"]"), nullptr, CheckCode::kTensor,
       absl::StrCat(kMain, "stored externally (data_location EXTERNAL) but external_data has "
                           "no location")},
      {"tensor_attribute",
       absl::StrCat(kHeader, "g () => (Y) { [c] Y = Constant <value = float[2] {1.0}> () }"),
       nullptr, CheckCode::kTensor,
       "main \xE2\x80\xBA node 'c' (Constant-13): tensor: attribute 'value': unnamed tensor: "
       "float_data holds 1 value; dims [2] of FLOAT need 2"},
      {"tensor_in_a_subgraph",
       absl::StrCat(kHeader,
                    "g (bool C) => (Y) { [if] Y = If <then_branch = t () => (A) <int64[2] K = {1}> "
                    "{ A = Identity(K) }, "
                    "else_branch = e () => (B) { B = Constant <value_int = 1> () }> (C) }"),
       nullptr, CheckCode::kTensor,
       "main/then_branch of 'if' (If): tensor: tensor 'K': int64_data holds 1 value; dims [2] of "
       "INT64 need 2"},
  };
  for (const MalformedCase& c : cases) ExpectFirstError(c);
}

TEST(CheckerTest, TensorsOfEveryLayoutPass) {
  for (absl::string_view w : {
           "float[2, 2] W = {1.0, 2.0, 3.0, 4.0}",
           "float[2, 0] W = {}",  // no elements, no data
           "float[] W = {1.0}",
           "float[2] W = raw {1.0, 2.0}",
           "complex64[1] W = {1.0, 2.0}",
           "float16[2] W = {15360, 15360}",
           "int4[3] W = {33, 3}",       // two to an int32_data value
           "int4[3] W = raw \"2103\"",  // two to a byte
           "uint2[5] W = {57, 1}",      // four to a value
           "int2[5] W = raw \"3901\"",  // four to a byte
           "string[2] W = {\"a\", \"b\"}",
           "uint64[1] W = {7}",
           "float[1000000] W = external [\"location\" : \"w.bin\"]",  // not read
       }) {
    ExpectValid(std::string(w), WithInitializer(w));
  }
}

// A sparse tensor of `nnz` float values in a dense shape `dims`, its indices
// an INT64 tensor of shape `index_dims` holding `indices`.
onnx::SparseTensorProto Sparse(std::vector<int64_t> dims, int nnz,
                               std::vector<int64_t> index_dims, std::vector<int64_t> indices) {
  onnx::SparseTensorProto sparse;
  onnx::TensorProto& values = *sparse.mutable_values();
  values.set_name("S");
  values.set_data_type(onnx::TensorProto::FLOAT);
  values.add_dims(nnz);
  for (int i = 0; i < nnz; ++i) values.add_float_data(1.0f + i);
  onnx::TensorProto& index = *sparse.mutable_indices();
  index.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : index_dims) index.add_dims(d);
  for (int64_t i : indices) index.add_int64_data(i);
  for (int64_t d : dims) sparse.add_dims(d);
  return sparse;
}

// As sparse initializer S of a graph that outputs it.
std::function<void(onnx::ModelProto&)> AsInitializer(onnx::SparseTensorProto sparse) {
  return [sparse](onnx::ModelProto& m) { *m.mutable_graph()->add_sparse_initializer() = sparse; };
}

constexpr absl::string_view kSparseMain = "main: sparse-tensor: sparse tensor 'S': ";
const std::string kOutputsS = absl::StrCat(kHeader, "g () => (S) {}");

TEST(CheckerTest, SparseTensorsHaveIndicesInTheirDenseShapeInOrder) {
  const MalformedCase cases[] = {
      {"index_out_of_range", kOutputsS, AsInitializer(Sparse({2, 3}, 2, {2}, {0, 6})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #1 is 6; the dense shape [2, 3] has 6 elements")},
      {"negative_index", kOutputsS, AsInitializer(Sparse({2, 3}, 2, {2}, {-1, 2})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #0 is -1; the dense shape [2, 3] has 6 elements")},
      {"unsorted", kOutputsS, AsInitializer(Sparse({6}, 2, {2}, {3, 1})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #1 (1 linearized) does not follow #0 (3): indices must "
                                 "be strictly increasing")},
      {"repeated_index", kOutputsS, AsInitializer(Sparse({6}, 2, {2}, {2, 2})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #1 (2 linearized) does not follow #0 (2): indices must "
                                 "be strictly increasing")},
      {"more_indices_than_values", kOutputsS, AsInitializer(Sparse({6}, 2, {3}, {0, 1, 2})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "indices have dims [3]; with 2 values in a dense shape of rank "
                                 "1 they must be [2] or [2, 1]")},
      {"indices_of_rank_3", kOutputsS, AsInitializer(Sparse({2, 3}, 2, {2, 2, 1}, {0, 0, 1, 1})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "indices have dims [2, 2, 1]; with 2 values in a dense shape of "
                                 "rank 2 they must be [2] or [2, 2]")},
      {"coordinate_out_of_range", kOutputsS,
       AsInitializer(Sparse({2, 3}, 2, {2, 2}, {0, 0, 1, 3})), CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #1 has coordinate 3 in dim 1 of the dense shape [2, 3]")},
      {"coordinates_unsorted", kOutputsS, AsInitializer(Sparse({2, 3}, 2, {2, 2}, {1, 0, 0, 2})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #1 (2 linearized) does not follow #0 (3): indices must "
                                 "be strictly increasing")},
      {"values_not_1d", kOutputsS,
       AsInitializer([] {
         onnx::SparseTensorProto s = Sparse({6}, 2, {2}, {0, 1});
         s.mutable_values()->add_dims(1);  // [2, 1]
         return s;
       }()),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "values have dims [2, 1]; they must be of rank 1 ([NNZ])")},
      {"values_malformed", kOutputsS,
       AsInitializer([] {
         onnx::SparseTensorProto s = Sparse({6}, 2, {2}, {0, 1});
         s.mutable_values()->add_float_data(3.0f);
         return s;
       }()),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "values: tensor 'S': float_data holds 3 values; dims [2] of "
                                 "FLOAT need 2")},
      {"no_dense_dims", kOutputsS, AsInitializer(Sparse({}, 0, {0}, {})),
       CheckCode::kSparseTensor, absl::StrCat(kSparseMain, "no dims (the dense shape)")},
      {"zero_dense_dim", kOutputsS, AsInitializer(Sparse({2, 0}, 0, {0}, {})),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "dim 1 of the dense shape is 0; they must be positive")},
      {"int32_indices", kOutputsS,
       AsInitializer([] {
         onnx::SparseTensorProto s = Sparse({6}, 1, {1}, {});
         s.mutable_indices()->set_data_type(onnx::TensorProto::INT32);
         s.mutable_indices()->add_int32_data(0);
         return s;
       }()),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "indices are INT32; they must be INT64")},
      {"values_without_indices", kOutputsS,
       AsInitializer([] {
         onnx::SparseTensorProto s = Sparse({6}, 2, {}, {});
         s.clear_indices();
         return s;
       }()),
       CheckCode::kSparseTensor, absl::StrCat(kSparseMain, "2 values but no indices")},
      // Indices in raw_data, little-endian: 4 then 1.
      {"raw_indices_unsorted", kOutputsS,
       AsInitializer([] {
         onnx::SparseTensorProto s = Sparse({6}, 2, {2}, {});
         s.mutable_indices()->set_raw_data(std::string("\x04\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0", 16));
         return s;
       }()),
       CheckCode::kSparseTensor,
       absl::StrCat(kSparseMain, "index #1 (1 linearized) does not follow #0 (4): indices must "
                                 "be strictly increasing")},
      // Constant's sparse_value, which the text syntax has no form for.
      {"sparse_value_attribute",
       absl::StrCat(kHeader, "g () => (Y) { [c] Y = Constant <value_int = 1> () }"),
       [](onnx::ModelProto& m) {
         onnx::AttributeProto& a = *m.mutable_graph()->mutable_node(0)->mutable_attribute(0);
         a.Clear();
         a.set_name("sparse_value");
         a.set_type(onnx::AttributeProto::SPARSE_TENSOR);
         *a.mutable_sparse_tensor() = Sparse({4}, 2, {2}, {3, 3});
       },
       CheckCode::kSparseTensor,
       "main \xE2\x80\xBA node 'c' (Constant-13): sparse-tensor: attribute 'sparse_value': sparse "
       "tensor 'S': index #1 (3 linearized) does not follow #0 (3): indices must be strictly "
       "increasing"},
      // A vendor op's sparse_tensors attribute.
      {"sparse_tensors_attribute",
       "<ir_version: 8, opset_import: [\"\" : 13, \"com.x\" : 1]> g (float X) => (Y) "
       "{ [v] Y = com.x.Op <k = 1> (X) }",
       [](onnx::ModelProto& m) {
         onnx::AttributeProto& a = *m.mutable_graph()->mutable_node(0)->mutable_attribute(0);
         a.Clear();
         a.set_name("k");
         a.set_type(onnx::AttributeProto::SPARSE_TENSORS);
         *a.add_sparse_tensors() = Sparse({4}, 1, {1}, {0});
         *a.add_sparse_tensors() = Sparse({4}, 1, {1}, {4});
       },
       CheckCode::kSparseTensor,
       "main \xE2\x80\xBA node 'v' (com.x.Op): sparse-tensor: attribute 'k': sparse tensor 'S': "
       "index #0 is 4; the dense shape [4] has 4 elements"},
  };
  for (const MalformedCase& c : cases) ExpectFirstError(c);
}

TEST(CheckerTest, SparseTensorsInEitherIndexFormPass) {
  ExpectValid("linearized", kOutputsS, AsInitializer(Sparse({2, 3}, 3, {3}, {0, 4, 5})));
  ExpectValid("coordinates", kOutputsS,
              AsInitializer(Sparse({2, 3}, 3, {3, 2}, {0, 0, 1, 1, 1, 2})));
  ExpectValid("empty", kOutputsS, AsInitializer(Sparse({2, 3}, 0, {0}, {})));
  ExpectValid("raw_indices", kOutputsS, AsInitializer([] {
                onnx::SparseTensorProto s = Sparse({6}, 2, {2}, {});
                s.mutable_indices()->set_raw_data(
                    std::string("\x01\0\0\0\0\0\0\0\x04\0\0\0\0\0\0\0", 16));
                return s;
              }()));
}

// The main graph's first node's first attribute.
onnx::AttributeProto& A(onnx::ModelProto& m) {
  return *m.mutable_graph()->mutable_node(0)->mutable_attribute(0);
}

constexpr absl::string_view kVendorHeader =
    "<ir_version: 8, opset_import: [\"\" : 13, \"com.x\" : 1]>\n";

TEST(CheckerTest, AttributesHaveOneValueOfTheirType) {
  const std::string vendor = absl::StrCat(kVendorHeader,
                                          "g (float X) => (Y) { [v] Y = com.x.Op <a = 1.0> (X) }");
  const std::string node = "main \xE2\x80\xBA node 'v' (com.x.Op): attribute-type: ";
  const MalformedCase cases[] = {
      {"type_float_value_in_ints", vendor,
       [](onnx::ModelProto& m) {
         A(m).clear_f();
         A(m).add_ints(1);
       },
       CheckCode::kAttributeType,
       absl::StrCat(node, "attribute 'a' is of type FLOAT but its value is in ints")},
      {"two_values", vendor, [](onnx::ModelProto& m) { A(m).set_i(1); },
       CheckCode::kAttributeType,
       absl::StrCat(node, "attribute 'a' has values in both f and i; an attribute has one value")},
      {"no_type", vendor, [](onnx::ModelProto& m) { A(m).clear_type(); },
       CheckCode::kAttributeType,
       absl::StrCat(node, "attribute 'a' has no type (IR version 2 and later require one)")},
      {"no_name", vendor, [](onnx::ModelProto& m) { A(m).clear_name(); },
       CheckCode::kAttributeType, absl::StrCat(node, "an attribute has no name")},
      {"reference_outside_a_function",
       absl::StrCat(kHeader, "g (float X) => (Y) { [sm] Y = Softmax <axis: int = @axis> (X) }"),
       nullptr, CheckCode::kAttributeType,
       "main \xE2\x80\xBA node 'sm' (Softmax-13): attribute-type: attribute 'axis' refers to a "
       "function attribute outside a function"},
      {"reference_with_a_value", R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float X) => (Y) { Y = local.F <axis = 0> (X) }
<domain: "local", opset_import: ["" : 13]>
F <axis> (A) => (B) { [sm] B = Softmax <axis: int = @axis> (A) }
)",
       [](onnx::ModelProto& m) {
         m.mutable_functions(0)->mutable_node(0)->mutable_attribute(0)->set_i(1);
       },
       CheckCode::kAttributeType,
       "function 'local.F' \xE2\x80\xBA node 'sm' (Softmax-13): attribute-type: attribute 'axis' "
       "refers to function attribute 'axis' but also has a value"},
      {"function_default_of_the_wrong_type", R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float X) => (Y) { Y = local.F (X) }
<domain: "local", opset_import: ["" : 13]>
F <axis: int = 1> (A) => (B) { B = Softmax <axis: int = @axis> (A) }
)",
       [](onnx::ModelProto& m) {
         m.mutable_functions(0)->mutable_attribute_proto(0)->set_type(onnx::AttributeProto::FLOAT);
       },
       CheckCode::kAttributeType,
       "function 'local.F': attribute-type: attribute 'axis' is of type FLOAT but its value is "
       "in i"},
  };
  for (const MalformedCase& c : cases) ExpectFirstError(c);
}

TEST(CheckerTest, FunctionAttributesAreReferencedInTheBodyAndItsSubgraphs) {
  ExpectValid("reference_in_a_subgraph_of_the_body", R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] X, bool C) => (float[2] Y) { Y = local.F <axis = 0> (X, C) }
<domain: "local", opset_import: ["" : 13]>
F <axis> (A, C) => (B) {
  B = If <then_branch = t () => (T) { T = Softmax <axis: int = @axis> (A) },
          else_branch = e () => (E) { E = Identity(A) }> (C)
}
)");
}

TEST(CheckerTest, FunctionsThatCallThemselvesAreRefused) {
  constexpr absl::string_view kCalls = R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float X) => (Y) { Y = local.F(X) }
)";
  const MalformedCase cases[] = {
      {"itself", absl::StrCat(kCalls, R"(
<domain: "local", opset_import: ["" : 13, "local" : 1]>
F (A) => (B) { B = local.F(A) }
)"),
       nullptr, CheckCode::kFunctionCycle,
       "function 'local.F': function-cycle: calls itself: local.F -> local.F"},
      {"each_other", absl::StrCat(kCalls, R"(
<domain: "local", opset_import: ["" : 13, "local" : 1]>
F (A) => (B) { B = local.G(A) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
G (A) => (B) { B = local.F(A) }
)"),
       nullptr, CheckCode::kFunctionCycle,
       "function 'local.F': function-cycle: model-local functions call each other in a cycle: "
       "local.F -> local.G -> local.F"},
      {"three_deep_not_from_the_first", absl::StrCat(kCalls, R"(
<domain: "local", opset_import: ["" : 13, "local" : 1]>
F (A) => (B) { B = local.G(A) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
G (A) => (B) { B = local.H(A) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
H (A) => (B) { B = local.I(A) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
I (A) => (B) { B = local.G(A) }
)"),
       nullptr, CheckCode::kFunctionCycle,
       "function 'local.G': function-cycle: model-local functions call each other in a cycle: "
       "local.G -> local.H -> local.I -> local.G"},
      {"through_a_subgraph", absl::StrCat(kCalls, R"(
<domain: "local", opset_import: ["" : 13, "local" : 1]>
F (A) => (B) { B = local.G(A) }
<domain: "local", opset_import: ["" : 13, "local" : 1]>
G (A) => (B) {
  C = Constant <value = bool {1}> ()
  B = If <then_branch = t () => (T) { T = local.F(A) },
          else_branch = e () => (E) { E = Identity(A) }> (C)
}
)"),
       nullptr, CheckCode::kFunctionCycle,
       "function 'local.F': function-cycle: model-local functions call each other in a cycle: "
       "local.F -> local.G -> local.F"},
  };
  for (const MalformedCase& c : cases) ExpectFirstError(c);
  ExpectValid("diamond", absl::StrCat(kCalls, R"(
<domain: "local", opset_import: ["" : 13, "local" : 1]>
F (A) => (B) {
  T = local.G(A)
  B = local.H(T)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
G (A) => (B) { B = local.H(A) }
<domain: "local", opset_import: ["" : 13]>
H (A) => (B) { B = Identity(A) }
)"));
}

// Every model of the corpus passes the checker at its own opset.
TEST(CheckerTest, EveryCorpusModelPasses) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::map<std::string, int> by_code;
  int failures = 0;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    CheckReport report = CheckModel(loaded->model);
    for (const CheckIssue& issue : report.issues) {
      if (issue.is_warning) continue;
      ++by_code[CheckCodeName(issue.code)];
      if (++failures <= 30) ADD_FAILURE() << c.name << ": " << issue.ToString();
    }
  }
  for (const auto& [code, count] : by_code) std::cerr << code << ": " << count << "\n";
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace onnxconvert::schema
