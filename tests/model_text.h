#ifndef ONNX_CONVERT_TESTS_MODEL_TEXT_H_
#define ONNX_CONVERT_TESTS_MODEL_TEXT_H_

// Models in ONNX text syntax for tests: parsed, with a test failure when the
// text does not parse.

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::testing {

// The model written in ONNX text syntax; records a test failure (and returns
// an empty model) when the text does not parse.
inline onnx::ModelProto ModelFromText(absl::string_view text) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : onnx::ModelProto();
}

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_MODEL_TEXT_H_
