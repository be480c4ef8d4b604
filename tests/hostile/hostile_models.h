#ifndef ONNX_CONVERT_TESTS_HOSTILE_HOSTILE_MODELS_H_
#define ONNX_CONVERT_TESTS_HOSTILE_HOSTILE_MODELS_H_

// Model files crafted to crash, hang or exhaust whatever reads them, for the
// hostile-input tests of the CLI and the server.

#include <string>
#include <vector>

namespace onnxconvert::testing {

// One hostile input: a model file (or ONNX text for `parse`) crafted to
// crash, hang or exhaust whatever reads it.
struct HostileModel {
  std::string name;   // a file name: "zero_outputs_ArgMin"
  std::string what;   // the class of attack, in words
  std::string bytes;  // the model file (ONNX text when `text`)
  bool text = false;
  // Beside the model, a file `linked_data` that is a hard link to a file
  // outside the model's directory (the model refers to it as external data).
  std::string linked_data = {};
  // The model is invalid (onnx.checker or the loader refuses it): `check`
  // must say so.
  bool invalid = false;
};

// The catalogue of hostile inputs of the hardening issue: nodes without
// outputs, call-dependent bodies of inputs of too low a rank, amplifying
// string tensors, deep nesting, arithmetic overflow in shape inference,
// what onnx.checker refuses, and malformed headers. Built afresh each call
// (the largest, `strings` empty strings in one tensor, is 2 bytes each).
std::vector<HostileModel> HostileModels(int strings = 30'000'000);

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_HOSTILE_HOSTILE_MODELS_H_
