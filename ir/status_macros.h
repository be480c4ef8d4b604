#ifndef ONNX_CONVERT_IR_STATUS_MACROS_H_
#define ONNX_CONVERT_IR_STATUS_MACROS_H_

// Moved to base/status_macros.h: this header only forwards there for the
// files that still include it. New code includes base/status_macros.h.

#include "base/status_macros.h"

#endif  // ONNX_CONVERT_IR_STATUS_MACROS_H_
