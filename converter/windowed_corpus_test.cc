// Converts every corpus case to every conformance target window by window
// (windows of 1 and of 3 nodes, so that every boundary is crossed; every
// floating-point initializer read as a header), whole on an arena as
// ConvertBytes does below its window threshold, and with ConvertModel:
// the same bytes and report, or the same error. Counts the conversions the
// windows did (those of models with subgraphs among them) and why they left
// the others whole, and compares the counts
// with the golden table tests/golden/windowed_corpus.txt (rewritten by
// UPDATE_GOLDEN=1 bazel run //converter:windowed_corpus_test).

#include <algorithm>
#include <iostream>
#include <limits>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "converter/bytes_testing.h"
#include "converter/report_testing.h"
#include "converter/windowed.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "ir/model_sink.h"
#include "tests/corpus.h"
#include "tests/golden.h"

namespace onnxconvert::converter {
namespace {

TEST(WindowedCorpusTest, WindowsConvertAsTheWholeModel) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::map<std::string, int> tally;
  std::map<std::string, int> subgraph_tally;  // of models with subgraphs
  int windowed = 0;
  int windowed_with_subgraphs = 0;
  int on_arena = 0;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    std::optional<int64_t> own = testing::ImportedOpset(loaded->model, "");
    if (!own) continue;
    std::string bytes = loaded->model.SerializeAsString();
    bool subgraphs = false;
    for (const onnx::NodeProto& node : loaded->model.graph().node()) {
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        subgraphs |= attribute.has_g() || attribute.graphs_size() > 0;
      }
    }
    for (int64_t target : testing::ConformanceTargets()) {
      if (target == *own) continue;
      ConvertOptions options;
      options.target_opset = target;
      absl::StatusOr<ConversionResult> whole = ConvertModel(loaded->model, options);
      std::string whole_bytes = whole.ok() ? whole->model.SerializeAsString() : "";
      // Window 0: ConvertBytes's whole conversion, on an arena.
      for (int64_t window : {0, 1, 3}) {
        WindowOptions windows;
        windows.window_nodes = std::max<int64_t>(window, 1);
        windows.min_nodes = window == 0 ? std::numeric_limits<int64_t>::max() : 1;
        if (window == 0) windows.min_bytes = std::numeric_limits<int64_t>::max();
        windows.header_only_bytes = 1;  // every floating-point initializer
        StringModelSink sink;
        std::string why;
        absl::StatusOr<ConversionReport> report =
            ConvertBytesOrError(bytes, options, sink, windows, &why);
        std::string label = c.name + " -> " + std::to_string(target) + " in windows of " +
                            std::to_string(window);
        ASSERT_EQ(report.status(), whole.status()) << label;
        if (window == 0) {
          ASSERT_FALSE(why.empty()) << label;
          ++on_arena;
        } else if (why.empty()) {
          ++windowed;
          windowed_with_subgraphs += subgraphs;
        } else {
          // A refusal: the whole conversion refuses it too, saying why.
          std::string reason = why.rfind("step ", 0) == 0 ? "a step refuses a node"
                                                           : why.substr(0, why.find('\''));
          if (why.find("the touched nodes do not show the model valid") != std::string::npos) {
            reason = "a step's changes are validated whole";
          }
          ++tally[reason];
          if (subgraphs) ++subgraph_tally[reason];
        }
        if (!whole.ok()) continue;
        ASSERT_EQ(UntimedJson(*report), UntimedJson(whole->report)) << label;
        ASSERT_TRUE(sink.bytes() == whole_bytes) << label;
      }
    }
  }
  std::string table = absl::StrCat(
      "# The corpus conversions window by window (windowed_corpus_test).\n"
      "# Regenerate: UPDATE_GOLDEN=1 bazel run //converter:windowed_corpus_test\n"
      "converted whole on an arena: ",
      on_arena, "\nconverted window by window: ", windowed,
      "\nof which models with subgraphs: ", windowed_with_subgraphs, "\n");
  for (const auto& [reason, count] : tally) {
    absl::StrAppend(&table, "left whole: ", reason, ": ", count, "\n");
  }
  for (const auto& [reason, count] : subgraph_tally) {
    absl::StrAppend(&table, "left whole, with subgraphs: ", reason, ": ", count, "\n");
  }
  std::cerr << table;
  absl::Status golden = testing::CompareWithGolden(
      "tests/golden/windowed_corpus.txt", table,
      "UPDATE_GOLDEN=1 bazel run //converter:windowed_corpus_test");
  EXPECT_TRUE(golden.ok()) << golden;
}

}  // namespace
}  // namespace onnxconvert::converter
