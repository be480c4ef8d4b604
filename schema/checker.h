#ifndef ONNX_CONVERT_SCHEMA_CHECKER_H_
#define ONNX_CONVERT_SCHEMA_CHECKER_H_

// The model checker: what the ONNX spec requires of a model (IR version,
// opset imports, SSA values, every node against its operator's schema), as
// a report of coded findings (CheckModel), and the same checks for single
// nodes after a converter step (NodeChecker).

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/onnx.pb.h"
#include "schema/tensor_checks.h"

namespace onnxconvert::schema {

// Stable codes of the checker's findings.
enum class CheckCode {
  kIrVersion,           // ir_version missing, invalid, unknown, or too old for a feature
  kOpsetImport,         // missing, duplicated or unknown opset imports
  kDuplicateValue,      // a value defined twice (SSA)
  kUndefinedInput,      // an input nothing defines
  kNotTopological,      // an input defined only by a later node
  kCycle,               // nodes that depend on each other
  kUnknownOperator,     // no such op in its domain at the imported opset
  kDeprecatedOperator,  // the op version is deprecated (a warning)
  kArity,               // too few or too many inputs or outputs
  kUnknownAttribute,    // an attribute the op version does not define
  kAttributeType,       // an attribute of the wrong type, or whose type and value disagree
  kMissingAttribute,    // a required attribute is absent
  kTypeConstraint,      // a value's type is not allowed by the op's constraint
  kTensor,              // a tensor's data type, dims or data are malformed
  kSparseTensor,        // a sparse tensor's values, dims or indices are malformed
  kFunctionCycle,       // model-local functions that call themselves or each other
  kEmptyGraph,          // the model has no graph (the last code)
};

// The stable name of a code, e.g. "unknown-operator".
const char* CheckCodeName(CheckCode code);

// One finding, with where it is: graph path and node.
struct CheckIssue {
  CheckCode code;
  bool is_warning = false;
  std::string path;  // e.g. "main/body of 'loop_1' (Loop)" or "function 'local.F'"
  std::string node;  // e.g. "node 'Add_3' (Add-14)"; "" for graph-level issues
  std::string message;

  // "main › node 'Add_3' (Add-14): unknown-attribute: ..."
  std::string ToString() const;
};

// What the checker found.
struct CheckReport {
  std::vector<CheckIssue> issues;
  int nodes_checked = 0;
  int graphs_checked = 0;
  int functions_checked = 0;

  // Number of issues that are errors (not warnings).
  int error_count() const;
  // OK when there is no error; otherwise an InvalidArgument status whose
  // message is the first error.
  absl::Status status() const;
};

// What CheckModel is told beyond the model.
struct CheckOptions {
  // Tensors of the model read without their data (a large model's
  // initializers, converter/windowed.h), with the sizes of the data fields
  // they have in the file: their data is checked against these.
  const absl::flat_hash_map<const onnx::TensorProto*, TensorDataSizes>* sizes_read_apart =
      nullptr;
};

// Checks a model against the ONNX 1.22 IR and operator rules: IR version,
// opset imports, SSA and topological order (outer scopes for subgraphs),
// each op known at its opset, arity, attributes (their type against their
// value and the op's), declared types against type constraints, tensors
// and sparse tensors (initializers and attribute values, see
// tensor_checks.h); subgraphs and model-local functions recursively, and
// that those functions do not call themselves, directly or not. Collects
// every issue instead of stopping at the first.
CheckReport CheckModel(const onnx::ModelProto& model, const CheckOptions& options = {});

// Checks the model's local functions as CheckModel does (their nodes
// against the opsets they and the model import, and that they do not call
// themselves), and of the rest of the model only its opset imports: what a
// step that changed function bodies needs checked besides the graphs'
// nodes it validates one by one.
CheckReport CheckFunctions(const onnx::ModelProto& model);

// Checks single nodes of one model as CheckModel checks each node, so that
// a change to a few nodes is validated without checking the whole model
// again. The model's opset imports are read once, when it is built.
class NodeChecker {
 public:
  using Imports = google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>;

  explicit NodeChecker(const onnx::ModelProto& model);
  // Checks nodes as if `model` imported `imports` (the opsets a step is
  // converting to, before the model says so).
  NodeChecker(const onnx::ModelProto& model, const Imports& imports);
  ~NodeChecker();

  // Where Check finds the types of values.
  class TypeSource {
   public:
    virtual ~TypeSource() = default;
    // The type of value `name`, or null when it is unknown.
    virtual const onnx::TypeProto* TypeOf(absl::string_view name) const = 0;
  };

  // Checks `node`, in the graph at `path`, but not its subgraphs: its
  // attributes are well-formed (tensors included), its op exists at the
  // imported opset, its arity and attributes fit, and the
  // types `types` gives its values meet the type constraints. Whether its
  // inputs are defined before it is the caller's to see to. The first
  // error, naming the node.
  absl::Status Check(const onnx::NodeProto& node, const std::string& path,
                     const TypeSource& types);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_CHECKER_H_
