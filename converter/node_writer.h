#ifndef ONNX_CONVERT_CONVERTER_NODE_WRITER_H_
#define ONNX_CONVERT_CONVERTER_NODE_WRITER_H_

// The main graph's node fields, written to a sink in order as the windows
// (windowed.cc) finish them: fields as read from the model that lie in a
// row there go as one run, a long run handed to the sink as it lies (one
// copy); short runs and nodes encoded anew are gathered into blocks first.
// Internal to the converter.

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/model_sink.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// See the file comment.
class NodeFieldWriter {
 public:
  // Bytes gathered before they are handed to the sink (a fixed cost of
  // every conversion's memory: small, as a model of 100 k nodes is 5 MB).
  static constexpr size_t kBlockBytes = 256 << 10;
  // Runs of fields as read at least this long go to the sink as they lie.
  static constexpr size_t kDirectRunBytes = 64 << 10;

  // Writes to `out`, which must outlive it.
  explicit NodeFieldWriter(ModelSink& out) : out_(out) {}

  // Adds node field `whole` (tag, length and payload) as read from the
  // model: a view of the model's bytes, which must live until Flush.
  absl::Status AddAsRead(absl::string_view whole);
  // Adds `node`, encoded as a GraphProto.node field.
  absl::Status AddEncoded(const onnx::NodeProto& node);
  // Writes all that was added and not yet written.
  absl::Status Flush();
  // Gives back the room of the block it gathers in.
  void Release() { std::string().swap(block_); }

 private:
  // Ends the run of fields as read: gathered into the block when short,
  // else written after it.
  absl::Status EndRun();
  // Writes the block gathered so far.
  absl::Status WriteBlock();
  // Gives the block its room once: a block and a short run, so that it
  // does not double past that.
  void Reserve() {
    if (block_.capacity() < kBlockBytes) block_.reserve(kBlockBytes + kDirectRunBytes);
  }

  ModelSink& out_;
  absl::string_view run_;  // fields as read, in a row in the model
  std::string block_;      // bytes gathered, not yet written
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_NODE_WRITER_H_
