#ifndef ONNX_CONVERT_EVAL_TEST_CASES_H_
#define ONNX_CONVERT_EVAL_TEST_CASES_H_

// The evaluator's data-driven test cases: a model in ONNX text whose inputs
// are initializers, evaluated node by node, its outputs shown as text. The
// cases live in case files, one per op family (eval/cases/<family>.cases):
//
//   # A comment line.
//   case <name> opset <n> [ml <n>] [training <n>] [preview <n>]
//   <the graph in ONNX text, one or more lines>
//   expect <the graph outputs as text, "; "-joined, or the error>
//
// (blank lines and "#" lines between cases are skipped).

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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
  std::string error;       // why its case file did not read, if it did not
};

// Evaluates `c.graph` node by node; the graph outputs as text ("int64[2]
// {4, 2}", "; "-joined), or the first error's message.
std::string Evaluate(const Case& c);

// The cases of the case file at `path`, each named "<file stem>_<name>"; an
// error names the file and line at fault.
absl::StatusOr<std::vector<Case>> ReadCaseFile(const std::string& path);

// The cases of every *.cases file in `dir` (by file name); a file that does
// not read gives one case, named after the file, that fails with the error.
std::vector<Case> ReadCaseFiles(const std::string& dir);

// Prints the case's name (for gtest's messages).
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The data-driven kernel test (its one TEST_P, in test_cases.cc): each case
// evaluates to its `expected`. kernel_cases_test instantiates it on the
// case files.
class KernelCaseTest : public testing::TestWithParam<Case> {};

// Names a KernelCaseTest instance after its case.
inline std::string CaseName(const testing::TestParamInfo<Case>& info) { return info.param.name; }

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_TEST_CASES_H_
