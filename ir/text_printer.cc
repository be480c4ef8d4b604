#include "ir/text_printer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "ir/text_lexer.h"
#include "ir/text_residue.h"

namespace onnxconvert {
namespace {

using text::ElemTypeName;
using text::QuoteString;

std::string Name(const std::string& name) {
  return text::IsPlainIdentifier(name) ? name : QuoteString(name);
}

template <typename Float>
std::string FloatText(Float value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

namespace {

std::string ShapeText(const onnx::TensorShapeProto& shape) {
  std::vector<std::string> dims;
  for (const auto& dim : shape.dim()) {
    if (dim.has_dim_value()) {
      dims.push_back(absl::StrCat(dim.dim_value()));
    } else if (dim.has_dim_param()) {
      dims.push_back(Name(dim.dim_param()));
    } else {
      dims.push_back("?");
    }
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string TensorTypeText(int32_t elem_type, const onnx::TensorShapeProto* shape) {
  std::string text(ElemTypeName(elem_type).value_or("undefined"));
  if (shape != nullptr) text += ShapeText(*shape);
  return text;
}

using text::IsCanonicalType;
using text::TypedFieldFor;

bool IsExternalTensor(const onnx::TensorProto& tensor) {
  return text::IsExternalLocation(tensor);
}

template <typename T>
std::string JoinNumbers(const T& values) {
  return absl::StrJoin(values, ", ");
}

template <typename Float>
std::string JoinFloats(const google::protobuf::RepeatedField<Float>& values) {
  std::vector<std::string> parts;
  parts.reserve(values.size());
  for (Float value : values) parts.push_back(FloatText(value));
  return absl::StrJoin(parts, ", ");
}

// Raw little-endian values decoded for display; nullopt when the bytes do
// not decode to exactly the values that would re-encode to them.
template <typename T>
std::optional<std::string> DecodeRaw(const std::string& raw) {
  if (raw.size() % sizeof(T) != 0) return std::nullopt;
  std::vector<std::string> parts;
  for (size_t i = 0; i < raw.size(); i += sizeof(T)) {
    T value;
    std::memcpy(&value, raw.data() + i, sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(value)) return std::nullopt;  // payload would be lost
      parts.push_back(FloatText(value));
    } else {
      parts.push_back(absl::StrCat(value));
    }
  }
  return absl::StrJoin(parts, ", ");
}

std::optional<std::string> RawValuesText(const onnx::TensorProto& tensor) {
  const std::string& raw = tensor.raw_data();
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT: return DecodeRaw<float>(raw);
    case onnx::TensorProto::DOUBLE: return DecodeRaw<double>(raw);
    case onnx::TensorProto::INT64: return DecodeRaw<int64_t>(raw);
    case onnx::TensorProto::INT32: return DecodeRaw<int32_t>(raw);
    case onnx::TensorProto::INT16: return DecodeRaw<int16_t>(raw);
    case onnx::TensorProto::INT8: return DecodeRaw<int8_t>(raw);
    case onnx::TensorProto::UINT64: return DecodeRaw<uint64_t>(raw);
    case onnx::TensorProto::UINT32: return DecodeRaw<uint32_t>(raw);
    case onnx::TensorProto::UINT16: return DecodeRaw<uint16_t>(raw);
    case onnx::TensorProto::UINT8: return DecodeRaw<uint8_t>(raw);
    default: return std::nullopt;
  }
}

class Printer {
 public:
  std::string Take() { return std::move(out_); }

  void Model(const onnx::ModelProto& model) {
    Residue(text::ModelResidue(model));
    out_ += "<\n";
    std::vector<std::string> fields;
    if (model.has_ir_version()) fields.push_back(absl::StrCat("ir_version: ", model.ir_version()));
    fields.push_back(absl::StrCat("opset_import: ", OpsetList(model.opset_import())));
    if (model.has_producer_name()) {
      fields.push_back(absl::StrCat("producer_name: ", QuoteString(model.producer_name())));
    }
    if (model.has_producer_version()) {
      fields.push_back(
          absl::StrCat("producer_version: ", QuoteString(model.producer_version())));
    }
    if (model.has_domain()) fields.push_back(absl::StrCat("domain: ", QuoteString(model.domain())));
    if (model.has_model_version()) {
      fields.push_back(absl::StrCat("model_version: ", model.model_version()));
    }
    if (model.has_doc_string()) {
      fields.push_back(absl::StrCat("doc_string: ", QuoteString(model.doc_string())));
    }
    if (model.metadata_props_size() > 0) {
      fields.push_back(absl::StrCat("metadata_props: ", KeyValueList(model.metadata_props())));
    }
    out_ += "  " + absl::StrJoin(fields, ",\n  ") + "\n>\n";
    if (model.has_graph()) Graph(model.graph());
    for (const onnx::FunctionProto& function : model.functions()) {
      out_ += "\n";
      Function(function);
    }
  }

  void Graph(const onnx::GraphProto& graph) {
    Doc(graph.has_doc_string(), graph.doc_string());
    Residue(text::GraphResidue(graph));
    if (graph.has_name()) out_ += Name(graph.name()) + " ";
    out_ += "(" + ValueInfoList(graph.input()) + ") => (" + ValueInfoList(graph.output()) + ")";
    if (graph.initializer_size() > 0 || graph.value_info_size() > 0) {
      std::vector<std::string> items;
      for (const onnx::TensorProto& tensor : graph.initializer()) items.push_back(Tensor(tensor));
      for (const onnx::ValueInfoProto& value : graph.value_info()) {
        items.push_back(ValueInfo(value));
      }
      std::string pad = Pad(1);
      out_ += "\n" + pad + "<" + absl::StrJoin(items, ",\n" + pad + " ") + ">";
    }
    Body(graph.node());
  }

  void Function(const onnx::FunctionProto& function) {
    Doc(function.has_doc_string(), function.doc_string());
    Residue(text::FunctionResidue(function));
    std::vector<std::string> fields;
    if (function.has_domain()) {
      fields.push_back(absl::StrCat("domain: ", QuoteString(function.domain())));
    }
    if (function.has_overload()) {
      fields.push_back(absl::StrCat("overload: ", QuoteString(function.overload())));
    }
    fields.push_back(absl::StrCat("opset_import: ", OpsetList(function.opset_import())));
    out_ += "<\n  " + absl::StrJoin(fields, ",\n  ") + "\n>\n";
    out_ += Name(function.name());
    if (function.attribute_size() > 0 || function.attribute_proto_size() > 0) {
      std::vector<std::string> attributes;
      for (const std::string& name : function.attribute()) attributes.push_back(Name(name));
      for (const onnx::AttributeProto& attribute : function.attribute_proto()) {
        attributes.push_back(Attribute(attribute));
      }
      out_ += " <" + absl::StrJoin(attributes, ", ") + ">";
    }
    out_ += " (" + NameList(function.input()) + ") => (" + NameList(function.output()) + ")";
    Body(function.node());
  }

  void Node(const onnx::NodeProto& node) {
    Doc(node.has_doc_string(), node.doc_string());
    Residue(text::NodeResidue(node));
    if (node.has_name()) out_ += "[" + Name(node.name()) + "] ";
    out_ += NameList(node.output());
    out_ += node.output_size() > 0 ? " = " : "= ";
    if (node.has_domain()) {
      // A domain set to "" (rather than absent) prints as `"".Op`.
      out_ += (!node.domain().empty() && DottedPlain(node.domain()) ? node.domain()
                                                                     : QuoteString(node.domain())) +
              ".";
    }
    out_ += Name(node.op_type());
    if (!node.overload().empty()) out_ += ":" + Name(node.overload());
    if (node.attribute_size() > 0) {
      std::vector<std::string> attributes;
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        attributes.push_back(Attribute(attribute));
      }
      out_ += " <" + absl::StrJoin(attributes, ", ") + ">";
    }
    out_ += (node.attribute_size() > 0 ? " (" : "(") + NameList(node.input()) + ")";
  }

  std::string Type(const onnx::TypeProto& type) {
    switch (type.value_case()) {
      case onnx::TypeProto::kTensorType:
        return TensorTypeText(type.tensor_type().elem_type(),
                              type.tensor_type().has_shape() ? &type.tensor_type().shape()
                                                             : nullptr);
      case onnx::TypeProto::kSparseTensorType:
        return "sparse_tensor(" +
               TensorTypeText(type.sparse_tensor_type().elem_type(),
                              type.sparse_tensor_type().has_shape()
                                  ? &type.sparse_tensor_type().shape()
                                  : nullptr) +
               ")";
      case onnx::TypeProto::kSequenceType:
        return "seq(" + Type(type.sequence_type().elem_type()) + ")";
      case onnx::TypeProto::kOptionalType:
        return "optional(" + Type(type.optional_type().elem_type()) + ")";
      case onnx::TypeProto::kMapType:
        return absl::StrCat("map(", ElemTypeName(type.map_type().key_type()).value_or("undefined"),
                            ", ", Type(type.map_type().value_type()), ")");
      default:
        return "?";
    }
  }

 private:
  static bool DottedPlain(const std::string& domain) {
    for (absl::string_view part : absl::StrSplit(domain, '.')) {
      if (!text::IsPlainIdentifier(part)) return false;
    }
    return true;
  }

  std::string Pad(int extra = 0) const { return std::string(2 * (depth_ + extra), ' '); }

  void Doc(bool present, const std::string& doc) {
    if (present) out_ += "@doc " + QuoteString(doc) + " ";
  }

  void Residue(const std::string& bytes) {
    if (!bytes.empty()) out_ += "@raw \"" + absl::BytesToHexString(bytes) + "\" ";
  }

  void Body(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    out_ += " {\n";
    ++depth_;
    for (const onnx::NodeProto& node : nodes) {
      out_ += Pad();
      Node(node);
      out_ += "\n";
    }
    --depth_;
    out_ += Pad() + "}";
    if (depth_ == 0) out_ += "\n";
  }

  static std::string OpsetList(
      const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opsets) {
    std::vector<std::string> items;
    for (const onnx::OperatorSetIdProto& opset : opsets) {
      std::string version = opset.has_version() ? absl::StrCat(opset.version()) : "?";
      items.push_back(opset.has_domain() ? QuoteString(opset.domain()) + " : " + version
                                         : version);
    }
    return "[" + absl::StrJoin(items, ", ") + "]";
  }

  static std::string KeyValueList(
      const google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>& entries) {
    std::vector<std::string> items;
    for (const auto& entry : entries) {
      items.push_back(QuoteString(entry.key()) + " : " + QuoteString(entry.value()));
    }
    return "[" + absl::StrJoin(items, ", ") + "]";
  }

  static std::string NameList(const google::protobuf::RepeatedPtrField<std::string>& names) {
    std::vector<std::string> items;
    for (const std::string& name : names) items.push_back(Name(name));
    return absl::StrJoin(items, ", ");
  }

  std::string ValueInfoList(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
    std::vector<std::string> items;
    for (const onnx::ValueInfoProto& value : values) items.push_back(ValueInfo(value));
    return absl::StrJoin(items, ", ");
  }

  std::string ValueInfo(const onnx::ValueInfoProto& value) {
    std::string text;
    if (value.has_doc_string()) text += "@doc " + QuoteString(value.doc_string()) + " ";
    std::string residue = text::ValueInfoResidue(value);
    if (!residue.empty()) text += "@raw \"" + absl::BytesToHexString(residue) + "\" ";
    if (value.has_type() && IsCanonicalType(value.type())) text += Type(value.type()) + " ";
    return text + Name(value.name());
  }

  std::string TensorData(const onnx::TensorProto& tensor) {
    if (IsExternalTensor(tensor)) {
      return "external " + KeyValueList(tensor.external_data());
    }
    if (tensor.has_raw_data()) {
      if (std::optional<std::string> values = RawValuesText(tensor)) {
        return "raw {" + *values + "}";
      }
      return "raw \"" + absl::BytesToHexString(tensor.raw_data()) + "\"";
    }
    switch (TypedFieldFor(tensor.data_type())) {
      case onnx::TensorProto::kFloatDataFieldNumber:
        return "{" + JoinFloats(tensor.float_data()) + "}";
      case onnx::TensorProto::kDoubleDataFieldNumber:
        return "{" + JoinFloats(tensor.double_data()) + "}";
      case onnx::TensorProto::kInt64DataFieldNumber:
        return "{" + JoinNumbers(tensor.int64_data()) + "}";
      case onnx::TensorProto::kUint64DataFieldNumber:
        return "{" + JoinNumbers(tensor.uint64_data()) + "}";
      case onnx::TensorProto::kStringDataFieldNumber: {
        std::vector<std::string> items;
        for (const std::string& s : tensor.string_data()) items.push_back(QuoteString(s));
        return "{" + absl::StrJoin(items, ", ") + "}";
      }
      default:
        return "{" + JoinNumbers(tensor.int32_data()) + "}";
    }
  }

  std::string Tensor(const onnx::TensorProto& tensor) {
    std::string text;
    if (tensor.has_doc_string()) text += "@doc " + QuoteString(tensor.doc_string()) + " ";
    std::string residue = text::TensorResidue(tensor);
    if (!residue.empty()) text += "@raw \"" + absl::BytesToHexString(residue) + "\" ";
    std::vector<std::string> dims;
    for (int64_t dim : tensor.dims()) dims.push_back(absl::StrCat(dim));
    absl::StrAppend(&text,
                    ElemTypeName(tensor.data_type()).has_value() ? *ElemTypeName(tensor.data_type())
                                                                 : "undefined",
                    "[", absl::StrJoin(dims, ","), "]");
    if (tensor.has_name()) absl::StrAppend(&text, " ", Name(tensor.name()), " =");
    return text + " " + TensorData(tensor);
  }

  std::string SubgraphText(const onnx::GraphProto& graph) {
    Printer inner;
    inner.depth_ = depth_ + 1;
    inner.Graph(graph);
    return inner.Take();
  }

  std::string AttributeValue(const onnx::AttributeProto& attribute) {
    auto list = [](const std::vector<std::string>& items) {
      return "[" + absl::StrJoin(items, ", ") + "]";
    };
    std::vector<std::string> items;
    switch (attribute.type()) {
      case onnx::AttributeProto::FLOAT: return FloatText(attribute.f());
      case onnx::AttributeProto::INT: return absl::StrCat(attribute.i());
      case onnx::AttributeProto::STRING: return QuoteString(attribute.s());
      case onnx::AttributeProto::TENSOR: return Tensor(attribute.t());
      case onnx::AttributeProto::GRAPH: return SubgraphText(attribute.g());
      case onnx::AttributeProto::TYPE_PROTO: return Type(attribute.tp());
      case onnx::AttributeProto::FLOATS:
        for (float f : attribute.floats()) items.push_back(FloatText(f));
        return list(items);
      case onnx::AttributeProto::INTS:
        for (int64_t i : attribute.ints()) items.push_back(absl::StrCat(i));
        return list(items);
      case onnx::AttributeProto::STRINGS:
        for (const std::string& s : attribute.strings()) items.push_back(QuoteString(s));
        return list(items);
      case onnx::AttributeProto::TENSORS:
        for (const auto& t : attribute.tensors()) items.push_back(Tensor(t));
        return list(items);
      case onnx::AttributeProto::GRAPHS:
        for (const auto& g : attribute.graphs()) items.push_back(SubgraphText(g));
        return list(items);
      case onnx::AttributeProto::TYPE_PROTOS:
        for (const auto& t : attribute.type_protos()) items.push_back(Type(t));
        return list(items);
      default:
        return "?";
    }
  }

  std::string Attribute(const onnx::AttributeProto& attribute) {
    if (!text::IsCanonicalAttribute(attribute)) {
      return Name(attribute.name()) + " = @raw \"" +
             absl::BytesToHexString(attribute.SerializeAsString()) + "\"";
    }
    std::string text;
    if (attribute.has_doc_string()) text += "@doc " + QuoteString(attribute.doc_string()) + " ";
    text += Name(attribute.name());
    std::string type_name(text::AttributeTypeName(attribute.type()).value_or("?"));
    if (attribute.has_ref_attr_name()) {
      return text + ": " + type_name + " = @" + Name(attribute.ref_attr_name());
    }
    if (text::AttributeNeedsExplicitType(attribute)) text += ": " + type_name;
    return text + " = " + AttributeValue(attribute);
  }

  std::string out_;
  int depth_ = 0;
};

// The text a fresh printer writes for `message` with `print`.
template <typename Message>
std::string PrintWith(void (Printer::*print)(const Message&), const Message& message) {
  Printer printer;
  (printer.*print)(message);
  return printer.Take();
}

}  // namespace

std::string PrintModelText(const onnx::ModelProto& model) {
  return PrintWith(&Printer::Model, model);
}

std::string PrintGraphText(const onnx::GraphProto& graph) {
  return PrintWith(&Printer::Graph, graph);
}

std::string PrintFunctionText(const onnx::FunctionProto& function) {
  return PrintWith(&Printer::Function, function);
}

std::string PrintNodeText(const onnx::NodeProto& node) { return PrintWith(&Printer::Node, node); }

std::string PrintTypeText(const onnx::TypeProto& type) {
  return Printer().Type(type);
}

}  // namespace onnxconvert
