#include <string>

#include "gtest/gtest.h"
#include "proto/onnx.pb.h"

namespace {

// Fields this schema does not declare survive a parse/serialize round trip.
TEST(OnnxProtoTest, UnknownFieldsSurviveRoundTrip) {
  onnx::ModelProto model;
  model.set_ir_version(13);
  std::string bytes = model.SerializeAsString();
  // Field 99, varint 7: not part of ModelProto.
  bytes.push_back(static_cast<char>(((99 << 3) & 0x7f) | 0x80));
  bytes.push_back(static_cast<char>(99 >> 4));
  bytes.push_back(7);
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.ir_version(), 13);
  EXPECT_EQ(parsed.SerializeAsString(), bytes);
}

// The newest IR version and data types of ONNX 1.22 are declared.
TEST(OnnxProtoTest, DeclaresIrVersion13Types) {
  EXPECT_EQ(onnx::IR_VERSION, 13);
  EXPECT_EQ(onnx::TensorProto::FLOAT8E8M0, 24);
  EXPECT_EQ(onnx::TensorProto::INT2, 26);
  EXPECT_EQ(onnx::AttributeProto::TYPE_PROTOS, 14);
}

}  // namespace
