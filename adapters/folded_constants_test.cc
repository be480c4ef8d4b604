// Values the converter folds from constants with the reference evaluator:
// an input a downgrade needs as an attribute, computed from constants; a
// node a downgrade cannot express whose inputs are all constants (its
// value). Their numbers are checked in ONNX Runtime by
// tests/conformance/numeric_cases.txt (family "fold").

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> FoldsWhatTheTargetNeedsConstant() {
  return AllNodes({
      {"pads_from_a_concat_of_constants", 13, 10,
       "g (float[2,5] X) => (float[2,7] Y) <int64[2] a = {0, 0}, int64[2] b = {0, 2}> "
       "{ [c] q = Concat <axis = 0> (a, b) [p] Y = Pad <mode = \"reflect\"> (X, q) }",
       "[c] q = Concat <axis = 0> (a, b); [p] Y = Pad <mode = \"reflect\", pads = [0, 0, 0, 2]> (X)",
       ""},
      {"axes_from_a_cast_of_a_constant", 13, 12,
       "g (float[2,1] X) => (float[2] Y) <int32[1] a = {1}> "
       "{ [c] b = Cast <to = 7> (a) [s] Y = Squeeze(X, b) }",
       "[c] b = Cast <to = 7> (a); [s] Y = Squeeze <axes = [1]> (X)", ""},
      // Where-9 does not exist at 8 and has no function body.
      WithModel({"refused_node_of_constants_becomes_its_value", 9, 8,
       "g (float[3] X) => (float[3] Y) <bool[3] c = {1, 0, 1}, float[3] k = {1, 2, 3}, "
       "float[1] z = {0}> { [w] f = Where(c, k, z) [a] Y = Add(X, f) }",
       "[w] f = Identity(w__0); [a] Y = Add(X, f)", ""},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 8]\n"
                ">\n"
                "g (float[3] X) => (float[3] Y)\n"
                "  <bool[3] c = {1, 0, 1},\n"
                "   float[3] k = {1.0, 2.0, 3.0},\n"
                "   float[1] z = {0.0},\n"
                "   float[3] w__0 = raw {1.0, 0.0, 3.0}> {\n"
                "  [w] f = Identity(w__0)\n"
                "  [a] Y = Add(X, f)\n"
                "}\n"),
      // A node whose input is known only at run time is refused as before.
      {"runtime_steps_refused", 13, 9,
       "g (float[3] X, int64[1] m) => (float[3] Y) <int64[1] s = {-1}, "
       "int64[1] e = {-9223372036854775807}, int64[1] z = {0}> "
       "{ [r] Y = Slice(X, s, e, z, m) }",
       "", "input #4 ('m') is known only at run time, which Slice-1 cannot express"},
      // Folded values stay small: a constant past 65,536 elements is not
      // folded, and the node is refused.
      {"large_values_not_folded", 13, 12,
       "g (float[2,1] X) => (float[2] Y) <int64[1] n = {70000}, int64[1] i = {0}> "
       "{ [c] z = ConstantOfShape <value = int64[1] {1}> (n) [g] a = Gather(z, i) "
       "[s] Y = Squeeze(X, a) }",
       "", "(axes) is not a constant"},
  });
}

INSTANTIATE_TEST_SUITE_P(FoldsWhatTheTargetNeedsConstant, ConversionCaseTest,
                         ::testing::ValuesIn(FoldsWhatTheTargetNeedsConstant()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
