#ifndef ONNX_CONVERT_CLI_BATCH_H_
#define ONNX_CONVERT_CLI_BATCH_H_

// The `onnx-convert batch` command: its usage text, its flags, and RunBatch,
// which converts many models in parallel into one output directory.

#include <ostream>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/args.h"
#include "cli/engine.h"

namespace onnxconvert::cli {

// The usage line of `onnx-convert batch`.
inline constexpr absl::string_view kBatchUsage =
    "batch INPUT... -o OUTDIR --to N [--ml-to M] [-j JOBS] [--ir-version V] [--no-expand]\n"
    "          [--no-casts] [--full-validation] [--force] [--report-format json|txt]\n"
    "          [--external-data-threshold BYTES] [--progress auto|bar|lines]\n"
    "          [--verify[=N]] [--verify-inputs DIR] [--optimize[=PROFILE]] [--shard I/N]";

// What `onnx-convert batch` does, for the usage text.
inline constexpr absl::string_view kBatchSummary =
    "converts many models in parallel: files, directories (*.onnx under them) and\n"
    "      manifests (a file listing one input per line); skips outputs already\n"
    "      complete and newer than their input; --optimize rewrites each converted\n"
    "      model as `optimize` does (its report beside the conversion's); --shard I/N\n"
    "      converts the I-th of N shares (0-based) for N workers sharing OUTDIR;\n"
    "      models a server failed are tried again at the end (exit 4 if they still fail)";

// The flags `batch` accepts.
const std::vector<FlagSpec>& BatchFlags();

// Runs `onnx-convert batch` with `args` (positional: the inputs), converting
// through `engine`. Every model's output goes to OUTDIR under its name, with
// NAME.report.json beside it (NAME.error.txt when it failed), each written
// to a temp file and renamed; OUTDIR/batch-summary.json lists every model.
// Progress goes to `err` (a bar on a terminal, else a line per model), the
// summary table to `out`. Models that failed for the infrastructure's sake
// (IsInfrastructureError) are tried again after the others. Returns 0 when
// every model converted or was already complete, 4 when any still failed
// for the infrastructure's sake, else 1 when any failed, 2 for a usage or
// I/O error. With --shard I/N only the jobs of shard I run (JobsOfShard),
// and the summary is OUTDIR/batch-summary.shard-I-of-N.json.
int RunBatch(const ParsedArgs& args, Engine& engine, std::ostream& out, std::ostream& err);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_BATCH_H_
