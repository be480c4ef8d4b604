#include "cli/engine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "converter/windowed.h"
#include "ir/model_sink.h"
#include "service/client.h"

namespace onnxconvert::cli {
namespace {

class Local final : public Engine {
 public:
  absl::StatusOr<ModelSummary> Inspect(const LoadedModel& model) override {
    return SummarizeModel(model.model);
  }
  absl::StatusOr<schema::CheckReport> Check(const LoadedModel& model) override {
    return schema::CheckModel(model.model);
  }
  absl::StatusOr<converter::ConversionResult> Convert(
      LoadedModel& model, const converter::ConvertOptions& options) override {
    return converter::ConvertModel(std::move(model.model), options);
  }
  absl::StatusOr<std::optional<converter::ConversionReport>> ConvertFile(
      const std::string& path, const std::string& output,
      const converter::ConvertOptions& options) override {
    absl::StatusOr<MappedFile> file = MappedFile::Open(path);
    if (!file.ok()) return std::nullopt;  // loading it says why
    FileModelSink sink(output, /*durable=*/true, &*file);
    converter::WindowOptions windows;
    windows.release = [&](absl::string_view piece) { file->Release(piece); };
    return converter::ConvertBytes(file->bytes(), options, sink, windows);
  }
};

// Whether the model file at `path` may keep tensors in external files: it
// holds the bytes of a string field 1 "location", as protobuf encodes the
// key of every external_data entry (an error reading it counts as yes).
// Reads the file a block at a time.
bool MayKeepExternalData(const std::string& path) {
  constexpr std::string_view kKey("\x0a\x08location", 10);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return true;
  std::string block(1 << 20, '\0');
  size_t kept = 0;  // the end of the previous block, for a key across two
  bool found = false;
  for (size_t got; !found && (got = std::fread(block.data() + kept, 1,
                                                block.size() - kept, file)) > 0;) {
    std::string_view text(block.data(), kept + got);
    found = text.find(kKey) != std::string_view::npos;
    kept = std::min(text.size(), kKey.size() - 1);
    std::memmove(block.data(), text.data() + text.size() - kept, kept);
  }
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  return found || failed;
}

// Sends the model as its serialized bytes (a lossless round trip), named by
// its path so that errors read as they do locally.
class Remote final : public Engine {
 public:
  Remote(const std::string& target, const service::ClientOptions& options)
      : client_(service::Client::Connect(target, options)),
        unary_limit_bytes_(options.unary_limit_bytes) {}

  absl::StatusOr<ModelSummary> Inspect(const LoadedModel& model) override {
    return client_->Inspect(model.model.SerializeAsString(), model.path);
  }
  absl::StatusOr<schema::CheckReport> Check(const LoadedModel& model) override {
    return client_->Check(model.model.SerializeAsString(), model.path);
  }
  absl::StatusOr<converter::ConversionResult> Convert(
      LoadedModel& model, const converter::ConvertOptions& options) override {
    return client_->Convert(model.model.SerializeAsString(), model.path, options);
  }
  // A model too large for one message goes from its file to the server and
  // back to `output` a chunk at a time, never held whole here, unless it
  // may keep external data (Convert copies that beside the output). A model
  // the server refuses is left to Convert, which reports it as a local run
  // does; errors reaching the server are returned.
  absl::StatusOr<std::optional<converter::ConversionReport>> ConvertFile(
      const std::string& path, const std::string& output,
      const converter::ConvertOptions& options) override {
    std::error_code error;
    uintmax_t size = std::filesystem::file_size(path, error);
    if (error || static_cast<int64_t>(size) <= unary_limit_bytes_ ||
        MayKeepExternalData(path)) {
      return std::nullopt;
    }
    absl::StatusOr<converter::ConversionReport> report =
        client_->ConvertFile(path, path, output, options);
    if (!report.ok() && !service::IsInfrastructureError(report.status())) return std::nullopt;
    return report;
  }

 private:
  std::unique_ptr<service::Client> client_;
  int64_t unary_limit_bytes_;
};

}  // namespace

Engine& LocalEngine() {
  static Local* engine = new Local();
  return *engine;
}

std::unique_ptr<Engine> RemoteEngine(const std::string& target,
                                     const ConnectionChoice& connection) {
  service::ClientOptions options;
  options.lb_policy = connection.lb_policy;
  options.max_attempts = connection.retries + 1;
  return std::make_unique<Remote>(target, options);
}

namespace {

// The connection flags, each with what its value must be.
struct ConnectionFlag {
  absl::string_view name;
  absl::string_view value;
};
constexpr ConnectionFlag kConnectionFlags[] = {
    {"server", "a gRPC target (HOST:PORT, dns:///HOST:PORT, ipv4:A:P,B:P, unix:PATH)"},
    {"lb", "round_robin or pick_first"},
    {"retries", "a number from 0 to 4"},
};

// Stores `value` of flag `name` into `choice`; false when it is bad.
bool SetConnectionFlag(absl::string_view name, const std::string& value,
                       ServerChoice& choice) {
  if (value.empty()) return false;
  if (name == "server") {
    choice.target = value;
    return true;
  }
  if (name == "lb") {
    choice.connection.lb_policy = value;
    return value == "round_robin" || value == "pick_first";
  }
  int retries = 0;
  if (!absl::SimpleAtoi(value, &retries) || retries < 0 || retries > 4) return false;
  choice.connection.retries = retries;
  return true;
}

}  // namespace

absl::StatusOr<ServerChoice> TakeServerFlag(const std::vector<std::string>& args) {
  ServerChoice choice;
  std::set<absl::string_view> given;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      choice.rest.insert(choice.rest.end(), args.begin() + i, args.end());
      break;
    }
    const ConnectionFlag* flag = nullptr;
    std::optional<std::string> value;
    for (const ConnectionFlag& candidate : kConnectionFlags) {
      std::string dashed = absl::StrCat("--", candidate.name);
      if (arg == dashed) {
        flag = &candidate;
        if (i + 1 < args.size()) value = args[++i];
      } else if (absl::StartsWith(arg, dashed + "=")) {
        flag = &candidate;
        value = arg.substr(dashed.size() + 1);
      }
    }
    if (flag == nullptr) {
      choice.rest.push_back(arg);
      continue;
    }
    if (!given.insert(flag->name).second) {
      return absl::InvalidArgumentError(absl::StrCat("option --", flag->name, " given twice"));
    }
    if (!value || !SetConnectionFlag(flag->name, *value, choice)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag->name, " needs ", flag->value));
    }
  }
  if (choice.target.empty() && given.size() > 0) {
    return absl::InvalidArgumentError("--lb and --retries apply with --server only");
  }
  return choice;
}

bool IsInfrastructureError(const absl::Status& status) {
  return service::IsInfrastructureError(status);
}

bool IsServerError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kInternal:
      return false;
    default:
      return true;
  }
}

namespace {

// --verify[=N] and --verify-inputs DIR into `options`.
absl::Status VerifyFromArgs(const ParsedArgs& args, converter::ConvertOptions& options) {
  if (std::optional<std::string> sets = args.Get("verify")) {
    options.verify = kDefaultVerifySets;
    if (!sets->empty()) {
      OC_ASSIGN_OR_RETURN(int64_t count, IntFlag(args, "verify"));
      if (count < 1 || count > kMaxVerifySets) {
        return absl::InvalidArgumentError(
            absl::StrCat("--verify takes a number of input sets from 1 to ", kMaxVerifySets));
      }
      options.verify = static_cast<int>(count);
    }
  }
  if (std::optional<std::string> dir = args.Get("verify-inputs")) {
    std::error_code error;
    if (dir->empty() || !std::filesystem::is_directory(*dir, error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--verify-inputs '", *dir, "' is not a directory"));
    }
    options.verify_inputs = *dir;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<converter::ConvertOptions> ConvertOptionsFromArgs(const ParsedArgs& args) {
  converter::ConvertOptions options;
  if (args.Has("ir-version")) {
    OC_ASSIGN_OR_RETURN(options.ir_version, IntFlag(args, "ir-version"));
  }
  if (args.Has("ml-to")) {
    OC_ASSIGN_OR_RETURN(options.ml_target_opset, IntFlag(args, "ml-to"));
  }
  options.expand_functions = !args.Has("no-expand");
  // Exact casts are the default; --allow-casts, once needed for them, is
  // accepted as a no-op.
  options.no_casts = args.Has("no-casts");
  options.full_validation = args.Has("full-validation");
  OC_RETURN_IF_ERROR(VerifyFromArgs(args, options));
  return options;
}

}  // namespace onnxconvert::cli
