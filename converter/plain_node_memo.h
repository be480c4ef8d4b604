#ifndef ONNX_CONVERT_CONVERTER_PLAIN_NODE_MEMO_H_
#define ONNX_CONVERT_CONVERTER_PLAIN_NODE_MEMO_H_

// What the check and strict inference of a node found, remembered for the
// nodes alike, so that the windows (windowed.cc) pass those through
// unparsed: a node alike has the same op version, attributes as encoded,
// named outputs and input types, and so checks and infers alike. Internal
// to the converter.

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/arena.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

// See the file comment.
class PlainNodeMemo {
 public:
  // Most nodes remembered.
  static constexpr size_t kMaxEntries = 4096;
  // Most outputs a node remembered has.
  static constexpr size_t kMaxOutputs = 64;

  // Keeps the types it remembers on `arena`, which must outlive it.
  explicit PlainNodeMemo(google::protobuf::Arena& arena) : arena_(arena) {}

  // What a node passed the check with.
  struct Entry {
    // A type per output (null for those not named), living as long as the
    // arena.
    std::vector<const onnx::TypeProto*> types;
    // The input values its inference asked for, as it found them: a node
    // alike whose inputs are these gets `types`.
    std::vector<schema::InputFact> facts;
  };

  // What is remembered for a node of `op` with `attributes` (its attribute
  // fields as encoded), inputs of `input_types` (null: absent) and
  // `outputs` (empty: not named); null if nothing is.
  const Entry* Recall(const schema::OpSchema& op, absl::string_view attributes,
                      absl::Span<const onnx::TypeProto* const> input_types,
                      absl::Span<const absl::string_view> outputs);

  // Remembers `output_types` (null for outputs not named), inferred from
  // the input values `facts`, for the node the last Recall found nothing
  // for, which passed the check with them.
  void Remember(absl::Span<const onnx::TypeProto* const> output_types,
                absl::Span<const schema::InputFact> facts);

  // Forgets which types it saw last: the types the next Recall is given
  // may be other objects at the same addresses.
  void ForgetRecent() { recent_.fill({nullptr, nullptr}); }

  // How many nodes it remembers.
  size_t size() const { return entries_.size(); }

 private:
  struct Key {
    const schema::OpSchema* op = nullptr;
    std::string attributes;
    absl::InlinedVector<const onnx::TypeProto*, 4> inputs;  // canonical
    uint64_t outputs = 0;  // bit i: output i named

    template <typename H>
    friend H AbslHashValue(H state, const Key& key) {
      return H::combine(std::move(state), key.op, key.attributes, key.inputs, key.outputs);
    }
    friend bool operator==(const Key& a, const Key& b) {
      return a.op == b.op && a.outputs == b.outputs && a.inputs == b.inputs &&
             a.attributes == b.attributes;
    }
  };

  // The one object this memo keeps for types equal to `type` (or null).
  const onnx::TypeProto* Canonical(const onnx::TypeProto* type);

  google::protobuf::Arena& arena_;
  // (Nodes hold their entries' addresses: a node map.)
  absl::node_hash_map<Key, Entry> entries_;
  // The entry each op found last, with its key: the nodes of an op in a
  // row are mostly alike, and a comparison costs less than a lookup.
  struct Last {
    const Key* key = nullptr;
    const Entry* entry = nullptr;
  };
  absl::flat_hash_map<const schema::OpSchema*, Last> last_;
  Key scratch_;           // the last Recall's key
  bool missed_ = false;   // whether the last Recall found nothing
  // Canonical types by their encoding; the last few types seen, with theirs.
  absl::flat_hash_map<std::string, const onnx::TypeProto*> canonical_;
  std::string encoded_;  // scratch
  std::array<std::pair<const onnx::TypeProto*, const onnx::TypeProto*>, 8> recent_{};
  size_t next_recent_ = 0;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_PLAIN_NODE_MEMO_H_
