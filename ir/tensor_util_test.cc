#include "ir/tensor_util.h"

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

struct WidthCase {
  int32_t data_type;
  std::optional<int> bits;
};

TEST(TensorUtilTest, ElementBitWidth) {
  const WidthCase cases[] = {
      {onnx::TensorProto::FLOAT, 32},      {onnx::TensorProto::INT64, 64},
      {onnx::TensorProto::BOOL, 8},        {onnx::TensorProto::COMPLEX128, 128},
      {onnx::TensorProto::INT4, 4},        {onnx::TensorProto::FLOAT4E2M1, 4},
      {onnx::TensorProto::FLOAT8E8M0, 8},  {onnx::TensorProto::INT2, 2},
      {onnx::TensorProto::STRING, std::nullopt},
      {onnx::TensorProto::UNDEFINED, std::nullopt},
      {27, std::nullopt},                  {-1, std::nullopt},
  };
  for (const WidthCase& c : cases) {
    EXPECT_EQ(ElementBitWidth(c.data_type), c.bits) << c.data_type;
  }
}

TEST(TensorUtilTest, IntegerElementTypes) {
  using onnx::TensorProto;
  const int32_t integers[] = {TensorProto::INT8,   TensorProto::UINT8,  TensorProto::INT16,
                              TensorProto::UINT16, TensorProto::INT32,  TensorProto::UINT32,
                              TensorProto::INT64,  TensorProto::UINT64};
  for (int32_t type : integers) EXPECT_TRUE(IsIntegerElementType(type)) << type;
  const int32_t others[] = {TensorProto::BOOL,   TensorProto::FLOAT,     TensorProto::INT4,
                            TensorProto::STRING, TensorProto::UNDEFINED, -1};
  for (int32_t type : others) EXPECT_FALSE(IsIntegerElementType(type)) << type;
}

TEST(TensorUtilTest, ElementCount) {
  onnx::TensorProto tensor;
  EXPECT_EQ(ElementCount(tensor), 1);  // a scalar
  tensor.add_dims(2);
  tensor.add_dims(3);
  EXPECT_EQ(ElementCount(tensor), 6);
  tensor.add_dims(-1);
  EXPECT_EQ(ElementCount(tensor), std::nullopt);
  onnx::TensorProto huge;
  for (int i = 0; i < 4; ++i) huge.add_dims(int64_t{1} << 20);
  EXPECT_EQ(ElementCount(huge), std::nullopt);
}

TEST(TensorUtilTest, DataBytesByStorage) {
  onnx::TensorProto raw;
  raw.set_raw_data(std::string(12, '\0'));
  EXPECT_EQ(TensorDataBytes(raw), 12);

  onnx::TensorProto typed;
  typed.add_float_data(1.0f);
  typed.add_int64_data(2);
  typed.add_string_data("abc");
  EXPECT_EQ(TensorDataBytes(typed), 4 + 8 + 3);

  onnx::TensorProto external;
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  external.set_data_type(onnx::TensorProto::FLOAT);
  external.add_dims(10);
  EXPECT_EQ(TensorDataBytes(external), 40);  // from dims when no length
  auto* length = external.add_external_data();
  length->set_key("length");
  length->set_value("16");
  EXPECT_EQ(TensorDataBytes(external), 16);
  EXPECT_TRUE(IsExternal(external));
  EXPECT_FALSE(IsExternal(raw));
}

}  // namespace
}  // namespace onnxconvert
