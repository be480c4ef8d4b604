#ifndef ONNX_CONVERT_CONVERTER_WIRE_SCAN_H_
#define ONNX_CONVERT_CONVERTER_WIRE_SCAN_H_

// Reading serialized nodes and tensors without parsing them: a node's names,
// subgraphs and their captures of outer values included, and a tensor's
// fields but its data. What the windows (windowed.cc) know of a node or an
// initializer before (or instead of) parsing it. Internal to the converter.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "schema/tensor_checks.h"

namespace onnxconvert::converter {

// Field numbers of the wire format this reads.
inline constexpr uint32_t kModelGraph = 7;
inline constexpr uint32_t kGraphNode = 1;
inline constexpr uint32_t kGraphInitializer = 5;
inline constexpr uint32_t kTensorDataType = 2;
inline constexpr uint32_t kNodeInput = 1;
inline constexpr uint32_t kNodeOutput = 2;
inline constexpr uint32_t kNodeName = 3;
inline constexpr uint32_t kNodeOpType = 4;
inline constexpr uint32_t kNodeDocString = 6;
inline constexpr uint32_t kNodeDomain = 7;

// Field numbers of subgraphs, read without parsing them.
inline constexpr uint32_t kNodeAttribute = 5;
inline constexpr uint32_t kAttributeGraph = 6;
inline constexpr uint32_t kAttributeGraphs = 11;
inline constexpr uint32_t kGraphSparseInitializer = 15;
inline constexpr uint32_t kGraphInput = 11;
inline constexpr uint32_t kGraphOutput = 12;
inline constexpr uint32_t kGraphValueInfo = 13;
inline constexpr uint32_t kValueInfoName = 1;
inline constexpr uint32_t kTensorName = 8;

// Subgraphs nested deeper are left to the whole conversion.
inline constexpr int kMaxSubgraphDepth = 32;

// The names a serialized node uses, read without parsing it (views of its
// bytes). `inputs` ends with the names its subgraphs read from the graphs
// enclosing the node (captures, each once, in the order first read): to
// the windows, a capture is a use like an input.
struct NodeNames {
  std::vector<absl::string_view> inputs;
  std::vector<absl::string_view> outputs;
  absl::string_view name;
  absl::string_view op_type;  // ScanNode's
  absl::string_view domain;
  // Whether the node has subgraphs.
  bool subgraphs = false;
  // Why its subgraphs cannot go through the windows ("" when they can).
  std::string refusal;
  // The domain and op type of each node of its subgraphs of a domain other
  // than ai.onnx (calls of the model's functions, or nodes the windows
  // refuse).
  std::vector<std::pair<absl::string_view, absl::string_view>> inner_other_ops;
  // Every name its subgraphs hold, when asked for (ScanNode's `all`).
  std::vector<absl::string_view> inner_names;
};

// The value field `number` of the message `payload` (a name), or "".
absl::string_view NameField(absl::string_view payload, uint32_t number);

// Reads the names of serialized `node` into `names`; with `all`, every name
// its subgraphs hold too (names.inner_names). An error names the byte
// offset where the node is not a well-formed message.
absl::Status ScanNode(absl::string_view node, NodeNames& names, bool all = false);

// Reads the inputs and outputs of serialized `node`, known to hold no
// subgraph, into `names` (its other fields cleared): ScanNode without
// reading the attributes.
absl::Status ScanWiring(absl::string_view node, NodeNames& names);

// A serialized node of the plainest kind, read without parsing it (views of
// its bytes): what the windows need to pass it through unparsed when no
// step changes it (see ScanPlainNode).
struct PlainNode {
  std::vector<absl::string_view> inputs;
  std::vector<absl::string_view> outputs;
  absl::string_view op_type;
  absl::string_view domain;
  // Its attribute fields as encoded (tags, lengths and bytes), one after
  // the other.
  absl::string_view attributes;
};

// The most bytes of attributes a plain node holds.
inline constexpr size_t kMaxPlainAttributeBytes = 256;

// Reads serialized `node` into `plain`; false (`plain` then meaningless)
// unless the node is well formed, has only the fields of ONNX 1.0's
// NodeProto (inputs, outputs, name, op type, attributes, doc string,
// domain), each once but the repeated ones, and its attributes one after
// the other, at most kMaxPlainAttributeBytes of them.
bool ScanPlainNode(absl::string_view node, PlainNode& plain);

// Whether attribute fields `attributes`, as encoded, hold a graph (or
// graphs); true too where they are not well formed.
bool AttributesHoldGraphs(absl::string_view attributes);

// Where the first field numbered above `number` starts in `message` (its
// size if none does): protobuf writes fields in the order of their numbers.
size_t FirstFieldAfter(absl::string_view message, uint32_t number);

// A tensor read without its data.
struct TensorHeader {
  std::string bytes;               // its fields but the data fields
  schema::TensorDataSizes sizes;  // what its data fields hold
};

// The fields of the floating-point TensorProto `tensor` but its data (name,
// type, dims, ...) and the sizes of its data, or nullopt for a tensor of
// another type.
std::optional<TensorHeader> FloatTensorHeader(absl::string_view tensor);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_WIRE_SCAN_H_
