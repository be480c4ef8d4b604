#ifndef ONNX_CONVERT_IR_TEXT_PRINTER_H_
#define ONNX_CONVERT_IR_TEXT_PRINTER_H_

// Prints protos in ONNX text syntax (onnx docs/Syntax.md) with the
// extensions described in ir/text_parser.h, so that parsing the text gives
// back an equal proto. Output is deterministic: equal protos print the same.

#include <string>

#include "proto/onnx.pb.h"

namespace onnxconvert {

// A whole model: header, main graph, then model-local functions.
std::string PrintModelText(const onnx::ModelProto& model);
// A graph: name, inputs => outputs, value infos and initializers, nodes.
std::string PrintGraphText(const onnx::GraphProto& graph);
// A model-local function with its header.
std::string PrintFunctionText(const onnx::FunctionProto& function);
// One node, on one line (subgraph attributes span several).
std::string PrintNodeText(const onnx::NodeProto& node);
// A type, e.g. "float[N,3]", "seq(int64[])", "map(string, float)".
std::string PrintTypeText(const onnx::TypeProto& type);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_TEXT_PRINTER_H_
