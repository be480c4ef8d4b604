#include "service/model_work.h"

#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/arena.h"
#include "converter/windowed.h"
#include "ir/model_io.h"
#include "ir/model_sink.h"
#include "ir/model_summary.h"
#include "rewrites/pass_manager.h"
#include "rewrites/rules_explain.h"
#include "schema/checker.h"
#include "service/error_text.h"
#include "service/report_proto.h"

namespace onnxconvert::service {
namespace {

// Milliseconds since a start, lap by lap.
class Stopwatch {
 public:
  // Milliseconds since the previous lap (or construction).
  double Lap() {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }
  // Milliseconds since construction.
  double Total() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

// A model that cannot be read is the client's fault: InvalidArgument,
// whatever the loader said, except that a size limit stays
// ResourceExhausted.
absl::Status AsInvalidArgument(const absl::Status& status) {
  if (status.ok() || status.code() == absl::StatusCode::kResourceExhausted) return status;
  return absl::InvalidArgumentError(status.message());
}

// Parses a model for a call.
absl::StatusOr<onnx::ModelProto> ParseForCall(std::string_view bytes, const std::string& name,
                                              int64_t max_model_bytes) {
  LoadOptions load;
  load.max_model_bytes = max_model_bytes;
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, name, load);
  if (!model.ok()) return AsInvalidArgument(model.status());
  return model;
}

// Fills the forms of the report asked for.
template <typename Answer>
void SetReport(const converter::ConversionReport& report, ReportForms forms, Answer& answer) {
  *answer.mutable_report() = ReportToProto(report);
  if (forms == ReportForms::kMessageOnly) return;
  answer.set_report_json(report.ToJson());
  answer.set_report_text(report.ToText());
}

}  // namespace

converter::WindowOptions ServiceWindows() {
  converter::WindowOptions windows;
  windows.window_nodes = 512;
  windows.min_nodes = 1024;
  return windows;
}

absl::StatusOr<v1::ConvertResponse> ConvertModelBytes(std::string_view bytes,
                                                      const std::string& name,
                                                      const converter::ConvertOptions& options,
                                                      int64_t max_model_bytes,
                                                      ReportForms forms) {
  Stopwatch clock;
  v1::ConvertResponse response;
  v1::Timings& timings = *response.mutable_timings();
  if (!options.dry_run && static_cast<int64_t>(bytes.size()) <= max_model_bytes) {
    // A large model converts from its bytes, window by window.
    StringModelSink sink;
    OC_ASSIGN_OR_RETURN(std::optional<converter::ConversionReport> windowed,
                        converter::ConvertBytes(AsAbsl(bytes), options, sink,
                                                                    ServiceWindows()));
    if (windowed) {
      timings.set_convert_ms(clock.Lap());
      *response.mutable_model() = sink.TakeBytes();
      SetReport(*windowed, forms, response);
      timings.set_total_ms(clock.Total());
      return response;
    }
  }
  OC_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseForCall(bytes, name, max_model_bytes));
  timings.set_parse_ms(clock.Lap());
  OC_ASSIGN_OR_RETURN(converter::ConversionResult result,
                      converter::ConvertModel(model, options));
  timings.set_convert_ms(clock.Lap());
  if (!options.dry_run && !result.model.SerializeToString(response.mutable_model())) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": the converted model cannot be serialized (over 2 GiB?)"));
  }
  timings.set_serialize_ms(clock.Lap());
  SetReport(result.report, forms, response);
  timings.set_total_ms(clock.Total());
  return response;
}

absl::StatusOr<v1::CheckResponse> CheckModelBytes(std::string_view bytes,
                                                  const std::string& name,
                                                  int64_t max_model_bytes) {
  OC_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseForCall(bytes, name, max_model_bytes));
  return CheckReportToProto(schema::CheckModel(model));
}

absl::StatusOr<v1::InspectResponse> InspectModelBytes(std::string_view bytes,
                                                      const std::string& name,
                                                      int64_t max_model_bytes) {
  OC_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseForCall(bytes, name, max_model_bytes));
  ModelSummary summary = SummarizeModel(model);
  v1::InspectResponse response;
  *response.mutable_summary() = SummaryToProto(summary);
  response.set_text(SummaryToText(summary));
  response.set_json(SummaryToJson(summary));
  return response;
}

// The rewrite options `proto` gives, or InvalidArgument naming `name`.
absl::StatusOr<rewrites::RewriteOptions> CheckedRewriteOptions(const v1::RewriteOptions& proto,
                                                              const std::string& name) {
  rewrites::RewriteOptions rewrite = RewriteOptionsFromProto(proto);
  if (absl::Status selected = rewrites::SelectPasses(rewrite).status(); !selected.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", selected.message()));
  }
  if (absl::Status known = rewrites::RulesToExplain(rewrite).status(); !known.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", known.message()));
  }
  if (rewrite.max_rounds < 1 || rewrite.max_fold_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": max_rounds must be at least 1 and max_fold_bytes not negative"));
  }
  return rewrite;
}

// Rewrites `model` in place; errors begin with `name`.
absl::StatusOr<rewrites::RewriteReport> RewriteNamed(onnx::ModelProto& model,
                                                     const rewrites::RewriteOptions& options,
                                                     const std::string& name) {
  absl::StatusOr<rewrites::RewriteReport> report = rewrites::Optimize(model, options);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat(name, ": ", report.status().message()));
  }
  return report;
}

absl::StatusOr<v1::RewriteResponse> RewriteModelBytes(std::string_view bytes,
                                                      const std::string& name,
                                                      const v1::RewriteOptions& options,
                                                      int64_t max_model_bytes) {
  OC_ASSIGN_OR_RETURN(rewrites::RewriteOptions rewrite, CheckedRewriteOptions(options, name));
  // On an arena (see ModelArenaOptions).
  google::protobuf::Arena arena(ModelArenaOptions());
  onnx::ModelProto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  LoadOptions load;
  load.max_model_bytes = max_model_bytes;
  OC_RETURN_IF_ERROR(AsInvalidArgument(ParseModelInto(bytes, name, model, load)));
  OC_ASSIGN_OR_RETURN(rewrites::RewriteReport report, RewriteNamed(model, rewrite, name));
  v1::RewriteResponse response;
  if (!model.SerializeToString(response.mutable_model())) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": the rewritten model is too large to send in one message"));
  }
  *response.mutable_report() = RewriteReportToProto(report);
  response.set_report_json(report.ToJson());
  response.set_report_text(report.ToText());
  return response;
}

namespace {

// Sends `bytes` as the converted model, from memory.
void SendFromMemory(std::string bytes, StreamOutput& output) {
  output.model_bytes = std::move(bytes);
  output.model_in_memory = true;
  output.result.add_files()->set_size(static_cast<int64_t>(output.model_bytes.size()));
}

// Sends the files of the workspace's output directory.
absl::Status SendOutputFiles(const StreamWorkspace& workspace, StreamOutput& output) {
  OC_ASSIGN_OR_RETURN(auto files, workspace.OutputFiles());
  for (const auto& [file_name, size] : files) {
    v1::FileInfo* file = output.result.add_files();
    file->set_name(file_name);
    file->set_size(size);
  }
  return absl::OkStatus();
}

// Sends `model` (the `what` one: "converted", "rewritten") as a streamed
// call's output: from memory when the client keeps its external data,
// else saved in the workspace with its data file and sent from there.
absl::Status SendModel(const onnx::ModelProto& model, const StreamWorkspace& workspace,
                       const v1::StreamHeader& header, const std::string& name,
                       absl::string_view what, StreamOutput& output) {
  if (header.external_data() != v1::EXTERNAL_DATA_UPLOADED) {
    std::string bytes;
    if (!model.SerializeToString(&bytes)) {
      return absl::ResourceExhaustedError(
          absl::StrCat(name, ": the ", what, " model cannot be serialized (over 2 GiB?)"));
    }
    SendFromMemory(std::move(bytes), output);
    return absl::OkStatus();
  }
  SaveOptions save;
  save.source_base_dir = workspace.input_dir();
  save.external_data_threshold =
      header.has_external_data_threshold() ? header.external_data_threshold() : -1;
  // The work folder is scratch space: no fsync, and an uploaded data file
  // the output would copy byte for byte is moved to out/ instead.
  save.durable = false;
  save.move_identical_data = true;
  OC_RETURN_IF_ERROR(
      workspace.Relabel(SaveModel(model, workspace.output_model_path(), save), name));
  return SendOutputFiles(workspace, output);
}

// Converts the uploaded model from its file window by window into the
// output directory, sent from there: false when it is for the whole
// conversion to convert. The model is held neither parsed nor whole in
// memory (a model the windows take has no external data, so the output
// directory then holds the model alone, whatever the header's external
// data mode). With `copies_for_client`, the pieces of the output copied
// from the upload are listed for the client to write from its own copy.
absl::StatusOr<bool> ConvertUploadedInWindows(const StreamWorkspace& workspace,
                                              const converter::ConvertOptions& options,
                                              int64_t max_model_bytes, ReportForms forms,
                                              bool copies_for_client, StreamOutput& output) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(workspace.input_model_path());
  if (!file.ok() || static_cast<int64_t>(file->bytes().size()) > max_model_bytes) return false;
  FileModelSink disk(workspace.output_model_path(), /*durable=*/false, &*file);
  converter::WindowOptions windows = ServiceWindows();
  windows.release = [&](absl::string_view piece) { file->Release(piece); };
  OC_ASSIGN_OR_RETURN(std::optional<converter::ConversionReport> report,
                      converter::ConvertBytes(file->bytes(), options, disk, windows));
  if (!report) return false;
  SetReport(*report, forms, output.result);
  OC_RETURN_IF_ERROR(SendOutputFiles(workspace, output));
  if (copies_for_client) {
    v1::FileInfo& model = *output.result.mutable_files(0);
    for (const FileModelSink::CopiedPiece& piece : disk.copied()) {
      v1::UploadRange& range = *model.add_from_upload();
      range.set_offset(piece.offset);
      range.set_upload_offset(piece.source_offset);
      range.set_length(piece.length);
    }
  }
  return true;
}

// The model's name in messages: the header's, shortened, or "model".
std::string ModelNameOf(const v1::StreamHeader& header) {
  return header.model_name().empty() ? "model" : Abbreviate(header.model_name());
}

// The uploaded model, at most `max_model_bytes`, its external data checked
// when `header` says it was uploaded too; an error is InvalidArgument
// naming `name`.
absl::StatusOr<LoadedModel> LoadUploadedModel(const StreamWorkspace& workspace,
                                              const v1::StreamHeader& header,
                                              int64_t max_model_bytes, const std::string& name) {
  LoadOptions load;
  load.max_model_bytes = max_model_bytes;
  load.verify_external_data = header.external_data() == v1::EXTERNAL_DATA_UPLOADED;
  absl::StatusOr<LoadedModel> loaded = LoadModel(workspace.input_model_path(), load);
  if (!loaded.ok()) return AsInvalidArgument(workspace.Relabel(loaded.status(), name));
  return loaded;
}

}  // namespace

absl::StatusOr<StreamOutput> ConvertUploadedModel(const StreamWorkspace& workspace,
                                                  const v1::StreamHeader& header,
                                                  int64_t max_model_bytes,
                                                  const std::function<bool()>& should_stop) {
  Stopwatch clock;
  StreamOutput output;
  v1::Timings& timings = *output.result.mutable_timings();
  const std::string name = ModelNameOf(header);
  converter::ConvertOptions options = OptionsFromProto(header.options());
  if (should_stop) options.should_stop = should_stop;
  ReportForms forms =
      header.report_message_only() ? ReportForms::kMessageOnly : ReportForms::kAll;
  if (!options.dry_run && !header.has_external_data_threshold()) {
    // A large model converts from its file, window by window.
    absl::StatusOr<bool> windowed =
        ConvertUploadedInWindows(workspace, options, max_model_bytes, forms,
                                 header.client_copies_model_ranges(), output);
    if (!windowed.ok()) return workspace.Relabel(windowed.status(), name);
    if (*windowed) {
      timings.set_convert_ms(clock.Lap());
      timings.set_total_ms(clock.Total());
      return output;
    }
  }
  OC_ASSIGN_OR_RETURN(LoadedModel loaded,
                      LoadUploadedModel(workspace, header, max_model_bytes, name));
  timings.set_parse_ms(clock.Lap());
  OC_ASSIGN_OR_RETURN(converter::ConversionResult result,
                      converter::ConvertModel(loaded.model, options));
  timings.set_convert_ms(clock.Lap());
  SetReport(result.report, forms, output.result);
  if (options.dry_run) {
    timings.set_total_ms(clock.Total());
    return output;
  }
  OC_RETURN_IF_ERROR(SendModel(result.model, workspace, header, name, "converted", output));
  timings.set_serialize_ms(clock.Lap());
  timings.set_total_ms(clock.Total());
  return output;
}

absl::StatusOr<StreamOutput> RewriteUploadedModel(const StreamWorkspace& workspace,
                                                  const v1::StreamHeader& header,
                                                  int64_t max_model_bytes) {
  Stopwatch clock;
  StreamOutput output;
  v1::Timings& timings = *output.result.mutable_timings();
  const std::string name = ModelNameOf(header);
  OC_ASSIGN_OR_RETURN(rewrites::RewriteOptions options,
                      CheckedRewriteOptions(header.rewrite(), name));
  OC_ASSIGN_OR_RETURN(LoadedModel loaded,
                      LoadUploadedModel(workspace, header, max_model_bytes, name));
  timings.set_parse_ms(clock.Lap());
  OC_ASSIGN_OR_RETURN(rewrites::RewriteReport report, RewriteNamed(loaded.model, options, name));
  timings.set_convert_ms(clock.Lap());
  *output.result.mutable_rewrite_report() = RewriteReportToProto(report);
  if (!header.report_message_only()) {
    output.result.set_report_json(report.ToJson());
    output.result.set_report_text(report.ToText());
  }
  OC_RETURN_IF_ERROR(SendModel(loaded.model, workspace, header, name, "rewritten", output));
  timings.set_serialize_ms(clock.Lap());
  timings.set_total_ms(clock.Total());
  return output;
}

}  // namespace onnxconvert::service
