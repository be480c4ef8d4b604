// The adapter cases of every case file in adapters/testdata (the format:
// adapters/testdata/README.md), each run through the converter as a test
// named after its case.

#include "gtest/gtest.h"
#include "tests/adapter_cases.h"

namespace onnxconvert::adapters {
namespace {

INSTANTIATE_TEST_SUITE_P(CaseFiles, ConversionCaseTest,
                         ::testing::ValuesIn(CasesInFolder("adapters/testdata")), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
