#ifndef ONNX_CONVERT_EVAL_DATA_SETS_H_
#define ONNX_CONVERT_EVAL_DATA_SETS_H_

// Inputs and outputs of a model as files, in the layout of the ONNX
// backend test corpus: a case folder holds test_data_set_0/,
// test_data_set_1/, ..., each with input_0.pb, input_1.pb, ... and
// output_0.pb, ...: serialized TensorProto, or SequenceProto /
// OptionalProto / MapProto where the model's type says so. Also random
// inputs for a model's declared input types.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/graph.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// One set of inputs and expected outputs.
struct DataSet {
  std::string name;  // "test_data_set_0", or "" for a folder that is a set itself
  std::string dir;
  std::vector<std::string> input_files;   // input_0.pb, input_1.pb, ... in order
  std::vector<std::string> output_files;  // output_0.pb, ...
};

// The data sets of `dir`: its test_data_set_* folders in numeric order, or
// `dir` itself when it holds input_*.pb or output_*.pb files. NotFound when
// it holds neither.
absl::StatusOr<std::vector<DataSet>> ListDataSets(const std::string& dir);

// The graph inputs that values are given for: those no initializer gives.
std::vector<const onnx::ValueInfoProto*> FedInputs(const onnx::GraphProto& graph);

// The inputs of `set` for `graph`: input_K.pb for the K-th of
// FedInputs(graph), read as that input's declared type says. Fails naming
// the file.
absl::StatusOr<std::vector<NamedValue>> LoadInputs(const DataSet& set,
                                                   const onnx::GraphProto& graph,
                                                   int64_t max_elements = int64_t{1} << 31);

// The expected outputs of `set`: output_K.pb for graph output K.
absl::StatusOr<std::vector<NamedValue>> LoadOutputs(const DataSet& set,
                                                    const onnx::GraphProto& graph,
                                                    int64_t max_elements = int64_t{1} << 31);

// Writes `values` as `dir`/`prefix`_K.pb ("input", "output"), each file
// atomically, creating `dir`.
absl::Status WriteValues(const std::string& dir, absl::string_view prefix,
                         const std::vector<NamedValue>& values);

// How random inputs are made.
struct RandomInputOptions {
  // Extents of symbolic dims by name; others (and unknown dims) are 1.
  absl::flat_hash_map<std::string, int64_t> dims;
  // Elements of a sequence input.
  int64_t sequence_length = 2;
  // Values by the role of the slot an input feeds (eval/input_roles.h):
  // indices in range, shapes that fit, small counts. False gives the plain
  // values below.
  bool by_role = true;
  // Edge values in float inputs of 4 or more elements: +0 and -0, and
  // large magnitudes for inputs of exp-like ops (AddEdgeValues).
  bool edge_values = true;
};

// Random values for FedInputs(graph) from their declared types: floats in
// [-1, 1), integers in [-10, 10] ([0, 10] unsigned), bools, short strings;
// an input of unknown rank a scalar; sequences of `sequence_length`
// tensors; optionals holding a value. With `by_role`, a tensor input that
// feeds a slot with a role (eval/input_roles.h) takes values valid there,
// made after the inputs whose shapes they depend on; with `edge_values`,
// float inputs hold edge values. `rng` fixes the values (the same seed
// makes the same inputs everywhere). Fails for maps and types the
// evaluator does not hold.
absl::StatusOr<std::vector<NamedValue>> RandomInputs(const onnx::GraphProto& graph,
                                                     const RandomInputOptions& options,
                                                     std::mt19937_64& rng);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_DATA_SETS_H_
