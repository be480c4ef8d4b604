#ifndef ONNX_CONVERT_CONVERTER_WINDOW_OPS_H_
#define ONNX_CONVERT_CONVERTER_WINDOW_OPS_H_

// Which nodes of a window the windows (windowed.cc) may leave unparsed:
// plain nodes (ScanPlainNode) of ai.onnx ops every step of the conversion
// only rebinds. Internal to the converter.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "converter/wire_scan.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

// An ai.onnx op as the windows take it: its schema at the source opset
// (null: none), and whether its nodes may be left unparsed, every step
// only rebinding it (never a Constant, which later windows read).
struct WindowOp {
  const schema::OpSchema* schema = nullptr;
  bool unparsed = false;
};

// The ops of one conversion's windows, each looked up once.
class WindowOps {
 public:
  // For a conversion from ai.onnx opset `source` through the steps
  // (from, to) of `steps`, in order.
  WindowOps(int64_t source, std::vector<std::pair<int64_t, int64_t>> steps)
      : source_(source), steps_(std::move(steps)) {}

  // Ai.onnx op `op_type` as the windows take it.
  WindowOp Of(absl::string_view op_type);

  // Serialized node `payload` read into `plain` (ScanPlainNode): its op as
  // the windows take it, or none when the node is not plain, of another
  // domain or of too many outputs, or its attributes hold graphs while its
  // op may be left unparsed.
  WindowOp Read(absl::string_view payload, PlainNode& plain);

 private:
  WindowOp Find(absl::string_view op_type) const;

  int64_t source_;
  std::vector<std::pair<int64_t, int64_t>> steps_;
  absl::node_hash_map<std::string, WindowOp> ops_;
  // The ops found last (views of ops_' keys): a window holds few.
  std::array<std::pair<absl::string_view, WindowOp>, 8> recent_{};
  size_t next_recent_ = 0;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_WINDOW_OPS_H_
