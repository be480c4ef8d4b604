#include "service/model_work.h"

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/synthetic_models.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "ir/model_summary.h"
#include "schema/checker.h"
#include "service/stream_files.h"
#include "service/testing/output_chunks.h"
#include "service/testing/test_models.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

constexpr int64_t kNoLimit = int64_t{1} << 30;

converter::ConvertOptions Target(int64_t opset) {
  converter::ConvertOptions options;
  options.target_opset = opset;
  return options;
}

// The header of a stream uploading the model named `name`, to convert to
// opset `opset`.
v1::StreamHeader Header(const std::string& name, int64_t opset) {
  v1::StreamHeader header;
  header.set_model_name(name);
  header.mutable_options()->set_target_opset(opset);
  return header;
}

TEST(ConvertModelBytesTest, GivesTheLibrarysModelAndReport) {
  std::string bytes = testing::TinyCnnBytes();
  absl::StatusOr<v1::ConvertResponse> response =
      ConvertModelBytes(bytes, "cnn.onnx", Target(17), kNoLimit);
  ASSERT_TRUE(response.ok()) << response.status();
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "cnn");
  ASSERT_TRUE(model.ok());
  absl::StatusOr<converter::ConversionResult> local = converter::ConvertModel(*model, Target(17));
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(response->model(), local->model.SerializeAsString());
  EXPECT_EQ(response->report().source_opset(), 11);
  EXPECT_EQ(response->report().target_opset(), 17);
  EXPECT_EQ(response->report().steps_size(), 6);
  EXPECT_EQ(response->report().nodes_converted(), local->report.nodes_converted);
  EXPECT_NE(response->report_json().find("\"target_opset\": 17"), std::string::npos);
  EXPECT_EQ(response->report_text().substr(0, 20), "opset 11 -> 17, ir_v");
  EXPECT_GE(response->timings().total_ms(), response->timings().convert_ms());
}

// A large model converts window by window: the library's bytes and report.
TEST(ConvertModelBytesTest, LargeModelsConvertWindowByWindow) {
  std::string bytes = bench::MakeChainModel(30000).SerializeAsString();
  absl::StatusOr<v1::ConvertResponse> response =
      ConvertModelBytes(bytes, "chain.onnx", Target(21), kNoLimit);
  ASSERT_TRUE(response.ok()) << response.status();
  absl::StatusOr<converter::ConversionResult> local =
      converter::ConvertModel(bench::MakeChainModel(30000), Target(21));
  ASSERT_TRUE(local.ok());
  EXPECT_TRUE(response->model() == local->model.SerializeAsString());
  EXPECT_EQ(response->report().nodes_converted(), local->report.nodes_converted);
  EXPECT_EQ(response->report().steps_size(), 9);
  EXPECT_EQ(response->timings().parse_ms(), 0);  // never parsed whole
}

TEST(ConvertModelBytesTest, DryRunReturnsNoModel) {
  converter::ConvertOptions options = Target(21);
  options.dry_run = true;
  absl::StatusOr<v1::ConvertResponse> response =
      ConvertModelBytes(testing::TinyCnnBytes(), "cnn.onnx", options, kNoLimit);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(response->model().empty());
  EXPECT_EQ(response->report().steps_size(), 10);
}

TEST(ConvertModelBytesTest, MalformedBytesAreInvalidArgumentNamingTheModel) {
  absl::StatusOr<v1::ConvertResponse> response =
      ConvertModelBytes("\x0a\xff\xff", "bad.onnx", Target(13), kNoLimit);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(response.status().message().substr(0, 10), "bad.onnx: ");
}

TEST(ConvertModelBytesTest, OversizedModelIsResourceExhausted) {
  absl::StatusOr<v1::ConvertResponse> response =
      ConvertModelBytes(testing::TinyCnnBytes(), "cnn.onnx", Target(13), 100);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ConvertModelBytesTest, InexpressibleModelIsFailedPrecondition) {
  converter::ConvertOptions options = Target(19);
  options.expand_functions = false;
  absl::StatusOr<v1::ConvertResponse> response = ConvertModelBytes(
      testing::GeluModel().SerializeAsString(), "gelu.onnx", options, kNoLimit);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(response.status().message().find("Gelu"), absl::string_view::npos);
}

TEST(CheckModelBytesTest, InvalidModelIsAnAnswerNotAnError) {
  onnx::ModelProto model = testing::GeluModel();
  model.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  absl::StatusOr<v1::CheckResponse> response =
      CheckModelBytes(model.SerializeAsString(), "m.onnx", kNoLimit);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_FALSE(response->valid());
  EXPECT_GE(response->errors(), 1);
  EXPECT_EQ(response->issues(0).code(), "undefined-input");
}

TEST(InspectModelBytesTest, TextIsWhatInspectPrints) {
  std::string bytes = testing::TinyCnnBytes();
  absl::StatusOr<v1::InspectResponse> response = InspectModelBytes(bytes, "cnn", kNoLimit);
  ASSERT_TRUE(response.ok()) << response.status();
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "cnn");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(response->text(), SummaryToText(SummarizeModel(*model)));
  EXPECT_EQ(response->json(), SummaryToJson(SummarizeModel(*model)));
  EXPECT_EQ(response->summary().total_nodes(), 6);
}

// A workspace holding `model` and, unless empty, external data `data` at
// "weights.bin".
std::unique_ptr<StreamWorkspace> Uploaded(const onnx::ModelProto& model,
                                          const std::string& data, const std::string& dir) {
  auto workspace = StreamWorkspace::Create(dir, "m.onnx", {});
  EXPECT_TRUE(workspace.ok()) << workspace.status();
  EXPECT_TRUE((*workspace)->Append("", model.SerializeAsString()).ok());
  if (!data.empty()) {
    EXPECT_TRUE((*workspace)->Append("weights.bin", data).ok());
  }
  EXPECT_TRUE((*workspace)->FinishUpload().ok());
  return *std::move(workspace);
}

// A large uploaded model converts from its file, window by window, into the
// output directory, whether or not the client keeps external data: the
// library's bytes, never parsed whole nor held whole in memory.
TEST(ConvertUploadedModelTest, LargeModelsConvertWindowByWindow) {
  onnx::ModelProto model = bench::MakeChainModel(30000);
  absl::StatusOr<converter::ConversionResult> local = converter::ConvertModel(model, Target(13));
  ASSERT_TRUE(local.ok());
  std::string expected = local->model.SerializeAsString();
  for (v1::ExternalData mode : {v1::EXTERNAL_DATA_UPLOADED, v1::EXTERNAL_DATA_KEPT_BY_CLIENT}) {
    std::string dir =
        onnxconvert::testing::FreshTestDir(absl::StrCat("uploaded_windows_", mode)).string();
    auto workspace = Uploaded(model, "", dir);
    v1::StreamHeader header = Header("chain.onnx", 13);
    header.set_external_data(mode);
    absl::StatusOr<StreamOutput> output = ConvertUploadedModel(*workspace, header, kNoLimit);
    ASSERT_TRUE(output.ok()) << output.status();
    EXPECT_EQ(output->result.timings().parse_ms(), 0);  // never parsed whole
    EXPECT_EQ(output->result.report().nodes_converted(), local->report.nodes_converted);
    ASSERT_EQ(output->result.files_size(), 1);
    EXPECT_FALSE(output->model_in_memory);
    EXPECT_TRUE(output->model_bytes.empty());
    absl::StatusOr<std::vector<std::string>> chunks =
        testing::OutputChunks(*workspace, output->result.files(0).name(), 1 << 20);
    ASSERT_TRUE(chunks.ok()) << chunks.status();
    EXPECT_TRUE(absl::StrJoin(*chunks, "") == expected);
  }
}

TEST(ConvertUploadedModelTest, UploadedExternalDataComesBackInTheOutputsDataFile) {
  std::string dir = onnxconvert::testing::FreshTestDir("uploaded_ok").string();
  std::string data(16, '\x01');
  auto workspace = Uploaded(testing::ExternalDataModel("weights.bin"), data, dir);
  v1::StreamHeader header = Header("client/dir/m.onnx", 14);
  absl::StatusOr<StreamOutput> output = ConvertUploadedModel(*workspace, header, kNoLimit);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_FALSE(output->model_in_memory);
  ASSERT_EQ(output->result.files_size(), 2);
  EXPECT_EQ(output->result.files(0).name(), "");
  EXPECT_EQ(output->result.files(1).name(), "m.onnx.data");
  absl::StatusOr<std::vector<std::string>> copied =
      testing::OutputChunks(*workspace, "m.onnx.data", 5);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(absl::StrJoin(*copied, ""), data);
}

TEST(ConvertUploadedModelTest, MissingExternalFileIsInvalidArgumentNamingTheClientsModel) {
  std::string dir = onnxconvert::testing::FreshTestDir("uploaded_missing").string();
  auto workspace = Uploaded(testing::ExternalDataModel("weights.bin"), "", dir);
  v1::StreamHeader header = Header("client/m.onnx", 14);
  absl::StatusOr<StreamOutput> output = ConvertUploadedModel(*workspace, header, kNoLimit);
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument) << output.status();
  EXPECT_NE(output.status().message().find("weights.bin"), absl::string_view::npos);
  EXPECT_EQ(output.status().message().substr(0, 15), "client/m.onnx: ") << output.status();
  EXPECT_EQ(output.status().message().find(dir), absl::string_view::npos) << output.status();
}

TEST(ConvertUploadedModelTest, KeptByClientLeavesReferencesUncheckedAndReturnsTheModelOnly) {
  std::string dir = onnxconvert::testing::FreshTestDir("uploaded_kept").string();
  auto workspace = Uploaded(testing::ExternalDataModel("weights.bin"), "", dir);
  v1::StreamHeader header = Header("m.onnx", 14);
  header.set_external_data(v1::EXTERNAL_DATA_KEPT_BY_CLIENT);
  absl::StatusOr<StreamOutput> output = ConvertUploadedModel(*workspace, header, kNoLimit);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE(output->model_in_memory);
  ASSERT_EQ(output->result.files_size(), 1);
  absl::StatusOr<onnx::ModelProto> model = ParseModel(output->model_bytes, "out");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->graph().initializer(0).external_data(0).value(), "weights.bin");
  EXPECT_EQ(model->opset_import(0).version(), 14);
}

// RewriteOptions.explain: the report explains the rule at each node of its
// root op; a rule that does not exist is the caller's error.
TEST(RewriteModelBytesTest, ExplainsRules) {
  v1::RewriteOptions options;
  options.add_explain("identity");
  absl::StatusOr<v1::RewriteResponse> response =
      RewriteModelBytes(testing::TinyCnnBytes(), "cnn", options, int64_t{1} << 30);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_GT(response->report().explain_size(), 0);
  EXPECT_EQ(response->report().explain(0).rule(), "identity");
  EXPECT_FALSE(response->report().explain(0).reason().empty());
  EXPECT_TRUE(absl::StrContains(response->report_json(), "\"explain\": ["));
  options.add_explain("nope");
  absl::StatusOr<v1::RewriteResponse> bad =
      RewriteModelBytes(testing::TinyCnnBytes(), "cnn", options, int64_t{1} << 30);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "cnn: no rule 'nope' to explain"))
      << bad.status();
}

}  // namespace
}  // namespace onnxconvert::service
