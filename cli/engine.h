#ifndef ONNX_CONVERT_CLI_ENGINE_H_
#define ONNX_CONVERT_CLI_ENGINE_H_

// Where the commands do their model work: Engine, in this process or on an
// onnx-convert server (--server), the flags choosing it, and how its errors
// map to exit codes. Also the conversion and verification flags the
// commands running an engine share.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/args.h"
#include "converter/converter.h"
#include "ir/model_io.h"
#include "ir/model_summary.h"
#include "schema/checker.h"

namespace onnxconvert::cli {

// Where the model work of convert, plan, check, inspect and batch runs: in
// this process, or on an onnx-convert server. Both return the library's
// structs, so the commands print the same either way. Thread-safe.
class Engine {
 public:
  virtual ~Engine() = default;
  // The model's summary (`inspect`).
  virtual absl::StatusOr<ModelSummary> Inspect(const LoadedModel& model) = 0;
  // The checker's report (`check`).
  virtual absl::StatusOr<schema::CheckReport> Check(const LoadedModel& model) = 0;
  // The converted model and report (`convert`, `plan`). May take
  // `model.model` (the local engine converts it in place of a copy); its
  // path and base_dir stay.
  virtual absl::StatusOr<converter::ConversionResult> Convert(
      LoadedModel& model, const converter::ConvertOptions& options) = 0;
  // Converts the model file at `path` to `output` without holding the model
  // parsed: the report, or nullopt when the model is for Convert to convert
  // whole (nothing was written then). The local engine converts a window of
  // nodes at a time (converter::ConvertBytes); the remote one streams a
  // model too large for one message to the server and the converted model
  // back, a chunk at a time.
  virtual absl::StatusOr<std::optional<converter::ConversionReport>> ConvertFile(
      const std::string& /*path*/, const std::string& /*output*/,
      const converter::ConvertOptions& /*options*/) {
    return std::nullopt;
  }
};

// The engine that runs the library in this process.
Engine& LocalEngine();

// How the CLI reaches its server(s): --lb, --retries.
struct ConnectionChoice {
  std::string lb_policy = "round_robin";  // or "pick_first"
  int retries = 4;                        // attempts after the first, 0 to 4
};

// An engine that runs the work on the server(s) at `target`, any gRPC
// target ("host:port", "dns:///host:port", "ipv4:a:p,b:p", "unix:/path").
std::unique_ptr<Engine> RemoteEngine(const std::string& target,
                                     const ConnectionChoice& connection = {});

// The command line without its --server, --lb and --retries flags, and
// what they say.
struct ServerChoice {
  std::string target;  // "" without --server
  ConnectionChoice connection;
  std::vector<std::string> rest;
};

// Takes `--server TARGET`, `--lb round_robin|pick_first` and `--retries N`
// (each also as `--flag=VALUE`) out of `args`, before or after the command
// (not after `--`); a missing or bad value, a repeated flag, or --lb or
// --retries without --server is an InvalidArgument error.
absl::StatusOr<ServerChoice> TakeServerFlag(const std::vector<std::string>& args);

// True when an engine error is the infrastructure's (a server unreachable,
// shutting down, busy, out of time), not the model's: `batch` tries such
// models again and exits kExitInfrastructure when they still fail.
bool IsInfrastructureError(const absl::Status& status);

// True when an engine error is about reaching or using the server (it was
// unreachable, refused the call for a limit, timed out), not about the
// model: such errors exit with kExitUsageOrIo.
bool IsServerError(const absl::Status& status);

// The conversion options of the convert, plan and batch flags other than
// --to and --dry-run (--ir-version, --ml-to, --no-expand, --no-casts, --allow-casts,
// --full-validation);
// an InvalidArgument error names a bad flag.
absl::StatusOr<converter::ConvertOptions> ConvertOptionsFromArgs(const ParsedArgs& args);

// Input sets `--verify` alone verifies on, and the most `--verify=N` takes.
inline constexpr int kDefaultVerifySets = 3;
inline constexpr int kMaxVerifySets = 64;

// The flags of verification by evaluation: --verify[=N], --verify-inputs DIR.
inline constexpr FlagSpec kVerifyFlags[] = {{"verify", true, "", true},
                                            {"verify-inputs", true, ""}};

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_ENGINE_H_
