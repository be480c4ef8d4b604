#include "schema/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace onnxconvert::schema {

const AttrSpec* OpSchema::FindAttr(absl::string_view attr_name) const {
  for (const AttrSpec& attr : attributes) {
    if (attr.name == attr_name) return &attr;
  }
  return nullptr;
}

const TypeConstraint* OpSchema::FindConstraint(absl::string_view param) const {
  for (const TypeConstraint& constraint : type_constraints) {
    if (constraint.type_param == param) return &constraint;
  }
  return nullptr;
}

const FunctionBody* OpSchema::FunctionBodyFor(int64_t opset) const {
  const FunctionBody* best = nullptr;
  for (const FunctionBody& body : function_bodies) {
    if (body.opset <= opset && (best == nullptr || body.opset > best->opset)) best = &body;
  }
  return best;
}

std::string OpSchema::Label() const {
  return domain.empty() ? absl::StrCat(name, "-", since_version)
                        : absl::StrCat(domain, ".", name, "-", since_version);
}

absl::string_view Registry::CanonicalDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? absl::string_view() : domain;
}

std::string Registry::Key(absl::string_view domain, absl::string_view op) {
  return absl::StrCat(CanonicalDomain(domain), "\x1f", op);
}

Registry::Registry() : schemas_(GeneratedSchemas()) {
  for (const OpSchema& schema : schemas_) {
    std::string key = Key(schema.domain, schema.name);
    by_op_[key].push_back(&schema);
    versions_[key].push_back(schema.since_version);
    changed_at_[absl::StrCat(schema.domain, "\x1f", schema.since_version)].push_back(&schema);
    int64_t& max_opset = max_opset_[std::string(schema.domain)];
    max_opset = std::max<int64_t>(max_opset, schema.since_version);
  }
  // The newest opset of each domain is the spec's, even where no op changed.
  for (auto [domain, opset] : {std::pair<const char*, int64_t>{"", 27}, {"ai.onnx.ml", 5},
                               {"ai.onnx.preview.training", 1}, {"ai.onnx.preview", 1}}) {
    int64_t& max_opset = max_opset_[domain];
    max_opset = std::max(max_opset, opset);
  }
}

const Registry& Registry::Get() {
  static const Registry* registry = new Registry();
  return *registry;
}

const OpSchema* Registry::Lookup(absl::string_view domain, absl::string_view op,
                                 int64_t opset) const {
  auto it = by_op_.find(Key(domain, op));
  if (it == by_op_.end()) return nullptr;
  const OpSchema* found = nullptr;
  for (const OpSchema* schema : it->second) {
    if (schema->since_version > opset) break;
    found = schema;
  }
  return found;
}

const OpSchema* Registry::Exact(absl::string_view domain, absl::string_view op,
                                int since_version) const {
  auto it = by_op_.find(Key(domain, op));
  if (it == by_op_.end()) return nullptr;
  for (const OpSchema* schema : it->second) {
    if (schema->since_version == since_version) return schema;
  }
  return nullptr;
}

absl::Span<const int> Registry::VersionsOf(absl::string_view domain,
                                           absl::string_view op) const {
  auto it = versions_.find(Key(domain, op));
  if (it == versions_.end()) return {};
  return it->second;
}

absl::Span<const OpSchema* const> Registry::ChangedAt(absl::string_view domain,
                                                      int64_t opset) const {
  auto it = changed_at_.find(absl::StrCat(CanonicalDomain(domain), "\x1f", opset));
  if (it == changed_at_.end()) return {};
  return it->second;
}

int64_t Registry::MaxOpset(absl::string_view domain) const {
  auto it = max_opset_.find(CanonicalDomain(domain));
  return it == max_opset_.end() ? 0 : it->second;
}

}  // namespace onnxconvert::schema
