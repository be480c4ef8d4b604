#ifndef ONNX_CONVERT_CLI_OPTIMIZE_H_
#define ONNX_CONVERT_CLI_OPTIMIZE_H_

// The `onnx-convert optimize` command: its usage text, its flags, and
// RunOptimize, which runs the rewrite passes of a profile over a model.

#include <ostream>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/args.h"

namespace onnxconvert::cli {

// The usage line of `onnx-convert optimize`.
inline constexpr absl::string_view kOptimizeUsage =
    "optimize IN -o OUT [--profile exact|deploy] [--passes a,b] [--skip a,b]\n"
    "          [--max-fold-bytes B] [--rules FILE,...] [--explain RULE,...]\n"
    "          [--report FILE.json|FILE.html|FILE.txt] [--verify[=N]] [--list]";

// What `onnx-convert optimize` does, for the usage text.
inline constexpr absl::string_view kOptimizeSummary =
    "rewrites the model with the passes of a profile (exact: nothing computes\n"
    "      differently) over every graph until none changes anything: Constant nodes\n"
    "      to initializers, constant folding (in the model's precision; a fold past\n"
    "      --max-fold-bytes, default 1 MiB, that grows the model is skipped), dead\n"
    "      nodes, unused initializers, value_info and functions; graph inputs and\n"
    "      outputs unchanged; checked after; --verify evaluates the original and the\n"
    "      result on N seeded random input sets (default 3) and fails unless they\n"
    "      agree (to the bit with exact, within tolerance with deploy); --list names\n"
    "      the passes; --rules applies rule files of yours (rewrites/rules.h format)\n"
    "      after the profile's passes; --explain says, at each node a rule could\n"
    "      match at, why it matches or not (the failing pattern part or `where`\n"
    "      predicate, with the facts seen)";

// The flags `optimize` accepts.
const std::vector<FlagSpec>& OptimizeFlags();

// Runs `onnx-convert optimize` with `args` (positional: the model). The
// report goes to `out` (and to --report); errors to `err`, one line
// starting with the file. Returns 0 when the model was optimized and
// written, 1 when it is invalid or the rewrite fails its checks (nothing is
// written), 2 for a usage or I/O error.
int RunOptimize(const ParsedArgs& args, std::ostream& out, std::ostream& err);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_OPTIMIZE_H_
