#include "converter/plain_node_memo.h"

namespace onnxconvert::converter {

const PlainNodeMemo::Entry* PlainNodeMemo::Recall(
    const schema::OpSchema& op, absl::string_view attributes,
    absl::Span<const onnx::TypeProto* const> input_types,
    absl::Span<const absl::string_view> outputs) {
  missed_ = false;
  if (outputs.size() > kMaxOutputs) return nullptr;
  scratch_.op = &op;
  scratch_.inputs.resize(input_types.size());
  for (size_t i = 0; i < input_types.size(); ++i) scratch_.inputs[i] = Canonical(input_types[i]);
  scratch_.outputs = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].empty()) scratch_.outputs |= uint64_t{1} << i;
  }
  // (The attributes are compared as they are given; copied into the key
  // only for a lookup.)
  Last& last = last_[&op];
  if (last.key != nullptr && last.key->outputs == scratch_.outputs &&
      last.key->inputs == scratch_.inputs && last.key->attributes == attributes) {
    return last.entry;
  }
  scratch_.attributes.assign(attributes.data(), attributes.size());
  auto it = entries_.find(scratch_);
  if (it == entries_.end()) {
    missed_ = true;
    return nullptr;
  }
  last = {&it->first, &it->second};
  return &it->second;
}

void PlainNodeMemo::Remember(absl::Span<const onnx::TypeProto* const> output_types,
                             absl::Span<const schema::InputFact> facts) {
  if (!missed_ || entries_.size() >= kMaxEntries) return;
  missed_ = false;
  Entry entry;
  entry.types.reserve(output_types.size());
  for (const onnx::TypeProto* type : output_types) entry.types.push_back(Canonical(type));
  entry.facts.assign(facts.begin(), facts.end());
  entries_.emplace(scratch_, std::move(entry));
}

const onnx::TypeProto* PlainNodeMemo::Canonical(const onnx::TypeProto* type) {
  if (type == nullptr) return nullptr;
  for (const auto& [seen, canonical] : recent_) {
    if (seen == type) return canonical;
  }
  encoded_.clear();
  type->AppendToString(&encoded_);
  auto [it, inserted] = canonical_.try_emplace(encoded_, nullptr);
  if (inserted) {
    auto* copy = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&arena_);
    *copy = *type;
    it->second = copy;
  }
  recent_[next_recent_++ % recent_.size()] = {type, it->second};
  return it->second;
}

}  // namespace onnxconvert::converter
