// The service over an in-process channel and over a loopback port: conversion,
// streaming, errors, rewrites, health, reflection and logs.

#include "service/service.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "rewrites/pass_manager.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "ir/model_io.h"
#include "proto/grpc_health.grpc.pb.h"
#include "service/client.h"
#include "service/grpc_status.h"
#include "service/server.h"
#include "service/testing/service_fixture.h"
#include "service/testing/test_models.h"
#include "tests/eventually.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

using ::onnxconvert::testing::Eventually;
using testing::SlowModelBytes;

TEST_F(ServiceTest, ConvertInProcessGivesTheLibrarysResult) {
  Start();
  converter::ConvertOptions options;
  options.target_opset = 17;
  absl::StatusOr<converter::ConversionResult> remote =
      InProcessClient()->Convert(testing::TinyCnnBytes(), "cnn.onnx", options);
  ASSERT_TRUE(remote.ok()) << remote.status();
  converter::ConversionResult local = LocalConvert(testing::TinyCnnBytes(), 17);
  EXPECT_EQ(remote->model.SerializeAsString(), local.model.SerializeAsString());
  EXPECT_EQ(remote->report.steps.size(), local.report.steps.size());
  EXPECT_EQ(remote->report.nodes_converted, local.report.nodes_converted);
}

TEST_F(ServiceTest, ConvertOverLoopbackPortAndStreamGiveTheSameBytes) {
  Start();
  converter::ConvertOptions options;
  options.target_opset = 21;
  auto unary = Client::Connect(Target())->Convert(testing::TinyCnnBytes(), "cnn", options);
  ClientOptions streaming;
  streaming.unary_limit_bytes = 0;
  streaming.chunk_bytes = 100;  // many chunks each way
  auto streamed =
      Client::Connect(Target(), streaming)->Convert(testing::TinyCnnBytes(), "cnn", options);
  ASSERT_TRUE(unary.ok()) << unary.status();
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(unary->model.SerializeAsString(), streamed->model.SerializeAsString());
  EXPECT_EQ(unary->model.SerializeAsString(),
            LocalConvert(testing::TinyCnnBytes(), 21).model.SerializeAsString());
  EXPECT_EQ(Count("ConvertStream", "OK"), 1);
  EXPECT_EQ(Count("Convert", "OK"), 1);
}

// The ConvertStream bytes the server has sent so far.
int64_t StreamBytesOut(Client& client) {
  absl::StatusOr<v1::MetricsResponse> metrics = client.Metrics();
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  for (const v1::MethodMetrics& method : metrics->methods()) {
    if (method.method() == "ConvertStream") return method.bytes_out();
  }
  return 0;
}

// `model` with a 1 MiB initializer "big" no node reads.
std::string WithWeights(onnx::ModelProto model) {
  onnx::TensorProto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name("big");
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(1 << 18);
  tensor->set_raw_data(std::string(1 << 20, '\x01'));
  return model.SerializeAsString();
}

// Client::ConvertFile streams a model file to the server and the converted
// model back to a file, a chunk at a time each way: the bytes a local
// conversion writes, whether the server converts the model whole (the tiny
// CNN) or window by window (a chain of 1,200 pairs, past the service's
// 1,024-node windows). Weights the windows pass through as they came are
// not sent back: the client copies them from its own file (the server sends
// less than the model). A model the server refuses leaves no file behind.
TEST_F(ServiceTest, ConvertFileStreamsFromAFileToAFile) {
  Start();
  struct Case {
    const char* name;
    std::string bytes;
    int64_t target;
    bool weights_kept;  // the server sends back less than the model
    const char* error;  // "" when it converts
  };
  const Case cases[] = {
      {"tiny_cnn", testing::TinyCnnBytes(), 21, false, ""},
      {"chain", testing::UnsqueezeChain(1200).SerializeAsString(), 13, false, ""},
      {"chain_with_weights", WithWeights(testing::UnsqueezeChain(1200)), 13, true, ""},
      {"malformed", "\x0a\xff", 13, false, "malformed.onnx"},
  };
  ClientOptions small_chunks;
  small_chunks.chunk_bytes = 1000;
  std::unique_ptr<Client> client = InProcessClient(small_chunks);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::path dir = onnxconvert::testing::FreshTestDir(c.name);
    std::string in = (dir / absl::StrCat(c.name, ".onnx")).string();
    std::string out = (dir / "out.onnx").string();
    onnxconvert::testing::WriteTestFile(in, c.bytes);
    converter::ConvertOptions options;
    options.target_opset = c.target;
    int64_t sent_before = StreamBytesOut(*client);
    absl::StatusOr<converter::ConversionReport> report =
        client->ConvertFile(in, in, out, options);
    if (*c.error != '\0') {
      ASSERT_FALSE(report.ok());
      EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument) << report.status();
      EXPECT_TRUE(absl::StrContains(report.status().message(), c.error)) << report.status();
      EXPECT_FALSE(std::filesystem::exists(out));
      EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
      continue;
    }
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->target_opset, c.target);
    EXPECT_GT(report->nodes_converted, 0);
    converter::ConversionResult local = LocalConvert(c.bytes, c.target);
    std::string expected = local.model.SerializeAsString();
    EXPECT_TRUE(onnxconvert::testing::ReadTestFile(out) == expected);
    EXPECT_EQ(report->nodes_converted, local.report.nodes_converted);
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
    int64_t sent = StreamBytesOut(*client) - sent_before;
    if (c.weights_kept) {
      EXPECT_LT(sent, static_cast<int64_t>(expected.size()) - (1 << 20));
    } else {
      EXPECT_GE(sent, static_cast<int64_t>(expected.size()));
    }
  }
}

TEST_F(ServiceTest, StreamCarriesExternalDataBothWays) {
  Start();
  std::filesystem::path dir = onnxconvert::testing::FreshTestDir("stream_external");
  std::string data = "0123456789abcdef";
  onnxconvert::testing::WriteTestFile(dir / "w.bin", data);
  v1::StreamHeader header;
  header.set_model_name("dir/tiny.onnx");
  header.mutable_options()->set_target_opset(14);
  ClientOptions small_chunks;
  small_chunks.chunk_bytes = 5;
  std::map<std::string, std::string> files;
  absl::StatusOr<v1::StreamResult> result = InProcessClient(small_chunks)->ConvertStreamed(
      header, testing::ExternalDataModel("w.bin").SerializeAsString(),
      {{"w.bin", (dir / "w.bin").string()}}, [&](const v1::Chunk& chunk) {
        files[chunk.name()] += chunk.data();
        return absl::OkStatus();
      });
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->files_size(), 2);
  EXPECT_EQ(result->files(1).name(), "tiny.onnx.data");
  EXPECT_EQ(files["tiny.onnx.data"].substr(0, 16), data);
  EXPECT_EQ(result->files(1).size(), static_cast<int64_t>(files["tiny.onnx.data"].size()));
  absl::StatusOr<onnx::ModelProto> model = ParseModel(files[""], "downloaded");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->opset_import(0).version(), 14);
  const onnx::TensorProto& weight = model->graph().initializer(0);
  EXPECT_EQ(weight.external_data(0).value(), "tiny.onnx.data");
  EXPECT_EQ(result->report().target_opset(), 14);
}

// Streams ExternalDataModel("w.bin") (as "dir/tiny.onnx", to opset 14),
// with `data` as w.bin, asking for client_keeps_identical_data or not: the
// result and the chunks received, by file name.
std::pair<absl::StatusOr<v1::StreamResult>, std::map<std::string, std::string>> StreamWBin(
    Client& client, const std::filesystem::path& dir, const std::string& data, bool keep) {
  onnxconvert::testing::WriteTestFile(dir / "w.bin", data);
  v1::StreamHeader header;
  header.set_model_name("dir/tiny.onnx");
  header.mutable_options()->set_target_opset(14);
  header.set_client_keeps_identical_data(keep);
  std::map<std::string, std::string> chunks;
  absl::StatusOr<v1::StreamResult> result = client.ConvertStreamed(
      header, testing::ExternalDataModel("w.bin").SerializeAsString(),
      {{"w.bin", (dir / "w.bin").string()}}, [&](const v1::Chunk& chunk) {
        chunks[chunk.name()] += chunk.data();
        return absl::OkStatus();
      });
  return {std::move(result), std::move(chunks)};
}

TEST_F(ServiceTest, StreamSendsBackOnlyDataTheClientDoesNotKeep) {
  Start();
  const std::string tensor = "0123456789abcdef";
  struct Case {
    const char* what;
    std::string data;  // w.bin: the tensor, then anything else
    bool keep;         // client_keeps_identical_data
    const char* same_as_upload;
  };
  const Case cases[] = {
      // A client that does not ask (all before it) gets every file's bytes.
      {"not asked, data moved", tensor, false, ""},
      {"asked, data moved", tensor, true, "w.bin"},
      // Bytes past the tensor: the output's data file is written anew.
      {"asked, data rewritten", tensor + std::string(5000, 'x'), true, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto [result, chunks] = StreamWBin(*InProcessClient(ClientOptions{.chunk_bytes = 5}),
                                       onnxconvert::testing::FreshTestDir("stream_keep"),
                                       c.data, c.keep);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->files_size(), 2);
    EXPECT_EQ(result->files(0).same_as_upload(), "");
    EXPECT_EQ(result->files(1).name(), "tiny.onnx.data");
    EXPECT_EQ(result->files(1).same_as_upload(), c.same_as_upload);
    EXPECT_EQ(result->files(1).size(), static_cast<int64_t>(tensor.size()));
    EXPECT_EQ(chunks.count("tiny.onnx.data"), std::string(c.same_as_upload).empty() ? 1u : 0u);
    if (chunks.count("tiny.onnx.data") != 0) {
      EXPECT_EQ(chunks["tiny.onnx.data"], tensor);
    }
    absl::StatusOr<onnx::ModelProto> model = ParseModel(chunks[""], "downloaded");
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->opset_import(0).version(), 14);
    EXPECT_EQ(model->graph().initializer(0).external_data(0).value(), "tiny.onnx.data");
  }
}

TEST_F(ServiceTest, KeptDataIsTheFileOthersDownload) {
  Start();
  std::string tensor = "0123456789abcdef";
  std::filesystem::path dir = onnxconvert::testing::FreshTestDir("stream_keep_copy");
  auto [downloaded, old_chunks] = StreamWBin(*InProcessClient(), dir, tensor, false);
  auto [kept, new_chunks] = StreamWBin(*InProcessClient(), dir, tensor, true);
  ASSERT_TRUE(downloaded.ok()) << downloaded.status();
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_EQ(kept->files_size(), 2);
  ASSERT_EQ(kept->files(1).same_as_upload(), "w.bin");
  // The file the kept answer leaves to the client is the upload: what an
  // old client downloads.
  EXPECT_EQ(onnxconvert::testing::ReadTestFile((dir / "w.bin").string()),
            old_chunks["tiny.onnx.data"]);
  EXPECT_EQ(new_chunks[""], old_chunks[""]);
  EXPECT_EQ(new_chunks.size(), 1u);
}

TEST_F(ServiceTest, StreamRefusesLocationsThatClimbOut) {
  Start();
  v1::StreamHeader header;
  header.mutable_options()->set_target_opset(14);
  grpc::Status status = StreamWithChunkNamed(*Stub(), header, "../w.bin");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "../w.bin")) << status.error_message();
}

// Over a loopback port, where the client's limit on trailing metadata
// (8 KiB) applies: the error must fit in it.
TEST_F(ServiceTest, StreamChunkWithAHugeNameIsInvalidArgumentWithAShortMessage) {
  Start();
  auto stub = v1::OnnxConvert::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  v1::StreamHeader header;
  header.mutable_options()->set_target_opset(14);
  grpc::Status status = StreamWithChunkNamed(*stub, header, std::string(5000, 'n'));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message().substr(0, 300);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "nnnn\xE2\x80\xA6 (5000 bytes)"))
      << status.error_message().substr(0, 300);
  EXPECT_LT(status.error_message().size(), 400u) << status.error_message().substr(0, 300);
}

// What a call throws fails that call only; the server keeps serving.
TEST_F(ServiceTest, ExceptionsFailOnlyTheirCallNamingTheRequest) {
  ServiceOptions options;
  options.testing_crash_hooks = true;
  Start(options);
  struct Case {
    const char* hook;
    grpc::StatusCode code;
    const char* message;
  };
  for (const Case& thrown :
       {Case{"bad_alloc", grpc::StatusCode::RESOURCE_EXHAUSTED,
             "request job-1: out of memory (std::bad_alloc)"},
        Case{"throw", grpc::StatusCode::INTERNAL,
             "request job-1: unexpected error (crash hook 'throw')"}}) {
    grpc::ClientContext context;
    context.AddMetadata("x-request-id", "job-1");
    context.AddMetadata(kCrashHookMetadata, thrown.hook);
    v1::ConvertResponse response;
    grpc::Status status =
        Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &response);
    EXPECT_EQ(status.error_code(), thrown.code) << thrown.hook;
    EXPECT_EQ(status.error_message(), thrown.message);
    v1::CheckResponse checked;
    grpc::ClientContext check_context;
    check_context.AddMetadata(kCrashHookMetadata, thrown.hook);
    v1::ModelRequest request;
    request.set_model(testing::TinyCnnBytes());
    EXPECT_EQ(Stub()->Check(&check_context, request, &checked).error_code(), thrown.code);
  }
  v1::ConvertResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &response).ok());
  EXPECT_EQ(response.report().target_opset(), 17);
  EXPECT_TRUE(Eventually([&] { return RunningWorkers() == 0; }));
}

TEST_F(ServiceTest, MalformedModelIsInvalidArgumentNamingIt) {
  Start();
  v1::ConvertResponse response;
  grpc::ClientContext context;
  grpc::Status status =
      Stub()->Convert(&context, Request("\x0a\xff\x01garbage", 13, "broken.onnx"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "broken.onnx: not a valid ONNX model"))
      << status.error_message();
}

TEST_F(ServiceTest, InexpressibleModelIsFailedPreconditionWithTheErrorAttached) {
  Start();
  v1::ConvertRequest request = Request(testing::GeluModel().SerializeAsString(), 19);
  request.mutable_options()->set_expand_functions(false);
  v1::ConvertResponse response;
  grpc::ClientContext context;
  grpc::Status status = Stub()->Convert(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  std::optional<v1::ConversionError> error = ConversionErrorOf(status);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->op_version(), "Gelu-20");
  EXPECT_EQ(error->to_opset(), 19);
}

TEST_F(ServiceTest, CheckAndInspectGiveTheLibrarysStructs) {
  Start();
  std::unique_ptr<Client> client = Client::Connect(Target());
  absl::StatusOr<onnx::ModelProto> model = ParseModel(testing::TinyCnnBytes(), "cnn");
  ASSERT_TRUE(model.ok());
  absl::StatusOr<ModelSummary> summary = client->Inspect(testing::TinyCnnBytes(), "cnn");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(SummaryToText(*summary), SummaryToText(SummarizeModel(*model)));
  model->mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  absl::StatusOr<schema::CheckReport> report =
      client->Check(model->SerializeAsString(), "cnn");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->status(), schema::CheckModel(*model).status());
  EXPECT_GT(report->error_count(), 0);
}

// Rewrite gives what `onnx-convert optimize` gives, and names a bad pass.
TEST_F(ServiceTest, RewriteOptimizesAsTheLibraryDoes) {
  Start();
  v1::RewriteRequest request;
  request.set_model(testing::TinyCnnBytes());
  request.set_model_name("cnn");
  v1::RewriteResponse response;
  grpc::ClientContext context;
  grpc::Status status = Stub()->Rewrite(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  absl::StatusOr<onnx::ModelProto> model = ParseModel(testing::TinyCnnBytes(), "cnn");
  ASSERT_TRUE(model.ok());
  absl::StatusOr<rewrites::RewriteReport> expected =
      rewrites::Optimize(*model, rewrites::RewriteOptions{});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(response.model(), model->SerializeAsString());
  EXPECT_EQ(response.report_text(), expected->ToText());
  EXPECT_EQ(response.report().nodes_after(), expected->nodes_after);

  request.mutable_options()->add_passes("no-such-pass");
  grpc::ClientContext bad_context;
  status = Stub()->Rewrite(&bad_context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "cnn: unknown pass 'no-such-pass'"))
      << status.error_message();

  absl::StatusOr<v1::CapabilitiesResponse> caps = InProcessClient()->Capabilities();
  ASSERT_TRUE(caps.ok()) << caps.status();
  ASSERT_GT(caps->passes_size(), 0);
  EXPECT_EQ(caps->passes(0).name(), rewrites::Passes()[0].name);
}

// RewriteStream rewrites an uploaded model as Rewrite does, the report in
// the stream's result.
TEST_F(ServiceTest, RewriteStreamGivesWhatRewriteGives) {
  Start();
  grpc::ClientContext context;
  auto stream = Stub()->RewriteStream(&context);
  v1::ConvertStreamRequest message;
  message.mutable_header()->set_model_name("cnn.onnx");
  message.mutable_header()->mutable_rewrite()->set_profile("exact");
  ASSERT_TRUE(stream->Write(message));
  message.mutable_chunk()->set_data(testing::TinyCnnBytes());
  ASSERT_TRUE(stream->Write(message));
  stream->WritesDone();
  v1::ConvertStreamResponse response;
  v1::StreamResult result;
  std::string model;
  while (stream->Read(&response)) {
    if (response.has_result()) result = response.result();
    if (response.has_chunk()) model += response.chunk().data();
  }
  grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  v1::RewriteRequest request;
  request.set_model(testing::TinyCnnBytes());
  request.set_model_name("cnn.onnx");
  v1::RewriteResponse unary;
  grpc::ClientContext unary_context;
  ASSERT_TRUE(Stub()->Rewrite(&unary_context, request, &unary).ok());
  EXPECT_EQ(model, unary.model());
  // Alike but for the calls' ids.
  EXPECT_FALSE(result.rewrite_report().request_id().empty());
  result.mutable_rewrite_report()->clear_request_id();
  unary.mutable_report()->clear_request_id();
  EXPECT_EQ(result.rewrite_report().SerializeAsString(), unary.report().SerializeAsString());
  EXPECT_EQ(result.report_text(), unary.report_text());
  EXPECT_EQ(Count("RewriteStream", "OK"), 1);
}

TEST_F(ServiceTest, UnreachableServerErrorNamesIt) {
  std::unique_ptr<Client> client = Client::Connect("127.0.0.1:1");
  absl::StatusOr<ModelSummary> summary = client->Inspect(testing::TinyCnnBytes(), "cnn");
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StartsWith(summary.status().message(), "server 127.0.0.1:1: UNAVAILABLE"))
      << summary.status();
}

TEST(ServerTest, OneThreadIsRefusedAtStart) {
  ServerOptions options;
  options.port = 0;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(options);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(server.status().message(), "--threads 1")) << server.status();
}

TEST_F(ServiceTest, CapabilitiesReportTheLimits) {
  ServiceOptions options;
  options.max_model_bytes = 12345;
  Start(options);
  absl::StatusOr<v1::CapabilitiesResponse> caps = InProcessClient()->Capabilities();
  ASSERT_TRUE(caps.ok()) << caps.status();
  EXPECT_EQ(caps->max_model_bytes(), 12345);
  EXPECT_EQ(caps->max_message_bytes(), int64_t{64} << 20);
  EXPECT_GT(caps->adapters_size(), 100);
}

TEST_F(ServiceTest, HealthIsServingForTheServerAndTheService) {
  Start();
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  for (const char* service : {"", "onnxconvert.v1.OnnxConvert"}) {
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(health->Check(&context, request, &response).ok()) << service;
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

TEST_F(ServiceTest, ReflectionListsTheService) {
  Start();
  auto channel = server_->InProcessChannel();
  grpc::internal::RpcMethod method(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), method, &context));
  // ServerReflectionRequest{list_services: "*"}: field 7, length 1.
  std::string request = "\x3a\x01*";
  grpc::Slice slice(request);
  grpc::ByteBuffer buffer(&slice, 1);
  ASSERT_TRUE(stream->Write(buffer));
  stream->WritesDone();
  grpc::ByteBuffer answer;
  ASSERT_TRUE(stream->Read(&answer));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(answer.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& piece : slices) {
    bytes.append(reinterpret_cast<const char*>(piece.begin()), piece.size());
  }
  EXPECT_TRUE(absl::StrContains(bytes, "onnxconvert.v1.OnnxConvert"));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServiceTest, OneLogLinePerCallWithIdSizesOpsetsAndStatus) {
  Start();
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", "job-42");
  v1::ConvertResponse response;
  ASSERT_TRUE(Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &response).ok());
  EXPECT_EQ(context.GetServerTrailingMetadata().find("x-request-id")->second, "job-42");
  std::string line;
  std::getline(log_, line);
  EXPECT_TRUE(absl::StartsWith(line, "onnx-convert-server: id=job-42 method=Convert in=1563 out="))
      << line;
  EXPECT_TRUE(absl::StrContains(line, " opset=11->17 ms=")) << line;
  EXPECT_TRUE(absl::EndsWith(line, " status=OK")) << line;
  grpc::ClientContext bad_context;
  Stub()->Convert(&bad_context, Request("junk", 13), &response);
  grpc::string_ref sent_id = bad_context.GetServerTrailingMetadata().find("x-request-id")->second;
  std::string id(sent_id.data(), sent_id.size());
  std::getline(log_, line);
  EXPECT_TRUE(absl::StrContains(line, absl::StrCat("id=", id, " "))) << line;
  EXPECT_TRUE(absl::StrContains(line, "status=INVALID_ARGUMENT error=\"model.onnx: ")) << line;
}

// The id of a call: the client's x-request-id, else 16 random hex digits;
// sent back in the trailing metadata, written in the report
// and appended to error messages.
TEST_F(ServiceTest, RequestIdsGoBackInMetadataReportsAndErrors) {
  Start();
  struct Case {
    const char* sent;  // "": none
    bool valid_model;
  };
  std::set<std::string> generated;
  for (const Case& c : {Case{"job-7", true}, Case{"", true}, Case{"job-8", false},
                        Case{"", false}, Case{"bad id!", true}}) {
    grpc::ClientContext context;
    if (*c.sent != '\0') context.AddMetadata("x-request-id", c.sent);
    v1::ConvertResponse response;
    grpc::Status status = Stub()->Convert(
        &context, Request(c.valid_model ? testing::TinyCnnBytes() : "junk", 17), &response);
    // In the trailers only (headers before a refusal would keep gRPC from
    // retrying it).
    EXPECT_EQ(context.GetServerInitialMetadata().count("x-request-id"), 0u) << c.sent;
    auto trailing = context.GetServerTrailingMetadata().find("x-request-id");
    ASSERT_NE(trailing, context.GetServerTrailingMetadata().end()) << c.sent;
    std::string id(trailing->second.data(), trailing->second.size());
    if (std::string(c.sent) == "job-7" || std::string(c.sent) == "job-8") {
      EXPECT_EQ(id, c.sent);
    } else {
      EXPECT_EQ(id.size(), 16u) << id;
      EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
      generated.insert(id);
    }
    if (c.valid_model) {
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.report().request_id(), id);
    } else {
      EXPECT_TRUE(absl::EndsWith(status.error_message(), absl::StrCat(" [request ", id, "]")))
          << status.error_message();
    }
    std::string line;
    std::getline(log_, line);
    EXPECT_TRUE(absl::StartsWith(line, absl::StrCat("onnx-convert-server: id=", id, " ")))
        << line;
  }
  EXPECT_EQ(generated.size(), 3u);
  // The rewrite report too.
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", "job-9");
  v1::RewriteRequest rewrite;
  rewrite.set_model(testing::TinyCnnBytes());
  v1::RewriteResponse rewritten;
  ASSERT_TRUE(Stub()->Rewrite(&context, rewrite, &rewritten).ok());
  EXPECT_EQ(rewritten.report().request_id(), "job-9");
}

// --log_format=json: one JSON object per call, with the call's figures.
TEST_F(ServiceTest, JsonLogLinePerCall) {
  ServiceOptions options;
  options.log_json = true;
  Start(options);
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", "job-j");
  v1::ConvertResponse response;
  ASSERT_TRUE(Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &response).ok());
  grpc::ClientContext bad_context;
  bad_context.AddMetadata("x-request-id", "job-k");
  Stub()->Convert(&bad_context, Request("junk", 13), &response);
  std::vector<google::protobuf::Struct> lines;
  for (std::string line; std::getline(log_, line);) {
    google::protobuf::Struct parsed;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &parsed).ok()) << line;
    lines.push_back(parsed);
  }
  ASSERT_EQ(lines.size(), 2u);
  const auto& ok = lines[0].fields();
  EXPECT_EQ(ok.at("id").string_value(), "job-j");
  EXPECT_EQ(ok.at("method").string_value(), "Convert");
  EXPECT_EQ(ok.at("code").string_value(), "OK");
  EXPECT_EQ(ok.at("bytes_in").number_value(), testing::TinyCnnBytes().size());
  EXPECT_EQ(ok.at("bytes_out").number_value(), response.model().size());
  EXPECT_EQ(ok.at("model").string_value(), "model.onnx");
  EXPECT_EQ(ok.at("from_opset").number_value(), 11);
  EXPECT_EQ(ok.at("to_opset").number_value(), 17);
  EXPECT_GE(ok.at("ms").number_value(), 0);
  EXPECT_EQ(ok.count("error"), 0u);
  const auto& bad = lines[1].fields();
  EXPECT_EQ(bad.at("code").string_value(), "INVALID_ARGUMENT");
  EXPECT_TRUE(absl::StrContains(bad.at("error").string_value(), "[request job-k]"))
      << bad.at("error").string_value();
}

}  // namespace
}  // namespace onnxconvert::service
