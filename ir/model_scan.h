#ifndef ONNX_CONVERT_IR_MODEL_SCAN_H_
#define ONNX_CONVERT_IR_MODEL_SCAN_H_

// One cheap typed walk over a parsed model that tells loading whether its
// slower checks (wire errors in unknown fields) have anything to look at.

#include "proto/onnx.pb.h"

namespace onnxconvert {

// What one typed walk over every message of a parsed model finds: whether
// the slower checks of loading have anything to look at.
struct ModelScan {
  // Some message, at any depth, keeps unknown fields (NeedsWireCheck then
  // says whether they are a wire error).
  bool unknown_fields = false;
  // Some tensor, at any depth, keeps its data in an external file.
  bool external_tensors = false;
};

// Walks every message of `model` (graphs, nodes, attributes, subgraphs,
// functions, training graphs, types, tensors and the rest) without
// reflection: a small fraction of a parse.
ModelScan ScanModel(const onnx::ModelProto& model);

// Whether parsed `model` keeps a field protobuf accepted but FindWireError
// reports (NeedsWireCheck), walking it by reflection only when `scan` (its
// ScanModel) found unknown fields.
bool KeepsWireError(const onnx::ModelProto& model, const ModelScan& scan);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_MODEL_SCAN_H_
