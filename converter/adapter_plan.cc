#include "converter/adapter_plan.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/base/const_init.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "adapters/adapter_helpers.h"
#include "adapters/rewrites.h"
#include "schema/inference.h"

namespace onnxconvert::converter {
namespace {

using adapters::FindAttribute;
using adapters::HoldsDefault;
using adapters::Rewrites;
using schema::AttrSpec;
using schema::FormalFor;
using schema::FormalParam;
using schema::OpSchema;

// Version changes whose meaning changed (onnx docs/Changelog.md) and that
// have no rewrite adapter yet: never converted as a plain version bump.
// (Changes with a rewrite in the RewriteTable are looked up first.)
struct SemanticChange {
  const char* domain;
  const char* op;
  int version;  // the since_version that changed the meaning
  const char* what;
};

constexpr SemanticChange kSemanticChanges[] = {
    {"", "BatchNormalization", 7,
     "is_test was removed: whether it uses batch statistics now follows its outputs"},
    {"", "Dropout", 7, "is_test was removed: whether it drops now follows the run's mode"},
    {"", "Split", 2, "the split sizes moved from an optional input to an attribute"},
    {"", "Tile", 6, "tiles and axis (one axis) became repeats for every axis"},
    {"", "Upsample", 7, "height_scale and width_scale became scales for every axis"},
};

bool IsSemanticChange(const OpSchema& a, const OpSchema& b) {
  int newer = std::max(a.since_version, b.since_version);
  for (const SemanticChange& change : kSemanticChanges) {
    if (a.domain == change.domain && a.name == change.op && newer == change.version) return true;
  }
  return false;
}

const char* SemanticChangeText(const OpSchema& a, const OpSchema& b) {
  int newer = std::max(a.since_version, b.since_version);
  for (const SemanticChange& change : kSemanticChanges) {
    if (a.domain == change.domain && a.name == change.op && newer == change.version) {
      return change.what;
    }
  }
  return "";
}

// Why the values `node` passes (inputs or outputs) do not fit `to`'s formal
// parameters slot by slot, or "": each used slot must exist in both versions
// under the same name, be a type parameter in both or the same concrete type,
// and every slot `to` requires must be given. Optional slots may become
// required (or back) as long as this node fills them. Type parameters may be
// renamed; the node's actual types are checked against `to` separately.
std::string ParamDifference(const OpSchema& from, absl::Span<const FormalParam> from_params,
                            const OpSchema& to, absl::Span<const FormalParam> to_params,
                            const google::protobuf::RepeatedPtrField<std::string>& values,
                            const char* role) {
  // Checked against themselves, the parameters only say what must be given.
  bool same_params = from_params.data() == to_params.data();
  for (int i = 0; i < values.size(); ++i) {
    const FormalParam* a = FormalFor(from_params, i);
    const FormalParam* b = FormalFor(to_params, i);
    bool given = !values[i].empty();
    if (b == nullptr) {
      if (given) return absl::StrCat(role, " #", i, " has no place in ", to.Label());
      continue;
    }
    if (!given) {
      if (b->option == schema::ParamOption::kSingle) {
        return absl::StrCat(to.Label(), " requires ", role, " '", b->name, "'");
      }
      continue;
    }
    if (same_params) continue;
    if (a == nullptr || a->name != b->name) {
      return absl::StrCat(role, " #", i, " means something else in ", to.Label());
    }
    bool a_param = from.FindConstraint(a->type_str) != nullptr;
    bool b_param = to.FindConstraint(b->type_str) != nullptr;
    if (!a_param && !b_param && a->type_str != b->type_str) {
      return absl::StrCat(role, " '", b->name, "' changed its type in ", to.Label());
    }
    // A concrete type that became a type parameter (or back) is fine when
    // the node's actual types fit; CheckTypesAllowed decides that.
  }
  for (size_t i = values.size(); i < to_params.size(); ++i) {
    if (to_params[i].option == schema::ParamOption::kSingle) {
      return absl::StrCat(to.Label(), " requires ", role, " '", to_params[i].name, "'");
    }
  }
  return "";
}

bool NodeSets(const onnx::NodeProto& node, absl::string_view attribute) {
  return FindAttribute(node, attribute) != nullptr;
}

// Why `node`'s attributes mean something else (or nothing) in `to`, or ""
// when they carry over unchanged: an attribute the node sets must exist in
// `to` with the same type; one it leaves unset must have the same default;
// `to` must not require one the node lacks.
std::string AttributeDifference(const OpSchema& from, const OpSchema& to,
                                const onnx::NodeProto& node) {
  for (const AttrSpec& a : from.attributes) {
    const AttrSpec* b = to.FindAttr(a.name);
    bool set = NodeSets(node, a.name);
    if (b == nullptr) {
      if (const char* older = adapters::OlderBehaviour(from, to, a.name)) {
        return absl::StrCat("attribute '", a.name, "' is ", set ? "set" : "left at its default",
                            ", and ", to.Label(), " lacks it and does what '", older, "' does");
      }
      // Written with its default, an attribute means what its absence does.
      if (set && !HoldsDefault(a, *FindAttribute(node, a.name))) {
        return absl::StrCat("attribute '", a.name, "' does not exist in ", to.Label());
      }
      continue;
    }
    if (set && a.type != b->type) {
      return absl::StrCat("attribute '", a.name, "' changed its type in ", to.Label());
    }
    if (!set && !SameDefault(a, *b)) {
      return absl::StrCat("the default of attribute '", a.name, "' differs in ", to.Label());
    }
  }
  for (const AttrSpec& b : to.attributes) {
    if (b.required && !NodeSets(node, b.name)) {
      return absl::StrCat(to.Label(), " requires attribute '", b.name, "'");
    }
  }
  return "";
}

// The formal parameters of `from` and `to` slot by slot, inputs then
// outputs (a side is null where that version has no such slot).
std::vector<std::pair<const FormalParam*, const FormalParam*>> PairedSlots(const OpSchema& from,
                                                                           const OpSchema& to) {
  std::vector<std::pair<const FormalParam*, const FormalParam*>> slots;
  for (auto [a, b] : {std::pair{from.inputs, to.inputs}, std::pair{from.outputs, to.outputs}}) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      slots.emplace_back(FormalFor(a, i), FormalFor(b, i));
    }
  }
  return slots;
}

// Whether every type `from` allows in each slot is allowed by `to` in the
// same slot, and slots (inputs or outputs) that `to` binds to one type
// parameter were bound together by `from` too.
bool SameParamNames(absl::Span<const FormalParam> a, absl::Span<const FormalParam> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return false;
  }
  return true;
}

bool TypesWiden(const OpSchema& from, const OpSchema& to) {
  auto slots = PairedSlots(from, to);
  for (size_t i = 0; i < slots.size(); ++i) {
    auto [a, b] = slots[i];
    if (a == nullptr || b == nullptr) continue;  // the node-aware check decides
    absl::Span<const absl::string_view> wider = to.AllowedTypes(*b);
    for (absl::string_view type : from.AllowedTypes(*a)) {
      if (std::find(wider.begin(), wider.end(), type) == wider.end()) return false;
    }
    for (size_t j = 0; j < i; ++j) {
      auto [a2, b2] = slots[j];
      if (b2 != nullptr && b2->type_str == b->type_str && to.FindConstraint(b->type_str) &&
          (a2 == nullptr || a2->type_str != a->type_str)) {
        return false;
      }
    }
  }
  return true;
}
// Why `node` does not fit `to`, or "" (NodeFitsVersion).
std::string WhyNodeMisfits(const OpSchema& to, const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    const AttrSpec* spec = to.FindAttr(attribute.name());
    if (spec == nullptr) {
      return absl::StrCat("attribute '", attribute.name(), "' does not exist in ", to.Label());
    }
    if (attribute.has_type() && attribute.type() != spec->type) {
      return absl::StrCat("attribute '", attribute.name(), "' has another type in ", to.Label());
    }
  }
  for (const AttrSpec& spec : to.attributes) {
    if (spec.required && !NodeSets(node, spec.name)) {
      return absl::StrCat(to.Label(), " requires attribute '", spec.name, "'");
    }
  }
  if (node.input_size() < to.min_input || node.input_size() > to.max_input) {
    return absl::StrCat(to.Label(), " takes ", to.min_input, " to ", to.max_input,
                        " inputs, the node has ", node.input_size());
  }
  if (node.output_size() > to.max_output) {
    return absl::StrCat(to.Label(), " gives at most ", to.max_output, " outputs, the node has ",
                        node.output_size());
  }
  return ParamDifference(to, to.inputs, to, to.inputs, node.input(), "input");
}

// The plan for from -> to, made anew.
AdapterPlan MakePlan(const OpSchema& from, const OpSchema& to) {
  AdapterPlan plan{&from, &to,
                   Rewrites().Find(from.domain, from.name, from.since_version, to.since_version),
                   absl::StrCat(from.domain.empty() ? "" : absl::StrCat(from.domain, "."),
                                from.name, " ", from.since_version, "->", to.since_version)};
  plan.types_widen = TypesWiden(from, to);
  plan.validates_alike = schema::NodeValidationUnchanged(from, to);
  plan.rebinds_only = plan.rewrite == nullptr && plan.types_widen && plan.validates_alike &&
                      !IsSemanticChange(from, to) && SameParamNames(from.inputs, to.inputs) &&
                      SameParamNames(from.outputs, to.outputs);
  return plan;
}

}  // namespace

const AdapterPlan& PlanAdapter(const OpSchema& from, const OpSchema& to) {
  static absl::Mutex mutex(absl::kConstInit);
  static auto* plans =
      new absl::node_hash_map<std::pair<const OpSchema*, const OpSchema*>, AdapterPlan>();
  absl::MutexLock lock(&mutex);
  auto [it, inserted] = plans->try_emplace({&from, &to});
  if (inserted) it->second = MakePlan(from, to);
  return it->second;
}

AdapterEntry FindAdapter(const AdapterPlan& plan, const onnx::NodeProto& node) {
  const OpSchema& from = *plan.from;
  const OpSchema& to = *plan.to;
  const std::string& name = plan.name;
  if (plan.rewrite != nullptr) return *plan.rewrite;
  if (IsSemanticChange(from, to)) {
    return {AdapterEntry::kUnsupported, nullptr,
            absl::StrCat(name, " is not written as a bump: ", SemanticChangeText(from, to)), name};
  }
  std::string params = ParamDifference(from, from.inputs, to, to.inputs, node.input(), "input");
  if (params.empty()) {
    params = ParamDifference(from, from.outputs, to, to.outputs, node.output(), "output");
  }
  if (!params.empty()) {
    return {AdapterEntry::kUnsupported, nullptr,
            absl::StrCat("no adapter yet for ", name, ": ", params), name};
  }
  std::string attributes = AttributeDifference(from, to, node);
  if (!attributes.empty()) {
    return {AdapterEntry::kUnsupported, nullptr,
            absl::StrCat("no adapter yet for ", name, ": ", attributes), name};
  }
  return {AdapterEntry::kCompatible, nullptr, "", name};
}

absl::Status NodeFitsVersion(const OpSchema& to, const onnx::NodeProto& node) {
  std::string why = WhyNodeMisfits(to, node);
  return why.empty() ? absl::OkStatus() : absl::FailedPreconditionError(why);
}

}  // namespace onnxconvert::converter
