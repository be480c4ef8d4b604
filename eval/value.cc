#include "eval/value.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "eval/axis_ops.h"
#include "proto/onnx_data.pb.h"
#include "schema/type_strings.h"

namespace onnxconvert::eval {
namespace {

using SeqType = onnx::SequenceProto::DataType;

const onnx::TypeProto& EmptyType() {
  static const auto* empty = new onnx::TypeProto;
  return *empty;
}

absl::Status ValueError(absl::string_view source, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", why));
}

// The message kind (SequenceProto::DataType) that stores values of `type`.
int32_t StoredKind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kSequenceType: return onnx::SequenceProto::SEQUENCE;
    case onnx::TypeProto::kOptionalType: return onnx::SequenceProto::OPTIONAL;
    case onnx::TypeProto::kMapType: return onnx::SequenceProto::MAP;
    case onnx::TypeProto::kSparseTensorType: return onnx::SequenceProto::SPARSE_TENSOR;
    default: return onnx::SequenceProto::TENSOR;
  }
}

int32_t StoredKind(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kSequence: return onnx::SequenceProto::SEQUENCE;
    case Value::Kind::kOptional: return onnx::SequenceProto::OPTIONAL;
    case Value::Kind::kMap: return onnx::SequenceProto::MAP;
    case Value::Kind::kTensor: break;
  }
  return onnx::SequenceProto::TENSOR;
}

// Reading the messages, each element checked against the declared type.
struct Reader {
  absl::string_view source;
  int64_t max_elements;

  absl::StatusOr<Value> Tensor(const onnx::TensorProto& proto) const {
    absl::StatusOr<eval::Tensor> tensor = FromProto(proto, max_elements);
    if (!tensor.ok()) return ValueError(source, tensor.status().message());
    return Value(*std::move(tensor));
  }

  absl::StatusOr<Value> Sequence(const onnx::SequenceProto& proto,
                                 const onnx::TypeProto& element_type) const {
    std::vector<Value> elements;
    // Reads each of `protos` with `read` into `elements`.
    auto read_all = [&elements](const auto& protos, auto read) -> absl::Status {
      for (const auto& p : protos) {
        OC_ASSIGN_OR_RETURN(Value v, read(p));
        elements.push_back(std::move(v));
      }
      return absl::OkStatus();
    };
    switch (proto.elem_type()) {
      case onnx::SequenceProto::TENSOR:
        OC_RETURN_IF_ERROR(
            read_all(proto.tensor_values(), [&](const auto& t) { return Tensor(t); }));
        break;
      case onnx::SequenceProto::SEQUENCE:
        OC_RETURN_IF_ERROR(read_all(proto.sequence_values(), [&](const auto& s) {
          return Sequence(s, element_type.sequence_type().elem_type());
        }));
        break;
      case onnx::SequenceProto::MAP:
        OC_RETURN_IF_ERROR(read_all(proto.map_values(), [&](const auto& m) {
          return Map(m, element_type.map_type().value_type());
        }));
        break;
      case onnx::SequenceProto::OPTIONAL:
        OC_RETURN_IF_ERROR(read_all(proto.optional_values(), [&](const auto& o) {
          return Optional(o, element_type.optional_type().elem_type());
        }));
        break;
      case onnx::SequenceProto::UNDEFINED:
        break;
      default:
        return ValueError(source, absl::StrCat("sequences of element kind ", proto.elem_type(),
                                               " are not supported by the evaluator"));
    }
    onnx::TypeProto type = element_type;
    if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET && !elements.empty()) {
      type = elements.front().Type();
    }
    return Value::Sequence(std::move(type), std::move(elements));
  }

  absl::StatusOr<Value> Optional(const onnx::OptionalProto& proto,
                                 const onnx::TypeProto& content_type) const {
    std::optional<Value> content;
    switch (proto.elem_type()) {
      case onnx::OptionalProto::UNDEFINED: break;
      case onnx::OptionalProto::TENSOR: {
        OC_ASSIGN_OR_RETURN(content, Tensor(proto.tensor_value()));
        break;
      }
      case onnx::OptionalProto::SEQUENCE: {
        OC_ASSIGN_OR_RETURN(content, Sequence(proto.sequence_value(),
                                              content_type.sequence_type().elem_type()));
        break;
      }
      case onnx::OptionalProto::MAP: {
        OC_ASSIGN_OR_RETURN(content, Map(proto.map_value(), content_type.map_type().value_type()));
        break;
      }
      default:
        return ValueError(source, absl::StrCat("optionals of element kind ", proto.elem_type(),
                                               " are not supported by the evaluator"));
    }
    onnx::TypeProto type = content_type;
    if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET && content) type = content->Type();
    return Value::Optional(std::move(type), std::move(content));
  }

  absl::StatusOr<Value> Map(const onnx::MapProto& proto, const onnx::TypeProto& value_type) const {
    int32_t key_type = proto.key_type();
    bool strings = key_type == onnx::TensorProto::STRING;
    int64_t count = strings ? proto.string_keys_size() : proto.keys_size();
    if (!strings && ElementSize(key_type) == 0) {
      return ValueError(source, absl::StrCat("map keys of ", ElementTypeName(key_type),
                                             " are not supported by the evaluator"));
    }
    eval::Tensor keys(key_type, {count});
    if (strings) {
      for (int64_t i = 0; i < count; ++i) keys.strings()[i] = proto.string_keys(i);
    } else {
      VisitElementType(key_type, [&](auto v) {
        using T = decltype(v);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          for (int64_t i = 0; i < count; ++i) keys.data<T>()[i] = static_cast<T>(proto.keys(i));
        }
      });
    }
    OC_ASSIGN_OR_RETURN(Value values, Sequence(proto.values(), value_type));
    if (static_cast<int64_t>(values.elements().size()) != count) {
      return ValueError(source, absl::StrCat("the map has ", count, " keys and ",
                                             values.elements().size(), " values"));
    }
    onnx::TypeProto type = values.element_type();
    return Value::Map(std::move(keys), std::move(type), std::move(values.elements()));
  }
};

// Writing the messages.
void WriteSequence(const Value& value, onnx::SequenceProto& proto);
void WriteOptional(const Value& value, onnx::OptionalProto& proto);
void WriteMap(const Value& value, onnx::MapProto& proto);

void WriteSequence(const Value& value, onnx::SequenceProto& proto) {
  int32_t kind = value.elements().empty() ? StoredKind(value.element_type())
                                          : StoredKind(value.elements().front());
  proto.set_elem_type(kind);
  for (const Value& element : value.elements()) {
    switch (element.kind()) {
      case Value::Kind::kTensor: *proto.add_tensor_values() = ToProto(element.tensor(), ""); break;
      case Value::Kind::kSequence: WriteSequence(element, *proto.add_sequence_values()); break;
      case Value::Kind::kOptional: WriteOptional(element, *proto.add_optional_values()); break;
      case Value::Kind::kMap: WriteMap(element, *proto.add_map_values()); break;
    }
  }
}

void WriteOptional(const Value& value, onnx::OptionalProto& proto) {
  if (!value.has_content()) {
    proto.set_elem_type(onnx::OptionalProto::UNDEFINED);
    return;
  }
  const Value& content = value.elements().front();
  proto.set_elem_type(StoredKind(content));
  switch (content.kind()) {
    case Value::Kind::kTensor: *proto.mutable_tensor_value() = ToProto(content.tensor(), ""); break;
    case Value::Kind::kSequence: WriteSequence(content, *proto.mutable_sequence_value()); break;
    case Value::Kind::kOptional: WriteOptional(content, *proto.mutable_optional_value()); break;
    case Value::Kind::kMap: WriteMap(content, *proto.mutable_map_value()); break;
  }
}

void WriteMap(const Value& value, onnx::MapProto& proto) {
  const Tensor& keys = value.tensor();
  proto.set_key_type(keys.elem_type());
  if (keys.elem_type() == onnx::TensorProto::STRING) {
    for (const std::string& key : keys.strings()) proto.add_string_keys(key);
  } else if (absl::StatusOr<std::vector<int64_t>> ints = ToInt64s(keys); ints.ok()) {
    for (int64_t key : *ints) proto.add_keys(key);
  }
  Value values = Value::Sequence(value.element_type(), value.elements());
  WriteSequence(values, *proto.mutable_values());
}

}  // namespace

Value::Value(Tensor tensor) : tensor_(std::move(tensor)) {}

Value Value::Sequence(onnx::TypeProto element_type, std::vector<Value> elements) {
  Value value;
  value.kind_ = Kind::kSequence;
  value.elements_ = std::move(elements);
  value.element_type_ = std::make_shared<const onnx::TypeProto>(std::move(element_type));
  return value;
}

Value Value::Optional(onnx::TypeProto type, std::optional<Value> content) {
  Value value;
  value.kind_ = Kind::kOptional;
  if (content) value.elements_.push_back(*std::move(content));
  value.element_type_ = std::make_shared<const onnx::TypeProto>(std::move(type));
  return value;
}

Value Value::Map(Tensor keys, onnx::TypeProto value_type, std::vector<Value> values) {
  Value value;
  value.kind_ = Kind::kMap;
  value.tensor_ = std::move(keys);
  value.elements_ = std::move(values);
  value.element_type_ = std::make_shared<const onnx::TypeProto>(std::move(value_type));
  return value;
}

const onnx::TypeProto& Value::element_type() const {
  return element_type_ != nullptr ? *element_type_ : EmptyType();
}

int64_t Value::ByteSize() const {
  int64_t bytes = tensor_.ByteSize();
  for (const Value& element : elements_) bytes += element.ByteSize();
  return bytes;
}

int64_t Value::MaxTensorSize() const {
  int64_t largest = tensor_.size();
  for (const Value& element : elements_) largest = std::max(largest, element.MaxTensorSize());
  return largest;
}

onnx::TypeProto Value::Type() const {
  onnx::TypeProto type;
  switch (kind_) {
    case Kind::kTensor: return TensorType(tensor_.elem_type(), tensor_.dims());
    case Kind::kSequence:
      *type.mutable_sequence_type()->mutable_elem_type() =
          elements_.empty() ? element_type() : elements_.front().Type();
      break;
    case Kind::kOptional:
      *type.mutable_optional_type()->mutable_elem_type() =
          elements_.empty() ? element_type() : elements_.front().Type();
      break;
    case Kind::kMap:
      type.mutable_map_type()->set_key_type(tensor_.elem_type());
      *type.mutable_map_type()->mutable_value_type() = element_type();
      break;
  }
  return type;
}

absl::string_view KindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kTensor: return "tensor";
    case Value::Kind::kSequence: return "sequence";
    case Value::Kind::kOptional: return "optional";
    case Value::Kind::kMap: return "map";
  }
  return "value";
}

onnx::TypeProto TensorType(int32_t elem_type, absl::Span<const int64_t> dims) {
  onnx::TypeProto type;
  onnx::TypeProto::Tensor* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
  return type;
}

absl::StatusOr<Tensor> FromSparseProto(const onnx::SparseTensorProto& proto,
                                       int64_t max_elements) {
  const std::string& name = proto.values().name();
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("sparse tensor '", name, "': ", why));
  };
  OC_ASSIGN_OR_RETURN(Tensor values, FromProto(proto.values(), max_elements));
  OC_ASSIGN_OR_RETURN(Tensor indices, FromProto(proto.indices(), max_elements));
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0 || (dim > 0 && count > max_elements / dim)) {
      return error(absl::StrCat("its dims are negative or hold more than ", max_elements,
                                " elements"));
    }
    count *= dim;
  }
  if (values.rank() != 1) return error("its values are not rank 1");
  int64_t nnz = values.size();
  absl::StatusOr<std::vector<int64_t>> raw = ToInt64s(indices);
  if (!raw.ok()) return error("its indices are not integers");
  int64_t rank = static_cast<int64_t>(dims.size());
  bool linear = indices.rank() == 1 && indices.size() == nnz;
  bool coordinates = indices.rank() == 2 && indices.dims()[0] == nnz && indices.dims()[1] == rank;
  if (!linear && !coordinates) {
    return error(absl::StrCat("its indices are neither [", nnz, "] nor [", nnz, ",", rank, "]"));
  }
  Tensor dense(values.elem_type(), dims);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t offset = 0;
    if (linear) {
      offset = (*raw)[k];
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        int64_t at = (*raw)[k * rank + d];
        if (at < 0 || at >= dims[d]) return error(absl::StrCat("index ", at, " is out of range"));
        offset = offset * dims[d] + at;
      }
    }
    if (offset < 0 || offset >= count) {
      return error(absl::StrCat("index ", offset, " is out of range"));
    }
    CopyElements(values, k, dense, offset, 1);
  }
  return dense;
}

absl::StatusOr<Value> ParseValue(absl::string_view bytes, const onnx::TypeProto* declared,
                                 absl::string_view source, int64_t max_elements) {
  Reader reader{source, max_elements};
  const onnx::TypeProto& type = declared != nullptr ? *declared : EmptyType();
  auto parse = [&](google::protobuf::MessageLite& message) {
    return message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  };
  auto not_parsed = [&](absl::string_view message) {
    return ValueError(source, absl::StrCat("does not parse as a ", message));
  };
  switch (type.value_case()) {
    case onnx::TypeProto::kSequenceType: {
      onnx::SequenceProto proto;
      if (!parse(proto)) return not_parsed("SequenceProto");
      return reader.Sequence(proto, type.sequence_type().elem_type());
    }
    case onnx::TypeProto::kOptionalType: {
      onnx::OptionalProto proto;
      if (!parse(proto)) return not_parsed("OptionalProto");
      return reader.Optional(proto, type.optional_type().elem_type());
    }
    case onnx::TypeProto::kMapType: {
      onnx::MapProto proto;
      if (!parse(proto)) return not_parsed("MapProto");
      return reader.Map(proto, type.map_type().value_type());
    }
    default: {
      onnx::TensorProto proto;
      if (!parse(proto)) return not_parsed("TensorProto");
      return reader.Tensor(proto);
    }
  }
}

std::string SerializeValue(const Value& value, const std::string& name) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return ToProto(value.tensor(), name).SerializeAsString();
    case Value::Kind::kSequence: {
      onnx::SequenceProto proto;
      proto.set_name(name);
      WriteSequence(value, proto);
      return proto.SerializeAsString();
    }
    case Value::Kind::kOptional: {
      onnx::OptionalProto proto;
      proto.set_name(name);
      WriteOptional(value, proto);
      return proto.SerializeAsString();
    }
    case Value::Kind::kMap: {
      onnx::MapProto proto;
      proto.set_name(name);
      WriteMap(value, proto);
      return proto.SerializeAsString();
    }
  }
  return "";
}

std::string DebugString(const Value& value) {
  std::vector<std::string> parts;
  for (const Value& element : value.elements()) parts.push_back(DebugString(element));
  switch (value.kind()) {
    case Value::Kind::kTensor: return DebugString(value.tensor());
    case Value::Kind::kSequence: return absl::StrCat("seq(", absl::StrJoin(parts, ", "), ")");
    case Value::Kind::kOptional: return absl::StrCat("optional(", absl::StrJoin(parts, ""), ")");
    case Value::Kind::kMap:
      return absl::StrCat("map(", DebugString(value.tensor()), " -> ", absl::StrJoin(parts, ", "),
                          ")");
  }
  return "";
}

std::string TypeString(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor:
      return absl::StrCat(ElementTypeName(value.tensor().elem_type()), "[",
                          absl::StrJoin(value.tensor().dims(), ","), "]");
    case Value::Kind::kSequence:
      if (value.elements().empty()) {
        return absl::StrCat("seq(", schema::TypeString(value.element_type()), ") of 0");
      }
      return absl::StrCat("seq(", TypeString(value.elements().front()), ") of ",
                          value.elements().size());
    case Value::Kind::kOptional:
      if (!value.has_content()) {
        return absl::StrCat("optional(", schema::TypeString(value.element_type()), ") empty");
      }
      return absl::StrCat("optional(", TypeString(value.elements().front()), ")");
    case Value::Kind::kMap:
      return absl::StrCat("map(", ElementTypeName(value.tensor().elem_type()), ", ",
                          schema::TypeString(value.element_type()), ") of ",
                          value.elements().size());
  }
  return "";
}

}  // namespace onnxconvert::eval
