// The report of a conversion as JSON and text.

#include "converter/converter.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/enum_words.h"
#include "base/indent.h"
#include "base/json_writer.h"

namespace onnxconvert::converter {

std::string StepName(absl::string_view domain, int64_t from, int64_t to) {
  return absl::StrCat(domain, domain.empty() ? "" : " ", "step ", from, " -> ", to);
}

namespace {

// Every step validation's report word, in StepValidation order.
constexpr absl::string_view kStepValidationNames[] = {"skipped", "ok", "incremental",
                                                      "unchanged"};
static_assert(std::size(kStepValidationNames) == static_cast<size_t>(kLastStepValidation) + 1,
              "a word for every StepValidation");

}  // namespace

absl::string_view StepValidationName(StepValidation validation) {
  return EnumWord(kStepValidationNames, validation);
}

std::optional<StepValidation> ParseStepValidation(absl::string_view word) {
  return ParseEnumWord<StepValidation>(kStepValidationNames, word);
}

int StepReport::NodeCount() const {
  int count = 0;
  for (const NodeChange& node : nodes) count += node.NodeCount();
  for (const VersionBump& bump : bumps) count += bump.nodes;
  return count;
}

std::string ConversionReport::ToJson() const {
  JsonWriter json;
  json.BeginObject();
  json.Key("source_opset").Int(source_opset).Key("target_opset").Int(target_opset);
  if (source_ml_opset) {
    json.Key("source_ml_opset").Int(*source_ml_opset).Key("target_ml_opset").Int(*target_ml_opset);
  }
  json.Key("source_ir_version").Int(source_ir_version);
  json.Key("target_ir_version").Int(target_ir_version);
  json.Key("nodes_converted").Int(nodes_converted);
  if (nodes_refused > 0) json.Key("nodes_refused").Int(nodes_refused);
  json.Key("steps").BeginArray();
  for (const StepReport& step : steps) {
    json.BeginObject();
    if (!step.domain.empty()) json.Key("domain").String(step.domain);
    json.Key("from").Int(step.from_opset).Key("to").Int(step.to_opset);
    json.Key("validation").String(StepValidationName(step.validation));
    json.Key("nodes_validated").Int(step.nodes_validated);
    json.Key("milliseconds").Double(step.milliseconds);
    if (step.verification) {
      const StepVerification& verified = *step.verification;
      json.Key("verification").BeginObject();
      if (!verified.skipped.empty()) json.Key("skipped").String(verified.skipped);
      json.Key("nodes").Int(verified.nodes).Key("sets").Int(verified.sets);
      json.Key("values").Int(verified.values);
      json.Key("rebound_alike").Int(verified.rebound_alike);
      json.Key("max_abs_error").Double(verified.max_abs_error);
      json.Key("max_rel_error").Double(verified.max_rel_error);
      json.EndObject();
    }
    json.Key("bumps").BeginArray();
    for (const VersionBump& bump : step.bumps) {
      json.BeginObject().Key("graph").String(bump.graph).Key("op").String(bump.op);
      json.Key("from_version").Int(bump.from_version).Key("to_version").Int(bump.to_version);
      json.Key("nodes").Int(bump.nodes).EndObject();
    }
    json.EndArray();
    json.Key("nodes").BeginArray();
    for (const NodeChange& node : step.nodes) {
      json.BeginObject().Key("graph").String(node.graph).Key("node").String(node.node);
      if (!node.alike.empty()) {
        json.Key("alike").BeginArray();
        for (absl::string_view name : node.alike) json.String(name);
        json.EndArray();
      }
      json.Key("op").String(node.op).Key("from_version").Int(node.from_version);
      json.Key("to_version").Int(node.to_version).Key("adapter").String(node.adapter);
      if (!node.refusal.empty()) json.Key("refusal").String(node.refusal);
      if (!node.before_text.empty()) {
        json.Key("before").String(node.before_text).Key("after").String(node.after_text);
      }
      json.Key("changes").BeginArray();
      for (const adapters::Change& change : node.changes) {
        json.BeginObject().Key("kind").String(adapters::ChangeKindName(change.kind));
        json.Key("detail").String(change.detail).EndObject();
      }
      json.EndArray().EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();
  json.Key("untouched_ops").BeginArray();
  for (const auto& [op, count] : untouched_ops) {
    json.BeginObject().Key("op").String(op).Key("count").Int(count).EndObject();
  }
  json.EndArray();
  if (verification) {
    json.Key("verification").BeginObject();
    if (!verification->skipped.empty()) {
      json.Key("skipped").String(verification->skipped);
    } else {
      json.Key("method").String(verification->method);
      json.Key("sets").Int(verification->sets).Key("outputs").Int(verification->outputs);
      json.Key("end_to_end_nodes").Int(verification->end_to_end_nodes);
      if (verification->rounding_sensitivity > 0) {
        json.Key("rounding_sensitivity").Double(verification->rounding_sensitivity);
      }
      json.Key("max_abs_error").Double(verification->max_abs_error);
      json.Key("max_rel_error").Double(verification->max_rel_error);
    }
    json.EndObject();
  }
  json.EndObject();
  return json.Finish();
}

namespace {

// " and 3 more alike (b, c, d)", naming at most a few.
std::string AlikeText(const NameList& alike) {
  if (alike.empty()) return "";
  constexpr size_t kNamed = 3;
  std::string names;
  for (size_t i = 0; i < alike.size() && i < kNamed; ++i) {
    absl::StrAppend(&names, i == 0 ? "" : ", ", alike[i].empty() ? absl::string_view("(unnamed)") : alike[i]);
  }
  return absl::StrCat(" and ", alike.size(), " more alike (", names,
                      alike.size() > kNamed ? ", ..." : "", ")");
}

}  // namespace

std::string VerificationText(const VerificationReport& verification) {
  if (!verification.skipped.empty()) {
    return absl::StrCat("not verified: ", verification.skipped);
  }
  std::string text = absl::StrFormat(
      "verified %s: %d input sets, %d outputs each (end to end over %d changed nodes), max abs "
      "error %g, max rel error %g",
      verification.method, verification.sets, verification.outputs,
      verification.end_to_end_nodes, verification.max_abs_error, verification.max_rel_error);
  if (verification.rounding_sensitivity > 0) {
    absl::StrAppendFormat(&text,
                          " (beyond the tolerance, but within twice the %g the original "
                          "moves when the values computed differently move by the "
                          "differences their steps showed)",
                          verification.rounding_sensitivity);
  }
  return text;
}

std::string StepVerificationText(const StepVerification& verified) {
  if (!verified.skipped.empty()) {
    return absl::StrCat("not verified (", verified.nodes, " nodes): ", verified.skipped);
  }
  std::string alike =
      verified.rebound_alike == 0
          ? ""
          : absl::StrCat(" (", verified.rebound_alike,
                         " rebound nodes compute as in the original: same kernel, version-blind)");
  if (verified.nodes == 0) return absl::StrCat("verified: no node to evaluate", alike);
  return absl::StrFormat(
      "verified %d nodes on %d input sets, %d values compared, max abs error %g, max rel "
      "error %g%s",
      verified.nodes, verified.sets, verified.values, verified.max_abs_error,
      verified.max_rel_error, alike);
}

std::string ConversionReport::ToText() const {
  std::string out = absl::StrFormat("opset %d -> %d, ir_version %d -> %d, %d nodes converted\n",
                                    source_opset, target_opset, source_ir_version,
                                    target_ir_version, nodes_converted);
  for (const StepReport& step : steps) {
    absl::StrAppendFormat(&out, "%s: %d nodes, validation %s%s (%.1f ms)\n",
                          StepName(step.domain, step.from_opset, step.to_opset),
                          step.NodeCount(), StepValidationName(step.validation),
                          step.validation == StepValidation::kIncremental
                              ? absl::StrCat(" (", step.nodes_validated, " nodes re-checked)")
                              : "",
                          step.milliseconds);
    if (step.verification) {
      absl::StrAppend(&out, "  ", StepVerificationText(*step.verification), "\n");
    }
    for (const VersionBump& bump : step.bumps) {
      absl::StrAppendFormat(&out, "  %s \xE2\x80\xBA %d %s: version %d -> %d, unchanged\n",
                            bump.graph, bump.nodes, bump.op, bump.from_version,
                            bump.to_version);
    }
    for (const NodeChange& node : step.nodes) {
      absl::StrAppendFormat(&out, "  %s \xE2\x80\xBA %s%s: %s\n", node.graph,
                            node.node.empty() ? "(unnamed " + node.op + ")" : node.node,
                            AlikeText(node.alike),
                            node.refusal.empty() ? node.adapter
                                                 : absl::StrCat("CANNOT CONVERT: ", node.refusal));
      absl::StrAppend(&out, Indented(node.before_text, "    - "),
                      Indented(node.after_text, "    + "));
    }
  }
  if (nodes_refused > 0) {
    absl::StrAppendFormat(&out, "%d nodes cannot be converted\n", nodes_refused);
  }
  for (const auto& [op, count] : untouched_ops) {
    absl::StrAppendFormat(&out, "left as is: %s (%d nodes)\n", op, count);
  }
  if (verification) absl::StrAppend(&out, VerificationText(*verification), "\n");
  return out;
}

}  // namespace onnxconvert::converter
