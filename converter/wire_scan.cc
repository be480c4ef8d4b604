#include "converter/wire_scan.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/wire.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

absl::string_view NameField(absl::string_view payload, uint32_t number) {
  wire::FieldReader reader(payload);
  wire::Field field;
  bool found;
  absl::string_view name;
  while (reader.Next(field, found).ok() && found) {
    if (field.number == number && field.wire_type == wire::kLengthDelimited) name = field.payload;
  }
  return name;
}

namespace {

// Reads the subgraphs of one serialized node without parsing them: what
// they read from the graphs enclosing the node, and (when asked) every name
// they hold, noting in `names` why the windows cannot take them.
class SubgraphReader {
 public:
  SubgraphReader(NodeNames& names, bool all) : names_(names), all_(all) {}

  // Reads the subgraphs of attribute `payload` (of a node at `depth`):
  // adds to `reads` the names they read from outside themselves.
  absl::Status Attribute(absl::string_view payload, int depth,
                         std::vector<absl::string_view>& reads) {
    return wire::ForEachLengthDelimited(payload, [&](const wire::Field& field) {
      if (field.number != kAttributeGraph && field.number != kAttributeGraphs) {
        return absl::OkStatus();
      }
      names_.subgraphs = true;
      if (depth >= kMaxSubgraphDepth) {
        names_.refusal = "subgraphs are nested too deeply";
        return absl::OkStatus();
      }
      return Graph(field.payload, depth + 1, reads);
    });
  }

 private:
  // Adds to `reads` the names graph `payload` reads from enclosing graphs.
  absl::Status Graph(absl::string_view payload, int depth,
                     std::vector<absl::string_view>& reads) {
    absl::flat_hash_set<absl::string_view> defined;
    std::vector<absl::string_view> outputs;
    // Protobuf writes the nodes (field 1) before the inputs and
    // initializers they read: those are gathered first.
    OC_RETURN_IF_ERROR(wire::ForEachLengthDelimited(payload, [&](const wire::Field& field) {
      absl::string_view name;
      switch (field.number) {
        case kGraphInput:
          name = NameField(field.payload, kValueInfoName);
          defined.insert(name);
          break;
        case kGraphInitializer:
          name = NameField(field.payload, kTensorName);
          defined.insert(name);
          break;
        case kGraphOutput:
          name = NameField(field.payload, kValueInfoName);
          outputs.push_back(name);
          break;
        case kGraphValueInfo: name = NameField(field.payload, kValueInfoName); break;
        case kGraphSparseInitializer: names_.refusal = "a subgraph has sparse initializers"; break;
        default: return absl::OkStatus();
      }
      if (all_) names_.inner_names.push_back(name);
      return absl::OkStatus();
    }));
    std::vector<absl::string_view> inner;
    OC_RETURN_IF_ERROR(wire::ForEachLengthDelimited(payload, [&](const wire::Field& field) {
      if (field.number != kGraphNode) return absl::OkStatus();
      inner.clear();
      OC_RETURN_IF_ERROR(Node(field.payload, depth, defined, inner));
      for (absl::string_view name : inner) {
        if (!name.empty() && !defined.contains(name)) reads.push_back(name);
      }
      return absl::OkStatus();
    }));
    for (absl::string_view name : outputs) {
      if (!name.empty() && !defined.contains(name)) reads.push_back(name);
    }
    return absl::OkStatus();
  }

  // Adds to `reads` what node `payload` (in a subgraph at `depth`) reads,
  // its subgraphs' reads included, and its outputs to `defined`.
  absl::Status Node(absl::string_view payload, int depth,
                    absl::flat_hash_set<absl::string_view>& defined,
                    std::vector<absl::string_view>& reads) {
    std::vector<absl::string_view> outputs;
    absl::string_view op_type, domain;
    OC_RETURN_IF_ERROR(wire::ForEachLengthDelimited(payload, [&](const wire::Field& field) {
      switch (field.number) {
        case kNodeInput: reads.push_back(field.payload); break;
        case kNodeOutput: outputs.push_back(field.payload); break;
        case kNodeName: break;
        case kNodeOpType: op_type = field.payload; return absl::OkStatus();
        case kNodeDomain: domain = field.payload; return absl::OkStatus();
        case kNodeAttribute: return Attribute(field.payload, depth, reads);
        default: return absl::OkStatus();
      }
      if (all_) names_.inner_names.push_back(field.payload);
      return absl::OkStatus();
    }));
    if (!domain.empty() && domain != "ai.onnx") {
      names_.inner_other_ops.emplace_back(domain, op_type);
    }
    for (absl::string_view output : outputs) defined.insert(output);
    return absl::OkStatus();
  }

  NodeNames& names_;
  bool all_;
};

// A TensorProto's data field, by number, and how its values are encoded
// when packed: `value_bytes` each, 0 for varints; -1 for a field of one
// value per occurrence (string_data), or of bytes (raw_data).
struct WireDataField {
  uint32_t number;
  schema::TensorField field;
  int value_bytes;
};

constexpr WireDataField kWireDataFields[] = {
    {4, schema::TensorField::kFloat, 4},   {5, schema::TensorField::kInt32, 0},
    {6, schema::TensorField::kString, -1}, {7, schema::TensorField::kInt64, 0},
    {9, schema::TensorField::kRaw, -1},    {10, schema::TensorField::kDouble, 8},
    {11, schema::TensorField::kUint64, 0},
};

// Adds what one occurrence of data field `data` holds to `sizes`, counting
// packed varints by their last bytes (below 0x80) rather than decoding them.
void AddDataSize(const wire::Field& field, const WireDataField& data,
                 schema::TensorDataSizes& sizes) {
  int64_t& size = sizes[data.field];
  if (data.field == schema::TensorField::kRaw) {
    size = static_cast<int64_t>(field.payload.size());  // the last occurrence wins
  } else if (field.wire_type != wire::kLengthDelimited || data.value_bytes < 0) {
    ++size;  // one value, not packed
  } else if (data.value_bytes > 0) {
    size += static_cast<int64_t>(field.payload.size()) / data.value_bytes;
  } else {
    size += std::count_if(field.payload.begin(), field.payload.end(),
                          [](char byte) { return (static_cast<uint8_t>(byte) & 0x80) == 0; });
  }
}

}  // namespace

size_t FirstFieldAfter(absl::string_view message, uint32_t number) {
  wire::FieldReader reader(message);
  wire::Field field;
  bool found;
  for (size_t at = 0; reader.Next(field, found).ok() && found; at = reader.offset()) {
    if (field.number > number) return at;
  }
  return message.size();
}

std::optional<TensorHeader> FloatTensorHeader(absl::string_view tensor) {
  TensorHeader header;
  wire::FieldReader reader(tensor);
  wire::Field field;
  bool found;
  bool floating = false;
  while (reader.Next(field, found).ok() && found) {
    if (field.number == kTensorDataType && field.wire_type == wire::kVarint) {
      floating = field.varint == onnx::TensorProto::FLOAT ||
                 field.varint == onnx::TensorProto::FLOAT16 ||
                 field.varint == onnx::TensorProto::DOUBLE ||
                 field.varint == onnx::TensorProto::BFLOAT16;
    }
    auto data = std::find_if(std::begin(kWireDataFields), std::end(kWireDataFields),
                             [&field](const WireDataField& d) { return d.number == field.number; });
    if (data == std::end(kWireDataFields)) {
      header.bytes.append(field.whole.data(), field.whole.size());
    } else {
      AddDataSize(field, *data, header.sizes);
    }
  }
  if (!floating) return std::nullopt;
  return header;
}

namespace {

void ClearNames(NodeNames& names) {
  names.inputs.clear();
  names.outputs.clear();
  names.name = {};
  names.op_type = {};
  names.domain = {};
  names.subgraphs = false;
  names.refusal.clear();
  names.inner_other_ops.clear();
  names.inner_names.clear();
}

}  // namespace

absl::Status ScanWiring(absl::string_view node, NodeNames& names) {
  ClearNames(names);
  return wire::ForEachLengthDelimited(node, [&](const wire::Field& field) {
    if (field.number == kNodeInput) names.inputs.push_back(field.payload);
    if (field.number == kNodeOutput) names.outputs.push_back(field.payload);
    return absl::OkStatus();
  });
}

namespace {

// Reads the rest of a field whose tag `tag` was read, from `at`: a
// length-delimited field's payload into `payload` (else empty). The byte
// after the field, or null where the field does not end before `end` or
// has a wire type protobuf no longer writes.
// (Inlined: the scanners call it per field.)
ABSL_ATTRIBUTE_ALWAYS_INLINE inline const uint8_t* ReadFieldBody(const uint8_t* at,
                                                                const uint8_t* end, uint64_t tag,
                                                                absl::string_view& payload) {
  payload = {};
  uint64_t value;
  switch (tag & 7) {
    case wire::kVarint:
      return wire::ReadVarint(at, end, value);
    case wire::kFixed64:
      return end - at < 8 ? nullptr : at + 8;
    case wire::kFixed32:
      return end - at < 4 ? nullptr : at + 4;
    case wire::kLengthDelimited:
      if (at < end && *at < 0x80) {
        value = *at++;
      } else if ((at = wire::ReadVarint(at, end, value)) == nullptr) {
        return nullptr;
      }
      if (value > static_cast<uint64_t>(end - at)) return nullptr;
      payload = absl::string_view(reinterpret_cast<const char*>(at), value);
      return at + value;
    default:
      return nullptr;
  }
}

// Whether serialized attribute `payload` holds a graph (or graphs); true
// too where it is not well formed. A loop of its own: most attributes are
// short runs of varints, which a FieldReader reads more slowly.
bool AttributeHoldsGraph(absl::string_view payload) {
  const auto* at = reinterpret_cast<const uint8_t*>(payload.data());
  const uint8_t* const end = at + payload.size();
  while (at < end) {
    uint64_t tag;
    if (*at < 0x80) {
      tag = *at++;
    } else if ((at = wire::ReadVarint(at, end, tag)) == nullptr) {
      return true;
    }
    const uint64_t number = tag >> 3;
    if (number == kAttributeGraph || number == kAttributeGraphs || number == 0) return true;
    absl::string_view payload;
    if ((at = ReadFieldBody(at, end, tag, payload)) == nullptr) return true;
  }
  return false;
}

}  // namespace

bool AttributesHoldGraphs(absl::string_view attributes) {
  wire::FieldReader reader(attributes);
  wire::Field field;
  bool found;
  while (true) {
    if (!reader.Next(field, found).ok()) return true;
    if (!found) return false;
    if (field.number != kNodeAttribute || field.wire_type != wire::kLengthDelimited) return true;
    if (AttributeHoldsGraph(field.payload)) return true;
  }
}

bool ScanPlainNode(absl::string_view node, PlainNode& plain) {
  plain.inputs.clear();
  plain.outputs.clear();
  plain.op_type = plain.domain = plain.attributes = {};
  // Fields 3, 4, 6 and 7 seen (bit per number); whether the attributes
  // have ended.
  uint32_t seen = 0;
  bool attributes_ended = false;
  const char* attributes_begin = nullptr;
  const char* attributes_end = nullptr;
  // A loop of its own: every field of a plain node is length-delimited, of
  // a one-byte tag.
  const auto* at = reinterpret_cast<const uint8_t*>(node.data());
  const uint8_t* const end = at + node.size();
  while (at < end) {
    const uint8_t* const field_begin = at;
    const uint8_t tag = *at++;
    const uint32_t number = tag >> 3;
    if ((tag & 7) != wire::kLengthDelimited || number == 0 || number > kNodeDomain) return false;
    absl::string_view payload;
    if ((at = ReadFieldBody(at, end, tag, payload)) == nullptr) return false;
    if (number == kNodeAttribute) {
      if (attributes_ended) return false;
      if (attributes_begin == nullptr) attributes_begin = reinterpret_cast<const char*>(field_begin);
      attributes_end = reinterpret_cast<const char*>(at);
      continue;
    }
    if (attributes_begin != nullptr) attributes_ended = true;
    switch (number) {
      case kNodeInput: plain.inputs.push_back(payload); continue;
      case kNodeOutput: plain.outputs.push_back(payload); continue;
      case kNodeOpType: plain.op_type = payload; break;
      case kNodeDomain: plain.domain = payload; break;
      default: break;
    }
    const uint32_t bit = uint32_t{1} << number;
    if ((seen & bit) != 0) return false;  // protobuf keeps the last: parsed, not plain
    seen |= bit;
  }
  if (attributes_begin != nullptr) {
    plain.attributes = absl::string_view(attributes_begin, attributes_end - attributes_begin);
  }
  return plain.attributes.size() <= kMaxPlainAttributeBytes;
}

namespace {

// ScanNode for the most common nodes, in a loop of its own: false (`names`
// then meaningless) unless `node` is well formed, every field of a one-byte
// tag, and no attribute holds a graph.
bool ScanFlatNode(absl::string_view node, NodeNames& names) {
  const auto* at = reinterpret_cast<const uint8_t*>(node.data());
  const uint8_t* const end = at + node.size();
  while (at < end) {
    const uint8_t tag = *at++;
    const uint32_t number = tag >> 3;
    if (tag >= 0x80 || number == 0) return false;
    absl::string_view payload;
    if ((at = ReadFieldBody(at, end, tag, payload)) == nullptr) return false;
    if ((tag & 7) != wire::kLengthDelimited) continue;
    switch (number) {
      case kNodeInput: names.inputs.push_back(payload); break;
      case kNodeOutput: names.outputs.push_back(payload); break;
      case kNodeName: names.name = payload; break;
      case kNodeOpType: names.op_type = payload; break;
      case kNodeDomain: names.domain = payload; break;
      case kNodeAttribute:
        if (AttributeHoldsGraph(payload)) return false;
        break;
      default: break;
    }
  }
  return true;
}

}  // namespace

absl::Status ScanNode(absl::string_view node, NodeNames& names, bool all) {
  ClearNames(names);
  if (ScanFlatNode(node, names)) return absl::OkStatus();
  ClearNames(names);
  std::vector<absl::string_view> reads;
  OC_RETURN_IF_ERROR(wire::ForEachLengthDelimited(node, [&](const wire::Field& field) {
    switch (field.number) {
      case kNodeInput: names.inputs.push_back(field.payload); break;
      case kNodeOutput: names.outputs.push_back(field.payload); break;
      case kNodeName: names.name = field.payload; break;
      case kNodeOpType: names.op_type = field.payload; break;
      case kNodeDomain: names.domain = field.payload; break;
      case kNodeAttribute:
        // (Read again, field by field, when it may hold a graph.)
        if (!AttributeHoldsGraph(field.payload)) break;
        return SubgraphReader(names, all).Attribute(field.payload, 0, reads);
      default: break;
    }
    return absl::OkStatus();
  }));
  if (reads.empty()) return absl::OkStatus();
  // Each capture once, in the order first read.
  absl::flat_hash_set<absl::string_view> seen;
  for (absl::string_view name : reads) {
    if (seen.insert(name).second) names.inputs.push_back(name);
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::converter
