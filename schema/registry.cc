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

absl::Span<const absl::string_view> OpSchema::AllowedTypes(const FormalParam& formal) const {
  const TypeConstraint* constraint = FindConstraint(formal.type_str);
  return constraint != nullptr ? constraint->allowed_types
                               : absl::Span<const absl::string_view>(&formal.type_str, 1);
}

const FormalParam* FormalFor(absl::Span<const FormalParam> formals, size_t slot) {
  if (formals.empty()) return nullptr;
  if (slot < formals.size()) return &formals[slot];
  return formals.back().option == ParamOption::kVariadic ? &formals.back() : nullptr;
}

bool SameDefault(const AttrSpec& a, const AttrSpec& b) {
  if (a.has_default != b.has_default) return false;
  if (!a.has_default) return true;
  const AttrDefault& x = a.default_value;
  const AttrDefault& y = b.default_value;
  return x.i == y.i && (x.f == y.f || (x.f != x.f && y.f != y.f)) && x.s == y.s &&
         std::equal(x.ints.begin(), x.ints.end(), y.ints.begin(), y.ints.end()) &&
         std::equal(x.strings.begin(), x.strings.end(), y.strings.begin(), y.strings.end());
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

Registry::Registry() : schemas_(GeneratedSchemas()) {
  for (const OpSchema& schema : schemas_) {
    DomainEntry& domain = domains_[std::string(schema.domain)];
    OpEntry& op = domain.ops[std::string(schema.name)];
    op.schemas.push_back(&schema);
    op.versions.push_back(schema.since_version);
    domain.changed_at[schema.since_version].push_back(&schema);
    domain.max_opset = std::max<int64_t>(domain.max_opset, schema.since_version);
  }
  // The newest opset of each domain is the spec's, even where no op changed.
  for (auto [domain, opset] : {std::pair<const char*, int64_t>{"", 27}, {"ai.onnx.ml", 5},
                               {"ai.onnx.preview.training", 1}, {"ai.onnx.preview", 1}}) {
    DomainEntry& entry = domains_[domain];
    entry.max_opset = std::max(entry.max_opset, opset);
  }
}

const Registry& Registry::Get() {
  static const Registry* registry = new Registry();
  return *registry;
}

const Registry::OpEntry* Registry::FindOp(absl::string_view domain,
                                          absl::string_view op) const {
  auto d = domains_.find(CanonicalDomain(domain));
  if (d == domains_.end()) return nullptr;
  auto o = d->second.ops.find(op);
  return o == d->second.ops.end() ? nullptr : &o->second;
}

const OpSchema* Registry::Lookup(absl::string_view domain, absl::string_view op,
                                 int64_t opset) const {
  const OpEntry* entry = FindOp(domain, op);
  if (entry == nullptr) return nullptr;
  const OpSchema* found = nullptr;
  for (const OpSchema* schema : entry->schemas) {
    if (schema->since_version > opset) break;
    found = schema;
  }
  return found;
}

const OpSchema* Registry::Exact(absl::string_view domain, absl::string_view op,
                                int since_version) const {
  const OpEntry* entry = FindOp(domain, op);
  if (entry == nullptr) return nullptr;
  for (const OpSchema* schema : entry->schemas) {
    if (schema->since_version == since_version) return schema;
  }
  return nullptr;
}

absl::Span<const int> Registry::VersionsOf(absl::string_view domain,
                                           absl::string_view op) const {
  const OpEntry* entry = FindOp(domain, op);
  if (entry == nullptr) return {};
  return entry->versions;
}

absl::Span<const OpSchema* const> Registry::ChangedAt(absl::string_view domain,
                                                      int64_t opset) const {
  auto d = domains_.find(CanonicalDomain(domain));
  if (d == domains_.end()) return {};
  auto it = d->second.changed_at.find(opset);
  if (it == d->second.changed_at.end()) return {};
  return it->second;
}

int64_t Registry::MaxOpset(absl::string_view domain) const {
  auto d = domains_.find(CanonicalDomain(domain));
  return d == domains_.end() ? 0 : d->second.max_opset;
}

std::optional<onnx::AttributeProto> DefaultAttribute(const AttrSpec& spec,
                                                     absl::string_view name) {
  if (!spec.has_default) return std::nullopt;
  onnx::AttributeProto attribute;
  attribute.set_name(std::string(name));
  attribute.set_type(spec.type);
  const AttrDefault& value = spec.default_value;
  switch (spec.type) {
    case onnx::AttributeProto::INT: attribute.set_i(value.i); break;
    case onnx::AttributeProto::FLOAT: attribute.set_f(value.f); break;
    case onnx::AttributeProto::STRING: attribute.set_s(std::string(value.s)); break;
    case onnx::AttributeProto::INTS:
      for (int64_t v : value.ints) attribute.add_ints(v);
      break;
    case onnx::AttributeProto::STRINGS:
      for (absl::string_view v : value.strings) attribute.add_strings(std::string(v));
      break;
    default: return std::nullopt;
  }
  return attribute;
}

}  // namespace onnxconvert::schema
