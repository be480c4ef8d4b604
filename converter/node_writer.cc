#include "converter/node_writer.h"

#include "base/status_macros.h"
#include "converter/wire_scan.h"
#include "ir/wire.h"

namespace onnxconvert::converter {

absl::Status NodeFieldWriter::AddAsRead(absl::string_view whole) {
  if (!run_.empty() && run_.data() + run_.size() == whole.data()) {
    run_ = absl::string_view(run_.data(), run_.size() + whole.size());
    return absl::OkStatus();
  }
  OC_RETURN_IF_ERROR(EndRun());
  run_ = whole;
  return absl::OkStatus();
}

absl::Status NodeFieldWriter::AddEncoded(const onnx::NodeProto& node) {
  OC_RETURN_IF_ERROR(EndRun());
  Reserve();
  wire::AppendMessageField(kGraphNode, node, block_);
  return block_.size() >= kBlockBytes ? WriteBlock() : absl::OkStatus();
}

absl::Status NodeFieldWriter::Flush() {
  OC_RETURN_IF_ERROR(EndRun());
  return WriteBlock();
}

absl::Status NodeFieldWriter::EndRun() {
  absl::string_view run = run_;
  run_ = {};
  if (run.size() < kDirectRunBytes) {
    Reserve();
    block_.append(run.data(), run.size());
    return block_.size() >= kBlockBytes ? WriteBlock() : absl::OkStatus();
  }
  OC_RETURN_IF_ERROR(WriteBlock());
  return out_.AppendNodes(run);
}

absl::Status NodeFieldWriter::WriteBlock() {
  if (block_.empty()) return absl::OkStatus();
  absl::Status status = out_.AppendNodes(block_);
  block_.clear();
  return status;
}

}  // namespace onnxconvert::converter
