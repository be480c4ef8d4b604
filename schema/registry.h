#ifndef ONNX_CONVERT_SCHEMA_REGISTRY_H_
#define ONNX_CONVERT_SCHEMA_REGISTRY_H_

// The operator registry: every operator version of the ONNX spec (inputs,
// outputs, attributes, type constraints, function bodies), generated from
// the spec by schema/gen_registry.py and looked up by domain, op and opset.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/op_key.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::schema {

// Whether a formal input or output is required, optional or variadic.
enum class ParamOption : uint8_t { kSingle, kOptional, kVariadic };

// Whether gradients flow through a formal parameter.
enum class Differentiation : uint8_t { kUnknown, kDifferentiable, kNonDifferentiable };

// A formal input or output of an operator version.
struct FormalParam {
  absl::string_view name;
  absl::string_view type_str;  // a type parameter ("T") or a type ("tensor(int64)")
  ParamOption option;
  bool is_homogeneous;
  int min_arity;
  Differentiation differentiation;
};

// The default of an attribute, typed as the attribute is.
struct AttrDefault {
  int64_t i;
  float f;
  absl::string_view s;
  absl::Span<const int64_t> ints;
  absl::Span<const absl::string_view> strings;
};

// An attribute of an operator version.
struct AttrSpec {
  absl::string_view name;
  onnx::AttributeProto::AttributeType type;
  bool required;
  bool has_default;
  AttrDefault default_value;
};

// A type parameter and the types it may take ("tensor(float)", ...).
struct TypeConstraint {
  absl::string_view type_param;
  absl::Span<const absl::string_view> allowed_types;
};

// A function body the spec gives for an operator version, in ONNX text.
struct FunctionBody {
  int opset;
  absl::string_view text;
};

// The formal parameter that actual slot `slot` of a node binds to: the
// slot's own, or the last one when that is variadic; null past the end.
const FormalParam* FormalFor(absl::Span<const FormalParam> formals, size_t slot);

// Whether two specs of an attribute agree on its default (both have none,
// or equal ones; NaN equals NaN).
bool SameDefault(const AttrSpec& a, const AttrSpec& b);

// The attribute `name` holding the default `spec` gives it, or nullopt
// without a default (or of a type defaults do not take).
std::optional<onnx::AttributeProto> DefaultAttribute(const AttrSpec& spec, absl::string_view name);

// One version of one operator, as ONNX 1.22 defines it.
struct OpSchema {
  absl::string_view domain;  // "" for ai.onnx
  absl::string_view name;
  int since_version;
  bool deprecated;
  int min_input;
  int max_input;
  int min_output;
  int max_output;
  absl::Span<const FormalParam> inputs;
  absl::Span<const FormalParam> outputs;
  absl::Span<const AttrSpec> attributes;
  absl::Span<const TypeConstraint> type_constraints;
  bool has_type_and_shape_inference;
  bool has_function;
  absl::Span<const FunctionBody> function_bodies;
  absl::Span<const int> context_dependent_function_opsets;

  // The attribute `name`, or null.
  const AttrSpec* FindAttr(absl::string_view name) const;
  // The constraint on type parameter `param`, or null.
  const TypeConstraint* FindConstraint(absl::string_view param) const;
  // The types `formal` (one of this version's parameters) may take: its
  // constraint's, or its own concrete type ("tensor(int64)").
  absl::Span<const absl::string_view> AllowedTypes(const FormalParam& formal) const;
  // The static function body for a model at `opset` (the one with the
  // largest opset <= `opset`), or null.
  const FunctionBody* FunctionBodyFor(int64_t opset) const;
  // "Add-14" (or "ai.onnx.ml.LabelEncoder-2").
  std::string Label() const;
};

// Every operator version of ONNX 1.22 (ai.onnx 1-27, ai.onnx.ml 1-5,
// ai.onnx.preview.training, ai.onnx.preview), built once from the table that
// schema/gen_registry.py generates, immutable and safe to share across
// threads. Lookups are O(1) hash lookups plus a search over an op's few
// versions.
class Registry {
 public:
  // The process-wide registry.
  static const Registry& Get();

  // The version of (domain, op) active at `opset` of its domain: the one
  // with the largest since_version <= opset. Null if the op does not exist
  // at that opset. "" and "ai.onnx" are one domain.
  const OpSchema* Lookup(absl::string_view domain, absl::string_view op, int64_t opset) const;
  // The version of (domain, op) introduced at exactly `since_version`.
  const OpSchema* Exact(absl::string_view domain, absl::string_view op,
                        int since_version) const;
  // The since_versions at which (domain, op) changed, ascending; empty for
  // an unknown op.
  absl::Span<const int> VersionsOf(absl::string_view domain, absl::string_view op) const;
  // The operator versions introduced at `opset` of `domain`.
  absl::Span<const OpSchema* const> ChangedAt(absl::string_view domain, int64_t opset) const;
  // The newest opset of `domain`, or 0 for an unknown domain.
  int64_t MaxOpset(absl::string_view domain) const;
  // True for the four domains the spec defines.
  bool KnowsDomain(absl::string_view domain) const { return MaxOpset(domain) > 0; }
  // Every schema, sorted by domain, name and since_version.
  absl::Span<const OpSchema> All() const { return schemas_; }

 private:
  Registry();

  // The versions of one operator.
  struct OpEntry {
    std::vector<const OpSchema*> schemas;  // ascending since_version
    std::vector<int> versions;
  };
  // Per domain: its ops, the schemas introduced at each opset, its newest
  // opset. Keyed by canonical domain; looked up without allocating.
  struct DomainEntry {
    absl::flat_hash_map<std::string, OpEntry> ops;
    absl::flat_hash_map<int64_t, std::vector<const OpSchema*>> changed_at;
    int64_t max_opset = 0;
  };
  const OpEntry* FindOp(absl::string_view domain, absl::string_view op) const;

  absl::Span<const OpSchema> schemas_;
  absl::flat_hash_map<std::string, DomainEntry> domains_;
};

// The schema table generated by schema/gen_registry.py.
absl::Span<const OpSchema> GeneratedSchemas();

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_REGISTRY_H_
