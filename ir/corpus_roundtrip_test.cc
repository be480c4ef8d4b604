// Every model of the ONNX backend test corpus loads, serializes back to the
// same bytes, saves to the same bytes, and survives a trip through external
// data.

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/external_data.h"
#include "ir/model_io.h"
#include "ir/tensor_util.h"
#include "tests/corpus.h"
#include "tests/test_files.h"

namespace onnxconvert {
namespace {
namespace fs = std::filesystem;

std::vector<testing::CorpusCase> Cases() {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases =
      testing::ListCorpusCases();
  EXPECT_TRUE(cases.ok()) << cases.status();
  return cases.ok() ? *cases : std::vector<testing::CorpusCase>{};
}

// "differ at byte N (sizes A and B)", or "" when equal.
std::string Difference(const std::string& actual, const std::string& expected) {
  if (actual == expected) return "";
  size_t at = 0;
  while (at < actual.size() && at < expected.size() && actual[at] == expected[at]) {
    ++at;
  }
  return absl::StrCat("differ at byte ", at, " (", actual.size(), " bytes, file has ",
                      expected.size(), ")");
}

void ReportFailures(const std::vector<std::string>& failures, size_t total) {
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << total
                                << " models failed:\n"
                                << absl::StrJoin(failures, "\n");
}

TEST(CorpusRoundTripTest, ParseThenSerializeIsByteIdentical) {
  std::vector<testing::CorpusCase> cases = Cases();
  ASSERT_GT(cases.size(), 1000u);
  std::vector<std::string> failures;
  for (const testing::CorpusCase& c : cases) {
    std::string bytes = testing::ReadTestFile(c.model_path);
    absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, c.name);
    if (!model.ok()) {
      failures.push_back(std::string(model.status().message()));
      continue;
    }
    std::string diff = Difference(model->SerializeAsString(), bytes);
    if (!diff.empty()) failures.push_back(absl::StrCat(c.name, ": serialized bytes ", diff));
  }
  ReportFailures(failures, cases.size());
}

TEST(CorpusRoundTripTest, LoadThenSaveWritesTheSameFile) {
  std::vector<testing::CorpusCase> cases = Cases();
  ASSERT_GT(cases.size(), 1000u);
  fs::path out = testing::FreshTestDir("corpus_roundtrip") / "model.onnx";
  std::vector<std::string> failures;
  for (const testing::CorpusCase& c : cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    absl::Status status = loaded.ok() ? SaveModel(loaded->model, out.string())
                                      : loaded.status();
    if (!status.ok()) {
      failures.push_back(absl::StrCat(c.name, ": ", status.message()));
      continue;
    }
    std::string diff = Difference(testing::ReadTestFile(out.string()), testing::ReadTestFile(c.model_path));
    if (!diff.empty()) failures.push_back(absl::StrCat(c.name, ": saved file ", diff));
  }
  ReportFailures(failures, cases.size());
}

std::vector<const onnx::TensorProto*> AllTensors(const onnx::ModelProto& model) {
  std::vector<const onnx::TensorProto*> tensors;
  EXPECT_TRUE(ForEachTensor(model, [&](const onnx::TensorProto& tensor,
                                       const TensorPath&) {
                tensors.push_back(&tensor);
                return absl::OkStatus();
              }).ok());
  return tensors;
}

// The tensor's fields other than its data.
std::string Header(onnx::TensorProto tensor) {
  for (auto clear : {&onnx::TensorProto::clear_raw_data, &onnx::TensorProto::clear_float_data,
                     &onnx::TensorProto::clear_int32_data, &onnx::TensorProto::clear_int64_data,
                     &onnx::TensorProto::clear_double_data,
                     &onnx::TensorProto::clear_uint64_data,
                     &onnx::TensorProto::clear_external_data,
                     &onnx::TensorProto::clear_data_location}) {
    (tensor.*clear)();
  }
  return tensor.SerializeAsString();
}

// Typed values decoded from raw little-endian bytes equal `values`.
template <typename T, typename Values>
bool RawMatches(const std::string& raw, const Values& values) {
  if (raw.size() != values.size() * sizeof(T)) return false;
  for (int i = 0; i < values.size(); ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
    if (std::memcmp(&value, &values[i], sizeof(T)) != 0) return false;
  }
  return true;
}

// Whether `loaded` (read back from external data) holds `original`'s data.
bool SameData(const onnx::TensorProto& original, const onnx::TensorProto& loaded) {
  if (original.has_raw_data() || !loaded.has_raw_data()) {
    return loaded.SerializeAsString() == original.SerializeAsString();
  }
  const std::string& raw = loaded.raw_data();
  switch (original.data_type()) {
    case onnx::TensorProto::FLOAT:
      return RawMatches<float>(raw, original.float_data());
    case onnx::TensorProto::DOUBLE:
      return RawMatches<double>(raw, original.double_data());
    case onnx::TensorProto::INT32:
      return RawMatches<int32_t>(raw, original.int32_data());
    case onnx::TensorProto::INT64:
      return RawMatches<int64_t>(raw, original.int64_data());
    case onnx::TensorProto::UINT64:
      return RawMatches<uint64_t>(raw, original.uint64_data());
    default: {
      std::optional<int> bits = ElementBitWidth(original.data_type());
      std::optional<int64_t> count = ElementCount(original);
      return bits && count &&
             static_cast<int64_t>(raw.size()) == *count * *bits / 8;
    }
  }
}

TEST(CorpusRoundTripTest, ExternalDataRoundTripKeepsEveryTensor) {
  std::vector<testing::CorpusCase> cases = Cases();
  ASSERT_GT(cases.size(), 1000u);
  fs::path out = testing::FreshTestDir("corpus_roundtrip") / "model.onnx";
  SaveOptions save;
  save.external_data_threshold = 0;
  LoadOptions load;
  load.load_external_data = true;
  std::vector<std::string> failures;
  int with_data_file = 0;
  for (const testing::CorpusCase& c : cases) {
    fs::remove(out.string() + ".data");
    absl::StatusOr<LoadedModel> original = LoadModel(c.model_path);
    absl::Status status =
        original.ok() ? SaveModel(original->model, out.string(), save) : original.status();
    absl::StatusOr<LoadedModel> loaded =
        status.ok() ? LoadModel(out.string(), load) : absl::StatusOr<LoadedModel>(status);
    if (!loaded.ok()) {
      failures.push_back(absl::StrCat(c.name, ": ", loaded.status().message()));
      continue;
    }
    with_data_file += fs::exists(out.string() + ".data");
    std::vector<const onnx::TensorProto*> before = AllTensors(original->model);
    std::vector<const onnx::TensorProto*> after = AllTensors(loaded->model);
    if (before.size() != after.size()) {
      failures.push_back(absl::StrCat(c.name, ": tensor count changed"));
      continue;
    }
    for (size_t i = 0; i < before.size(); ++i) {
      if (Header(*before[i]) != Header(*after[i]) || !SameData(*before[i], *after[i])) {
        failures.push_back(
            absl::StrCat(c.name, ": tensor '", before[i]->name(), "' changed"));
      }
    }
  }
  ReportFailures(failures, cases.size());
  EXPECT_GT(with_data_file, 300);
}

}  // namespace
}  // namespace onnxconvert
