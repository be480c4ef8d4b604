// The kernels' data-driven cases: every case file of eval/cases (one per op
// family, in ONNX text; format: test_cases.h), each case a test named
// "<family>_<case>".

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

INSTANTIATE_TEST_SUITE_P(Kernels, KernelCaseTest, testing::ValuesIn(ReadCaseFiles("eval/cases")),
                         CaseName);

}  // namespace
}  // namespace onnxconvert::eval
