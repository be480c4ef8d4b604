#ifndef ONNX_CONVERT_IR_REWRITER_TEST_CASES_H_
#define ONNX_CONVERT_IR_REWRITER_TEST_CASES_H_

// Rewrites through ir::Rewriter, ONNX text in and ONNX text out, run by both
// drivers of its one implementation: a NodeEdits batch applied as the
// converter applies a step's (node_edits_test.cc) and a GraphIndexRewriter
// (graph_index_rewriter_test.cc). Both must give the same graph. The cases
// are those of ir/testdata/rewriter.cases (its opening comment: the format).

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/rewriter.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"
#include "proto/onnx.pb.h"
#include "tests/case_file.h"

namespace onnxconvert::ir::rewriter_testing {

// The node of the graph (not a subgraph) named `name`.
using NodeByName = std::function<const onnx::NodeProto&(const char* name)>;

// One rewrite of the node named `anchor` of `graph`.
struct RewriteCase {
  std::string name;
  std::string graph;   // ONNX text
  std::string anchor;  // a node name of `graph`
  std::function<absl::Status(Rewriter&, const NodeByName&)> rewrite;
  std::string expected;    // the graph afterwards, ONNX text; unchanged on error
  std::string error = "";  // a piece of the rewrite's error, or "" for none
  // Why the case file did not read, naming its line; "" when it did.
  std::string file_error = "";
};

// Names the case in test output.
inline void PrintTo(const RewriteCase& c, std::ostream* out) { *out << c.name; }

// Names a parameterized test after its case's `name`.
struct NamedAfterCase {
  template <typename Case>
  std::string operator()(const ::testing::TestParamInfo<Case>& info) const {
    return info.param.name;
  }
};

// The rewrites every driver of ir::Rewriter makes alike (RewriteCases()),
// run by one driver's TEST_P, which applies the case's rewrite to graph_
// and checks it (ExpectStatus, ExpectGraph).
class SharedCasesTest : public ::testing::TestWithParam<RewriteCase> {
 protected:
  void SetUp() override {
    ASSERT_EQ(GetParam().file_error, "");
    absl::StatusOr<onnx::GraphProto> graph = ParseGraphText(GetParam().graph);
    ASSERT_TRUE(graph.ok()) << graph.status();
    graph_ = *std::move(graph);
  }

  onnx::GraphProto graph_;  // the case's graph, parsed
};

// Expects `status`, the rewrite's, to be what `c` says: an error holding
// c.error, or ok.
inline void ExpectStatus(const RewriteCase& c, const absl::Status& status) {
  if (!c.error.empty()) {
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(c.error), absl::string_view::npos) << status;
  } else {
    EXPECT_TRUE(status.ok()) << status;
  }
}

// Expects `graph`, rewritten, to print as c.expected does.
inline void ExpectGraph(const RewriteCase& c, const onnx::GraphProto& graph) {
  absl::StatusOr<onnx::GraphProto> expected = ParseGraphText(c.expected);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(PrintGraphText(graph), PrintGraphText(*expected));
}

// The constant int64[n] {values...}.
inline onnx::TensorProto Int64s(std::vector<int64_t> values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor.add_int64_data(value);
  return tensor;
}

// A step's arguments `args` that do not read: fails the test, naming them,
// and gives `status`.
inline absl::Status Unreadable(const std::string& args, absl::Status status) {
  ADD_FAILURE() << "step arguments '" << args << "': " << status;
  return status;
}

// The rewrite steps of the case file by their names: each makes its call on
// the Rewriter with the rest of the step's line (`args`).
using Step =
    std::function<absl::Status(Rewriter&, const NodeByName&, const std::string& args)>;
inline const std::vector<std::pair<std::string, Step>>& Steps() {
  static const auto* steps = new std::vector<std::pair<std::string, Step>>{
      {"RemoveAnchor",
       [](Rewriter& r, const NodeByName&, const std::string&) {
         r.RemoveAnchor();
         return absl::OkStatus();
       }},
      {"ReplaceAllUses",
       [](Rewriter& r, const NodeByName&, const std::string& args) {
         std::vector<std::string> names = absl::StrSplit(args, ' ');
         if (names.size() != 2) return Unreadable(args, absl::InvalidArgumentError("FROM TO?"));
         r.ReplaceAllUses(names[0], names[1]);
         return absl::OkStatus();
       }},
      {"EraseNode",
       [](Rewriter& r, const NodeByName& node, const std::string& args) {
         r.EraseNode(node(args.c_str()));
         return absl::OkStatus();
       }},
      {"InsertBefore",
       [](Rewriter& r, const NodeByName&, const std::string& args) {
         absl::StatusOr<onnx::NodeProto> node = ParseNodeText(args);
         if (!node.ok()) return Unreadable(args, node.status());
         r.InsertBefore(*std::move(node));
         return absl::OkStatus();
       }},
      {"ReplaceByConstants",
       [](Rewriter& r, const NodeByName&, const std::string& args) {
         absl::StatusOr<onnx::GraphProto> holder =
             ParseGraphText(absl::StrCat("g () => () ", args, " {}"));
         if (!holder.ok()) return Unreadable(args, holder.status());
         return r.ReplaceByConstants(
             {holder->initializer().begin(), holder->initializer().end()});
       }},
  };
  return *steps;
}

// The step named `name`, or null.
inline const Step* FindStep(absl::string_view name) {
  for (const auto& [step_name, step] : Steps()) {
    if (step_name == name) return &step;
  }
  return nullptr;
}

// The rewrite of `lines` (steps of the case file, checked known): each step
// in turn, up to the first that fails, whose error it gives.
inline std::function<absl::Status(Rewriter&, const NodeByName&)> RewriteOf(
    std::vector<std::string> lines) {
  return [lines = std::move(lines)](Rewriter& r, const NodeByName& node) {
    for (const std::string& line : lines) {
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 1));
      parts.resize(2);
      absl::Status status = (*FindStep(parts[0]))(r, node, parts[1]);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  };
}

// The case of `c`, a case of `path`, or its error.
inline absl::StatusOr<RewriteCase> RewriteCaseOf(const std::string& path,
                                                 const onnxconvert::testing::FileCase& c) {
  RewriteCase read;
  read.name = c.head;
  std::vector<std::string> steps;
  for (const onnxconvert::testing::CasePart& part : c.parts) {
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", part.line, ": ", what));
    };
    if (part.key == "anchor") {
      read.anchor = part.value;
    } else if (part.key == "graph") {
      read.graph = part.Text();
    } else if (part.key == "expected") {
      read.expected = part.Text();
    } else if (part.key == "error") {
      read.error = part.value;
    } else if (part.key != "rewrite") {
      return error(absl::StrCat("no part '", part.key, "' in a case"));
    } else {
      for (const std::string& step : part.lines) {
        if (FindStep(step.substr(0, step.find(' '))) == nullptr) {
          return error(absl::StrCat("no step '", step, "'"));
        }
      }
      steps = part.lines;
    }
  }
  read.rewrite = RewriteOf(std::move(steps));
  return read;
}

// The cases of ir/testdata/rewriter.cases. A file that does not read gives
// one case, named case_file, holding the error.
inline std::vector<RewriteCase> ReadRewriteCases() {
  const std::string path = "ir/testdata/rewriter.cases";
  auto failed = [](const absl::Status& status) {
    RewriteCase failure;
    failure.name = "case_file";
    failure.file_error = std::string(status.message());
    return std::vector<RewriteCase>{failure};
  };
  absl::StatusOr<std::vector<onnxconvert::testing::FileCase>> file =
      onnxconvert::testing::ReadCaseFile(path);
  if (!file.ok()) return failed(file.status());
  std::vector<RewriteCase> cases;
  for (const onnxconvert::testing::FileCase& c : *file) {
    absl::StatusOr<RewriteCase> read = RewriteCaseOf(path, c);
    if (!read.ok()) return failed(read.status());
    cases.push_back(*std::move(read));
  }
  return cases;
}

}  // namespace onnxconvert::ir::rewriter_testing

#endif  // ONNX_CONVERT_IR_REWRITER_TEST_CASES_H_
