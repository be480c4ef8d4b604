// ConvertWindowed against ConvertModel: the same bytes out and the same
// report (timings aside), window by window; and the cases it leaves to the
// whole conversion.

#include "converter/bytes_testing.h"
#include "converter/report_testing.h"
#include "converter/windowed.h"

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/synthetic_models.h"
#include "gtest/gtest.h"
#include "ir/model_sink.h"
#include "ir/text_parser.h"
#include "tests/case_file.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

// The whole conversion of `bytes`: the converted model's bytes and report.
struct Whole {
  std::string bytes;
  std::string report;
};

Whole ConvertWhole(const std::string& bytes, const ConvertOptions& options) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  return {result->model.SerializeAsString(), UntimedJson(result->report)};
}

WindowOptions SmallWindows(int64_t window_nodes) {
  WindowOptions windows;
  windows.window_nodes = window_nodes;
  windows.min_nodes = 1;
  return windows;
}

struct ChainCase {
  int64_t nodes;
  int64_t target;
  int64_t window_nodes;
  // Why it is converted whole ("" for windows).
  std::string whole_reason;
  // Every how many blocks one is inside an If (0: none).
  int64_t if_every = 0;
  // The opset the chain is converted to first (0: as made, at 12).
  int64_t from = 0;
};

class WindowedChainTest : public ::testing::TestWithParam<ChainCase> {};

TEST_P(WindowedChainTest, SameBytesAndReportAsTheWholeConversion) {
  const ChainCase& c = GetParam();
  std::string bytes = (c.if_every > 0 ? bench::MakeIfChainModel(c.nodes, c.if_every)
                                       : bench::MakeChainModel(c.nodes))
                          .SerializeAsString();
  ConvertOptions options;
  if (c.from > 0) {
    options.target_opset = c.from;
    bytes = ConvertWhole(bytes, options).bytes;
  }
  options.target_opset = c.target;
  Whole whole = ConvertWhole(bytes, options);
  StringModelSink sink;
  std::string why;
  absl::StatusOr<ConversionReport> report =
      ConvertBytesOrError(bytes, options, sink, SmallWindows(c.window_nodes), &why);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(why, c.whole_reason);
  EXPECT_EQ(UntimedJson(*report), whole.report);
  ASSERT_EQ(sink.bytes().size(), whole.bytes.size());
  EXPECT_TRUE(sink.bytes() == whole.bytes) << "the windowed model differs";
  if (sink.bytes() != whole.bytes) {
    onnx::ModelProto a, b;
    ASSERT_TRUE(a.ParseFromString(sink.bytes()));
    ASSERT_TRUE(b.ParseFromString(whole.bytes));
    EXPECT_EQ(a.DebugString().substr(0, 3000), b.DebugString().substr(0, 3000));
  }
}

INSTANTIATE_TEST_SUITE_P(Chains, WindowedChainTest,
                         ::testing::Values(ChainCase{500, 13, 64, ""}, ChainCase{500, 21, 7, ""},
                                           ChainCase{500, 11, 64, ""}, ChainCase{500, 7, 5, ""},
                                           ChainCase{1000, 27, 1000, ""},
                                           // Steps no node changes at: the
                                           // window's nodes are written as
                                           // runs of the model's bytes.
                                           ChainCase{5000, 15, 5000, "", 0, 14},
                                           ChainCase{5000, 17, 1500, "", 0, 14},
                                           // If nodes whose branches get
                                           // constants (Unsqueeze, Squeeze).
                                           ChainCase{2000, 13, 64, "", 7},
                                           ChainCase{2000, 21, 100, "", 3},
                                           ChainCase{2000, 27, 64, "", 5},
                                           // A downgrade changes the If nodes.
                                           ChainCase{2000, 9, 64,
                                                     "step 11 -> 10: the touched nodes do "
                                                     "not show the model valid",
                                                     5},
                                           // Unsqueeze, in the window before,
                                           // and Squeeze, converted first,
                                           // move axes alike: each op's work
                                           // adds a constant of its own.
                                           ChainCase{37, 13, 1, ""}));

// A model in text syntax, serialized.
std::string Serialized(absl::string_view text) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? model->SerializeAsString() : std::string();
}

// Windows of one node, for graphs of two nodes or more.
WindowOptions TwoNodesOrMore() {
  WindowOptions windows = SmallWindows(1);
  windows.min_nodes = 2;
  return windows;
}

// The parts of a case of a case file (tests/case_file.h) by key: a part of
// lines below its key, their text; a part on one line, its value.
using Parts = std::map<std::string, std::string>;

// Each case of converter/testdata/windowed/`file`, made by `make` from its
// name and parts; a file that does not read gives one case, named
// case_file, made from the error as its only part, "error".
template <typename Case>
std::vector<Case> CasesOf(absl::string_view file, Case (*make)(const std::string&, const Parts&)) {
  absl::StatusOr<std::vector<onnxconvert::testing::FileCase>> read =
      onnxconvert::testing::ReadCaseFile(absl::StrCat("converter/testdata/windowed/", file));
  if (!read.ok()) return {make("case_file", {{"error", std::string(read.status().message())}})};
  std::vector<Case> cases;
  for (const onnxconvert::testing::FileCase& c : *read) {
    Parts parts;
    for (const onnxconvert::testing::CasePart& part : c.parts) {
      parts[part.key] = part.lines.empty() ? part.value : part.Text();
    }
    cases.push_back(make(c.head, parts));
  }
  return cases;
}

// "" when `parts` has exactly the keys `keys`; else what is wrong (a case
// file's error, or a malformed case).
std::string KeysError(const Parts& parts, std::initializer_list<absl::string_view> keys) {
  if (auto error = parts.find("error"); error != parts.end()) return error->second;
  bool all = parts.size() == keys.size();
  for (absl::string_view key : keys) all &= parts.contains(std::string(key));
  return all ? "" : absl::StrCat("a case needs the parts ", absl::StrJoin(keys, ", "), ", only");
}

struct WholeCase {
  std::string name;
  std::string model;
  int64_t target = 0;
  std::string reason;  // what ConvertWindowed says
  std::string error;   // why the case did not read; "" when it did
};

// A case of left_whole.cases.
WholeCase MakeWholeCase(const std::string& name, const Parts& parts) {
  WholeCase c;
  c.name = name;
  c.error = KeysError(parts, {"model", "target", "reason"});
  if (!c.error.empty()) return c;
  c.model = parts.at("model");
  c.reason = parts.at("reason");
  if (!absl::SimpleAtoi(parts.at("target"), &c.target)) c.error = "target: not a number";
  return c;
}

class WindowedWholeTest : public ::testing::TestWithParam<WholeCase> {};

// Models the windows cannot convert as the whole conversion would are left
// to it, saying why; ConvertBytes then converts them whole, to the
// same bytes or error.
TEST_P(WindowedWholeTest, LeftToTheWholeConversion) {
  const WholeCase& c = GetParam();
  ASSERT_EQ(c.error, "");
  std::string bytes = Serialized(c.model);
  ConvertOptions options;
  options.target_opset = c.target;
  StringModelSink sink;
  absl::StatusOr<ConversionReport> windowed =
      ConvertWindowed(bytes, options, sink, TwoNodesOrMore());
  ASSERT_EQ(windowed.status().code(), absl::StatusCode::kUnimplemented) << windowed.status();
  EXPECT_NE(windowed.status().message().find(c.reason), std::string::npos)
      << windowed.status();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes));
  absl::StatusOr<ConversionResult> whole = ConvertModel(model, options);
  StringModelSink serialized;
  std::string why;
  absl::StatusOr<ConversionReport> report =
      ConvertBytesOrError(bytes, options, serialized, TwoNodesOrMore(), &why);
  EXPECT_NE(why.find(c.reason), std::string::npos) << why;
  ASSERT_EQ(report.status(), whole.status());
  if (whole.ok()) {
    EXPECT_EQ(UntimedJson(*report), UntimedJson(whole->report));
    EXPECT_TRUE(serialized.bytes() == whole->model.SerializeAsString());
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, WindowedWholeTest,
                         ::testing::ValuesIn(CasesOf("left_whole.cases", MakeWholeCase)),
                         [](const ::testing::TestParamInfo<WholeCase>& info) {
                           return info.param.name;
                         });

struct WindowsCase {
  std::string name;
  std::string model;
  std::vector<int64_t> targets;  // each converted to
  std::string error;             // why the case did not read; "" when it did
};

// A case of subgraphs.cases or unparsed.cases.
WindowsCase MakeWindowsCase(const std::string& name, const Parts& parts) {
  WindowsCase c;
  c.name = name;
  c.error = KeysError(parts, {"model", "targets"});
  if (!c.error.empty()) return c;
  c.model = parts.at("model");
  for (absl::string_view target : absl::StrSplit(parts.at("targets"), ", ")) {
    if (!absl::SimpleAtoi(target, &c.targets.emplace_back())) c.error = "targets: not numbers";
  }
  return c;
}

class WindowedCaseFileTest : public ::testing::TestWithParam<WindowsCase> {};

// Converts `bytes` with windows of each size in `windows`: each gives the
// whole conversion's bytes and report.
void ExpectWindowsGiveTheWholeConversion(const std::string& bytes, const ConvertOptions& options,
                                         std::initializer_list<int64_t> windows = {1, 2, 3,
                                                                                   1000}) {
  Whole whole = ConvertWhole(bytes, options);
  ASSERT_FALSE(whole.bytes.empty());
  for (int64_t window : windows) {
    StringModelSink sink;
    std::string why;
    absl::StatusOr<ConversionReport> report =
        ConvertBytesOrError(bytes, options, sink, SmallWindows(window), &why);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(why, "") << window;
    EXPECT_EQ(UntimedJson(*report), whole.report) << window;
    EXPECT_TRUE(sink.bytes() == whole.bytes) << window;
    if (sink.bytes() != whole.bytes) {
      onnx::ModelProto a, b;
      ASSERT_TRUE(a.ParseFromString(sink.bytes()));
      ASSERT_TRUE(b.ParseFromString(whole.bytes));
      EXPECT_EQ(a.DebugString(), b.DebugString()) << window;
    }
  }
}

// Nodes with subgraphs go through the windows, their subgraphs converted
// with them, to the bytes and report of the whole conversion, whatever the
// window size (one node: every value a subgraph reads comes from an earlier
// window).
TEST_P(WindowedCaseFileTest, SameBytesAndReportAsTheWholeConversion) {
  const WindowsCase& c = GetParam();
  ASSERT_EQ(c.error, "");
  std::string bytes = Serialized(c.model);
  for (int64_t target : c.targets) {
    SCOPED_TRACE(absl::StrCat("to ", target));
    ConvertOptions options;
    options.target_opset = target;
    ExpectWindowsGiveTheWholeConversion(bytes, options);
  }
}

// A case file's case's test name: the case's.
std::string WindowsCaseName(const ::testing::TestParamInfo<WindowsCase>& info) {
  return info.param.name;
}

// PyTorch-style control flow: If, Loop and Scan bodies of ordinary ops,
// some of them ops a step rewrites.
INSTANTIATE_TEST_SUITE_P(Cases, WindowedCaseFileTest,
                         ::testing::ValuesIn(CasesOf("subgraphs.cases", MakeWindowsCase)),
                         WindowsCaseName);

// Nodes every step only rebinds, passed through unparsed, among others.
INSTANTIATE_TEST_SUITE_P(Unparsed, WindowedCaseFileTest,
                         ::testing::ValuesIn(CasesOf("unparsed.cases", MakeWindowsCase)),
                         WindowsCaseName);

// Calls of model-local functions, whose bodies are converted once.
INSTANTIATE_TEST_SUITE_P(Functions, WindowedCaseFileTest,
                         ::testing::ValuesIn(CasesOf("functions.cases", MakeWindowsCase)),
                         WindowsCaseName);

// Nodes a step inserts and a later one changes.
INSTANTIATE_TEST_SUITE_P(Inserted, WindowedCaseFileTest,
                         ::testing::ValuesIn(CasesOf("inserted.cases", MakeWindowsCase)),
                         WindowsCaseName);

// Converts `bytes` to each of `targets` in windows of 7, 64 and 1000 nodes:
// each gives the whole conversion's bytes and report.
void ExpectEachTargetThroughTheWindows(const std::string& bytes,
                                       std::initializer_list<int64_t> targets) {
  for (int64_t target : targets) {
    SCOPED_TRACE(absl::StrCat("to ", target));
    ConvertOptions options;
    options.target_opset = target;
    ExpectWindowsGiveTheWholeConversion(bytes, options, {7, 64, 1000});
  }
}

// WindowOptions::release is handed pieces of the model's bytes that the
// passes over the nodes (the split, both walks, the windows) have left
// behind, a MiB or more each, together more than the graph's bytes; the
// conversion is the same with it, whether the pieces' pages are dropped or
// not (the CLI and the server drop them: MappedFile::Release).
TEST(WindowedTest, PassesHandOverTheBytesTheyLeaveBehind) {
  struct Case {
    const char* name;
    onnx::ModelProto model;
    int64_t target;
  };
  const Case cases[] = {
      {"chain", bench::MakeChainModel(60000), 21},
      {"if_chain", bench::MakeIfChainModel(60000, 100), 13},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string bytes = c.model.SerializeAsString();
    ASSERT_GT(bytes.size(), size_t{2} << 20);
    ConvertOptions options;
    options.target_opset = c.target;
    std::vector<absl::string_view> pieces;
    WindowOptions windows = SmallWindows(1024);
    windows.release = [&](absl::string_view piece) { pieces.push_back(piece); };
    StringModelSink with_release;
    StringModelSink without;
    ASSERT_TRUE(ConvertBytesOrError(bytes, options, with_release, windows).ok());
    ASSERT_TRUE(ConvertBytesOrError(bytes, options, without, SmallWindows(1024)).ok());
    EXPECT_TRUE(with_release.bytes() == without.bytes());
    size_t released = 0;
    for (absl::string_view piece : pieces) {
      EXPECT_GE(piece.size(), size_t{1} << 20);
      EXPECT_GE(piece.data(), bytes.data());
      EXPECT_LE(piece.data() + piece.size(), bytes.data() + bytes.size());
      released += piece.size();
    }
    EXPECT_GT(released, bytes.size());
  }
}

// The If-wrapped chain of the benchmarks: every 100th block of the chain
// in an If, converted in windows of many sizes.
TEST(WindowedTest, IfChainsGoThroughTheWindows) {
  ExpectEachTargetThroughTheWindows(bench::MakeIfChainModel(2000, 10).SerializeAsString(),
                                    {13, 21});
}

// The Loop-wrapped chain of the benchmarks: every 10th block the body of a
// Loop, going up and down.
TEST(WindowedTest, LoopChainsGoThroughTheWindows) {
  ExpectEachTargetThroughTheWindows(bench::MakeLoopChainModel(2000, 10).SerializeAsString(),
                                    {13, 21, 11});
}

// The chain of the benchmarks with every 10th block a call of a model-local
// function: the calls go through the windows, the function body is
// converted once.
TEST(WindowedTest, CallChainsGoThroughTheWindows) {
  ExpectEachTargetThroughTheWindows(bench::MakeCallChainModel(2000, 10).SerializeAsString(),
                                    {13, 21, 11});
}

// The If and call chains exported at 21 and taken down to the opsets older
// runtimes accept: the Unsqueeze and Squeeze nodes take their axes as
// attributes again, in the If branches and in the function body too.
TEST(WindowedTest, ChainsWithSubgraphsAndFunctionsGoDownThroughTheWindows) {
  for (const onnx::ModelProto& source :
       {bench::MakeIfChainModel(2000, 10), bench::MakeCallChainModel(2000, 10),
        bench::MakeLoopChainModel(2000, 10)}) {
    ConvertOptions up;
    up.target_opset = 21;
    std::string at21 = ConvertWhole(source.SerializeAsString(), up).bytes;
    ASSERT_FALSE(at21.empty());
    ExpectEachTargetThroughTheWindows(at21, {17, 13, 11});
  }
}

// Unnamed nodes share a fresh-name prefix (their op), so that a later
// window's earlier step would take a name first: left whole.
TEST(WindowedTest, SharedPrefixesInAnotherOrderAreLeftWhole) {
  std::string bytes = Serialized(R"(<ir_version: 7, opset_import: ["" : 12]>
      g (float[2,1] X) => (float[2,1] Y) {
        A = Squeeze <axes = [1]> (X)
        B = Unsqueeze <axes = [1]> (A)
        C = Squeeze <axes = [1]> (B)
        Y = Unsqueeze <axes = [1]> (C)
      })");
  ConvertOptions options;
  options.target_opset = 13;
  Whole whole = ConvertWhole(bytes, options);
  StringModelSink sink;
  std::string why;
  absl::StatusOr<ConversionReport> report =
      ConvertBytesOrError(bytes, options, sink, SmallWindows(1), &why);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(UntimedJson(*report), whole.report);
  EXPECT_TRUE(sink.bytes() == whole.bytes);
}

// A Constant of one window feeds an adapter of a later one.
TEST(WindowedTest, ConstantsOfEarlierWindowsReachLaterAdapters) {
  std::string bytes = Serialized(R"(<ir_version: 7, opset_import: ["" : 13]>
      g (float[2,3] X) => (float[2,3] Y) {
        Axes = Constant <value = int64[1] {1}> ()
        A = Relu(X)
        B = Unsqueeze(A, Axes)
        C = Relu(B)
        Y = Squeeze(C, Axes)
      })");
  ConvertOptions options;
  options.target_opset = 11;
  Whole whole = ConvertWhole(bytes, options);
  for (int64_t window : {1, 2, 3, 5}) {
    StringModelSink sink;
    absl::StatusOr<ConversionReport> report =
        ConvertWindowed(bytes, options, sink, SmallWindows(window));
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(UntimedJson(*report), whole.report) << window;
    EXPECT_TRUE(sink.bytes() == whole.bytes) << window;
  }
}

// A large floating-point initializer is read as a header and written out as
// it came; the adapters see no value for it, so a conversion that needs one
// is left whole.
TEST(WindowedTest, LargeWeightsAreCopiedNotParsed) {
  onnx::ModelProto model = bench::MakeChainModel(200);
  onnx::TensorProto* weight = model.mutable_graph()->mutable_initializer(0);
  ASSERT_EQ(weight->name(), "W");
  std::string data(4 * 256, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  weight->set_raw_data(data);
  std::string bytes = model.SerializeAsString();
  ConvertOptions options;
  options.target_opset = 21;
  Whole whole = ConvertWhole(bytes, options);
  WindowOptions windows = SmallWindows(16);
  windows.header_only_bytes = 1000;  // W (1 KiB), not B
  StringModelSink sink;
  absl::StatusOr<ConversionReport> report = ConvertWindowed(bytes, options, sink, windows);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(UntimedJson(*report), whole.report);
  EXPECT_TRUE(sink.bytes() == whole.bytes);
  // Upsample 9 -> 7 needs its scales' values: not read, so left whole.
  std::string upsample = Serialized(R"(<ir_version: 7, opset_import: ["" : 9]>
      g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[4] S = {1.0, 1.0, 2.0, 2.0}> {
        T = Relu(X)
        Y = Upsample <mode = "nearest"> (T, S)
      })");
  options.target_opset = 7;
  windows.header_only_bytes = 1;
  absl::StatusOr<ConversionReport> left =
      ConvertWindowed(upsample, options, sink, windows);
  EXPECT_EQ(left.status().code(), absl::StatusCode::kUnimplemented) << left.status();
  EXPECT_NE(left.status().message().find("Upsample"), std::string::npos) << left.status();
  std::string why;
  EXPECT_TRUE(ConvertBytesOrError(upsample, options, sink, windows, &why).ok());
  EXPECT_FALSE(why.empty());
}

// A graph of few nodes goes through the windows when the model is large in
// bytes (its weights, as a detection model's): they are written as they
// came, not parsed into a whole model beside the file's bytes.
TEST(WindowedTest, FewNodesWithLargeWeightsGoThroughTheWindows) {
  onnx::ModelProto model = bench::MakeChainModel(20);
  model.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(4 * 256, '\1'));
  std::string bytes = model.SerializeAsString();
  ConvertOptions options;
  options.target_opset = 21;
  Whole whole = ConvertWhole(bytes, options);
  WindowOptions windows;
  windows.window_nodes = 8;
  windows.header_only_bytes = 1000;
  windows.min_bytes = static_cast<int64_t>(bytes.size());
  StringModelSink sink;
  absl::StatusOr<ConversionReport> report = ConvertWindowed(bytes, options, sink, windows);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(UntimedJson(*report), whole.report);
  EXPECT_TRUE(sink.bytes() == whole.bytes);
  windows.min_bytes = static_cast<int64_t>(bytes.size()) + 1;
  absl::StatusOr<ConversionReport> left = ConvertWindowed(bytes, options, sink, windows);
  EXPECT_EQ(left.status().code(), absl::StatusCode::kUnimplemented) << left.status();
  EXPECT_NE(left.status().message().find("fewer than 1024, in"), std::string::npos)
      << left.status();
}

// An initializer read as a header is checked against the sizes of its data
// in the file, however they are encoded: the windows take the models the
// whole conversion takes and leave it those it refuses, for the same reason.
TEST(WindowedTest, WeightsReadAsHeadersAreCheckedAgainstTheirDataInTheFile) {
  struct Case {
    std::string name;
    std::function<void(onnx::TensorProto& w, onnx::TensorProto& v)> edit;
    std::string error;  // "" when the model is valid
  };
  // V, unused, is FLOAT16 in int32_data: varints of 3 bytes, counted without decoding.
  auto float16_values = [](onnx::TensorProto& v, int count) {
    v.clear_raw_data();
    v.set_data_type(onnx::TensorProto::FLOAT16);
    for (int i = 0; i < count; ++i) v.add_int32_data(0x7c00);  // infinity
  };
  const Case cases[] = {
      {"raw_data", nullptr, ""},
      {"float_data",
       [](onnx::TensorProto& w, onnx::TensorProto&) {
         w.clear_raw_data();
         for (int i = 0; i < 256; ++i) w.add_float_data(0.5f * i);
       },
       ""},
      {"float16_in_int32_data",
       [&](onnx::TensorProto&, onnx::TensorProto& v) { float16_values(v, 16); }, ""},
      {"raw_data_a_byte_short",
       [](onnx::TensorProto& w, onnx::TensorProto&) { w.mutable_raw_data()->pop_back(); },
       "tensor 'W': raw_data holds 1023 bytes; dims [16, 16] of FLOAT need 1024"},
      {"float_data_a_value_over",
       [](onnx::TensorProto& w, onnx::TensorProto&) {
         w.clear_raw_data();
         for (int i = 0; i < 257; ++i) w.add_float_data(1.0f);
       },
       "tensor 'W': float_data holds 257 values; dims [16, 16] of FLOAT need 256"},
      {"float16_a_value_short",
       [&](onnx::TensorProto&, onnx::TensorProto& v) { float16_values(v, 15); },
       "tensor 'V': int32_data holds 15 values; dims [16] of FLOAT16 need 16"},
      {"data_in_two_fields",
       [](onnx::TensorProto& w, onnx::TensorProto&) { w.add_float_data(1.0f); },
       "tensor 'W': data in both float_data and raw_data; a tensor's data is in one field"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto model = bench::MakeChainModel(200);
    onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
    // An unused copy of B for the FLOAT16 cases.
    onnx::TensorProto& v = *model.mutable_graph()->add_initializer();
    v = model.graph().initializer(1);
    v.set_name("V");
    if (c.edit) c.edit(w, v);
    std::string bytes = model.SerializeAsString();
    ConvertOptions options;
    options.target_opset = 13;
    absl::StatusOr<ConversionResult> whole = ConvertModel(model, options);
    WindowOptions windows = SmallWindows(16);
    windows.header_only_bytes = 1;  // every floating-point initializer
    StringModelSink sink;
    absl::StatusOr<ConversionReport> report = ConvertWindowed(bytes, options, sink, windows);
    if (c.error.empty()) {
      ASSERT_TRUE(whole.ok()) << c.name << ": " << whole.status();
      ASSERT_TRUE(report.ok()) << c.name << ": " << report.status();
      EXPECT_TRUE(sink.bytes() == whole->model.SerializeAsString()) << c.name;
      continue;
    }
    EXPECT_FALSE(whole.ok()) << c.name;
    EXPECT_NE(whole.status().message().find(c.error), std::string::npos)
        << c.name << ": " << whole.status();
    EXPECT_EQ(report.status().code(), absl::StatusCode::kUnimplemented) << c.name;
    EXPECT_NE(report.status().message().find(c.error), std::string::npos)
        << c.name << ": " << report.status();
  }
}

TEST(WindowedTest, StopsWhenAsked) {
  std::string bytes = bench::MakeChainModel(200).SerializeAsString();
  ConvertOptions options;
  options.target_opset = 13;
  options.should_stop = [] { return true; };
  StringModelSink sink;
  absl::StatusOr<ConversionReport> report =
      ConvertBytesOrError(bytes, options, sink, SmallWindows(16));
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
}

TEST(WindowedTest, FileSinkWritesTheSameBytesAndNothingPartial) {
  std::string bytes = bench::MakeChainModel(300).SerializeAsString();
  ConvertOptions options;
  options.target_opset = 21;
  Whole whole = ConvertWhole(bytes, options);
  std::string path = absl::StrCat(::testing::TempDir(), "/windowed.onnx");
  {
    FileModelSink sink(path);
    absl::StatusOr<ConversionReport> report =
        ConvertWindowed(bytes, options, sink, SmallWindows(32));
    ASSERT_TRUE(report.ok()) << report.status();
  }
  std::ifstream file(path, std::ios::binary);
  std::string written((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(written == whole.bytes);
  EXPECT_FALSE(std::ifstream(path + ".partial").good());
  EXPECT_FALSE(std::ifstream(path + ".nodes.partial").good());
  // A conversion that fails leaves nothing at the path.
  std::string failed_path = absl::StrCat(::testing::TempDir(), "/failed.onnx");
  {
    FileModelSink sink(failed_path);
    options.should_stop = [] { return true; };
    EXPECT_FALSE(ConvertBytesOrError(bytes, options, sink, SmallWindows(32)).ok());
  }
  EXPECT_FALSE(std::ifstream(failed_path).good());
  EXPECT_FALSE(std::ifstream(failed_path + ".nodes.partial").good());
}

}  // namespace
}  // namespace onnxconvert::converter
