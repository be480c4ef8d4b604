// The narrow types' packing (tensor.h). The cases of Cast and CastLike
// (kernels_cast.cc) are in eval/cases/cast.cases.

#include <vector>

#include "eval/tensor.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// The 4- and 2-bit types pack two and four to a byte, low bits first, and
// come back whole (an odd count padded).
TEST(NarrowTest, PackedProtosRoundTrip) {
  struct Packed {
    int32_t type;
    std::vector<int8_t> held;
    size_t bytes;
  };
  const Packed kPacked[] = {
      {onnx::TensorProto::INT4, {-8, 7, 0, -1, 3}, 3},
      {onnx::TensorProto::UINT4, {15, 0, 7, 8, 1}, 3},
      {onnx::TensorProto::INT2, {-2, 1, 0, -1, 1}, 2},
      {onnx::TensorProto::UINT2, {3, 0, 2, 1, 3}, 2},
      {onnx::TensorProto::FLOAT4E2M1, {0xF, 0x1, 0x8, 0x7, 0x0}, 3},
      {onnx::TensorProto::FLOAT8E8M0, {0, 127, -1, 1, 2}, 5},
  };
  for (const Packed& p : kPacked) {
    Tensor t(p.type, {5});
    for (int i = 0; i < 5; ++i) t.data<int8_t>()[i] = p.held[i];
    onnx::TensorProto proto = ToProto(t, "t");
    EXPECT_EQ(proto.raw_data().size(), p.bytes) << ElementTypeName(p.type);
    absl::StatusOr<Tensor> back = FromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(DebugString(*back), DebugString(t));
  }
}

TEST(NarrowTest, Int4ProtoLayout) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::INT4);
  proto.add_dims(3);
  proto.set_raw_data(std::string("\x87\x0f", 2));
  absl::StatusOr<Tensor> t = FromProto(proto);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(DebugString(*t), "int4[3] {7, -8, -1}");
  proto.set_raw_data(std::string("\x87", 1));
  EXPECT_FALSE(FromProto(proto).ok());
}

}  // namespace
}  // namespace onnxconvert::eval
