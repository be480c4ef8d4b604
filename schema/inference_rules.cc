#include "schema/inference_rules.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace onnxconvert::schema {
namespace {

// (domain, op) -> rules over version ranges, from every family's table.
class RuleTable {
 public:
  RuleTable() {
    for (auto family : {ElementwiseRules(), ShapeRules(), NnRules(), MiscRules()}) {
      for (const InferenceRule& rule : family) {
        rules_[absl::StrCat(rule.domain, "\x1f", rule.op)].push_back(&rule);
      }
    }
  }

  InferenceFn Find(const OpSchema& schema) const {
    auto it = rules_.find(absl::StrCat(schema.domain, "\x1f", schema.name));
    if (it == rules_.end()) return nullptr;
    for (const InferenceRule* rule : it->second) {
      if (schema.since_version >= rule->first_version &&
          schema.since_version <= rule->last_version) {
        return rule->fn;
      }
    }
    return nullptr;
  }

 private:
  absl::flat_hash_map<std::string, std::vector<const InferenceRule*>> rules_;
};

}  // namespace

InferenceFn FindInferenceRule(const OpSchema& schema) {
  static const RuleTable* table = new RuleTable();
  return table->Find(schema);
}

}  // namespace onnxconvert::schema
