// The tolerances of issue 19, one table-driven case per behaviour: an
// expected and an actual value, and the comparison as text.

#include "eval/compare.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Value Floats(std::vector<float> values, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  Tensor t(onnx::TensorProto::FLOAT, dims);
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return Value(std::move(t));
}

Value Doubles(std::vector<double> values) {
  Tensor t(onnx::TensorProto::DOUBLE, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<double>()[i] = values[i];
  return Value(std::move(t));
}

Value Halves(std::vector<float> values) {
  Tensor t(onnx::TensorProto::FLOAT16, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<Half>()[i] = FloatToHalf(values[i]);
  return Value(std::move(t));
}

Value Ints(std::vector<int64_t> values) { return Value(Int64Tensor(values)); }

Value Strings(std::vector<std::string> values) {
  Tensor t(onnx::TensorProto::STRING, {static_cast<int64_t>(values.size())});
  t.strings() = std::move(values);
  return Value(std::move(t));
}

Value Seq(std::vector<Value> elements) {
  return Value::Sequence(onnx::TypeProto(), std::move(elements));
}

Value Opt(std::optional<Value> content) {
  return Value::Optional(onnx::TypeProto(), std::move(content));
}

struct Case {
  std::string name;
  Value expected;
  Value actual;
  std::string comparison;
};

class CompareTest : public testing::TestWithParam<Case> {};

TEST_P(CompareTest, ComparesWithTheTolerances) {
  EXPECT_EQ(CompareValues(GetParam().expected, GetParam().actual).ToString(),
            GetParam().comparison);
}

const Case kCases[] = {
    {"integers_exactly", Ints({1, 2}), Ints({1, 3}),
     "FAIL: 1 of 2 elements differ; worst [1]: expected 2, actual 3, abs 1, rel 0.5"},
    {"int64_beyond_double_precision", Ints({9007199254740993}), Ints({9007199254740992}),
     "FAIL: 1 of 1 elements differ; worst [0]: expected 9007199254740993, actual "
     "9007199254740992, abs 1, rel 1.11022302e-16"},
    {"float_within_rtol", Floats({1000, 2}), Floats({1000.005f, 2}),
     "pass; worst [0]: expected 1000, actual 1000.005, abs 0.00500488281, rel 5.00488281e-06"},
    {"float_atol_scales_with_magnitude", Floats({1000, 0}), Floats({1000, 0.005f}),
     "pass; worst [1]: expected 0, actual 0.00499999989, abs 0.00499999989, rel inf"},
    {"float_small_output_is_strict", Floats({1, 0}), Floats({1, 0.0001f}),
     "FAIL: 1 of 2 elements differ; worst [1]: expected 0, actual 9.99999975e-05, "
     "abs 9.99999975e-05, rel inf"},
    {"double_within_float_tolerance", Doubles({1.0}), Doubles({1.00002}),
     "pass; worst [0]: expected 1, actual 1.00002, abs 2e-05, rel 2e-05"},
    {"double_beyond_float_tolerance", Doubles({1.0}), Doubles({1.00003}),
     "FAIL: 1 of 1 elements differ; worst [0]: expected 1, actual 1.00003, abs 3e-05, "
     "rel 3e-05"},
    {"nan_equals_nan", Floats({kNaN, 1}), Floats({kNaN, 1}),
     "pass; worst [0]: expected nan, actual nan, abs 0, rel 0"},
    {"nan_differs_from_numbers", Floats({kNaN}), Floats({1}),
     "FAIL: 1 of 1 elements differ; worst [0]: expected nan, actual 1, abs inf, rel inf"},
    {"infinities_by_sign", Floats({kInf, -kInf}), Floats({kInf, kInf}),
     "FAIL: 1 of 2 elements differ; worst [1]: expected -inf, actual inf, abs inf, rel inf"},
    {"float16_within_1e-2", Halves({1, 2}), Halves({1.005f, 2}),
     "pass; worst [0]: expected 1, actual 1.00488281, abs 0.0048828125, rel 0.0048828125"},
    {"float16_beyond_1e-2", Halves({1, 2}), Halves({1.05f, 2}),
     "FAIL: 1 of 2 elements differ; worst [0]: expected 1, actual 1.04980469, abs 0.0498046875, "
     "rel 0.0498046875"},
    {"shape_exactly", Floats({1, 2}), Floats({1, 2}, {1, 2}), "FAIL: shape [1,2], expected [2]"},
    {"element_type_exactly", Floats({1}), Doubles({1}), "FAIL: element type double, expected float"},
    {"strings_exactly", Strings({"a", "b"}), Strings({"a", "c"}),
     "FAIL: 1 of 2 elements differ; worst [1]: expected \"b\", actual \"c\", abs 1, rel 1"},
    {"sequence_elementwise", Seq({Ints({1}), Ints({2})}), Seq({Ints({1}), Ints({3})}),
     "FAIL: 1 of 2 elements differ; worst element 1 [0]: expected 2, actual 3, abs 1, rel 0.5"},
    {"sequence_length", Seq({Ints({1}), Ints({2})}), Seq({Ints({1})}),
     "FAIL: 1 elements, expected 2"},
    {"optional_empty", Opt(std::nullopt), Opt(Ints({1})), "FAIL: not empty, expected empty"},
    {"kind_exactly", Ints({1}), Seq({Ints({1})}), "FAIL: a sequence, expected a tensor"},
};

INSTANTIATE_TEST_SUITE_P(Tolerances, CompareTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace onnxconvert::eval
