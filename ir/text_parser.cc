#include "ir/text_parser.h"

#include <charconv>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ir/text_lexer.h"
#include "ir/text_residue.h"

namespace onnxconvert {
namespace {

using text::Token;
using text::TokenKind;

// Graphs, and types, nested deeper than this are refused: no stack
// overflow, and what parses stays within the 100 message levels protobuf
// (and so the model loader) accepts: 16 graphs take 48 levels (graph, node,
// attribute each), 16 types 32 (type, sequence or optional or map each).
constexpr int kMaxNesting = 16;
constexpr int kMaxTypeNesting = 16;

// `@doc` and `@raw` annotations read before an item.
bool IsHex(absl::string_view value) {
  if (value.size() % 2 != 0) return false;
  for (char c : value) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

struct Annotations {
  std::optional<std::string> doc;
  std::string raw;  // serialized protobuf bytes to merge
  bool empty() const { return !doc && raw.empty(); }
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::Status ExpectEnd() {
    if (Peek().kind != TokenKind::kEnd) return Error("expected the end of the text");
    return absl::OkStatus();
  }

  absl::Status Model(onnx::ModelProto& model) {
    OC_ASSIGN_OR_RETURN(Annotations notes, ParseAnnotations());
    OC_RETURN_IF_ERROR(ModelHeader(model));
    if (AtGraphAfterAnnotations()) OC_RETURN_IF_ERROR(Graph(*model.mutable_graph()));
    while (Peek().kind != TokenKind::kEnd) {
      OC_RETURN_IF_ERROR(Function(*model.add_functions()));
    }
    return Apply(notes, model);
  }

  // True if a graph (not a function header) starts here, past annotations.
  bool AtGraphAfterAnnotations() {
    size_t saved = pos_;
    bool ok = ParseAnnotations().ok();
    bool graph = ok && Peek().kind != TokenKind::kEnd && !IsPunct("<");
    pos_ = saved;
    return graph;
  }

  absl::Status Graph(onnx::GraphProto& graph) {
    if (++nesting_ > kMaxNesting) return Error("graphs nested too deeply");
    OC_ASSIGN_OR_RETURN(Annotations notes, ParseAnnotations());
    if (!IsPunct("(")) {
      OC_ASSIGN_OR_RETURN(*graph.mutable_name(), ParseName());
    }
    OC_RETURN_IF_ERROR(Expect("("));
    OC_RETURN_IF_ERROR(ValueList(")", graph, *graph.mutable_input()));
    OC_RETURN_IF_ERROR(Expect("=>"));
    OC_RETURN_IF_ERROR(Expect("("));
    OC_RETURN_IF_ERROR(ValueList(")", graph, *graph.mutable_output()));
    if (Accept("<")) {
      OC_RETURN_IF_ERROR(ValueList(">", graph, *graph.mutable_value_info()));
    }
    OC_RETURN_IF_ERROR(NodeBlock(*graph.mutable_node()));
    --nesting_;
    return Apply(notes, graph);
  }

  absl::Status Function(onnx::FunctionProto& function) {
    OC_ASSIGN_OR_RETURN(Annotations notes, ParseAnnotations());
    OC_RETURN_IF_ERROR(FunctionHeader(function));
    OC_ASSIGN_OR_RETURN(*function.mutable_name(), ParseName());
    if (Accept("<")) {
      do {
        OC_ASSIGN_OR_RETURN(Annotations attr_notes, ParseAnnotations());
        if (attr_notes.empty() && Peek(1).kind == TokenKind::kPunct &&
            (Peek(1).text == "," || Peek(1).text == ">")) {
          OC_ASSIGN_OR_RETURN(*function.add_attribute(), ParseName());
        } else {
          OC_RETURN_IF_ERROR(Attribute(attr_notes, *function.add_attribute_proto()));
        }
      } while (Accept(","));
      OC_RETURN_IF_ERROR(Expect(">"));
    }
    OC_RETURN_IF_ERROR(Expect("("));
    OC_RETURN_IF_ERROR(NameList(")", *function.mutable_input()));
    OC_RETURN_IF_ERROR(Expect("=>"));
    OC_RETURN_IF_ERROR(Expect("("));
    OC_RETURN_IF_ERROR(NameList(")", *function.mutable_output()));
    OC_RETURN_IF_ERROR(NodeBlock(*function.mutable_node()));
    return Apply(notes, function);
  }

  absl::Status Node(onnx::NodeProto& node) {
    OC_ASSIGN_OR_RETURN(Annotations notes, ParseAnnotations());
    if (Accept("[")) {
      OC_ASSIGN_OR_RETURN(*node.mutable_name(), ParseName());
      OC_RETURN_IF_ERROR(Expect("]"));
    }
    if (!IsPunct("=")) {
      do {
        OC_ASSIGN_OR_RETURN(*node.add_output(), ParseName());
      } while (Accept(","));
    }
    OC_RETURN_IF_ERROR(Expect("="));
    OC_RETURN_IF_ERROR(OpName(node));
    // Attributes may come before or, as in the spec's function bodies,
    // after the inputs.
    bool attributes_first = IsPunct("<");
    if (attributes_first) OC_RETURN_IF_ERROR(NodeAttributes(node));
    OC_RETURN_IF_ERROR(Expect("("));
    OC_RETURN_IF_ERROR(NameList(")", *node.mutable_input()));
    if (!attributes_first && IsPunct("<")) OC_RETURN_IF_ERROR(NodeAttributes(node));
    return Apply(notes, node);
  }

  absl::Status NodeAttributes(onnx::NodeProto& node) {
    OC_RETURN_IF_ERROR(Expect("<"));
    do {
      OC_ASSIGN_OR_RETURN(Annotations attr_notes, ParseAnnotations());
      OC_RETURN_IF_ERROR(Attribute(attr_notes, *node.add_attribute()));
    } while (Accept(","));
    return Expect(">");
  }

  absl::Status Type(onnx::TypeProto& type) {
    if (type_nesting_ >= kMaxTypeNesting) return Error("types nested too deeply");
    ++type_nesting_;
    absl::Status status = TypeBody(type);
    --type_nesting_;
    return status;
  }

  absl::Status TypeBody(onnx::TypeProto& type) {
    if (Peek().kind != TokenKind::kIdentifier) return Error("expected a type");
    std::string keyword = Next().text;
    if (keyword == "seq" || keyword == "optional") {
      OC_RETURN_IF_ERROR(Expect("("));
      onnx::TypeProto* inner = keyword == "seq"
                                   ? type.mutable_sequence_type()->mutable_elem_type()
                                   : type.mutable_optional_type()->mutable_elem_type();
      OC_RETURN_IF_ERROR(Type(*inner));
      return Expect(")");
    }
    if (keyword == "map") {
      OC_RETURN_IF_ERROR(Expect("("));
      OC_ASSIGN_OR_RETURN(int32_t key, ElemType());
      type.mutable_map_type()->set_key_type(key);
      OC_RETURN_IF_ERROR(Expect(","));
      OC_RETURN_IF_ERROR(Type(*type.mutable_map_type()->mutable_value_type()));
      return Expect(")");
    }
    if (keyword == "sparse_tensor") {
      OC_RETURN_IF_ERROR(Expect("("));
      OC_ASSIGN_OR_RETURN(int32_t elem, ElemType());
      auto* sparse = type.mutable_sparse_tensor_type();
      sparse->set_elem_type(elem);
      if (IsPunct("[")) OC_RETURN_IF_ERROR(Shape(*sparse->mutable_shape()));
      return Expect(")");
    }
    --pos_;
    OC_ASSIGN_OR_RETURN(int32_t elem, ElemType());
    auto* tensor = type.mutable_tensor_type();
    tensor->set_elem_type(elem);
    if (IsPunct("[")) OC_RETURN_IF_ERROR(Shape(*tensor->mutable_shape()));
    return absl::OkStatus();
  }

 private:
  // ---- tokens ----
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  bool IsPunct(absl::string_view text, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kPunct && Peek(ahead).text == text;
  }
  bool IsIdent(absl::string_view text) const {
    return Peek().kind == TokenKind::kIdentifier && Peek().text == text;
  }
  bool Accept(absl::string_view punct) {
    if (!IsPunct(punct)) return false;
    Next();
    return true;
  }
  absl::Status Error(absl::string_view what) const {
    const Token& token = Peek();
    std::string found = token.kind == TokenKind::kEnd ? "the end of the text"
                        : token.kind == TokenKind::kString
                            ? text::QuoteString(token.text)
                            : absl::StrCat("'", token.text, "'");
    return absl::InvalidArgumentError(absl::StrCat("line ", token.line, ", column ",
                                                   token.column, ": ", what, ", found ",
                                                   found));
  }
  absl::Status Expect(absl::string_view punct) {
    if (Accept(punct)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", punct, "'"));
  }
  // Parses `open`, then items separated by ',' (each read by `item`), then
  // `close`; `open` `close` alone is the empty list.
  template <typename Item>
  absl::Status Delimited(absl::string_view open, absl::string_view close, Item item) {
    OC_RETURN_IF_ERROR(Expect(open));
    if (Accept(close)) return absl::OkStatus();
    do {
      OC_RETURN_IF_ERROR(item());
    } while (Accept(","));
    return Expect(close);
  }
  // Hands a parsed value to `store`, or passes on the parse error.
  template <typename T, typename Store>
  static absl::Status StoreParsed(absl::StatusOr<T> value, Store store) {
    if (!value.ok()) return value.status();
    store(*std::move(value));
    return absl::OkStatus();
  }
  // Parses a `<key: value, ...>` header, each value read by `value(key)`;
  // `what` names the header in the error for a key `value` does not know
  // (it returns std::nullopt for one).
  template <typename Value>
  absl::Status HeaderEntries(absl::string_view what, Value value) {
    return Delimited("<", ">", [&]() -> absl::Status {
      if (Peek().kind != TokenKind::kIdentifier) return Error("expected a header key");
      std::string key = Next().text;
      OC_RETURN_IF_ERROR(Expect(":"));
      std::optional<absl::Status> known = value(key);
      if (known) return *std::move(known);
      --pos_;
      --pos_;
      return Error(absl::StrCat("unknown ", what, " header key"));
    });
  }

  // ---- pieces ----
  absl::StatusOr<std::string> ParseName() {
    if (Peek().kind == TokenKind::kIdentifier || Peek().kind == TokenKind::kString) {
      return Next().text;
    }
    return Error("expected a name");
  }

  absl::StatusOr<std::string> ParseString() {
    if (Peek().kind != TokenKind::kString) return Error("expected a string");
    return Next().text;
  }

  absl::StatusOr<int64_t> ParseInt() {
    const Token& token = Peek();
    int64_t value = 0;
    if (token.kind != TokenKind::kInteger) return Error("expected an integer");
    auto [end, ec] = std::from_chars(token.text.data() + (token.text[0] == '+'),
                                     token.text.data() + token.text.size(), value);
    if (ec != std::errc() || end != token.text.data() + token.text.size()) {
      return Error("integer out of range");
    }
    Next();
    return value;
  }

  absl::StatusOr<uint64_t> ParseUnsigned() {
    const Token& token = Peek();
    uint64_t value = 0;
    if (token.kind != TokenKind::kInteger) return Error("expected an unsigned integer");
    auto [end, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(),
                                     value);
    if (ec != std::errc() || end != token.text.data() + token.text.size()) {
      return Error("unsigned integer out of range");
    }
    Next();
    return value;
  }

  bool AtFloat() const {
    const Token& token = Peek();
    if (token.kind == TokenKind::kFloat || token.kind == TokenKind::kInteger) return true;
    if (token.kind == TokenKind::kIdentifier) {
      return token.text == "nan" || token.text == "inf";
    }
    return IsPunct("-") && Peek(1).kind == TokenKind::kIdentifier &&
           (Peek(1).text == "nan" || Peek(1).text == "inf");
  }

  template <typename Float>
  absl::StatusOr<Float> ParseFloat() {
    bool negative = Accept("-");
    const Token& token = Peek();
    Float value = 0;
    if (token.kind == TokenKind::kIdentifier && token.text == "nan") {
      value = std::numeric_limits<Float>::quiet_NaN();
    } else if (token.kind == TokenKind::kIdentifier && token.text == "inf") {
      value = std::numeric_limits<Float>::infinity();
    } else if (token.kind == TokenKind::kFloat || token.kind == TokenKind::kInteger) {
      const char* begin = token.text.data() + (token.text[0] == '+');
      auto [end, ec] = std::from_chars(begin, token.text.data() + token.text.size(), value);
      if (ec != std::errc() || end != token.text.data() + token.text.size()) {
        return Error("malformed number");
      }
    } else {
      return Error("expected a number");
    }
    Next();
    return negative ? -value : value;
  }

  absl::StatusOr<int32_t> ElemType() {
    if (IsIdent("undefined")) {
      Next();
      return 0;
    }
    if (Peek().kind == TokenKind::kIdentifier) {
      if (std::optional<int32_t> type = text::ElemTypeFromName(Peek().text)) {
        Next();
        return *type;
      }
    }
    return Error("expected an element type");
  }

  bool AtElemType() const {
    return Peek().kind == TokenKind::kIdentifier &&
           (Peek().text == "undefined" || text::ElemTypeFromName(Peek().text).has_value());
  }

  bool AtTypeKeyword() const {
    if (Peek().kind != TokenKind::kIdentifier) return false;
    const std::string& word = Peek().text;
    bool compound = (word == "seq" || word == "optional" || word == "map" ||
                     word == "sparse_tensor") && IsPunct("(", 1);
    return compound || AtElemType();
  }

  absl::Status Shape(onnx::TensorShapeProto& shape) {
    OC_RETURN_IF_ERROR(Expect("["));
    if (Accept("]")) return absl::OkStatus();
    do {
      auto* dim = shape.add_dim();
      if (Accept("?")) continue;
      if (Peek().kind == TokenKind::kInteger) {
        OC_ASSIGN_OR_RETURN(int64_t value, ParseInt());
        dim->set_dim_value(value);
      } else {
        OC_ASSIGN_OR_RETURN(*dim->mutable_dim_param(), ParseName());
      }
    } while (Accept(","));
    return Expect("]");
  }

  absl::StatusOr<Annotations> ParseAnnotations() {
    Annotations notes;
    while (IsPunct("@") && Peek(1).kind == TokenKind::kIdentifier &&
           (Peek(1).text == "doc" || Peek(1).text == "raw") &&
           Peek(2).kind == TokenKind::kString) {
      Next();
      std::string kind = Next().text;
      OC_ASSIGN_OR_RETURN(std::string value, ParseString());
      if (kind == "doc") {
        notes.doc = std::move(value);
        continue;
      }
      std::string bytes;
      if (!IsHex(value)) {
        return Error("@raw needs an even number of hex digits");
      }
      notes.raw += absl::HexStringToBytes(value);
    }
    return notes;
  }

  // Sets the doc string and merges raw bytes into `message`.
  absl::Status Apply(const Annotations& notes, google::protobuf::Message& message) {
    if (notes.doc) {
      const google::protobuf::FieldDescriptor* doc =
          message.GetDescriptor()->FindFieldByName("doc_string");
      if (doc == nullptr) return Error("@doc is not allowed here");
      message.GetReflection()->SetString(&message, doc, *notes.doc);
    }
    if (!notes.raw.empty() && !message.MergeFromString(notes.raw)) {
      return Error("@raw bytes are not a valid protobuf message of this kind");
    }
    return absl::OkStatus();
  }

  absl::Status NameList(absl::string_view close,
                        google::protobuf::RepeatedPtrField<std::string>& names) {
    if (Accept(close)) return absl::OkStatus();
    do {
      if (IsPunct(",") || IsPunct(close)) {
        names.Add();  // an empty slot is a missing optional input
        continue;
      }
      OC_ASSIGN_OR_RETURN(*names.Add(), ParseName());
    } while (Accept(","));
    return Expect(close);
  }

  absl::Status OpName(onnx::NodeProto& node) {
    std::vector<std::string> parts;
    do {
      OC_ASSIGN_OR_RETURN(std::string part, ParseName());
      parts.push_back(std::move(part));
    } while (Accept("."));
    node.set_op_type(parts.back());
    parts.pop_back();
    if (!parts.empty()) node.set_domain(absl::StrJoin(parts, "."));  // `"".Op` sets ""
    if (Accept(":")) {
      OC_ASSIGN_OR_RETURN(*node.mutable_overload(), ParseName());
    }
    return absl::OkStatus();
  }

  absl::Status NodeBlock(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    OC_RETURN_IF_ERROR(Expect("{"));
    while (!Accept("}")) {
      if (Peek().kind == TokenKind::kEnd) return Error("expected '}'");
      OC_RETURN_IF_ERROR(Node(*nodes.Add()));
    }
    return absl::OkStatus();
  }

  // One entry of an input, output or `<...>` list: a value info, or a
  // tensor when `= data` follows (an initializer of `graph`).
  absl::Status ValueList(absl::string_view close, onnx::GraphProto& graph,
                         google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
    if (Accept(close)) return absl::OkStatus();
    bool is_value_info_list = &values == &graph.value_info();
    do {
      OC_ASSIGN_OR_RETURN(Annotations notes, ParseAnnotations());
      onnx::TypeProto type;
      bool has_type = false;
      if (AtTypeKeyword() && !IsPunct(",", 1) && !IsPunct(close, 1)) {
        OC_RETURN_IF_ERROR(Type(type));
        has_type = true;
      }
      OC_ASSIGN_OR_RETURN(std::string name, ParseName());
      if (Accept("=")) {
        onnx::TensorProto* tensor = graph.add_initializer();
        OC_RETURN_IF_ERROR(TensorFromType(type, has_type, *tensor));
        tensor->set_name(name);
        OC_RETURN_IF_ERROR(TensorData(*tensor));
        OC_RETURN_IF_ERROR(Apply(notes, *tensor));
        if (is_value_info_list) continue;
        // In the input list, an initializer is also a graph input.
        notes = Annotations();
      }
      onnx::ValueInfoProto* value = values.Add();
      value->set_name(name);
      if (has_type) *value->mutable_type() = std::move(type);
      OC_RETURN_IF_ERROR(Apply(notes, *value));
    } while (Accept(","));
    return Expect(close);
  }

  absl::Status TensorFromType(const onnx::TypeProto& type, bool has_type,
                              onnx::TensorProto& tensor) {
    if (!has_type || !type.has_tensor_type()) return Error("a tensor needs a tensor type");
    const auto& tensor_type = type.tensor_type();
    if (tensor_type.elem_type() != 0) tensor.set_data_type(tensor_type.elem_type());
    for (const auto& dim : tensor_type.shape().dim()) {
      if (!dim.has_dim_value()) return Error("a tensor's dims must be numbers");
      tensor.add_dims(dim.dim_value());
    }
    return absl::OkStatus();
  }

  // A tensor literal in an attribute: `float[2] {1, 2}` or `float[2] W = {..}`.
  absl::Status TensorLiteral(const Annotations& notes, onnx::TensorProto& tensor) {
    onnx::TypeProto type;
    OC_ASSIGN_OR_RETURN(int32_t elem, ElemType());
    type.mutable_tensor_type()->set_elem_type(elem);
    // `float {1.0}` is a scalar: no dims.
    if (IsPunct("[")) OC_RETURN_IF_ERROR(Shape(*type.mutable_tensor_type()->mutable_shape()));
    OC_RETURN_IF_ERROR(TensorFromType(type, true, tensor));
    if ((Peek().kind == TokenKind::kIdentifier && !IsIdent("raw") && !IsIdent("external")) ||
        Peek().kind == TokenKind::kString) {
      OC_ASSIGN_OR_RETURN(*tensor.mutable_name(), ParseName());
      OC_RETURN_IF_ERROR(Expect("="));
    }
    OC_RETURN_IF_ERROR(TensorData(tensor));
    return Apply(notes, tensor);
  }

  absl::Status TensorData(onnx::TensorProto& tensor) {
    if (IsIdent("external")) {
      Next();
      tensor.set_data_location(onnx::TensorProto::EXTERNAL);
      return KeyValueList(*tensor.mutable_external_data());
    }
    if (IsIdent("raw")) {
      Next();
      if (Peek().kind == TokenKind::kString) {
        OC_ASSIGN_OR_RETURN(std::string hex, ParseString());
        if (!IsHex(hex)) return Error("raw data needs an even number of hex digits");
        tensor.set_raw_data(absl::HexStringToBytes(hex));
        return absl::OkStatus();
      }
      return RawValues(tensor);
    }
    return TypedValues(tensor);
  }

  template <typename T>
  absl::Status AppendRaw(std::string& raw) {
    T value;
    if constexpr (std::is_floating_point_v<T>) {
      OC_ASSIGN_OR_RETURN(value, ParseFloat<T>());
    } else if constexpr (std::is_signed_v<T>) {
      OC_ASSIGN_OR_RETURN(int64_t wide, ParseInt());
      value = static_cast<T>(wide);
    } else {
      OC_ASSIGN_OR_RETURN(uint64_t wide, ParseUnsigned());
      value = static_cast<T>(wide);
    }
    raw.append(reinterpret_cast<const char*>(&value), sizeof(T));
    return absl::OkStatus();
  }

  absl::Status RawValue(int32_t data_type, std::string& raw) {
    switch (data_type) {
      case onnx::TensorProto::FLOAT: return AppendRaw<float>(raw);
      case onnx::TensorProto::DOUBLE: return AppendRaw<double>(raw);
      case onnx::TensorProto::INT64: return AppendRaw<int64_t>(raw);
      case onnx::TensorProto::INT32: return AppendRaw<int32_t>(raw);
      case onnx::TensorProto::INT16: return AppendRaw<int16_t>(raw);
      case onnx::TensorProto::INT8: return AppendRaw<int8_t>(raw);
      case onnx::TensorProto::UINT64: return AppendRaw<uint64_t>(raw);
      case onnx::TensorProto::UINT32: return AppendRaw<uint32_t>(raw);
      case onnx::TensorProto::UINT16: return AppendRaw<uint16_t>(raw);
      case onnx::TensorProto::UINT8: return AppendRaw<uint8_t>(raw);
      default: return Error("raw values of this element type must be written as hex");
    }
  }

  absl::Status RawValues(onnx::TensorProto& tensor) {
    OC_RETURN_IF_ERROR(Expect("{"));
    std::string raw;
    if (!Accept("}")) {
      do {
        OC_RETURN_IF_ERROR(RawValue(tensor.data_type(), raw));
      } while (Accept(","));
      OC_RETURN_IF_ERROR(Expect("}"));
    }
    tensor.set_raw_data(std::move(raw));
    return absl::OkStatus();
  }

  absl::Status TypedValue(onnx::TensorProto& tensor) {
    switch (text::TypedFieldFor(tensor.data_type())) {
      case onnx::TensorProto::kFloatDataFieldNumber:
        return StoreParsed(ParseFloat<float>(), [&](float v) { tensor.add_float_data(v); });
      case onnx::TensorProto::kDoubleDataFieldNumber:
        return StoreParsed(ParseFloat<double>(), [&](double v) { tensor.add_double_data(v); });
      case onnx::TensorProto::kInt64DataFieldNumber:
        return StoreParsed(ParseInt(), [&](int64_t v) { tensor.add_int64_data(v); });
      case onnx::TensorProto::kUint64DataFieldNumber:
        return StoreParsed(ParseUnsigned(), [&](uint64_t v) { tensor.add_uint64_data(v); });
      case onnx::TensorProto::kStringDataFieldNumber:
        return StoreParsed(ParseString(),
                           [&](std::string v) { tensor.add_string_data(std::move(v)); });
      default: {
        OC_ASSIGN_OR_RETURN(int64_t value, ParseInt());
        if (value < std::numeric_limits<int32_t>::min() ||
            value > std::numeric_limits<int32_t>::max()) {
          return Error("value out of int32 range");
        }
        tensor.add_int32_data(static_cast<int32_t>(value));
        return absl::OkStatus();
      }
    }
  }

  absl::Status TypedValues(onnx::TensorProto& tensor) {
    return Delimited("{", "}", [&] { return TypedValue(tensor); });
  }

  absl::Status KeyValueList(
      google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>& entries) {
    return Delimited("[", "]", [&]() -> absl::Status {
      onnx::StringStringEntryProto* entry = entries.Add();
      OC_ASSIGN_OR_RETURN(*entry->mutable_key(), ParseString());
      OC_RETURN_IF_ERROR(Expect(":"));
      OC_ASSIGN_OR_RETURN(*entry->mutable_value(), ParseString());
      return absl::OkStatus();
    });
  }

  absl::Status OpsetList(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opsets) {
    return Delimited("[", "]", [&]() -> absl::Status {
      onnx::OperatorSetIdProto* opset = opsets.Add();
      if (Peek().kind == TokenKind::kString) {
        OC_ASSIGN_OR_RETURN(*opset->mutable_domain(), ParseString());
        OC_RETURN_IF_ERROR(Expect(":"));
      }
      if (Accept("?")) return absl::OkStatus();
      return StoreParsed(ParseInt(), [&](int64_t v) { opset->set_version(v); });
    });
  }

  // Parses a string into `field`.
  absl::Status StringInto(std::string* field) {
    return StoreParsed(ParseString(), [&](std::string v) { *field = std::move(v); });
  }

  absl::Status ModelHeader(onnx::ModelProto& model) {
    return HeaderEntries("model", [&](const std::string& key) -> std::optional<absl::Status> {
      if (key == "ir_version") {
        return StoreParsed(ParseInt(), [&](int64_t v) { model.set_ir_version(v); });
      }
      if (key == "opset_import") return OpsetList(*model.mutable_opset_import());
      if (key == "producer_name") return StringInto(model.mutable_producer_name());
      if (key == "producer_version") return StringInto(model.mutable_producer_version());
      if (key == "domain") return StringInto(model.mutable_domain());
      if (key == "model_version") {
        return StoreParsed(ParseInt(), [&](int64_t v) { model.set_model_version(v); });
      }
      if (key == "doc_string") return StringInto(model.mutable_doc_string());
      if (key == "metadata_props") return KeyValueList(*model.mutable_metadata_props());
      return std::nullopt;
    });
  }

  absl::Status FunctionHeader(onnx::FunctionProto& function) {
    return HeaderEntries("function", [&](const std::string& key) -> std::optional<absl::Status> {
      if (key == "domain") return StringInto(function.mutable_domain());
      if (key == "overload") return StringInto(function.mutable_overload());
      if (key == "opset_import") return OpsetList(*function.mutable_opset_import());
      return std::nullopt;
    });
  }

  // ---- attributes ----
  absl::Status Attribute(const Annotations& notes, onnx::AttributeProto& attribute) {
    OC_ASSIGN_OR_RETURN(std::string name, ParseName());
    std::optional<int> explicit_type;
    if (Accept(":")) {
      if (Peek().kind != TokenKind::kIdentifier ||
          !text::AttributeTypeFromName(Peek().text).has_value()) {
        return Error("expected an attribute type");
      }
      explicit_type = text::AttributeTypeFromName(Next().text);
    }
    OC_RETURN_IF_ERROR(Expect("="));
    OC_ASSIGN_OR_RETURN(Annotations value_notes, ParseAnnotations());
    if (!value_notes.raw.empty() && !value_notes.doc && !explicit_type &&
        (IsPunct(",") || IsPunct(">"))) {
      // The whole attribute, serialized.
      if (!attribute.ParseFromString(value_notes.raw)) {
        return Error("@raw bytes are not a valid attribute");
      }
      return absl::OkStatus();
    }
    attribute.set_name(name);
    if (explicit_type && IsPunct("@") && Peek(1).kind == TokenKind::kIdentifier) {
      Next();
      attribute.set_ref_attr_name(Next().text);
      attribute.set_type(static_cast<onnx::AttributeProto::AttributeType>(*explicit_type));
      return Apply(notes, attribute);
    }
    OC_RETURN_IF_ERROR(AttributeValue(value_notes, explicit_type, attribute));
    return Apply(notes, attribute);
  }

  bool AtGraph() const {
    return IsPunct("(") || ((Peek().kind == TokenKind::kIdentifier ||
                             Peek().kind == TokenKind::kString) && IsPunct("(", 1));
  }

  // The attribute type a value literal implies.
  absl::StatusOr<int> InferAttributeType(bool in_list) {
    const Token& token = Peek();
    if (token.kind == TokenKind::kInteger) {
      return in_list ? onnx::AttributeProto::INTS : onnx::AttributeProto::INT;
    }
    if (AtFloat()) return in_list ? onnx::AttributeProto::FLOATS : onnx::AttributeProto::FLOAT;
    if (token.kind == TokenKind::kString && !IsPunct("(", 1)) {
      return in_list ? onnx::AttributeProto::STRINGS : onnx::AttributeProto::STRING;
    }
    if (AtGraph() || IsPunct("@")) {
      // Annotations may precede a graph or a tensor; look past them.
      size_t saved = pos_;
      OC_RETURN_IF_ERROR(ParseAnnotations().status());
      bool graph = AtGraph();
      bool tensor = AtElemType();
      pos_ = saved;
      if (graph) return in_list ? onnx::AttributeProto::GRAPHS : onnx::AttributeProto::GRAPH;
      if (tensor) return in_list ? onnx::AttributeProto::TENSORS : onnx::AttributeProto::TENSOR;
    }
    if (AtElemType()) return in_list ? onnx::AttributeProto::TENSORS : onnx::AttributeProto::TENSOR;
    return Error("expected an attribute value");
  }

  absl::Status AttributeValue(const Annotations& value_notes, std::optional<int> explicit_type,
                              onnx::AttributeProto& attribute) {
    bool is_list = IsPunct("[");
    int type;
    if (explicit_type) {
      type = *explicit_type;
    } else if (is_list) {
      Next();
      if (IsPunct("]")) return Error("an empty list needs its type: name: ints = []");
      absl::StatusOr<int> inferred = InferAttributeType(true);
      --pos_;
      if (!inferred.ok()) return inferred.status();
      type = *inferred;
    } else {
      OC_ASSIGN_OR_RETURN(type, InferAttributeType(false));
    }
    attribute.set_type(static_cast<onnx::AttributeProto::AttributeType>(type));
    if (IsElementType(type)) return OneValue(type, /*in_list=*/false, value_notes, attribute);
    return ListValue(type, attribute);
  }

  // The attribute types of lists with a text form, each with the type of
  // its elements (the types of one value with a text form).
  static constexpr std::pair<int, int> kListTypes[] = {
      {onnx::AttributeProto::FLOATS, onnx::AttributeProto::FLOAT},
      {onnx::AttributeProto::INTS, onnx::AttributeProto::INT},
      {onnx::AttributeProto::STRINGS, onnx::AttributeProto::STRING},
      {onnx::AttributeProto::TENSORS, onnx::AttributeProto::TENSOR},
      {onnx::AttributeProto::GRAPHS, onnx::AttributeProto::GRAPH},
      {onnx::AttributeProto::TYPE_PROTOS, onnx::AttributeProto::TYPE_PROTO},
  };

  // Whether `type` is that of one value with a text form.
  static bool IsElementType(int type) {
    for (const auto& [list, element] : kListTypes) {
      if (element == type) return true;
    }
    return false;
  }

  // The element type of the list type `type`, or 0 for another type.
  static int ElementTypeOfList(int type) {
    for (const auto& [list, element] : kListTypes) {
      if (list == type) return element;
    }
    return 0;
  }

  // One value of `type` (an element type of kListTypes) into
  // `attribute`: its value, or with `in_list` a new element of its list.
  // `notes` precede a tensor or a graph.
  absl::Status OneValue(int type, bool in_list, const Annotations& notes,
                        onnx::AttributeProto& attribute) {
    switch (type) {
      case onnx::AttributeProto::FLOAT:
        return StoreParsed(ParseFloat<float>(), [&](float v) {
          in_list ? attribute.add_floats(v) : attribute.set_f(v);
        });
      case onnx::AttributeProto::INT:
        return StoreParsed(ParseInt(), [&](int64_t v) {
          in_list ? attribute.add_ints(v) : attribute.set_i(v);
        });
      case onnx::AttributeProto::STRING:
        return StringInto(in_list ? attribute.add_strings() : attribute.mutable_s());
      case onnx::AttributeProto::TENSOR:
        return TensorLiteral(notes, in_list ? *attribute.add_tensors() : *attribute.mutable_t());
      case onnx::AttributeProto::GRAPH:
        return GraphWithNotes(notes, in_list ? *attribute.add_graphs() : *attribute.mutable_g());
      default:
        return Type(in_list ? *attribute.add_type_protos() : *attribute.mutable_tp());
    }
  }

  absl::Status GraphWithNotes(const Annotations& notes, onnx::GraphProto& graph) {
    OC_RETURN_IF_ERROR(Graph(graph));
    return Apply(notes, graph);
  }

  absl::Status ListElement(int type, onnx::AttributeProto& attribute) {
    const int element = ElementTypeOfList(type);
    if (element == 0) return Error("this attribute type has no text form; use @raw");
    Annotations notes;
    if (element == onnx::AttributeProto::TENSOR || element == onnx::AttributeProto::GRAPH) {
      OC_ASSIGN_OR_RETURN(notes, ParseAnnotations());
    }
    return OneValue(element, /*in_list=*/true, notes, attribute);
  }

  absl::Status ListValue(int type, onnx::AttributeProto& attribute) {
    return Delimited("[", "]", [&] { return ListElement(type, attribute); });
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int type_nesting_ = 0;
};

template <typename Proto, typename Method>
absl::StatusOr<Proto> ParseWith(absl::string_view text, Method method) {
  OC_ASSIGN_OR_RETURN(std::vector<Token> tokens, text::Tokenize(text));
  Parser parser(std::move(tokens));
  Proto proto;
  OC_RETURN_IF_ERROR((parser.*method)(proto));
  OC_RETURN_IF_ERROR(parser.ExpectEnd());
  return proto;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseModelText(absl::string_view text) {
  return ParseWith<onnx::ModelProto>(text, &Parser::Model);
}

absl::StatusOr<onnx::GraphProto> ParseGraphText(absl::string_view text) {
  return ParseWith<onnx::GraphProto>(text, &Parser::Graph);
}

absl::StatusOr<onnx::FunctionProto> ParseFunctionText(absl::string_view text) {
  return ParseWith<onnx::FunctionProto>(text, &Parser::Function);
}

absl::StatusOr<onnx::NodeProto> ParseNodeText(absl::string_view text) {
  return ParseWith<onnx::NodeProto>(text, &Parser::Node);
}

absl::StatusOr<onnx::TypeProto> ParseTypeText(absl::string_view text) {
  return ParseWith<onnx::TypeProto>(text, &Parser::Type);
}

}  // namespace onnxconvert
