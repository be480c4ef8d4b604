#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_TEST_UTIL_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_TEST_UTIL_H_

// Shared by the GraphIndex and ModelIndex tests: building small graphs,
// naming what an index holds, and checking an edited index against one
// built from scratch.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/graph_index.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::graph_index_testing {

// A node `name` of op `op` of `domain` with `inputs` and `outputs`.
onnx::NodeProto Node(absl::string_view name, absl::string_view op,
                     std::vector<std::string> inputs, std::vector<std::string> outputs,
                     absl::string_view domain = "");

// "name: Op(inputs) -> outputs", for comparing nodes in test failures.
std::string Describe(const onnx::NodeProto& node);

// A graph with `inputs`, float initializers `initializers`, `nodes` and
// `outputs`.
onnx::GraphProto Graph(std::vector<std::string> inputs, std::vector<std::string> initializers,
                       std::vector<onnx::NodeProto> nodes, std::vector<std::string> outputs);

// The graph `text` (protobuf text format) describes; a test failure if it
// does not parse.
onnx::GraphProto ParseGraph(const std::string& text);

// Adds `graph` to `node` as graph attribute `name`.
void AddGraphAttribute(onnx::NodeProto& node, absl::string_view name, onnx::GraphProto graph);

// The index of `graph`; null and a test failure if it cannot be built.
std::unique_ptr<GraphIndex> BuildOrDie(onnx::GraphProto& graph);

// Copies of `views`.
std::vector<std::string> Strings(const std::vector<absl::string_view>& views);

// The names of the nodes `ids` of `index`.
std::vector<std::string> NodeNames(const GraphIndex& index, const std::vector<NodeId>& ids);

// The id of the live node `name` of `index`; kNoNode and a test failure if
// there is none.
NodeId IdOf(const GraphIndex& index, absl::string_view name);

// The graph at `path` in the tree of `root`; null and a test failure if
// there is none.
const GraphIndex* GraphAt(const GraphIndex& root, absl::string_view path);
// Same, mutable.
GraphIndex* GraphAt(GraphIndex& root, absl::string_view path);

// The graph as the index sees it: live nodes in LiveNodes() order, subgraphs
// likewise, so that a fresh Build describes what the index should.
onnx::GraphProto LiveCopy(const GraphIndex& index);

// Everything the index answers, by names rather than ids, one fact a line.
std::string Snapshot(const GraphIndex& index);

// Checks every graph of the tree against its bookkeeping and against a
// fresh index of its live copy.
void ExpectConsistent(const GraphIndex& index, absl::string_view context);

// Checks a committed index is exactly what Build gives on its graph: same
// ids, same uses in the same order.
void ExpectIdentical(const GraphIndex& index, const GraphIndex& fresh);

// Commits every graph of the tree, then compares with a fresh index.
void CommitAndExpectIdentical(GraphIndex& index, absl::string_view context);


// Loop body -> If branch -> Scan body: the deepest graph uses P and Z from
// the main graph and L from the loop body; the else branch defines its own Z.
inline constexpr char kNested[] = R"pb(
  input { name: "N" } input { name: "C" } input { name: "X" } input { name: "Z" }
  node { name: "pre" op_type: "Relu" input: "X" output: "P" }
  node {
    name: "loop_1" op_type: "Loop" input: "N" input: "C" output: "R"
    attribute {
      name: "body" type: GRAPH
      g {
        input { name: "i" } input { name: "cond_in" }
        node { name: "mk" op_type: "Neg" input: "i" output: "L" }
        node {
          name: "if_2" op_type: "If" input: "cond_in" output: "F"
          attribute {
            name: "then_branch" type: GRAPH
            g {
              node {
                name: "scan_3" op_type: "Scan" input: "L" output: "S"
                attribute {
                  name: "body" type: GRAPH
                  g {
                    input { name: "s_in" }
                    node { name: "deep" op_type: "Add" input: "P" input: "Z" output: "D" }
                    node { name: "deep2" op_type: "Mul" input: "D" input: "L" output: "D2" }
                    output { name: "D2" }
                  }
                }
              }
              output { name: "S" }
            }
          }
          attribute {
            name: "else_branch" type: GRAPH
            g {
              node { name: "shadow" op_type: "Identity" input: "X" output: "Z" }
              node { name: "e" op_type: "Add" input: "Z" input: "X" output: "E" }
              output { name: "E" }
            }
          }
        }
        output { name: "cond_in" } output { name: "F" }
      }
    }
  }
  output { name: "R" }
)pb";

inline constexpr char kBody[] = "main/body of 'loop_1'";
inline constexpr char kThen[] = "main/body of 'loop_1'/then_branch of 'if_2'";
inline constexpr char kScan[] = "main/body of 'loop_1'/then_branch of 'if_2'/body of 'scan_3'";
inline constexpr char kElse[] = "main/body of 'loop_1'/else_branch of 'if_2'";

}  // namespace onnxconvert::graph_index_testing

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_TEST_UTIL_H_
