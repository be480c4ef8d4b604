// Inference on models with huge dims and attribute values (up to 2^63 - 1
// and down to -2^63). Each dim it computes is exact, unknown ("?"), or the
// node is refused with an error that names it: never the wrapped result of
// an overflow. Built with -fsanitize=undefined, any undefined arithmetic
// aborts the test.

#include <ostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ir/text_printer.h"
#include "schema/inference.h"
#include "tests/model_text.h"

namespace onnxconvert::schema {
namespace {

// One behaviour: a graph in which MAX stands for 2^63 - 1 and MIN for -2^63.
struct OverflowCase {
  std::string name;
  std::string graph;
  std::string value;     // the value to look at
  std::string expected;  // its type in ONNX text syntax, or "error: <part of the message>"
  int opset = 18;
};

// Names the case in test output.
void PrintTo(const OverflowCase& c, std::ostream* os) { *os << c.name; }

std::string Spelled(absl::string_view graph) {
  return absl::StrReplaceAll(
      graph, {{"MAX", "9223372036854775807"}, {"MIN", "-9223372036854775808"}});
}

onnx::ModelProto Model(const OverflowCase& c) {
  return testing::ModelFromText(absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", c.opset,
                                             "]>\n", Spelled(c.graph)));
}

// Every dim of every value's type in `result`'s main graph, as "name dim i
// is v", when some are negative; empty otherwise.
std::string NegativeDims(const InferenceResult& result, const onnx::GraphProto& graph) {
  std::string found;
  for (const auto& [name, type] : result.graphs.at(&graph).types) {
    if (!type->has_tensor_type()) continue;
    const onnx::TensorShapeProto& shape = type->tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (shape.dim(i).has_dim_value() && shape.dim(i).dim_value() < 0) {
        absl::StrAppend(&found, name, " dim ", i, " is ", shape.dim(i).dim_value(), "; ");
      }
    }
  }
  return found;
}

class InferenceOverflowTest : public ::testing::TestWithParam<OverflowCase> {};

TEST_P(InferenceOverflowTest, DimsAreExactUnknownOrRefused) {
  const OverflowCase& c = GetParam();
  onnx::ModelProto model = Model(c);
  ASSERT_TRUE(model.has_graph());
  absl::StatusOr<InferenceResult> loose = InferModel(model);
  ASSERT_TRUE(loose.ok()) << loose.status();
  EXPECT_EQ(NegativeDims(*loose, model.graph()), "");
  InferenceOptions options;
  options.strict = true;
  absl::StatusOr<InferenceResult> strict = InferModel(model, options);
  if (absl::StartsWith(c.expected, "error: ")) {
    absl::string_view message = absl::StripPrefix(c.expected, "error: ");
    ASSERT_FALSE(strict.ok()) << "no error";
    EXPECT_TRUE(absl::StrContains(strict.status().message(), "node 'n' ("))
        << strict.status();
    EXPECT_TRUE(absl::StrContains(strict.status().message(), message)) << strict.status();
    ASSERT_EQ(loose->notes.size(), 1u);
    EXPECT_TRUE(absl::StrContains(loose->notes[0], message)) << loose->notes[0];
    return;
  }
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_TRUE(loose->notes.empty()) << loose->notes[0];
  for (const InferenceResult* result : {&*loose, &*strict}) {
    const GraphTypes& types = result->graphs.at(&model.graph());
    auto it = types.types.find(c.value);
    ASSERT_NE(it, types.types.end()) << c.value;
    EXPECT_EQ(PrintTypeText(*it->second), Spelled(c.expected));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InferenceOverflowTest,
    ::testing::Values(
        // Conv and pooling windows.
        OverflowCase{"conv_pads_overflow",
                     "g (float[1,1,MAX,4] X, float[1,1,1,1] W) => (Y) {\n"
                     "  [n] Y = Conv <pads = [MAX, 0, MAX, 0]> (X, W)\n}",
                     "Y", "float[1,1,?,4]"},
        OverflowCase{"conv_dilated_kernel_overflow",
                     "g (float[1,1,8,4] X, float[1,1,3,1] W) => (Y) {\n"
                     "  [n] Y = Conv <dilations = [MAX, 1]> (X, W)\n}",
                     "Y", "float[1,1,?,4]"},
        OverflowCase{"conv_huge_input_exact",
                     "g (float[1,1,MAX,4] X, float[1,1,1,1] W) => (Y) {\n"
                     "  [n] Y = Conv <strides = [2, 1]> (X, W)\n}",
                     "Y", "float[1,1,4611686018427387904,4]"},
        OverflowCase{"conv_unit_window_keeps_max",
                     "g (float[1,1,MAX,4] X, float[1,1,1,1] W) => (Y) { [n] Y = Conv(X, W) }", "Y",
                     "float[1,1,MAX,4]"},
        OverflowCase{"conv_negative_kernel_unknown",
                     "g (float[1,1,8,4] X, float[1,1,1,1] W) => (Y) {\n"
                     "  [n] Y = Conv <kernel_shape = [MIN, 1]> (X, W)\n}",
                     "Y", "float[1,1,?,4]"},
        OverflowCase{"conv_strides_of_wrong_length",
                     "g (float[1,1,8,4] X, float[1,1,1,1] W) => (Y) {\n"
                     "  [n] Y = Conv <strides = [1]> (X, W)\n}",
                     "Y", "error: strides has 1 values, but 2 are needed"},
        OverflowCase{"maxpool_ceil_mode_huge_stride",
                     "g (float[1,1,MAX] X) => (Y) {\n"
                     "  [n] Y = MaxPool <kernel_shape = [2], strides = [MAX], ceil_mode = 1> (X)\n}",
                     "Y", "float[1,1,1]"},
        OverflowCase{"averagepool_same_upper_huge",
                     "g (float[1,1,MAX] X) => (Y) {\n"
                     "  [n] Y = AveragePool <kernel_shape = [3], strides = [2], auto_pad = \"SAME_UPPER\"> (X)\n}",
                     "Y", "float[1,1,4611686018427387904]"},
        OverflowCase{"maxpool_pads_of_wrong_length",
                     "g (float[1,1,8] X) => (Y) {\n"
                     "  [n] Y = MaxPool <kernel_shape = [2], pads = [MAX]> (X)\n}",
                     "Y", "error: pads has 1 values, but 2 are needed"},
        // ConvTranspose.
        OverflowCase{"conv_transpose_stride_overflow",
                     "g (float[1,1,MAX,2] X, float[1,1,3,3] W) => (Y) {\n"
                     "  [n] Y = ConvTranspose <strides = [2, 1]> (X, W)\n}",
                     "Y", "float[1,1,?,4]"},
        OverflowCase{"conv_transpose_group_overflow",
                     "g (float[1,1,2,2] X, float[1,2,1,1] W) => (Y) {\n"
                     "  [n] Y = ConvTranspose <group = MAX> (X, W)\n}",
                     "Y", "float[1,?,2,2]"},
        OverflowCase{"conv_transpose_same_upper_overflow",
                     "g (float[1,1,MAX,2] X, float[1,1,3,3] W) => (Y) {\n"
                     "  [n] Y = ConvTranspose <strides = [2, 2], auto_pad = \"SAME_UPPER\"> (X, W)\n}",
                     "Y", "float[1,1,?,4]"},
        OverflowCase{"conv_transpose_negative_size",
                     "g (float[1,1,2,2] X, float[1,1,1,1] W) => (Y) {\n"
                     "  [n] Y = ConvTranspose <pads = [5, 0, 5, 0]> (X, W)\n}",
                     "Y", "error: the output size of spatial axis 0 is -8"},
        OverflowCase{"conv_transpose_min_pads",
                     "g (float[1,1,2,2] X, float[1,1,1,1] W) => (Y) {\n"
                     "  [n] Y = ConvTranspose <pads = [MIN, 0, 0, 0]> (X, W)\n}",
                     "Y", "float[1,1,?,2]"},
        // Pad.
        OverflowCase{"pad_overflow",
                     "g (float[MAX,2] X) => (Y) <int64[4] p = {1, 0, 0, 0}> { [n] Y = Pad(X, p) }",
                     "Y", "float[?,2]"},
        OverflowCase{"pad_min_underflow",
                     "g (float[0,2] X) => (Y) <int64[4] p = {MIN, 0, -1, 0}> { [n] Y = Pad(X, p) }",
                     "Y", "float[?,2]"},
        OverflowCase{"pad_to_negative_size",
                     "g (float[3,2] X) => (Y) <int64[4] p = {-MAX, 0, 0, 0}> { [n] Y = Pad(X, p) }",
                     "Y", "error: padding axis 0 gives it -9223372036854775804 elements"},
        // Range.
        OverflowCase{"range_int64_whole_line",
                     "g () => (Y) <int64 s = {MIN}, int64 l = {MAX}, int64 d = {1}> {\n"
                     "  [n] Y = Range(s, l, d)\n}",
                     "Y", "int64[?]"},
        OverflowCase{"range_int64_exact",
                     "g () => (Y) <int64 s = {0}, int64 l = {MAX}, int64 d = {1}> {\n"
                     "  [n] Y = Range(s, l, d)\n}",
                     "Y", "int64[MAX]"},
        OverflowCase{"range_int64_min_delta",
                     "g () => (Y) <int64 s = {MAX}, int64 l = {MIN}, int64 d = {MIN}> {\n"
                     "  [n] Y = Range(s, l, d)\n}",
                     "Y", "int64[2]"},
        OverflowCase{"range_float_out_of_range",
                     "g () => (Y) <float s = {0.0}, float l = {1e30}, float d = {1e-30}> {\n"
                     "  [n] Y = Range(s, l, d)\n}",
                     "Y", "float[?]"},
        // Reshape.
        OverflowCase{"reshape_inferred_axis_overflow",
                     "g (float[MAX,2] X) => (Y) <int64[2] s = {-1, 1}> { [n] Y = Reshape(X, s) }",
                     "Y", "float[?,1]"},
        OverflowCase{"reshape_of_huge_rank",
                     "g (float[2] X, int64[MAX] s) => (Y) { [n] Y = Reshape(X, s) }", "Y",
                     "float"},
        OverflowCase{"reshape_entry_below_minus_one",
                     "g (float[2] X) => (Y) <int64[1] s = {MIN}> { [n] Y = Reshape(X, s) }", "Y",
                     "error: shape entry 0 is -9223372036854775808, below -1"},
        // Tile.
        OverflowCase{"tile_overflow",
                     "g (float[3,2] X) => (Y) <int64[2] r = {MAX, 1}> { [n] Y = Tile(X, r) }", "Y",
                     "float[?,2]"},
        OverflowCase{"tile_negative_repeat",
                     "g (float[3,2] X) => (Y) <int64[2] r = {MIN, 1}> { [n] Y = Tile(X, r) }", "Y",
                     "error: a repeat is -9223372036854775808, a negative size"},
        // Resize.
        OverflowCase{"resize_scale_overflow",
                     "g (float[1,1,MAX,2] X) => (Y) <float[4] sc = {1.0, 1.0, 2.0, 1e30}> {\n"
                     "  [n] Y = Resize(X, , sc)\n}",
                     "Y", "float[1,1,?,?]"},
        OverflowCase{"resize_negative_scale",
                     "g (float[1,1,4,2] X) => (Y) <float[4] sc = {1.0, 1.0, -2.0, 1.0}> {\n"
                     "  [n] Y = Resize(X, , sc)\n}",
                     "Y", "error: scale -2 gives axis 2 -8 elements"},
        OverflowCase{"resize_negative_size",
                     "g (float[1,1,4,2] X) => (Y) <int64[4] sz = {1, 1, MIN, 2}> {\n"
                     "  [n] Y = Resize(X, , , sz)\n}",
                     "Y", "error: a size is -9223372036854775808"},
        // DepthToSpace, SpaceToDepth.
        OverflowCase{"depth_to_space_huge_blocksize",
                     "g (float[1,4,2,2] X) => (Y) {\n"
                     "  [n] Y = DepthToSpace <blocksize = 4294967296> (X)\n}",
                     "Y", "float[1,?,8589934592,8589934592]"},
        OverflowCase{"space_to_depth_channel_overflow",
                     "g (float[1,MAX,2,2] X) => (Y) { [n] Y = SpaceToDepth <blocksize = 2> (X) }",
                     "Y", "float[1,?,1,1]"},
        // Folding elementwise integer arithmetic on shapes.
        OverflowCase{"mul_fold_overflow",
                     "g (float[MAX,2] X) => (Y) <int64[1] two = {2}> {\n"
                     "  s = Shape(X)\n  t = Mul(s, two)\n  [n] Y = ConstantOfShape(t)\n}",
                     "Y", "float[?,4]"},
        OverflowCase{"add_fold_overflow",
                     "g (float[MAX,2] X) => (Y) <int64[1] one = {1}> {\n"
                     "  s = Shape(X)\n  t = Add(s, one)\n  [n] Y = ConstantOfShape(t)\n}",
                     "Y", "float[?,3]"},
        OverflowCase{"sub_fold_overflow",
                     "g (float[MAX,2] X) => (Y) <int64[1] m = {MIN}> {\n"
                     "  s = Shape(X)\n  t = Sub(s, m)\n  [n] Y = ConstantOfShape(t)\n}",
                     "Y", "float[?,?]"},
        OverflowCase{"div_fold_min_by_minus_one",
                     "g (float[2] X) => (Y) <int64[1] m = {MIN}, int64[1] minus_one = {-1}> {\n"
                     "  s = Shape(X)\n  d = Div(m, minus_one)\n  t = Add(s, d)\n"
                     "  [n] Y = ConstantOfShape(t)\n}",
                     "Y", "float[?]"},
        OverflowCase{"broadcast_of_huge_dims",
                     "g (float[MAX,1] A, float[1,MAX] B) => (Y) { [n] Y = Add(A, B) }", "Y",
                     "float[MAX,MAX]"},
        // Concat and Split sums.
        OverflowCase{"concat_sum_overflow",
                     "g (float[MAX,2] A, float[1,2] B) => (Y) { [n] Y = Concat <axis = 0> (A, B) }",
                     "Y", "float[?,2]"},
        OverflowCase{"split_sum_overflow",
                     "g (float[4,2] X) => (A, B) <int64[2] sp = {MAX, MAX}> {\n"
                     "  [n] A, B = Split(X, sp)\n}",
                     "A", "error: the splits add up to more than 2^63 - 1, not to the dimension 4"},
        OverflowCase{"split_negative_part",
                     "g (float[4,2] X) => (A, B) <int64[2] sp = {MIN, 4}> {\n"
                     "  [n] A, B = Split(X, sp)\n}",
                     "A", "error: a split is -9223372036854775808"},
        OverflowCase{"split_even_huge",
                     "g (float[MAX] X) => (A, B) { [n] A, B = Split <num_outputs = 2> (X) }", "B",
                     "float[4611686018427387903]"},
        // Slice.
        OverflowCase{"slice_huge_step",
                     "g (float[10] X) => (Y) <int64[1] b = {0}, int64[1] e = {MAX}, int64[1] a = {0},"
                     " int64[1] st = {MAX}> {\n  [n] Y = Slice(X, b, e, a, st)\n}",
                     "Y", "float[1]"},
        OverflowCase{"slice_min_step",
                     "g (float[10] X) => (Y) <int64[1] b = {-1}, int64[1] e = {MIN}, int64[1] a = {0},"
                     " int64[1] st = {MIN}> {\n  [n] Y = Slice(X, b, e, a, st)\n}",
                     "Y", "float[1]"},
        OverflowCase{"slice_of_shape_huge_step",
                     "g (float[2,3,4] X) => (Y) <int64[1] b = {0}, int64[1] e = {MAX}, int64[1] a = {0},"
                     " int64[1] st = {MAX}> {\n  s = Shape(X)\n  t = Slice(s, b, e, a, st)\n"
                     "  [n] Y = ConstantOfShape(t)\n}",
                     "Y", "float[2]"},
        OverflowCase{"slice_steps_of_wrong_length",
                     "g (float[10] X) => (Y) <int64[1] b = {0}, int64[1] e = {5}, int64[1] a = {0},"
                     " int64[2] st = {1, 1}> {\n  [n] Y = Slice(X, b, e, a, st)\n}",
                     "Y", "error: Slice has 1 starts, 1 axes and 2 steps"},
        // Expand.
        OverflowCase{"expand_to_huge",
                     "g (float[1,2] X) => (Y) <int64[2] s = {MAX, 2}> { [n] Y = Expand(X, s) }", "Y",
                     "float[MAX,2]"},
        OverflowCase{"expand_to_negative",
                     "g (float[1,2] X) => (Y) <int64[2] s = {MIN, 2}> { [n] Y = Expand(X, s) }", "Y",
                     "error: entry 0 of the shape is -9223372036854775808, a negative size"},
        // Size, Flatten.
        OverflowCase{"size_overflow",
                     "g (float[MAX,2] X) => (Y) <int64[1] zero = {0}> {\n"
                     "  s = Size(X)\n  t = Unsqueeze(s, zero)\n  [n] Y = ConstantOfShape(t)\n}",
                     "Y", "float[?]"},
        OverflowCase{"flatten_overflow",
                     "g (float[MAX,2,3] X) => (Y) { [n] Y = Flatten <axis = 2> (X) }", "Y",
                     "float[?,3]"},
        // Sizes taken from attributes and values.
        OverflowCase{"gather_nd_huge_batch_dims",
                     "g (float[2,3] X, int64[2,1] I) => (Y) {\n"
                     "  [n] Y = GatherND <batch_dims = MAX> (X, I)\n}",
                     "Y", "error: batch_dims 9223372036854775807 and index tuples of 1 exceed"},
        OverflowCase{"gather_nd_negative_batch_dims",
                     "g (float[2,3] X, int64[2,1] I) => (Y) {\n"
                     "  [n] Y = GatherND <batch_dims = MIN> (X, I)\n}",
                     "Y", "error: batch_dims is -9223372036854775808, a negative size"},
        OverflowCase{"constant_of_shape_negative",
                     "g () => (Y) <int64[1] s = {MIN}> { [n] Y = ConstantOfShape(s) }", "Y",
                     "error: entry 0 of the shape is -9223372036854775808"},
        OverflowCase{"constant_of_shape_of_huge_rank",
                     "g (int64[MAX] s) => (Y) { [n] Y = ConstantOfShape(s) }", "Y", "float"},
        OverflowCase{"topk_negative_k",
                     "g (float[4] X) => (V, I) <int64[1] k = {MIN}> { [n] V, I = TopK(X, k) }", "V",
                     "error: k is -9223372036854775808"},
        OverflowCase{"one_hot_negative_depth",
                     "g (int64[3] X) => (Y) <int64[1] d = {MIN}, float[2] v = {0.0, 1.0}> {\n"
                     "  [n] Y = OneHot(X, d, v)\n}",
                     "Y", "error: depth is -9223372036854775808"},
        OverflowCase{"random_normal_negative_shape",
                     "g () => (Y) { [n] Y = RandomNormal <shape = [2, MIN]> () }", "Y",
                     "error: a shape entry is -9223372036854775808"},
        OverflowCase{"hann_window_negative_size",
                     "g () => (Y) <int64 s = {MIN}> { [n] Y = HannWindow(s) }", "Y",
                     "error: size is -9223372036854775808"},
        OverflowCase{"lstm_negative_hidden_size",
                     "g (float[5,2,3] X, float[1,?,3] W, float[1,?,?] R) => (Y) {\n"
                     "  [n] Y = LSTM <hidden_size = MIN> (X, W, R)\n}",
                     "Y", "error: hidden_size is -9223372036854775808"},
        OverflowCase{"unsqueeze_repeated_axis",
                     "g (float[2] X) => (Y) <int64[2] a = {0, -3}> { [n] Y = Unsqueeze(X, a) }",
                     "Y", "error: axis -3 repeats"},
        // Element types from attributes that do not fit int32 stay unknown
        // rather than wrap (2^32 + 1 would be float).
        OverflowCase{"cast_to_out_of_range",
                     "g (int64[2] X) => (Y) { [n] Y = Cast <to = 4294967297> (X) }", "Y",
                     "undefined[2]"},
        // Attention's total sequence length.
        OverflowCase{"attention_past_length_overflow",
                     "g (float[1,2,3,4] Q, float[1,2,1,4] K, float[1,2,1,4] V, float[1,2,MAX,4] PK,"
                     " float[1,2,MAX,4] PV) => (Y, PKO) {\n"
                     "  [n] Y, PKO = Attention(Q, K, V, , PK, PV)\n}",
                     "PKO", "float[1,2,?,4]", 23}),
    [](const ::testing::TestParamInfo<OverflowCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::schema
