#ifndef ONNX_CONVERT_CLI_RUN_H_
#define ONNX_CONVERT_CLI_RUN_H_

// The `onnx-convert run` command: its usage text, its flags, and RunModel,
// which evaluates a model with the reference evaluator on given or random
// inputs.

#include <ostream>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/args.h"

namespace onnxconvert::cli {

// The usage line of `onnx-convert run`.
inline constexpr absl::string_view kRunUsage =
    "run MODEL [--inputs DIR | --random N [--seed S] [--dim NAME=V,...]] [-o OUTDIR]\n"
    "          [--compare DIR]";

// What `onnx-convert run` does, for the usage text.
inline constexpr absl::string_view kRunSummary =
    "evaluates the model with the reference evaluator on the input sets of DIR\n"
    "      (test_data_set_*/input_*.pb, or DIR/input_*.pb) or on N random sets (floats\n"
    "      in [-1,1), small integers; symbolic dims 1 unless --dim); writes outputs\n"
    "      (and random inputs) to OUTDIR in the same layout; --compare checks them\n"
    "      against DIR's output_*.pb and prints the worst element of each output";

// The flags `run` accepts.
const std::vector<FlagSpec>& RunFlags();

// Runs `onnx-convert run` with `args` (positional: the model). Outputs, and
// the comparison of each with --compare, go to `out`; errors to `err`, one
// line starting with the file. Returns 0 when every set ran (and matched),
// 1 when the model fails to run or an output differs, 2 for a usage or I/O
// error.
int RunModel(const ParsedArgs& args, std::ostream& out, std::ostream& err);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_RUN_H_
