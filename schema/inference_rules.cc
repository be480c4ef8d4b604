#include "schema/inference_rules.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/op_key.h"

namespace onnxconvert::schema {
namespace {

// The rule of every operator version, resolved once from every family's
// table (a rule covers the versions in its range).
class RuleTable {
 public:
  RuleTable() {
    absl::flat_hash_map<std::string, std::vector<const InferenceRule*>> by_op;
    for (auto family : {ElementwiseRules(), ShapeRules(), TensorRules(), NnRules(), MiscRules()}) {
      for (const InferenceRule& rule : family) {
        by_op[OpKey(rule.domain, rule.op)].push_back(&rule);
      }
    }
    for (const OpSchema& schema : Registry::Get().All()) {
      auto it = by_op.find(OpKey(schema.domain, schema.name));
      if (it == by_op.end()) continue;
      for (const InferenceRule* rule : it->second) {
        if (schema.since_version >= rule->first_version &&
            schema.since_version <= rule->last_version) {
          rules_[&schema] = rule->fn;
          break;
        }
      }
    }
  }

  InferenceFn Find(const OpSchema& schema) const {
    auto it = rules_.find(&schema);
    return it == rules_.end() ? nullptr : it->second;
  }

 private:
  absl::flat_hash_map<const OpSchema*, InferenceFn> rules_;
};

}  // namespace

InferenceFn FindInferenceRule(const OpSchema& schema) {
  static const RuleTable* table = new RuleTable();
  return table->Find(schema);
}

}  // namespace onnxconvert::schema
