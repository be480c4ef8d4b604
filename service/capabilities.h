#ifndef ONNX_CONVERT_SERVICE_CAPABILITIES_H_
#define ONNX_CONVERT_SERVICE_CAPABILITIES_H_

// The answer of the Capabilities call: what this build can convert, built
// from the operator registry and the adapter table.

#include "proto/onnx_convert_service.pb.h"

namespace onnxconvert::service {

// What this build can convert, from the operator registry and the adapter
// table: the opset range of every domain, the newest IR version, every
// operator's versions, and how each adjacent version change of each
// ai.onnx and ai.onnx.ml operator is handled, both ways (derived, rewritten, replaced,
// expanded, or unsupported with the reason). Built once; the limits are
// left for the server to fill.
const v1::CapabilitiesResponse& BuildCapabilities();

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_CAPABILITIES_H_
