#ifndef ONNX_CONVERT_SERVICE_TESTING_TEST_MODELS_H_
#define ONNX_CONVERT_SERVICE_TESTING_TEST_MODELS_H_

// Models for the service and CLI tests.

#include <cstdint>
#include <string>

#include "proto/onnx.pb.h"

namespace onnxconvert::service::testing {

// A chain of `pairs` Unsqueeze -> Squeeze pairs (axes as attributes) on
// float[N,4] at ai.onnx opset 11: converting it up takes a rewrite of every
// node and a validation of the whole chain at several steps, so a few
// thousand pairs keep a conversion busy long enough to cancel it.
onnx::ModelProto UnsqueezeChain(int64_t pairs);

// UnsqueezeChain(150000), serialized: its conversion to opset 25 takes over
// a second, a call that outlasts deadlines, cancels and drains by far.
const std::string& SlowModelBytes();

// A one-node Relu model at opset 13 whose initializer `W` (4 floats) lives
// in external data at `location`, 16 bytes from offset 0.
onnx::ModelProto ExternalDataModel(const std::string& location);

// A Gelu-20 model: converting it below opset 20 with function expansion off
// is impossible (FAILED_PRECONDITION).
onnx::ModelProto GeluModel();

// The path of examples/tiny_cnn.onnx in the test's runfiles.
std::string TinyCnnPath();

// The whole content of examples/tiny_cnn.onnx.
std::string TinyCnnBytes();

}  // namespace onnxconvert::service::testing

#endif  // ONNX_CONVERT_SERVICE_TESTING_TEST_MODELS_H_
