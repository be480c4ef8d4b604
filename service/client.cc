#include "service/client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "proto/rpc_status.pb.h"
#include "ir/model_io.h"
#include "ir/model_sink.h"
#include "service/admission.h"
#include "service/grpc_status.h"
#include "service/report_proto.h"

namespace onnxconvert::service {
namespace {

// Codes whose message is about the model, passed on as the server wrote it.
bool IsModelError(grpc::StatusCode code) {
  return code == grpc::StatusCode::INVALID_ARGUMENT ||
         code == grpc::StatusCode::FAILED_PRECONDITION || code == grpc::StatusCode::INTERNAL;
}

// The payload that marks an error as the infrastructure's.
constexpr char kInfrastructurePayload[] = "type.onnxconvert/infrastructure";

absl::Status Infrastructure(absl::Status status) {
  status.SetPayload(kInfrastructurePayload, absl::Cord("1"));
  return status;
}

// The retry policy's backoff: 0.1 s, 0.2 s, 0.4 s, ... (jittered), at most 2 s.
constexpr char kRetryBackoff[] =
    R"("initialBackoff": "0.1s", "maxBackoff": "2s", "backoffMultiplier": 2)";

// The longest wait a RetryInfo may ask for between two attempts.
constexpr absl::Duration kMaxRetryDelay = absl::Seconds(30);

constexpr char kRetryInfoType[] = "type.googleapis.com/google.rpc.RetryInfo";

// The retry_delay of a google.rpc.RetryInfo among the details of `status`
// (RetryInfo: field 1, a google.protobuf.Duration).
std::optional<absl::Duration> RetryInfoDelay(const grpc::Status& status) {
  google::rpc::Status details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) {
    return std::nullopt;
  }
  for (const google::protobuf::Any& any : details.details()) {
    if (any.type_url() != kRetryInfoType) continue;
    google::protobuf::io::CodedInputStream in(
        reinterpret_cast<const uint8_t*>(any.value().data()), static_cast<int>(any.value().size()));
    std::string field;
    uint32_t length = 0;
    google::protobuf::Duration delay;
    if (in.ReadTag() == ((1 << 3) | 2) && in.ReadVarint32(&length) &&
        in.ReadString(&field, static_cast<int>(length)) && delay.ParseFromString(field)) {
      return absl::Seconds(delay.seconds()) + absl::Nanoseconds(delay.nanos());
    }
  }
  return std::nullopt;
}

// Whether a call that ended with `status`, the server's headers received
// or not, is for the client to try again: gRPC's retry policy tried again
// whatever failed before the server's headers (a Trailers-Only answer, a
// connection refused or lost); a call whose headers arrived is committed.
bool ClientShouldRetry(const grpc::Status& status, const grpc::ClientContext& context) {
  bool refused = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                 status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  return refused && !context.GetServerInitialMetadata().empty();
}

// The wait before retry number `retry` (0 for the first) after `status`.
absl::Duration RetryDelay(const grpc::Status& status, int retry) {
  if (std::optional<absl::Duration> asked = RetryInfoDelay(status)) {
    return std::min(*asked, kMaxRetryDelay);
  }
  return std::min(absl::Milliseconds(100) * (1 << std::min(retry, 5)), absl::Seconds(2));
}

using Stream = Client::Stream;

// A file written a chunk at a time to "<path>.partial" and renamed to
// `path` by Commit once whole: nothing is left at `path` unless the file is
// complete (the partial file is removed if this is destroyed first). Ranges
// of it may be copied from another file instead of received.
class ChunkFile {
 public:
  explicit ChunkFile(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {}
  ~ChunkFile() {
    if (file_ != nullptr) {
      std::fclose(file_);
      std::remove(partial_.c_str());
    }
  }
  ChunkFile(const ChunkFile&) = delete;
  ChunkFile& operator=(const ChunkFile&) = delete;

  // The ranges of the file (in order, not overlapping) to copy from the
  // file open as `source` (of `source_size` bytes) where they fall: set
  // before the first Append. A range that does not fit is an error then.
  void CopyRanges(int source, int64_t source_size, std::vector<v1::UploadRange> ranges) {
    source_ = source;
    source_size_ = source_size;
    ranges_ = std::move(ranges);
  }
  // Appends `data` (and the ranges that fall before and within it); an
  // error names the file.
  absl::Status Append(std::string_view data) {
    OC_RETURN_IF_ERROR(Open());
    while (true) {
      OC_RETURN_IF_ERROR(CopyRangesHere());
      if (data.empty()) return absl::OkStatus();
      size_t take = data.size();
      if (next_range_ < ranges_.size()) {
        take = std::min<int64_t>(take, ranges_[next_range_].offset() - written_);
      }
      if (std::fwrite(data.data(), 1, take, file_) != take) return Error("write");
      written_ += static_cast<int64_t>(take);
      data.remove_prefix(take);
    }
  }
  // Copies the ranges left, syncs the file and renames it to its path; an
  // error names the file.
  absl::Status Commit() {
    OC_RETURN_IF_ERROR(Open());
    OC_RETURN_IF_ERROR(CopyRangesHere());
    if (next_range_ < ranges_.size()) return BadRange();
    bool written = std::fflush(file_) == 0 && ::fsync(fileno(file_)) == 0;
    written = std::fclose(file_) == 0 && written;
    file_ = nullptr;
    if (!written || std::rename(partial_.c_str(), path_.c_str()) != 0) {
      absl::Status error = Error(written ? "rename" : "write");
      std::remove(partial_.c_str());
      return error;
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Open() {
    if (file_ == nullptr && (file_ = std::fopen(partial_.c_str(), "wb")) == nullptr) {
      return Error("create");
    }
    return absl::OkStatus();
  }
  // Copies the ranges that start where the file ends (CopyBetweenFiles).
  absl::Status CopyRangesHere() {
    while (next_range_ < ranges_.size() && ranges_[next_range_].offset() <= written_) {
      const v1::UploadRange& range = ranges_[next_range_];
      if (range.offset() != written_ || range.length() < 0 || range.upload_offset() < 0 ||
          range.upload_offset() > source_size_ - range.length()) {
        return BadRange();
      }
      if (std::fflush(file_) != 0 ||
          !CopyBetweenFiles(source_, range.upload_offset(), fileno(file_),
                            static_cast<size_t>(range.length()))) {
        return Error("copy into");
      }
      written_ += range.length();
      ++next_range_;
    }
    return absl::OkStatus();
  }
  absl::Status BadRange() const {
    return Infrastructure(absl::DataLossError(absl::StrCat(
        "the server's ranges of the uploaded model do not fit '", path_, "'")));
  }
  absl::Status Error(absl::string_view what) const {
    return absl::UnavailableError(
        absl::StrCat("cannot ", what, " '", partial_, "': ", std::strerror(errno)));
  }

  std::string path_;
  std::string partial_;
  std::FILE* file_ = nullptr;
  int64_t written_ = 0;
  int source_ = -1;
  int64_t source_size_ = 0;
  std::vector<v1::UploadRange> ranges_;
  size_t next_range_ = 0;
};

// Writes `bytes` as chunks named `name`.
bool WriteChunks(Stream& stream, const std::string& name, std::string_view bytes,
                 int64_t chunk_bytes) {
  v1::ConvertStreamRequest message;
  message.mutable_chunk()->set_name(name);
  for (size_t at = 0; at < bytes.size(); at += chunk_bytes) {
    std::string_view piece = bytes.substr(at, chunk_bytes);
    message.mutable_chunk()->set_data(piece.data(), piece.size());
    if (!stream.Write(message)) return false;
  }
  return true;
}

// Writes the file at `path` as chunks named `location`, each read straight
// into the message; false when the stream broke (the call's status tells
// why).
absl::StatusOr<bool> WriteFileChunks(Stream& stream, const std::string& location,
                                     const std::string& path, int64_t chunk_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  v1::ConvertStreamRequest message;
  message.mutable_chunk()->set_name(location);
  std::string& data = *message.mutable_chunk()->mutable_data();
  absl::StatusOr<bool> open_stream = true;
  while (*open_stream) {
    data.resize(static_cast<size_t>(chunk_bytes));
    size_t got = 0;
    while (got < data.size()) {  // a full chunk unless the file ends
      ssize_t read_now = read(fd, data.data() + got, data.size() - got);
      if (read_now < 0 && errno == EINTR) continue;
      if (read_now < 0) open_stream = absl::DataLossError(absl::StrCat(path, ": read failed"));
      if (read_now <= 0) break;
      got += static_cast<size_t>(read_now);
    }
    if (!open_stream.ok() || got == 0) break;
    data.resize(got);
    open_stream = stream.Write(message);
  }
  close(fd);
  return open_stream;
}

// Declares the size of the model a unary call carries, by which the server
// admits or refuses it before reading it (see admission.h).
void DeclareModelBytes(grpc::ClientContext& context, const std::string& model) {
  context.AddMetadata(kModelBytesMetadata, std::to_string(model.size()));
}

}  // namespace

std::string ServiceConfigJson(const ClientOptions& options) {
  std::string config = absl::StrCat(R"({"loadBalancingConfig": [{")", options.lb_policy,
                                    R"(": {}}], "healthCheckConfig": {"serviceName": ""})");
  if (options.max_attempts > 1) {
    absl::StrAppend(&config, R"(, "methodConfig": [{"name": [{"service": ")",
                    v1::OnnxConvert::service_full_name(),
                    R"("}], "retryPolicy": {"maxAttempts": )", options.max_attempts, ", ",
                    kRetryBackoff,
                    R"(, "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}}])");
  }
  return config + "}";
}

std::shared_ptr<grpc::Channel> CreateChannel(const std::string& target,
                                             const ClientOptions& options) {
  grpc::ChannelArguments args;
  // The server's answers (a large model's report) may pass the message
  // limit that bounds what this client sends.
  args.SetMaxReceiveMessageSize(std::numeric_limits<int>::max());
  args.SetMaxSendMessageSize(static_cast<int>(options.max_message_bytes));
  // This config, not one a DNS TXT record might hold.
  args.SetServiceConfigJSON(ServiceConfigJson(options));
  args.SetInt(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, 1);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, options.max_attempts > 1 ? 1 : 0);
  // A unary call stays retryable up to the largest model it sends (gRPC
  // commits a call whose sent bytes pass this buffer, 256 KiB by default).
  args.SetInt(GRPC_ARG_PER_RPC_RETRY_BUFFER_SIZE,
              static_cast<int>(std::min<int64_t>(options.unary_limit_bytes + (1 << 20),
                                                 std::numeric_limits<int>::max())));
  if (options.own_connections) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Streamed chunks: frames and windows of MiBs (see bench/stream_bench.sh).
  args.SetInt(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, kStreamFrameBytes);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

bool IsInfrastructureError(const absl::Status& status) {
  return status.GetPayload(kInfrastructurePayload).has_value();
}

std::unique_ptr<Client> Client::Connect(const std::string& target,
                                        const ClientOptions& options) {
  return std::make_unique<Client>(CreateChannel(target, options), target, options);
}

Client::Client(std::shared_ptr<grpc::Channel> channel, std::string target,
               const ClientOptions& options)
    : target_(std::move(target)),
      options_(options),
      stub_(v1::OnnxConvert::NewStub(std::move(channel))) {}

void Client::Prepare(grpc::ClientContext& context) const {
  if (options_.deadline != absl::InfiniteDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.deadline));
  }
}

grpc::Status Client::CallWithRetries(
    absl::FunctionRef<grpc::Status(grpc::ClientContext&)> rpc) const {
  for (int attempt = 1;; ++attempt) {
    grpc::ClientContext context;
    Prepare(context);
    grpc::Status status = rpc(context);
    if (attempt >= options_.max_attempts || !ClientShouldRetry(status, context)) return status;
    absl::SleepFor(RetryDelay(status, attempt - 1));
  }
}

absl::Status Client::FromRpc(const grpc::Status& status) const {
  if (status.ok() || IsModelError(status.error_code())) return FromGrpcStatus(status);
  return Infrastructure(absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                                     absl::StrCat("server ", target_, ": ",
                                                  StatusCodeName(status.error_code()), ": ",
                                                  status.error_message())));
}

absl::Status Client::CallOnModel(
    const std::string& bytes, const std::string& name,
    absl::FunctionRef<grpc::Status(grpc::ClientContext&, const v1::ModelRequest&)> rpc) const {
  v1::ModelRequest request;
  request.set_model(bytes);
  request.set_model_name(name);
  return FromRpc(CallWithRetries([&](grpc::ClientContext& context) {
    DeclareModelBytes(context, bytes);
    return rpc(context, request);
  }));
}

absl::StatusOr<ModelSummary> Client::Inspect(const std::string& bytes,
                                             const std::string& name) {
  v1::InspectResponse response;
  OC_RETURN_IF_ERROR(CallOnModel(
      bytes, name, [&](grpc::ClientContext& context, const v1::ModelRequest& request) {
        return stub_->Inspect(&context, request, &response);
      }));
  return SummaryFromProto(response.summary());
}

absl::StatusOr<schema::CheckReport> Client::Check(const std::string& bytes,
                                                  const std::string& name) {
  v1::CheckResponse response;
  OC_RETURN_IF_ERROR(CallOnModel(
      bytes, name, [&](grpc::ClientContext& context, const v1::ModelRequest& request) {
        return stub_->Check(&context, request, &response);
      }));
  return CheckReportFromProto(response);
}

absl::StatusOr<v1::ConvertResponse> Client::ConvertUnary(
    const std::string& bytes, const std::string& name,
    const converter::ConvertOptions& options) {
  v1::ConvertRequest request;
  request.set_model(bytes);
  request.set_model_name(name);
  *request.mutable_options() = OptionsToProto(options);
  request.set_report_message_only(true);
  v1::ConvertResponse response;
  OC_RETURN_IF_ERROR(FromRpc(CallWithRetries([&](grpc::ClientContext& context) {
    DeclareModelBytes(context, bytes);
    return options.dry_run ? stub_->Plan(&context, request, &response)
                           : stub_->Convert(&context, request, &response);
  })));
  return response;
}

absl::StatusOr<converter::ConversionResult> Client::Convert(
    const std::string& bytes, const std::string& name,
    const converter::ConvertOptions& options) {
  v1::ConversionReport report;
  std::string model_bytes;
  if (static_cast<int64_t>(bytes.size()) <= options_.unary_limit_bytes) {
    OC_ASSIGN_OR_RETURN(v1::ConvertResponse response, ConvertUnary(bytes, name, options));
    report = std::move(*response.mutable_report());
    model_bytes = std::move(*response.mutable_model());
  } else {
    v1::StreamHeader header;
    header.set_model_name(name);
    *header.mutable_options() = OptionsToProto(options);
    header.set_external_data(v1::EXTERNAL_DATA_KEPT_BY_CLIENT);
    header.set_report_message_only(true);
    OC_ASSIGN_OR_RETURN(v1::StreamResult result,
                        ConvertStreamed(header, bytes, {}, [&](const v1::Chunk& chunk) {
                          if (chunk.name().empty()) model_bytes += chunk.data();
                          return absl::OkStatus();
                        }));
    report = std::move(*result.mutable_report());
  }
  converter::ConversionResult result;
  OC_ASSIGN_OR_RETURN(result.report, ReportFromProto(report));
  if (!options.dry_run) {
    absl::StatusOr<onnx::ModelProto> parsed =
        ParseModel(model_bytes, absl::StrCat("server ", target_, ": converted model"));
    // A converted model the client cannot read was damaged on its way.
    if (!parsed.ok()) return Infrastructure(parsed.status());
    result.model = *std::move(parsed);
  }
  return result;
}

absl::StatusOr<v1::StreamResult> Client::ConvertStreamed(
    const v1::StreamHeader& header, const std::string& bytes,
    const std::vector<std::pair<std::string, std::string>>& external_files,
    absl::FunctionRef<absl::Status(const v1::Chunk&)> sink) {
  return ConvertStreamedWith(
      header, static_cast<int64_t>(bytes.size()),
      [&](Stream& stream) -> absl::StatusOr<bool> {
        return WriteChunks(stream, "", bytes, options_.chunk_bytes);
      },
      external_files, sink);
}

absl::StatusOr<converter::ConversionReport> Client::ConvertFile(
    const std::string& path, const std::string& name, const std::string& output,
    const converter::ConvertOptions& options) {
  int source = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (source < 0 || fstat(source, &info) != 0) {
    if (source >= 0) close(source);
    return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  }
  v1::StreamHeader header;
  header.set_model_name(name);
  *header.mutable_options() = OptionsToProto(options);
  header.set_external_data(v1::EXTERNAL_DATA_KEPT_BY_CLIENT);
  header.set_report_message_only(true);
  // Weights passed through as they came are copied here from the model's
  // file, not downloaded.
  header.set_client_copies_model_ranges(true);
  // (A call is tried again only when nothing of its answer arrived: the
  // file holds one attempt's answer.)
  ChunkFile model_file(output);
  absl::StatusOr<v1::StreamResult> result = ConvertStreamedWith(
      header, static_cast<int64_t>(info.st_size),
      [&](Stream& stream) { return WriteFileChunks(stream, "", path, options_.chunk_bytes); },
      {},
      [&](const v1::Chunk& chunk) {
        if (!chunk.name().empty()) {
          return Infrastructure(absl::DataLossError(
              absl::StrCat("server ", target_, ": sent a file '", chunk.name(),
                           "' beside the model it was to convert alone")));
        }
        return model_file.Append(chunk.data());
      },
      [&](const v1::StreamResult& answer) {
        if (answer.files_size() > 0) {
          model_file.CopyRanges(source, static_cast<int64_t>(info.st_size),
                                {answer.files(0).from_upload().begin(),
                                 answer.files(0).from_upload().end()});
        }
        return absl::OkStatus();
      });
  absl::Status committed = result.ok() ? model_file.Commit() : result.status();
  close(source);
  OC_RETURN_IF_ERROR(committed);
  return ReportFromProto(result->report());
}

absl::StatusOr<v1::StreamResult> Client::ConvertStreamedWith(
    const v1::StreamHeader& header, int64_t model_bytes,
    absl::FunctionRef<absl::StatusOr<bool>(Stream&)> write_model,
    const std::vector<std::pair<std::string, std::string>>& external_files,
    absl::FunctionRef<absl::Status(const v1::Chunk&)> sink,
    const std::function<absl::Status(const v1::StreamResult&)>& on_result) {
  for (int attempt = 1;; ++attempt) {
    bool retryable = false;
    absl::StatusOr<v1::StreamResult> result = ConvertStreamOnce(
        header, model_bytes, write_model, external_files, sink, on_result, retryable);
    if (result.ok() || !retryable || attempt >= options_.max_attempts) return result;
    absl::SleepFor(RetryDelay(grpc::Status(grpc::StatusCode::UNAVAILABLE, ""), attempt - 1));
  }
}

absl::StatusOr<v1::StreamResult> Client::ConvertStreamOnce(
    const v1::StreamHeader& header, int64_t model_bytes,
    absl::FunctionRef<absl::StatusOr<bool>(Stream&)> write_model,
    const std::vector<std::pair<std::string, std::string>>& external_files,
    absl::FunctionRef<absl::Status(const v1::Chunk&)> sink,
    const std::function<absl::Status(const v1::StreamResult&)>& on_result, bool& retryable) {
  grpc::ClientContext context;
  Prepare(context);
  std::unique_ptr<Stream> stream = stub_->ConvertStream(&context);
  v1::ConvertStreamRequest first;
  *first.mutable_header() = header;
  // The server charges its budgets for the model before the upload.
  first.mutable_header()->set_model_bytes(model_bytes);
  bool open = stream->Write(first);
  for (size_t i = 0; open && i <= external_files.size(); ++i) {
    absl::StatusOr<bool> written =
        i == 0 ? write_model(*stream)
               : WriteFileChunks(*stream, external_files[i - 1].first,
                                 external_files[i - 1].second, options_.chunk_bytes);
    if (!written.ok()) {
      context.TryCancel();
      stream->Finish();
      return written.status();
    }
    open = *written;
  }
  if (open) stream->WritesDone();
  v1::ConvertStreamResponse message;
  std::optional<v1::StreamResult> result;
  absl::Status sunk = absl::OkStatus();
  bool answered = false;
  while (stream->Read(&message)) {
    answered = true;
    if (message.has_result()) {
      result = std::move(*message.mutable_result());
      if (on_result && sunk.ok()) {
        sunk = on_result(*result);
        if (!sunk.ok()) context.TryCancel();
      }
    } else if (sunk.ok()) {
      sunk = sink(message.chunk());
      if (!sunk.ok()) context.TryCancel();
    }
  }
  grpc::Status status = stream->Finish();
  // Nothing of the answer reached the sink: the whole call can be redone.
  retryable = !answered && ClientShouldRetry(status, context);
  OC_RETURN_IF_ERROR(sunk);
  OC_RETURN_IF_ERROR(FromRpc(status));
  if (!result) {
    return Infrastructure(
        absl::DataLossError(absl::StrCat("server ", target_, ": the stream held no result")));
  }
  return *std::move(result);
}

absl::StatusOr<v1::CapabilitiesResponse> Client::Capabilities() {
  v1::CapabilitiesResponse response;
  OC_RETURN_IF_ERROR(FromRpc(CallWithRetries([&](grpc::ClientContext& context) {
    return stub_->Capabilities(&context, {}, &response);
  })));
  return response;
}

absl::StatusOr<v1::MetricsResponse> Client::Metrics() {
  v1::MetricsResponse response;
  OC_RETURN_IF_ERROR(FromRpc(CallWithRetries([&](grpc::ClientContext& context) {
    return stub_->Metrics(&context, {}, &response);
  })));
  return response;
}

}  // namespace onnxconvert::service
