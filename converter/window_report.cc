#include "converter/window_report.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "converter/step_runner.h"
#include "ir/wire.h"

namespace onnxconvert::converter {
namespace {

// The packed form of a NodeChange: its fields in declaration order, strings
// as a varint length and the bytes, integers as varints (versions as
// unsigned 32-bit values), lists as a varint count and their items.
void PutString(absl::string_view text, std::string& out) {
  wire::AppendVarint(text.size(), out);
  out.append(text.data(), text.size());
}

void PutInt(int value, std::string& out) {
  wire::AppendVarint(static_cast<uint32_t>(value), out);
}

// Appends `name` coded against `previous`: the lengths of their common
// front and back, and the middle of `name`.
void PutCodedName(absl::string_view name, absl::string_view previous, std::string& out) {
  size_t most = std::min(name.size(), previous.size());
  size_t front = 0;
  while (front < most && name[front] == previous[front]) ++front;
  size_t back = 0;
  while (back < most - front &&
         name[name.size() - 1 - back] == previous[previous.size() - 1 - back]) {
    ++back;
  }
  wire::AppendVarint(front, out);
  wire::AppendVarint(back, out);
  PutString(name.substr(front, name.size() - front - back), out);
}

// Packs `change`, whose `alike` is given apart: `count` names coded in
// `alike` (each against the one before it, the first against the node's).
void Pack(const NodeChange& change, uint64_t count, absl::string_view alike, std::string& out) {
  PutString(change.graph, out);
  PutString(change.node, out);
  wire::AppendVarint(count, out);
  out.append(alike.data(), alike.size());
  PutString(change.op, out);
  PutInt(change.from_version, out);
  PutInt(change.to_version, out);
  PutString(change.adapter, out);
  wire::AppendVarint(change.changes.size(), out);
  for (const adapters::Change& item : change.changes) {
    PutInt(static_cast<int>(item.kind), out);
    PutString(item.detail, out);
  }
  PutString(change.refusal, out);
  PutString(change.before_text, out);
  PutString(change.after_text, out);
}

// Reads what Pack wrote, from the front of `in`.
class Unpacker {
 public:
  explicit Unpacker(absl::string_view in) : in_(in) {}

  bool done() const { return in_.empty(); }

  // (The bytes are Pack's own, so always whole.)
  uint64_t Varint() {
    uint64_t value = 0;
    wire::ConsumeVarint(in_, value);
    return value;
  }
  int Int() { return static_cast<int>(static_cast<uint32_t>(Varint())); }
  absl::string_view View() {
    size_t size = Varint();
    absl::string_view text = in_.substr(0, size);
    in_.remove_prefix(size);
    return text;
  }
  std::string String() { return std::string(View()); }

  NodeChange Change() {
    NodeChange change;
    change.graph = String();
    change.node = String();
    std::string name = change.node;
    for (uint64_t n = Varint(); n > 0; --n) {
      size_t front = Varint();
      size_t back = Varint();
      absl::string_view middle = View();
      name = absl::StrCat(absl::string_view(name).substr(0, front), middle,
                          absl::string_view(name).substr(name.size() - back));
      change.alike.push_back(name);
    }
    change.op = String();
    change.from_version = Int();
    change.to_version = Int();
    change.adapter = String();
    change.changes.resize(Varint());
    for (adapters::Change& item : change.changes) {
      item.kind = static_cast<adapters::ChangeKind>(Int());
      item.detail = String();
    }
    change.refusal = String();
    change.before_text = String();
    change.after_text = String();
    return change;
  }

 private:
  absl::string_view in_;
};

}  // namespace

bool PackedChanges::Joins(const NodeChange& change) const {
  return last_.has_value() && SameChange(*last_, change, change.graph, change.op);
}

void PackedChanges::AddAlike(absl::string_view name) {
  PutCodedName(name, previous_, last_alike_);
  previous_.assign(name.data(), name.size());
  ++last_alike_count_;
}

void PackedChanges::Join(const NodeChange& change) {
  AddAlike(change.node);
  for (absl::string_view name : change.alike) AddAlike(name);
}

void PackedChanges::PackLast() {
  if (!last_.has_value()) return;
  Pack(*last_, last_alike_count_, last_alike_, packed_);
  last_.reset();
  last_alike_count_ = 0;
  last_alike_.clear();
}

void PackedChanges::Add(NodeChange change) {
  PackLast();
  NameList alike;
  std::swap(alike, change.alike);
  previous_ = change.node;
  last_ = std::move(change);
  for (absl::string_view name : alike) AddAlike(name);
}

void PackedChanges::TakeAll(std::vector<NodeChange>& out) && {
  PackLast();
  for (Unpacker in(packed_); !in.done();) out.push_back(in.Change());
  std::string().swap(packed_);
  std::string().swap(last_alike_);
}

absl::string_view PackedBumps::GraphOf(size_t i) const {
  size_t begin = i == 0 ? 0 : records[i - 1].op_end;
  return absl::string_view(names).substr(begin, records[i].graph_end - begin);
}

void PackedBumps::Add(const VersionBump& bump) {
  auto [first, inserted] =
      first_of.try_emplace(wire::Fingerprint(bump.graph), static_cast<uint32_t>(records.size()));
  if (!inserted) {
    // The graph's record, the first with its path (as a fingerprint may
    // be another path's too, from there on).
    for (size_t i = first->second; i < records.size(); ++i) {
      if (GraphOf(i) == bump.graph) {
        records[i].nodes += bump.nodes;
        return;
      }
    }
  }
  names.append(bump.graph);
  size_t graph_end = names.size();
  names.append(bump.op);
  records.push_back({graph_end, names.size(), bump.from_version, bump.to_version, bump.nodes});
}

std::vector<VersionBump> PackedBumps::Take() && {
  std::vector<VersionBump> bumps;
  bumps.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& record = records[i];
    VersionBump& bump = bumps.emplace_back();
    bump.graph = std::string(GraphOf(i));
    bump.op = names.substr(record.graph_end, record.op_end - record.graph_end);
    bump.from_version = record.from_version;
    bump.to_version = record.to_version;
    bump.nodes = record.nodes;
  }
  return bumps;
}

void StepParts::Merge(StepReport& window) {
  report.milliseconds += window.milliseconds;
  report.nodes_validated += window.nodes_validated;
  for (NodeChange& change : window.nodes) {
    int rank = rank_of[change.op];
    PackedChanges& list = nodes[rank];
    if (list.Joins(change)) {
      list.Join(change);
      continue;
    }
    // Done keeps the first texts of the step, in rank order: those of a
    // rank past that many go now (in a graph of many subgraphs, entries
    // are many).
    if (!change.before_text.empty() && ++texts_of_rank[rank] > kRestructuredTexts) {
      std::string().swap(change.before_text);
      std::string().swap(change.after_text);
    }
    list.Add(std::move(change));
  }
  for (VersionBump& bump : window.bumps) bumps[rank_of[bump.op]].Add(bump);
}

StepReport StepParts::Done() && {
  int texts = 0;  // each window kept its own; the step keeps the first
  for (auto& [rank, list] : nodes) {
    size_t first = report.nodes.size();
    std::move(list).TakeAll(report.nodes);
    for (size_t i = first; i < report.nodes.size(); ++i) {
      NodeChange& change = report.nodes[i];
      if (!change.before_text.empty() && ++texts > kRestructuredTexts) {
        change.before_text.clear();
        change.after_text.clear();
      }
    }
  }
  for (auto& [rank, list] : bumps) {
    for (VersionBump& bump : std::move(list).Take()) report.bumps.push_back(std::move(bump));
  }
  report.validation = report.nodes.empty() && report.bumps.empty()
                          ? StepValidation::kUnchanged
                          : StepValidation::kIncremental;
  return std::move(report);
}

}  // namespace onnxconvert::converter
