#ifndef ONNX_CONVERT_CLI_BATCH_INPUTS_H_
#define ONNX_CONVERT_CLI_BATCH_INPUTS_H_

// The jobs of `onnx-convert batch`: the models its inputs (files, directories,
// manifests) name with the files each one writes, and their split into
// shards for workers sharing one output directory.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::cli {

// One model of a batch: where it is read from and where its files go.
struct BatchJob {
  std::string input;   // the model's path
  std::string name;    // its path relative to the input it came from, e.g. "sub/a.onnx"
  std::string output;  // OUTDIR/name
  std::string report;  // OUTDIR/name without ".onnx", plus ".report.json" (or .txt)
  std::string error;   // OUTDIR/name without ".onnx", plus ".error.txt"
};

// The jobs for `inputs`, in order, with their files under `out_dir`. An
// input is a directory (every *.onnx file under it, sorted, named by its
// path relative to the directory), a file ending in ".onnx" (named by its
// file name), or any other file: a manifest listing such inputs one per
// line (relative to the manifest's directory; blank lines and lines
// starting with '#' ignored; any file it lists is a model). Files under
// `out_dir` are never inputs, and a model listed twice runs once. Errors
// (InvalidArgument, naming the input or the manifest line): an input that
// does not exist, two models that would write the same output, no model at
// all. `report_extension` is "json" or "txt".
absl::StatusOr<std::vector<BatchJob>> CollectBatchJobs(const std::vector<std::string>& inputs,
                                                       const std::string& out_dir,
                                                       absl::string_view report_extension);

// One of N deterministic shares of a batch's jobs (--shard I/N).
struct Shard {
  int index = 0;  // I, 0 <= I < count
  int count = 1;  // N
};

// The shard, of `count`, that the job named `name` belongs to: a stable
// hash (64-bit FNV-1a) of the name, the same in every process and run.
int ShardOf(absl::string_view name, int count);

// The jobs of `jobs` whose name falls in `shard`, in their order: the N
// shards of one input list hold each job exactly once.
std::vector<BatchJob> JobsOfShard(std::vector<BatchJob> jobs, const Shard& shard);

}  // namespace onnxconvert::cli

#endif  // ONNX_CONVERT_CLI_BATCH_INPUTS_H_
