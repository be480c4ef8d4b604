// Cast and CastLike (kernels_cast.cc) and the narrow types (tensor.h), one
// table-driven case per behaviour.

#include <vector>

#include "eval/tensor.h"
#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A graph casting float `values` (n of them) to type `to` with `attrs`.
std::string CastFloats(const std::string& values, int n, int to, const std::string& out,
                       const std::string& attrs = "") {
  return "g () => (" + out + " y) <float[" + std::to_string(n) + "] a = {" + values +
         "}> { y = Cast<to = " + std::to_string(to) + attrs + ">(a) }";
}

const Case kCases[] = {
    // float8: round to nearest even; saturate (default) or not.
    {"float8e4m3fn_saturates", 19,
     CastFloats("0.4789, 464, 1e6, nan, inf, -inf, -1e-7", 7, 17, "float8e4m3fn[7]"),
     "float8e4m3fn[7] {0.46875, 448, 448, nan, 448, -448, -0}"},
    {"float8e4m3fn_no_saturate", 19,
     CastFloats("464, 480, inf", 3, 17, "float8e4m3fn[3]", ", saturate = 0"),
     "float8e4m3fn[3] {448, nan, nan}"},
    {"float8e5m2_no_saturate_gives_infinity", 19,
     CastFloats("1e6, -inf, nan", 3, 19, "float8e5m2[3]", ", saturate = 0"),
     "float8e5m2[3] {inf, -inf, nan}"},
    {"float8e4m3fnuz_has_no_negative_zero", 19,
     CastFloats("-1e-7, 1e6, 0.001", 3, 18, "float8e4m3fnuz[3]"),
     "float8e4m3fnuz[3] {0, 240, 0.000976562}"},
    {"float8e5m2fnuz_no_saturate_nan", 19,
     CastFloats("1e6", 1, 20, "float8e5m2fnuz[1]", ", saturate = 0"),
     "float8e5m2fnuz[1] {nan}"},
    {"float8_back_to_float", 19,
     "g () => (float[2] y) <float[2] a = {0.3, -2.5}> { f = Cast<to = 17>(a) y = Cast<to = 1>(f) }",
     "float[2] {0.3125, -2.5}"},
    // float4e2m1 always saturates; NaN becomes 0b1000 as the reference gives.
    {"float4e2m1", 23, CastFloats("0.25, -3.5, 9, nan, -0", 5, 23, "float4e2m1[5]"),
     "float4e2m1[5] {0, -4, 6, -0, -0}"},
    // Narrow integers wrap; floats truncate first.
    {"int4_and_uint4_wrap", 21,
     "g () => (int4[3] s, uint4[3] u) <float[3] a = {-9, 7.9, 15}> "
     "{ s = Cast<to = 22>(a) u = Cast<to = 21>(a) }",
     "int4[3] {7, 7, -1}; uint4[3] {7, 7, 15}"},
    {"int2_wraps", 25, CastFloats("-3, 2", 2, 26, "int2[2]"), "int2[2] {1, -2}"},
    {"int4_to_int8_sign_extends", 21,
     "g () => (int8[2] y) <int8[2] a = {-8, 7}> { s = Cast<to = 22>(a) y = Cast<to = 3>(s) }",
     "int8[2] {-8, 7}"},
    {"narrow_integer_from_nan_refused", 21, CastFloats("nan", 1, 22, "int4[1]"),
     "node '' (Cast-21): the value nan is outside the target type's range"},
    // float8e8m0: the exponent, rounded by round_mode.
    {"e8m0_round_modes", 24,
     "g () => (float8e8m0[3] u, float8e8m0[3] d, float8e8m0[3] n) <float[3] a = {0.124, 1.1, 3}> "
     "{ u = Cast<to = 24>(a) d = Cast<to = 24, round_mode = \"down\">(a) "
     "n = Cast<to = 24, round_mode = \"nearest\">(a) }",
     "float8e8m0[3] {0.125, 2, 4}; float8e8m0[3] {0.0625, 1, 2}; float8e8m0[3] {0.125, 1, 4}"},
    {"e8m0_negative_refused", 24, CastFloats("-1", 1, 24, "float8e8m0[1]"),
     "node '' (Cast-24): negative values to float8e8m0 are undefined"},
    {"e8m0_unknown_round_mode", 24,
     CastFloats("1", 1, 24, "float8e8m0[1]", ", round_mode = \"odd\""),
     "node '' (Cast-24): round_mode \"odd\" is unknown"},
    // Strings: parsed and printed.
    {"float_to_string_shortest", 13,
     CastFloats("1.5, 0.1, 1e20, nan, -inf", 5, 8, "string[5]"),
     "string[5] {\"1.5\", \"0.1\", \"1e+20\", \"NaN\", \"-INF\"}"},
    {"int_to_string", 13,
     "g () => (string[2] y) <int64[2] a = {-9223372036854775808, 7}> { y = Cast<to = 8>(a) }",
     "string[2] {\"-9223372036854775808\", \"7\"}"},
    {"string_to_float_literals", 13,
     "g () => (float[5] y) <string[5] a = {\"3.5\", \"1E2\", \"+INF\", \"nan\", \"-Inf\"}> "
     "{ y = Cast<to = 1>(a) }",
     "float[5] {3.5, 100, inf, nan, -inf}"},
    {"string_to_int_truncates_decimals", 13,
     "g () => (int32[3] y) <string[3] a = {\"42\", \"-7\", \"100.5\"}> { y = Cast<to = 6>(a) }",
     "int32[3] {42, -7, 100}"},
    {"string_to_int_out_of_range_refused", 13,
     "g () => (int8[1] y) <string[1] a = {\"300\"}> { y = Cast<to = 3>(a) }",
     "node '' (Cast-13): \"300\" is out of range"},
    {"string_to_int64_exact", 13,
     "g () => (int64[1] y) <string[1] a = {\"9007199254740993\"}> { y = Cast<to = 7>(a) }",
     "int64[1] {9007199254740993}"},
    {"string_not_a_number_refused", 13,
     "g () => (float[1] y) <string[1] a = {\"1.5x\"}> { y = Cast<to = 1>(a) }",
     "node '' (Cast-13): \"1.5x\" is not a number"},
    {"string_to_bool_refused", 13,
     "g () => (bool[1] y) <string[1] a = {\"0\"}> { y = Cast<to = 9>(a) }",
     "node '' (Cast-13): strings do not cast to bool"},
    {"bool_to_string_refused", 13,
     "g () => (string[1] y) <bool[1] a = {1}> { y = Cast<to = 8>(a) }",
     "node '' (Cast-13): bool does not cast to string"},
    {"castlike_string_target", 15,
     "g () => (string[1] y) <int32[1] a = {-3}, string[1] t = {\"\"}> { y = CastLike(a, t) }",
     "string[1] {\"-3\"}"},
    // BitCast keeps the bits.
    {"bitcast_float_to_int32", 26,
     "g () => (int32[2] y) <float[2] a = {1, -0}> { y = BitCast<to = 6>(a) }",
     "int32[2] {1065353216, -2147483648}"},
    {"bitcast_int4_to_uint4", 26,
     "g () => (uint4[2] y) <int8[2] a = {-1, 7}> { s = Cast<to = 22>(a) y = BitCast<to = 21>(s) }",
     "uint4[2] {15, 7}"},
    {"bitcast_widths_differ", 26,
     "g () => (int64[1] y) <float[1] a = {1}> { y = BitCast<to = 7>(a) }",
     "node '' (BitCast-26): bitcasts from float to int64 are not supported (widths differ or a "
     "type is not held)"},
    {"bitcast_to_bool_needs_0_or_1", 26,
     "g () => (bool[2] y) <uint8[2] a = {1, 2}> { y = BitCast<to = 9>(a) }",
     "node '' (BitCast-26): bits other than 0 and 1 are no bool"},
    // Movement kernels and Where carry the narrow and string types.
    {"where_and_reshape_carry_narrow_types", 19,
     "g () => (float8e4m3fn[2] y) <float[2] a = {1, 2}, float[2] b = {3, 4}, bool[2] c = {1, 0}, "
     "int64[1] s = {2}> { x = Cast<to = 17>(a) z = Cast<to = 17>(b) w = Where(c, x, z) "
     "y = Reshape(w, s) }",
     "float8e4m3fn[2] {1, 4}"},
    {"equal_strings_broadcast", 19,
     "g () => (bool[2] y) <string[2] a = {\"x\", \"y\"}, string[1] b = {\"y\"}> { y = Equal(a, b) }",
     "bool[2] {false, true}"},
    {"arithmetic_refuses_narrow_types", 19,
     "g () => (float8e4m3fn[1] y) <float[1] a = {1}> { x = Cast<to = 17>(a) y = Add(x, x) }",
     "node '' (Add-14): no kernel for float8e4m3fn"},
};

INSTANTIATE_TEST_SUITE_P(Cast, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

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
