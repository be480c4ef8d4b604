#include "service/report_proto.h"

#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "service/testing/test_models.h"

namespace onnxconvert::service {
namespace {

onnx::ModelProto TinyCnn() {
  absl::StatusOr<onnx::ModelProto> model = ParseModel(testing::TinyCnnBytes(), "cnn");
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : onnx::ModelProto();
}

// `report` through its message and back.
converter::ConversionReport RoundTrip(const converter::ConversionReport& report) {
  absl::StatusOr<converter::ConversionReport> back = ReportFromProto(ReportToProto(report));
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *std::move(back) : converter::ConversionReport();
}

// A report with a step for every validation, and in the first a change of
// every kind.
converter::ConversionReport EveryKind() {
  converter::ConversionReport report;
  for (int i = 0; i <= static_cast<int>(converter::kLastStepValidation); ++i) {
    converter::StepReport& step = report.steps.emplace_back();
    step.from_opset = 10 + i;
    step.to_opset = 11 + i;
    step.validation = static_cast<converter::StepValidation>(i);
  }
  converter::NodeChange& node = report.steps[0].nodes.emplace_back();
  node.op = "Relu";
  for (int i = 0; i <= static_cast<int>(adapters::kLastChangeKind); ++i) {
    node.changes.push_back({static_cast<adapters::ChangeKind>(i), absl::StrCat("change ", i)});
  }
  return report;
}

TEST(ReportProtoTest, ConversionReportSurvivesTheRoundTrip) {
  converter::ConvertOptions options;
  options.target_opset = 21;
  absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(TinyCnn(), options);
  ASSERT_TRUE(result.ok()) << result.status();
  converter::ConversionReport& report = result->report;
  report.untouched_ops.emplace_back("com.example.Custom", 3);
  report.source_ml_opset = 2;
  report.target_ml_opset = 4;
  report.nodes_refused = 1;
  report.steps.back().domain = "ai.onnx.ml";
  converter::NodeChange& refused = report.steps.front().nodes.emplace_back();
  refused.graph = "main";
  refused.node = "c";
  refused.alike = {"c2", "c3"};
  refused.op = "Conv";
  refused.from_version = 1;
  refused.to_version = 11;
  refused.adapter = "Conv 1->11";
  refused.changes = {{adapters::ChangeKind::kNodeReplaced, "detail"}};
  refused.refusal = "cannot, for a reason";
  refused.before_text = "y = Conv(x, w)\n";
  refused.after_text = "t = Cast<to = 1>(x)\ny = Conv(t, w)\n";
  report.steps.front().nodes_validated = 7;
  ASSERT_FALSE(report.steps.front().bumps.empty());
  converter::ConversionReport back = RoundTrip(result->report);
  EXPECT_EQ(back.ToJson(), result->report.ToJson());
  EXPECT_EQ(back.ToText(), result->report.ToText());
}

TEST(ReportProtoTest, OptionsSurviveTheRoundTripAndDefaultToOn) {
  converter::ConvertOptions options;
  options.target_opset = 9;
  options.ir_version = 4;
  options.dry_run = true;
  options.expand_functions = false;
  options.validate_each_step = false;
  options.ml_target_opset = 3;
  options.no_casts = true;
  options.full_validation = true;
  options.verify = 4;
  converter::ConvertOptions back = OptionsFromProto(OptionsToProto(options));
  EXPECT_EQ(back.verify, 4);
  EXPECT_EQ(back.ml_target_opset, 3);
  EXPECT_TRUE(back.no_casts);
  EXPECT_TRUE(back.full_validation);
  EXPECT_EQ(back.target_opset, 9);
  EXPECT_EQ(back.ir_version, 4);
  EXPECT_TRUE(back.dry_run);
  EXPECT_FALSE(back.expand_functions);
  EXPECT_FALSE(back.validate_each_step);

  converter::ConvertOptions unset = OptionsFromProto(v1::ConvertOptions());
  EXPECT_TRUE(unset.expand_functions);
  EXPECT_TRUE(unset.validate_each_step);
  EXPECT_FALSE(unset.ir_version.has_value());
  EXPECT_FALSE(unset.ml_target_opset.has_value());
  EXPECT_FALSE(unset.no_casts);
  EXPECT_FALSE(unset.full_validation);
  EXPECT_EQ(unset.verify, 0);
}

TEST(ReportProtoTest, VerificationSurvivesTheRoundTrip) {
  converter::ConversionReport report;
  EXPECT_FALSE(RoundTrip(report).verification.has_value());
  converter::VerificationReport& verified = report.verification.emplace();
  verified.sets = 3;
  verified.outputs = 2;
  verified.max_abs_error = 1e-7;
  verified.max_rel_error = 2e-7;
  verified.end_to_end_nodes = 4;
  converter::StepReport& step = report.steps.emplace_back();
  step.from_opset = 13;
  step.to_opset = 12;
  step.verification = converter::StepVerification{"", 3, 2, 3, 1e-7, 2e-7};
  report.steps.emplace_back().verification =
      converter::StepVerification{.skipped = "node 'r' (RandomNormal) is not deterministic"};
  converter::ConversionReport back = RoundTrip(report);
  ASSERT_TRUE(back.verification.has_value());
  EXPECT_EQ(back.ToJson(), report.ToJson());
  report.verification = converter::VerificationReport{.skipped = "no kernel for Foo-1"};
  EXPECT_EQ(RoundTrip(report).ToText(), report.ToText());
}

// Each change kind and step validation goes as its word and as the enum
// value named after it, and comes back as it went.
TEST(ReportProtoTest, KindsGoAsWordAndEnum) {
  converter::ConversionReport report = EveryKind();
  v1::ConversionReport proto = ReportToProto(report);
  ASSERT_EQ(proto.steps_size(), static_cast<int>(report.steps.size()));
  for (int i = 0; i < proto.steps_size(); ++i) {
    const v1::StepReport& step = proto.steps(i);
    EXPECT_EQ(step.validation(), converter::StepValidationName(report.steps[i].validation));
    EXPECT_NE(step.validation_enum(), v1::StepReport::VALIDATION_UNSPECIFIED) << step.validation();
    EXPECT_EQ(absl::AsciiStrToLower(v1::StepReport::Validation_Name(step.validation_enum())),
              step.validation());
  }
  const v1::NodeChange& node = proto.steps(0).nodes(0);
  ASSERT_EQ(node.changes_size(), static_cast<int>(adapters::kLastChangeKind) + 1);
  for (int i = 0; i < node.changes_size(); ++i) {
    const v1::Change& change = node.changes(i);
    EXPECT_EQ(change.kind(), adapters::ChangeKindName(static_cast<adapters::ChangeKind>(i)));
    EXPECT_NE(change.kind_enum(), v1::Change::KIND_UNSPECIFIED) << change.kind();
    std::string name = absl::AsciiStrToLower(v1::Change::Kind_Name(change.kind_enum()));
    absl::c_replace(name, '_', '-');
    EXPECT_EQ(name, change.kind());
  }
  EXPECT_EQ(RoundTrip(report).ToJson(), report.ToJson());
}

// A message with only the words (from a server older than the enums), or
// only the enums, reads as the whole message does.
TEST(ReportProtoTest, WordsOrEnumsAloneReadAlike) {
  converter::ConversionReport report = EveryKind();
  v1::ConversionReport words = ReportToProto(report);
  v1::ConversionReport enums = words;
  for (v1::StepReport& step : *words.mutable_steps()) {
    step.clear_validation_enum();
    for (v1::NodeChange& node : *step.mutable_nodes()) {
      for (v1::Change& change : *node.mutable_changes()) change.clear_kind_enum();
    }
  }
  for (v1::StepReport& step : *enums.mutable_steps()) {
    step.clear_validation();
    for (v1::NodeChange& node : *step.mutable_nodes()) {
      for (v1::Change& change : *node.mutable_changes()) change.clear_kind();
    }
  }
  for (const v1::ConversionReport& proto : {words, enums}) {
    absl::StatusOr<converter::ConversionReport> back = ReportFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->ToJson(), report.ToJson());
  }
}

// A change kind or step validation the client does not know, by word or
// by enum value, is an error naming it.
TEST(ReportProtoTest, UnknownKindIsAnErrorNamingIt) {
  struct Case {
    std::string kind;
    int kind_enum;
    std::string validation;
    int validation_enum;
    std::string named;
  };
  const Case cases[] = {
      {"brand-new-kind", 0, "ok", 0, "brand-new-kind"},
      {"brand-new-kind", 999, "ok", 0, "brand-new-kind"},
      {"node-replaced", 0, "brand-new-validation", 0, "brand-new-validation"},
      {"node-replaced", 0, "brand-new-validation", 999, "brand-new-validation"},
  };
  for (const Case& c : cases) {
    v1::ConversionReport proto;
    v1::StepReport* step = proto.add_steps();
    step->set_validation(c.validation);
    step->set_validation_enum(static_cast<v1::StepReport::Validation>(c.validation_enum));
    v1::Change* change = step->add_nodes()->add_changes();
    change->set_kind(c.kind);
    change->set_kind_enum(static_cast<v1::Change::Kind>(c.kind_enum));
    absl::StatusOr<converter::ConversionReport> back = ReportFromProto(proto);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument) << c.named;
    EXPECT_NE(back.status().message().find(c.named), absl::string_view::npos) << back.status();
  }
}

TEST(ReportProtoTest, CheckReportSurvivesTheRoundTrip) {
  onnx::ModelProto model = TinyCnn();
  model.mutable_graph()->mutable_node(1)->set_input(0, "missing");
  model.mutable_graph()->mutable_node(2)->set_op_type("NoSuchOp");
  schema::CheckReport report = schema::CheckModel(model);
  ASSERT_GE(report.issues.size(), 2u);
  v1::CheckResponse proto = CheckReportToProto(report);
  EXPECT_FALSE(proto.valid());
  absl::StatusOr<schema::CheckReport> back = CheckReportFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->issues.size(), report.issues.size());
  for (size_t i = 0; i < report.issues.size(); ++i) {
    EXPECT_EQ(back->issues[i].ToString(), report.issues[i].ToString());
  }
  EXPECT_EQ(back->status(), report.status());
  EXPECT_EQ(back->nodes_checked, report.nodes_checked);
}

TEST(ReportProtoTest, UnknownCheckCodeIsAnErrorNamingIt) {
  v1::CheckResponse proto;
  proto.add_issues()->set_code("brand-new-code");
  absl::StatusOr<schema::CheckReport> back = CheckReportFromProto(proto);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(back.status().message().find("brand-new-code"), absl::string_view::npos);
}

TEST(ReportProtoTest, SummarySurvivesTheRoundTrip) {
  onnx::ModelProto model = TinyCnn();
  model.mutable_graph()->mutable_initializer(0)->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = model.mutable_graph()->mutable_initializer(0)->add_external_data();
  entry->set_key("location");
  entry->set_value("w.bin");
  ModelSummary summary = SummarizeModel(model);
  ModelSummary back = SummaryFromProto(SummaryToProto(summary));
  EXPECT_EQ(SummaryToText(back), SummaryToText(summary));
  EXPECT_EQ(SummaryToJson(back), SummaryToJson(summary));
}

// The structs mirrored in onnx_convert_service.proto, by size: when one
// gains a field, this fails. Mirror the field in the proto and in
// report_proto.cc (so that --server runs print it too), then update here.
TEST(ReportProtoTest, MirroredStructsHaveNotGrown) {
  // Not mirrored: should_stop (the server sets it), cross_check (a test
  // switch) and verify_inputs (a path on the caller's machine).
  EXPECT_EQ(sizeof(converter::ConvertOptions), 120u);
  EXPECT_EQ(sizeof(converter::ConversionReport), 232u);
  EXPECT_EQ(sizeof(converter::VerificationReport), 104u);
  EXPECT_EQ(sizeof(converter::StepReport), 192u);
  EXPECT_EQ(sizeof(converter::StepVerification), 72u);
  EXPECT_EQ(sizeof(converter::VersionBump), 80u);
  EXPECT_EQ(sizeof(converter::NodeChange), 312u);  // alike: a NameList
  EXPECT_EQ(sizeof(adapters::Change), 40u);
  EXPECT_EQ(sizeof(schema::CheckIssue), 104u);
  EXPECT_EQ(sizeof(schema::CheckReport), 40u);
  EXPECT_EQ(sizeof(ModelSummary), 408u);
  EXPECT_EQ(sizeof(FunctionSummary), 104u);
  EXPECT_EQ(sizeof(SubgraphSummary), 40u);
  EXPECT_EQ(sizeof(ValueSummary), 64u);
}

}  // namespace
}  // namespace onnxconvert::service
