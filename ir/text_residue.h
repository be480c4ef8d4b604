#ifndef ONNX_CONVERT_IR_TEXT_RESIDUE_H_
#define ONNX_CONVERT_IR_TEXT_RESIDUE_H_

// What the ONNX text syntax shows of each message, and the rest of it (the
// "residue"): the serialized bytes of every field the text does not show,
// including unknown fields. The printer writes a residue as `@raw "hex"`;
// the parser merges it back, so that print then parse loses nothing.

#include <string>

#include "proto/onnx.pb.h"

namespace onnxconvert::text {

// True if the type prints in full (tensor, sparse tensor, seq, optional or
// map types with known element types and no denotations).
bool IsCanonicalType(const onnx::TypeProto& type);

// True if the attribute prints as `name = value` (or a reference): its type
// is set and only the matching value field is present.
bool IsCanonicalAttribute(const onnx::AttributeProto& attribute);

// True if the attribute's value alone does not tell its type (empty lists,
// type protos), so the text spells it: `name: ints = []`.
bool AttributeNeedsExplicitType(const onnx::AttributeProto& attribute);

// The repeated field (TensorProto field number) that holds values of
// `data_type` when they are not in raw_data.
int TypedFieldFor(int32_t data_type);

// True if the tensor's data_location says EXTERNAL.
bool IsExternalLocation(const onnx::TensorProto& tensor);

// The residue of each message kind; "" when the text shows everything.
std::string ModelResidue(const onnx::ModelProto& model);
std::string GraphResidue(const onnx::GraphProto& graph);
std::string FunctionResidue(const onnx::FunctionProto& function);
std::string NodeResidue(const onnx::NodeProto& node);
std::string ValueInfoResidue(const onnx::ValueInfoProto& value);
std::string TensorResidue(const onnx::TensorProto& tensor);

}  // namespace onnxconvert::text

#endif  // ONNX_CONVERT_IR_TEXT_RESIDUE_H_
