#include "service/report_proto.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::service {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Reflection;

// The report messages fill each kind twice: as an enum and as the word
// older clients read. An enum value stands for its name in lower case with
// '-' for '_' (Change::VERSION_BUMP for "version-bump").

// The value of `descriptor` standing for `word`, or 0 (unspecified) when
// it has none.
int EnumValueOfWord(const EnumDescriptor& descriptor, absl::string_view word) {
  std::string name = absl::AsciiStrToUpper(word);
  absl::c_replace(name, '-', '_');
  const EnumValueDescriptor* value = descriptor.FindValueByName(name);
  return value == nullptr ? 0 : value->number();
}

// The word a message gives by the enum `value` of `descriptor` and by
// `word`: the value's when it is set and known to this build, else `word`
// (servers older than the enum fill only the word).
std::string WordOfEnumValue(const EnumDescriptor& descriptor, int value,
                            absl::string_view word) {
  const EnumValueDescriptor* known = value == 0 ? nullptr : descriptor.FindValueByNumber(value);
  if (known == nullptr) return std::string(word);
  std::string name = absl::AsciiStrToLower(known->name());
  absl::c_replace(name, '_', '-');
  return name;
}

v1::NodeChange NodeChangeToProto(const converter::NodeChange& node) {
  v1::NodeChange proto;
  proto.set_graph(node.graph);
  proto.set_node(node.node);
  proto.set_op(node.op);
  proto.set_from_version(node.from_version);
  proto.set_to_version(node.to_version);
  proto.set_adapter(node.adapter);
  proto.set_refusal(node.refusal);
  proto.set_before(node.before_text);
  proto.set_after(node.after_text);
  for (absl::string_view name : node.alike) proto.add_alike(std::string(name));
  for (const adapters::Change& change : node.changes) {
    v1::Change* out = proto.add_changes();
    absl::string_view word = adapters::ChangeKindName(change.kind);
    out->set_kind(std::string(word));
    out->set_kind_enum(
        static_cast<v1::Change::Kind>(EnumValueOfWord(*v1::Change::Kind_descriptor(), word)));
    out->set_detail(change.detail);
  }
  return proto;
}

absl::StatusOr<converter::NodeChange> NodeChangeFromProto(const v1::NodeChange& proto) {
  converter::NodeChange node;
  node.graph = proto.graph();
  node.node = proto.node();
  node.op = proto.op();
  node.from_version = proto.from_version();
  node.to_version = proto.to_version();
  node.adapter = proto.adapter();
  node.refusal = proto.refusal();
  node.before_text = proto.before();
  node.after_text = proto.after();
  node.alike = converter::NameList(proto.alike().begin(), proto.alike().end());
  for (const v1::Change& change : proto.changes()) {
    std::string word =
        WordOfEnumValue(*v1::Change::Kind_descriptor(), change.kind_enum(), change.kind());
    std::optional<adapters::ChangeKind> kind = adapters::ParseChangeKind(word);
    if (!kind) {
      return absl::InvalidArgumentError(
          absl::StrCat("change kind '", word, "' is unknown to this client"));
    }
    node.changes.push_back({*kind, change.detail()});
  }
  return node;
}

// Every checker code by its stable name; CheckCode::kEmptyGraph is the last.
const absl::flat_hash_map<std::string, schema::CheckCode>& CheckCodesByName() {
  static const auto* codes = [] {
    auto* map = new absl::flat_hash_map<std::string, schema::CheckCode>();
    for (int i = 0; i <= static_cast<int>(schema::CheckCode::kEmptyGraph); ++i) {
      auto code = static_cast<schema::CheckCode>(i);
      map->emplace(schema::CheckCodeName(code), code);
    }
    return map;
  }();
  return *codes;
}

// The number and text fields of ModelSummary, each by the name of its
// field in v1::ModelSummary, copied both ways by reflection; the lists and
// maps are copied one by one.
constexpr std::pair<const char*, int64_t ModelSummary::*> kSummaryNumbers[] = {
    {"ir_version", &ModelSummary::ir_version},
    {"model_version", &ModelSummary::model_version},
    {"main_graph_nodes", &ModelSummary::main_graph_nodes},
    {"total_nodes", &ModelSummary::total_nodes},
    {"initializer_count", &ModelSummary::initializer_count},
    {"initializer_bytes", &ModelSummary::initializer_bytes},
    {"sparse_initializer_count", &ModelSummary::sparse_initializer_count},
    {"external_tensor_count", &ModelSummary::external_tensor_count},
    {"external_bytes", &ModelSummary::external_bytes},
    {"metadata_props", &ModelSummary::metadata_props},
    {"training_info", &ModelSummary::training_info},
};
constexpr std::pair<const char*, std::string ModelSummary::*> kSummaryTexts[] = {
    {"producer_name", &ModelSummary::producer_name},
    {"producer_version", &ModelSummary::producer_version},
    {"domain", &ModelSummary::domain},
    {"graph_name", &ModelSummary::graph_name},
};

// The field of v1::ModelSummary named `name` (one of the tables above).
const FieldDescriptor* SummaryField(const char* name) {
  const FieldDescriptor* field = v1::ModelSummary::descriptor()->FindFieldByName(name);
  if (field == nullptr) {  // a table above out of step with the proto
    std::fprintf(stderr, "v1::ModelSummary has no field %s\n", name);
    std::abort();
  }
  return field;
}

}  // namespace

converter::ConvertOptions OptionsFromProto(const v1::ConvertOptions& proto) {
  converter::ConvertOptions options;
  options.target_opset = proto.target_opset();
  if (proto.has_ir_version()) options.ir_version = proto.ir_version();
  options.dry_run = proto.dry_run();
  options.expand_functions = !proto.has_expand_functions() || proto.expand_functions();
  options.validate_each_step = !proto.has_validate() || proto.validate();
  if (proto.has_ml_target_opset()) options.ml_target_opset = proto.ml_target_opset();
  options.no_casts = proto.no_casts();
  options.full_validation = proto.full_validation();
  options.verify = proto.verify();
  return options;
}

v1::ConvertOptions OptionsToProto(const converter::ConvertOptions& options) {
  v1::ConvertOptions proto;
  proto.set_target_opset(options.target_opset);
  if (options.ir_version) proto.set_ir_version(*options.ir_version);
  proto.set_dry_run(options.dry_run);
  proto.set_expand_functions(options.expand_functions);
  proto.set_validate(options.validate_each_step);
  if (options.ml_target_opset) proto.set_ml_target_opset(*options.ml_target_opset);
  proto.set_no_casts(options.no_casts);
  proto.set_full_validation(options.full_validation);
  proto.set_verify(options.verify);
  return proto;
}

v1::ConversionReport ReportToProto(const converter::ConversionReport& report) {
  v1::ConversionReport proto;
  proto.set_source_opset(report.source_opset);
  proto.set_target_opset(report.target_opset);
  proto.set_source_ir_version(report.source_ir_version);
  proto.set_target_ir_version(report.target_ir_version);
  proto.set_nodes_converted(report.nodes_converted);
  proto.set_nodes_refused(report.nodes_refused);
  if (report.verification) {
    v1::VerificationReport* verification = proto.mutable_verification();
    verification->set_skipped(report.verification->skipped);
    verification->set_sets(report.verification->sets);
    verification->set_outputs(report.verification->outputs);
    verification->set_max_abs_error(report.verification->max_abs_error);
    verification->set_max_rel_error(report.verification->max_rel_error);
    verification->set_method(report.verification->method);
    verification->set_end_to_end_nodes(report.verification->end_to_end_nodes);
    verification->set_rounding_sensitivity(report.verification->rounding_sensitivity);
  }
  if (report.source_ml_opset) proto.set_source_ml_opset(*report.source_ml_opset);
  if (report.target_ml_opset) proto.set_target_ml_opset(*report.target_ml_opset);
  for (const converter::StepReport& step : report.steps) {
    v1::StepReport* out = proto.add_steps();
    out->set_domain(step.domain);
    out->set_from_opset(step.from_opset);
    out->set_to_opset(step.to_opset);
    absl::string_view validation = converter::StepValidationName(step.validation);
    out->set_validation(std::string(validation));
    out->set_validation_enum(static_cast<v1::StepReport::Validation>(
        EnumValueOfWord(*v1::StepReport::Validation_descriptor(), validation)));
    out->set_milliseconds(step.milliseconds);
    out->set_nodes_validated(step.nodes_validated);
    if (step.verification) {
      v1::StepVerification* verified = out->mutable_verification();
      verified->set_skipped(step.verification->skipped);
      verified->set_nodes(step.verification->nodes);
      verified->set_rebound_alike(step.verification->rebound_alike);
      verified->set_sets(step.verification->sets);
      verified->set_values(step.verification->values);
      verified->set_max_abs_error(step.verification->max_abs_error);
      verified->set_max_rel_error(step.verification->max_rel_error);
    }
    for (const converter::NodeChange& node : step.nodes) {
      *out->add_nodes() = NodeChangeToProto(node);
    }
    for (const converter::VersionBump& bump : step.bumps) {
      v1::VersionBump* b = out->add_bumps();
      b->set_graph(bump.graph);
      b->set_op(bump.op);
      b->set_from_version(bump.from_version);
      b->set_to_version(bump.to_version);
      b->set_nodes(bump.nodes);
    }
  }
  for (const auto& [op, count] : report.untouched_ops) {
    v1::OpCount* out = proto.add_untouched_ops();
    out->set_op(op);
    out->set_count(count);
  }
  return proto;
}

absl::StatusOr<converter::ConversionReport> ReportFromProto(const v1::ConversionReport& proto) {
  converter::ConversionReport report;
  report.source_opset = proto.source_opset();
  report.target_opset = proto.target_opset();
  report.source_ir_version = proto.source_ir_version();
  report.target_ir_version = proto.target_ir_version();
  report.nodes_converted = static_cast<int>(proto.nodes_converted());
  report.nodes_refused = static_cast<int>(proto.nodes_refused());
  if (proto.has_verification()) {
    converter::VerificationReport& verification = report.verification.emplace();
    verification.skipped = proto.verification().skipped();
    verification.sets = static_cast<int>(proto.verification().sets());
    verification.outputs = static_cast<int>(proto.verification().outputs());
    verification.max_abs_error = proto.verification().max_abs_error();
    verification.max_rel_error = proto.verification().max_rel_error();
    verification.method = proto.verification().method();
    verification.end_to_end_nodes = static_cast<int>(proto.verification().end_to_end_nodes());
    verification.rounding_sensitivity = proto.verification().rounding_sensitivity();
  }
  if (proto.has_source_ml_opset()) report.source_ml_opset = proto.source_ml_opset();
  if (proto.has_target_ml_opset()) report.target_ml_opset = proto.target_ml_opset();
  for (const v1::StepReport& step : proto.steps()) {
    converter::StepReport& out = report.steps.emplace_back();
    out.domain = step.domain();
    out.from_opset = step.from_opset();
    out.to_opset = step.to_opset();
    std::string validation = WordOfEnumValue(*v1::StepReport::Validation_descriptor(),
                                             step.validation_enum(), step.validation());
    std::optional<converter::StepValidation> parsed = converter::ParseStepValidation(validation);
    if (!parsed) {
      return absl::InvalidArgumentError(
          absl::StrCat("step validation '", validation, "' is unknown to this client"));
    }
    out.validation = *parsed;
    out.milliseconds = step.milliseconds();
    out.nodes_validated = static_cast<int>(step.nodes_validated());
    if (step.has_verification()) {
      const v1::StepVerification& verified = step.verification();
      converter::StepVerification& in = out.verification.emplace();
      in.skipped = verified.skipped();
      in.nodes = static_cast<int>(verified.nodes());
      in.rebound_alike = static_cast<int>(verified.rebound_alike());
      in.sets = static_cast<int>(verified.sets());
      in.values = static_cast<int>(verified.values());
      in.max_abs_error = verified.max_abs_error();
      in.max_rel_error = verified.max_rel_error();
    }
    for (const v1::NodeChange& node : step.nodes()) {
      absl::StatusOr<converter::NodeChange> change = NodeChangeFromProto(node);
      if (!change.ok()) return change.status();
      out.nodes.push_back(*std::move(change));
    }
    for (const v1::VersionBump& bump : step.bumps()) {
      out.bumps.push_back({bump.graph(), bump.op(), bump.from_version(), bump.to_version(),
                           static_cast<int>(bump.nodes())});
    }
  }
  for (const v1::OpCount& op : proto.untouched_ops()) {
    report.untouched_ops.emplace_back(op.op(), static_cast<int>(op.count()));
  }
  return report;
}

v1::CheckResponse CheckReportToProto(const schema::CheckReport& report) {
  v1::CheckResponse proto;
  int errors = report.error_count();
  proto.set_valid(errors == 0);
  proto.set_errors(errors);
  proto.set_warnings(static_cast<int>(report.issues.size()) - errors);
  proto.set_nodes_checked(report.nodes_checked);
  proto.set_graphs_checked(report.graphs_checked);
  proto.set_functions_checked(report.functions_checked);
  for (const schema::CheckIssue& issue : report.issues) {
    v1::CheckIssue* out = proto.add_issues();
    out->set_code(schema::CheckCodeName(issue.code));
    out->set_warning(issue.is_warning);
    out->set_path(issue.path);
    out->set_node(issue.node);
    out->set_message(issue.message);
  }
  return proto;
}

absl::StatusOr<schema::CheckReport> CheckReportFromProto(const v1::CheckResponse& proto) {
  schema::CheckReport report;
  report.nodes_checked = proto.nodes_checked();
  report.graphs_checked = proto.graphs_checked();
  report.functions_checked = proto.functions_checked();
  const auto& codes = CheckCodesByName();
  for (const v1::CheckIssue& issue : proto.issues()) {
    auto code = codes.find(issue.code());
    if (code == codes.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("check issue code '", issue.code(), "' is unknown to this client"));
    }
    report.issues.push_back(
        {code->second, issue.warning(), issue.path(), issue.node(), issue.message()});
  }
  return report;
}

v1::ModelSummary SummaryToProto(const ModelSummary& summary) {
  v1::ModelSummary proto;
  const Reflection& reflection = *proto.GetReflection();
  for (const auto& [field, member] : kSummaryNumbers) {
    reflection.SetInt64(&proto, SummaryField(field), summary.*member);
  }
  for (const auto& [field, member] : kSummaryTexts) {
    reflection.SetString(&proto, SummaryField(field), summary.*member);
  }
  for (const auto& [domain, version] : summary.opset_imports) {
    v1::OpsetImport* out = proto.add_opset_imports();
    out->set_domain(domain);
    out->set_version(version);
  }
  for (const auto& [key, count] : summary.op_counts) {
    v1::DomainOpCount* out = proto.add_op_counts();
    out->set_domain(key.first);
    out->set_op(key.second);
    out->set_count(count);
  }
  for (const std::string& file : summary.external_files) proto.add_external_files(file);
  for (const FunctionSummary& function : summary.functions) {
    v1::FunctionSummary* out = proto.add_functions();
    out->set_domain(function.domain);
    out->set_name(function.name);
    out->set_overload(function.overload);
    out->set_node_count(function.node_count);
  }
  for (const SubgraphSummary& subgraph : summary.subgraphs) {
    v1::SubgraphSummary* out = proto.add_subgraphs();
    out->set_path(subgraph.path);
    out->set_node_count(subgraph.node_count);
  }
  for (const ValueSummary& value : summary.inputs) {
    v1::ValueSummary* out = proto.add_inputs();
    out->set_name(value.name);
    out->set_type(value.type);
  }
  for (const ValueSummary& value : summary.outputs) {
    v1::ValueSummary* out = proto.add_outputs();
    out->set_name(value.name);
    out->set_type(value.type);
  }
  return proto;
}

ModelSummary SummaryFromProto(const v1::ModelSummary& proto) {
  ModelSummary summary;
  const Reflection& reflection = *proto.GetReflection();
  for (const auto& [field, member] : kSummaryNumbers) {
    summary.*member = reflection.GetInt64(proto, SummaryField(field));
  }
  for (const auto& [field, member] : kSummaryTexts) {
    summary.*member = reflection.GetString(proto, SummaryField(field));
  }
  for (const v1::OpsetImport& opset : proto.opset_imports()) {
    summary.opset_imports.emplace_back(opset.domain(), opset.version());
  }
  for (const v1::DomainOpCount& op : proto.op_counts()) {
    summary.op_counts[{op.domain(), op.op()}] = op.count();
  }
  summary.external_files.assign(proto.external_files().begin(), proto.external_files().end());
  for (const v1::FunctionSummary& function : proto.functions()) {
    summary.functions.push_back(
        {function.domain(), function.name(), function.overload(), function.node_count()});
  }
  for (const v1::SubgraphSummary& subgraph : proto.subgraphs()) {
    summary.subgraphs.push_back({subgraph.path(), subgraph.node_count()});
  }
  for (const v1::ValueSummary& value : proto.inputs()) {
    summary.inputs.push_back({value.name(), value.type()});
  }
  for (const v1::ValueSummary& value : proto.outputs()) {
    summary.outputs.push_back({value.name(), value.type()});
  }
  return summary;
}

rewrites::RewriteOptions RewriteOptionsFromProto(const v1::RewriteOptions& proto) {
  rewrites::RewriteOptions options;
  if (!proto.profile().empty()) options.profile = proto.profile();
  options.passes.assign(proto.passes().begin(), proto.passes().end());
  options.skip.assign(proto.skip().begin(), proto.skip().end());
  if (proto.has_max_fold_bytes()) options.max_fold_bytes = proto.max_fold_bytes();
  if (proto.has_max_rounds()) options.max_rounds = proto.max_rounds();
  for (const v1::RuleFile& file : proto.rules()) {
    options.rule_files.push_back({file.name(), file.text()});
  }
  options.explain.assign(proto.explain().begin(), proto.explain().end());
  return options;
}

v1::RewriteReport RewriteReportToProto(const rewrites::RewriteReport& report) {
  v1::RewriteReport proto;
  proto.set_profile(report.profile);
  proto.set_rounds(report.rounds);
  proto.set_converged(report.converged);
  proto.set_nodes_before(report.nodes_before);
  proto.set_nodes_after(report.nodes_after);
  proto.set_initializers_before(report.initializers_before);
  proto.set_initializers_after(report.initializers_after);
  proto.set_bytes_before(report.bytes_before);
  proto.set_bytes_after(report.bytes_after);
  for (const rewrites::PassStats& pass : report.passes) {
    v1::PassStats* out = proto.add_passes();
    out->set_pass(pass.pass);
    out->set_matches(pass.matches);
    out->set_nodes_removed(pass.nodes_removed);
    out->set_nodes_added(pass.nodes_added);
    out->set_initializers_removed(pass.initializers_removed);
    out->set_initializers_added(pass.initializers_added);
  }
  for (const rewrites::RuleExplanation& e : report.explain) {
    v1::RuleExplanation* out = proto.add_explain();
    out->set_rule(e.rule);
    out->set_graph(e.graph);
    out->set_node(e.node);
    out->set_op(e.op);
    out->set_index(e.index);
    out->set_matched(e.matched);
    out->set_reason(e.reason);
  }
  return proto;
}

}  // namespace onnxconvert::service
