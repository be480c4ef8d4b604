// The random ops, determinism by op and int4 packing. The cases of the
// neural-network kernel families (linear algebra, convolution, pooling,
// normalization, recurrent, quantization, attention, dropout) are in
// eval/cases/nn.cases.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"

namespace onnxconvert::eval {
namespace {

// The random ops draw values in their range, with the shape asked, and
// are reported as not deterministic.
TEST(NnKernelsRandom, UniformInRangeAndNotDeterministic) {
  const std::string graph =
      "g () => (float[3,2] y) <> { y = RandomUniform<shape = [3, 2], low = 2.0, high = 3.0, "
      "seed = 1.0>() }";
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(absl::StrCat(
      "<ir_version: 10, opset_import: [\"\" : 22]>\n", graph));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::vector<Tensor>> out = EvaluateNode(model->graph().node(0), 22, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2}));
  for (float v : (*out)[0].data<float>()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LE(v, 3.0f);
  }
  EXPECT_FALSE(IsDeterministic("", "RandomUniform"));
  EXPECT_FALSE(IsDeterministic("", "Dropout"));
}

// Which ops verification may compare: the preview domains compute as
// ai.onnx does; a vendor's op is unknown.
TEST(DeterminismTest, ByDomainAndOp) {
  struct Row {
    const char* domain;
    const char* op;
    bool deterministic;
  };
  constexpr Row kRows[] = {
      {"", "Relu", true},
      {"ai.onnx", "Gemm", true},
      {"ai.onnx.ml", "TreeEnsemble", true},
      {"ai.onnx.preview", "FlexAttention", true},
      {"ai.onnx.preview.training", "Gradient", true},
      {"", "RandomNormalLike", false},
      {"", "Bernoulli", false},
      {"", "Multinomial", false},
      {"com.vendor", "Fancy", false},
  };
  for (const Row& row : kRows) {
    EXPECT_EQ(IsDeterministic(row.domain, row.op), row.deterministic)
        << row.domain << "." << row.op;
  }
}

// Narrow types round-trip through TensorProto packed (two int4 per byte,
// low nibble first).
TEST(NnKernelsNarrow, Int4PacksTwoPerByte) {
  Tensor t(onnx::TensorProto::INT4, {3});
  t.data<int8_t>()[0] = -1;
  t.data<int8_t>()[1] = 7;
  t.data<int8_t>()[2] = -8;
  onnx::TensorProto proto = ToProto(t, "t");
  EXPECT_EQ(proto.raw_data(), std::string("\x7f\x08", 2));
  absl::StatusOr<Tensor> back = FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DebugString(*back), "int4[3] {-1, 7, -8}");
}

}  // namespace
}  // namespace onnxconvert::eval
