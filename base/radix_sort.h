#ifndef ONNX_CONVERT_BASE_RADIX_SORT_H_
#define ONNX_CONVERT_BASE_RADIX_SORT_H_

// Sorting many 64-bit keys (fingerprints) in linear time.

#include <cstdint>
#include <vector>

namespace onnxconvert {

// Sorts `values` ascending, as std::sort would, in a few passes over them
// (least significant digit first) and room for as many again while it runs.
void RadixSort(std::vector<uint64_t>& values);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_RADIX_SORT_H_
