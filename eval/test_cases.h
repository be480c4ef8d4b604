#ifndef ONNX_CONVERT_EVAL_TEST_CASES_H_
#define ONNX_CONVERT_EVAL_TEST_CASES_H_

// The evaluator's table-driven test cases: a model in ONNX text whose inputs
// are initializers, evaluated node by node, its outputs shown as text.

#include <ostream>
#include <string>

#include "gtest/gtest.h"

namespace onnxconvert::eval {

// One behaviour of a kernel.
struct Case {
  std::string name;
  int opset;             // of ai.onnx
  std::string graph;     // body of the model at `opset`
  std::string expected;  // the graph outputs, "; "-joined, or the error
  int ml_opset = 0;      // of ai.onnx.ml, when the graph uses it
  int training_opset = 0;  // of ai.onnx.preview.training, when the graph uses it
  int preview_opset = 0;   // of ai.onnx.preview, when the graph uses it
};

// Evaluates `c.graph` node by node; the graph outputs as text ("int64[2]
// {4, 2}", "; "-joined), or the first error's message.
std::string Evaluate(const Case& c);

// Prints the case's name (for gtest's messages).
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The table-driven kernel test (its one TEST_P, in test_cases.cc): each case
// evaluates to its `expected`. A test file instantiates it on its table:
//   INSTANTIATE_TEST_SUITE_P(Math, KernelCaseTest, testing::ValuesIn(kCases), CaseName);
class KernelCaseTest : public testing::TestWithParam<Case> {};

// Names a KernelCaseTest instance after its case.
inline std::string CaseName(const testing::TestParamInfo<Case>& info) { return info.param.name; }

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_TEST_CASES_H_
