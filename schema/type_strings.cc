#include "schema/type_strings.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ir/text_lexer.h"

namespace onnxconvert::schema {
namespace {

std::string ElemString(int32_t elem_type) {
  std::optional<absl::string_view> name = text::ElemTypeName(elem_type);
  return name ? std::string(*name) : "";
}

// Strips "prefix(" and ")" around `text`, or returns false.
bool Unwrap(absl::string_view& text, absl::string_view prefix) {
  if (!absl::StartsWith(text, prefix) || !absl::EndsWith(text, ")") ||
      text.size() <= prefix.size() + 1 || text[prefix.size()] != '(') {
    return false;
  }
  text = text.substr(prefix.size() + 1, text.size() - prefix.size() - 2);
  return true;
}

absl::StatusOr<int32_t> ParseElem(absl::string_view text) {
  std::optional<int32_t> elem = text::ElemTypeFromName(absl::StripAsciiWhitespace(text));
  if (!elem) return absl::InvalidArgumentError(absl::StrCat("unknown element type '", text, "'"));
  return *elem;
}

}  // namespace

std::string TypeString(const onnx::TypeProto& type) {
  auto wrap = [](absl::string_view kind, const std::string& inner) {
    return inner.empty() ? std::string() : absl::StrCat(kind, "(", inner, ")");
  };
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return wrap("tensor", ElemString(type.tensor_type().elem_type()));
    case onnx::TypeProto::kSparseTensorType:
      return wrap("sparse_tensor", ElemString(type.sparse_tensor_type().elem_type()));
    case onnx::TypeProto::kSequenceType:
      return wrap("seq", TypeString(type.sequence_type().elem_type()));
    case onnx::TypeProto::kOptionalType:
      return wrap("optional", TypeString(type.optional_type().elem_type()));
    case onnx::TypeProto::kMapType: {
      std::string key = ElemString(type.map_type().key_type());
      std::string value = TypeString(type.map_type().value_type());
      if (key.empty() || value.empty()) return "";
      return absl::StrCat("map(", key, ", ", value, ")");
    }
    default:
      return "";
  }
}

absl::StatusOr<onnx::TypeProto> ParseTypeString(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  onnx::TypeProto type;
  absl::string_view inner = text;
  if (Unwrap(inner, "tensor")) {
    absl::StatusOr<int32_t> elem = ParseElem(inner);
    if (!elem.ok()) return elem.status();
    type.mutable_tensor_type()->set_elem_type(*elem);
  } else if (Unwrap(inner, "sparse_tensor")) {
    absl::StatusOr<int32_t> elem = ParseElem(inner);
    if (!elem.ok()) return elem.status();
    type.mutable_sparse_tensor_type()->set_elem_type(*elem);
  } else if (Unwrap(inner, "seq")) {
    absl::StatusOr<onnx::TypeProto> elem = ParseTypeString(inner);
    if (!elem.ok()) return elem.status();
    *type.mutable_sequence_type()->mutable_elem_type() = *std::move(elem);
  } else if (Unwrap(inner, "optional")) {
    absl::StatusOr<onnx::TypeProto> elem = ParseTypeString(inner);
    if (!elem.ok()) return elem.status();
    *type.mutable_optional_type()->mutable_elem_type() = *std::move(elem);
  } else if (Unwrap(inner, "map")) {
    size_t comma = inner.find(',');
    if (comma == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("map type without a value: ", text));
    }
    absl::StatusOr<int32_t> key = ParseElem(inner.substr(0, comma));
    if (!key.ok()) return key.status();
    absl::StatusOr<onnx::TypeProto> value = ParseTypeString(inner.substr(comma + 1));
    if (!value.ok()) return value.status();
    type.mutable_map_type()->set_key_type(*key);
    *type.mutable_map_type()->mutable_value_type() = *std::move(value);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown type string '", text, "'"));
  }
  return type;
}

uint64_t TensorElemMask(absl::Span<const absl::string_view> types) {
  // (Keyed by where the strings start and how many there are: the
  // registry's constraints are spans of one array.)
  thread_local absl::flat_hash_map<std::pair<const absl::string_view*, size_t>, uint64_t> masks;
  auto [it, inserted] = masks.try_emplace(std::make_pair(types.data(), types.size()), 0);
  if (inserted) {
    for (absl::string_view t : types) {
      absl::StatusOr<onnx::TypeProto> parsed = ParseTypeString(t);
      if (!parsed.ok() || !parsed->has_tensor_type()) continue;
      int32_t elem = parsed->tensor_type().elem_type();
      if (elem > 0 && elem < 64) it->second |= uint64_t{1} << elem;
    }
  }
  return it->second;
}

}  // namespace onnxconvert::schema
