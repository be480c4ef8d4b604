// Every model of the ONNX backend test corpus prints to ONNX text and parses
// back to an equal proto; printing is stable.

#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"
#include "tests/corpus.h"

namespace onnxconvert {
namespace {

TEST(TextCorpusTest, EveryModelRoundTripsLosslessly) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  int failures = 0;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    std::string text = PrintModelText(loaded->model);
    absl::StatusOr<onnx::ModelProto> parsed = ParseModelText(text);
    if (!parsed.ok()) {
      ADD_FAILURE() << c.name << ": " << parsed.status();
    } else if (std::string diff;
               [&] {
                 // NaN != NaN would make models with NaN constants differ
                 // from themselves.
                 google::protobuf::util::DefaultFieldComparator comparator;
                 comparator.set_treat_nan_as_equal(true);
                 google::protobuf::util::MessageDifferencer differencer;
                 differencer.set_field_comparator(&comparator);
                 differencer.ReportDifferencesToString(&diff);
                 return !differencer.Compare(loaded->model, *parsed);
               }()) {
      ADD_FAILURE() << c.name << " differs after print and parse:\n" << diff.substr(0, 2000);
    } else if (PrintModelText(*parsed) != text) {
      ADD_FAILURE() << c.name << ": printing is not stable";
    } else {
      continue;
    }
    if (++failures >= 25) break;
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace onnxconvert
