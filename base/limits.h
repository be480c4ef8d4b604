#ifndef ONNX_CONVERT_BASE_LIMITS_H_
#define ONNX_CONVERT_BASE_LIMITS_H_

// Limits every part of the converter holds models to, so that a hostile or
// broken model cannot exhaust the stack.

namespace onnxconvert {

// How deep subgraphs (If branches, Loop and Scan bodies, graph attributes)
// may nest below the main graph: deeper ones are refused or not followed.
inline constexpr int kMaxGraphDepth = 64;

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_LIMITS_H_
