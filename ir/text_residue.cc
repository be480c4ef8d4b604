#include "ir/text_residue.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "ir/text_lexer.h"

namespace onnxconvert::text {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

void CopyField(const Message& from, const FieldDescriptor* field, Message* to) {
  const Reflection* in = from.GetReflection();
  const Reflection* out = to->GetReflection();
  if (field->is_repeated()) {
    for (int i = 0; i < in->FieldSize(from, field); ++i) {
      switch (field->cpp_type()) {
#define OC_COPY_REPEATED(CPPTYPE, METHOD) \
  case FieldDescriptor::CPPTYPE:          \
    out->Add##METHOD(to, field, in->GetRepeated##METHOD(from, field, i)); \
    break;
        OC_COPY_REPEATED(CPPTYPE_INT32, Int32)
        OC_COPY_REPEATED(CPPTYPE_INT64, Int64)
        OC_COPY_REPEATED(CPPTYPE_UINT32, UInt32)
        OC_COPY_REPEATED(CPPTYPE_UINT64, UInt64)
        OC_COPY_REPEATED(CPPTYPE_FLOAT, Float)
        OC_COPY_REPEATED(CPPTYPE_DOUBLE, Double)
        OC_COPY_REPEATED(CPPTYPE_BOOL, Bool)
        OC_COPY_REPEATED(CPPTYPE_ENUM, EnumValue)
        OC_COPY_REPEATED(CPPTYPE_STRING, String)
#undef OC_COPY_REPEATED
        case FieldDescriptor::CPPTYPE_MESSAGE:
          out->AddMessage(to, field)->CopyFrom(in->GetRepeatedMessage(from, field, i));
          break;
      }
    }
    return;
  }
  switch (field->cpp_type()) {
#define OC_COPY_SINGULAR(CPPTYPE, METHOD) \
  case FieldDescriptor::CPPTYPE:          \
    out->Set##METHOD(to, field, in->Get##METHOD(from, field)); \
    break;
    OC_COPY_SINGULAR(CPPTYPE_INT32, Int32)
    OC_COPY_SINGULAR(CPPTYPE_INT64, Int64)
    OC_COPY_SINGULAR(CPPTYPE_UINT32, UInt32)
    OC_COPY_SINGULAR(CPPTYPE_UINT64, UInt64)
    OC_COPY_SINGULAR(CPPTYPE_FLOAT, Float)
    OC_COPY_SINGULAR(CPPTYPE_DOUBLE, Double)
    OC_COPY_SINGULAR(CPPTYPE_BOOL, Bool)
    OC_COPY_SINGULAR(CPPTYPE_ENUM, EnumValue)
    OC_COPY_SINGULAR(CPPTYPE_STRING, String)
#undef OC_COPY_SINGULAR
    case FieldDescriptor::CPPTYPE_MESSAGE:
      out->MutableMessage(to, field)->CopyFrom(in->GetMessage(from, field));
      break;
  }
}

// The serialized bytes of the fields of `message` that `shown` rejects,
// plus its unknown fields; "" when there are none.
std::string Residue(const Message& message, const std::function<bool(int)>& shown) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  std::unique_ptr<Message> rest(message.New());
  bool any = !reflection->GetUnknownFields(message).empty();
  for (const FieldDescriptor* field : fields) {
    if (shown(field->number())) continue;
    CopyField(message, field, rest.get());
    any = true;
  }
  if (!any) return "";
  rest->GetReflection()->MutableUnknownFields(rest.get())->MergeFrom(
      reflection->GetUnknownFields(message));
  return rest->SerializeAsString();
}

// The residue of a message whose text shows every field but `unshown`.
std::string ResidueOf(const Message& message, std::initializer_list<int> unshown) {
  return Residue(message, [unshown](int number) {
    return std::find(unshown.begin(), unshown.end(), number) == unshown.end();
  });
}

bool IsCanonicalDims(const onnx::TensorShapeProto& shape) {
  if (!shape.unknown_fields().empty()) return false;
  for (const auto& dim : shape.dim()) {
    if (dim.has_denotation() || !dim.unknown_fields().empty()) return false;
  }
  return true;
}

template <typename TensorType>
bool IsCanonicalTensorType(const TensorType& tensor) {
  return tensor.unknown_fields().empty() && tensor.has_elem_type() &&
         ElemTypeName(tensor.elem_type()).has_value() &&
         (!tensor.has_shape() || IsCanonicalDims(tensor.shape()));
}

}  // namespace

bool IsCanonicalType(const onnx::TypeProto& type) {
  if (type.has_denotation() || !type.unknown_fields().empty()) return false;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return IsCanonicalTensorType(type.tensor_type());
    case onnx::TypeProto::kSparseTensorType:
      return IsCanonicalTensorType(type.sparse_tensor_type());
    case onnx::TypeProto::kSequenceType:
      return type.sequence_type().unknown_fields().empty() &&
             type.sequence_type().has_elem_type() &&
             IsCanonicalType(type.sequence_type().elem_type());
    case onnx::TypeProto::kOptionalType:
      return type.optional_type().unknown_fields().empty() &&
             type.optional_type().has_elem_type() &&
             IsCanonicalType(type.optional_type().elem_type());
    case onnx::TypeProto::kMapType:
      return type.map_type().unknown_fields().empty() && type.map_type().has_key_type() &&
             ElemTypeName(type.map_type().key_type()).has_value() &&
             type.map_type().has_value_type() && IsCanonicalType(type.map_type().value_type());
    default:
      return false;
  }
}

namespace {

// The AttributeProto field that holds a value of each attribute type.
int ValueFieldFor(int type) {
  static const int kFields[] = {
      0,
      onnx::AttributeProto::kFFieldNumber,
      onnx::AttributeProto::kIFieldNumber,
      onnx::AttributeProto::kSFieldNumber,
      onnx::AttributeProto::kTFieldNumber,
      onnx::AttributeProto::kGFieldNumber,
      onnx::AttributeProto::kFloatsFieldNumber,
      onnx::AttributeProto::kIntsFieldNumber,
      onnx::AttributeProto::kStringsFieldNumber,
      onnx::AttributeProto::kTensorsFieldNumber,
      onnx::AttributeProto::kGraphsFieldNumber,
      onnx::AttributeProto::kSparseTensorFieldNumber,
      onnx::AttributeProto::kSparseTensorsFieldNumber,
      onnx::AttributeProto::kTpFieldNumber,
      onnx::AttributeProto::kTypeProtosFieldNumber,
  };
  return type > 0 && type < static_cast<int>(std::size(kFields)) ? kFields[type] : -1;
}

bool AllTypesCanonical(const onnx::AttributeProto& attribute) {
  if (attribute.has_tp() && !IsCanonicalType(attribute.tp())) return false;
  for (const auto& type : attribute.type_protos()) {
    if (!IsCanonicalType(type)) return false;
  }
  return true;
}

}  // namespace

bool IsCanonicalAttribute(const onnx::AttributeProto& attribute) {
  if (!attribute.has_name() || !attribute.has_type() || !attribute.unknown_fields().empty()) {
    return false;
  }
  int type = attribute.type();
  if (type == onnx::AttributeProto::SPARSE_TENSOR ||
      type == onnx::AttributeProto::SPARSE_TENSORS || !AllTypesCanonical(attribute)) {
    return false;
  }
  int value_field = ValueFieldFor(type);
  if (value_field < 0) return false;
  bool is_reference = attribute.has_ref_attr_name();
  const google::protobuf::Reflection* reflection = attribute.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(attribute, &fields);
  bool has_value = false;
  for (const auto* field : fields) {
    int number = field->number();
    if (number == onnx::AttributeProto::kNameFieldNumber ||
        number == onnx::AttributeProto::kTypeFieldNumber ||
        number == onnx::AttributeProto::kDocStringFieldNumber ||
        number == onnx::AttributeProto::kRefAttrNameFieldNumber) {
      continue;
    }
    if (number != value_field || is_reference) return false;
    has_value = true;
  }
  bool singular = !attribute.GetDescriptor()->FindFieldByNumber(value_field)->is_repeated();
  return is_reference || !singular || has_value;
}

bool AttributeNeedsExplicitType(const onnx::AttributeProto& attribute) {
  switch (attribute.type()) {
    case onnx::AttributeProto::FLOATS: return attribute.floats_size() == 0;
    case onnx::AttributeProto::INTS: return attribute.ints_size() == 0;
    case onnx::AttributeProto::STRINGS: return attribute.strings_size() == 0;
    case onnx::AttributeProto::TENSORS: return attribute.tensors_size() == 0;
    case onnx::AttributeProto::GRAPHS: return attribute.graphs_size() == 0;
    case onnx::AttributeProto::TYPE_PROTO:
    case onnx::AttributeProto::TYPE_PROTOS: return true;
    default: return false;
  }
}

int TypedFieldFor(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::COMPLEX64:
      return onnx::TensorProto::kFloatDataFieldNumber;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX128:
      return onnx::TensorProto::kDoubleDataFieldNumber;
    case onnx::TensorProto::INT64:
      return onnx::TensorProto::kInt64DataFieldNumber;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      return onnx::TensorProto::kUint64DataFieldNumber;
    case onnx::TensorProto::STRING:
      return onnx::TensorProto::kStringDataFieldNumber;
    default:
      return onnx::TensorProto::kInt32DataFieldNumber;
  }
}

bool IsExternalLocation(const onnx::TensorProto& tensor) {
  return tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL;
}

std::string ModelResidue(const onnx::ModelProto& model) {
  return ResidueOf(model, {onnx::ModelProto::kTrainingInfoFieldNumber,
                           onnx::ModelProto::kConfigurationFieldNumber});
}

std::string GraphResidue(const onnx::GraphProto& graph) {
  return ResidueOf(graph, {onnx::GraphProto::kSparseInitializerFieldNumber,
                           onnx::GraphProto::kQuantizationAnnotationFieldNumber,
                           onnx::GraphProto::kMetadataPropsFieldNumber});
}

std::string FunctionResidue(const onnx::FunctionProto& function) {
  return ResidueOf(function, {onnx::FunctionProto::kValueInfoFieldNumber,
                              onnx::FunctionProto::kMetadataPropsFieldNumber});
}

std::string NodeResidue(const onnx::NodeProto& node) {
  return Residue(node, [&node](int number) {
    switch (number) {
      case onnx::NodeProto::kDomainFieldNumber: return true;  // `"".Op` when set empty
      case onnx::NodeProto::kOverloadFieldNumber: return !node.overload().empty();
      case onnx::NodeProto::kMetadataPropsFieldNumber:
      case onnx::NodeProto::kDeviceConfigurationsFieldNumber:
        return false;
      default:
        return true;
    }
  });
}

std::string ValueInfoResidue(const onnx::ValueInfoProto& value) {
  return Residue(value, [&value](int number) {
    switch (number) {
      case onnx::ValueInfoProto::kNameFieldNumber:
      case onnx::ValueInfoProto::kDocStringFieldNumber:
        return true;
      case onnx::ValueInfoProto::kTypeFieldNumber:
        return IsCanonicalType(value.type());
      default:
        return false;
    }
  });
}

std::string TensorResidue(const onnx::TensorProto& tensor) {
  bool external = IsExternalLocation(tensor);
  return Residue(tensor, [&tensor, external](int number) {
    switch (number) {
      case onnx::TensorProto::kDimsFieldNumber:
      case onnx::TensorProto::kNameFieldNumber:
      case onnx::TensorProto::kDocStringFieldNumber:
        return true;
      case onnx::TensorProto::kDataTypeFieldNumber:
        return ElemTypeName(tensor.data_type()).has_value();
      case onnx::TensorProto::kExternalDataFieldNumber:
      case onnx::TensorProto::kDataLocationFieldNumber:
        return external;
      case onnx::TensorProto::kRawDataFieldNumber:
        return !external;
      case onnx::TensorProto::kFloatDataFieldNumber:
      case onnx::TensorProto::kInt32DataFieldNumber:
      case onnx::TensorProto::kStringDataFieldNumber:
      case onnx::TensorProto::kInt64DataFieldNumber:
      case onnx::TensorProto::kDoubleDataFieldNumber:
      case onnx::TensorProto::kUint64DataFieldNumber:
        return !external && !tensor.has_raw_data() &&
               number == TypedFieldFor(tensor.data_type());
      default:
        return false;
    }
  });
}

}  // namespace onnxconvert::text
