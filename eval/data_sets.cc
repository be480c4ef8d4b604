#include "eval/data_sets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/input_roles.h"
#include "ir/model_io.h"
#include "schema/type_strings.h"

namespace onnxconvert::eval {
namespace {

namespace fs = std::filesystem;

// Most elements of one random input.
constexpr int64_t kMaxRandomElements = int64_t{1} << 28;

// The number N of a name "<prefix>N<suffix>", or -1.
int64_t NumberIn(absl::string_view name, absl::string_view prefix, absl::string_view suffix) {
  if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, suffix)) return -1;
  absl::string_view digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  int64_t number = -1;
  if (digits.empty() || !absl::SimpleAtoi(digits, &number)) return -1;
  return number;
}

// The files `dir`/<prefix>N.pb, in order of N.
std::vector<std::string> NumberedFiles(const fs::path& dir, absl::string_view prefix) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    int64_t n = NumberIn(entry.path().filename().string(), prefix, ".pb");
    if (n >= 0 && entry.is_regular_file(ec)) found.emplace_back(n, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto& [n, path] : found) files.push_back(std::move(path));
  return files;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The values in `files`, the K-th read as `declared[K]`'s type.
absl::StatusOr<std::vector<NamedValue>> LoadValues(
    const std::vector<std::string>& files,
    const std::vector<const onnx::ValueInfoProto*>& declared, absl::string_view what,
    int64_t max_elements) {
  if (files.size() > declared.size()) {
    return absl::InvalidArgumentError(absl::StrCat(files.size(), " ", what, " files for ",
                                                   declared.size(), " ", what, "s of the graph"));
  }
  std::vector<NamedValue> values;
  for (size_t k = 0; k < files.size(); ++k) {
    OC_ASSIGN_OR_RETURN(std::string bytes, ReadFile(files[k]));
    OC_ASSIGN_OR_RETURN(Value value,
                        ParseValue(bytes, &declared[k]->type(), files[k], max_elements));
    values.push_back({declared[k]->name(), std::move(value)});
  }
  return values;
}

// A uniform float in [-1, 1) from `rng`, the same on every platform.
float UnitFloat(std::mt19937_64& rng) {
  // 24 random bits: every value in [-1, 1) is exact in float.
  return static_cast<float>(static_cast<double>(rng() >> 40) * 0x1.0p-23 - 1.0);
}

// A random tensor of `elem_type` and `dims`.
absl::StatusOr<Tensor> RandomTensor(int32_t elem_type, std::vector<int64_t> dims,
                                    std::mt19937_64& rng) {
  if (!Holds(elem_type)) {
    return absl::UnimplementedError(absl::StrCat("inputs of ", ElementTypeName(elem_type),
                                                 " are not supported by the evaluator"));
  }
  Tensor tensor(elem_type, std::move(dims));
  if (elem_type == onnx::TensorProto::STRING) {
    for (std::string& s : tensor.strings()) s = absl::StrCat("s", rng() % 1000);
    return tensor;
  }
  VisitElementType(elem_type, [&](auto v) {
    using T = decltype(v);
    for (T& x : tensor.data<T>()) {
      if constexpr (std::is_same_v<T, bool>) {
        x = (rng() & 1) != 0;
      } else if constexpr (std::is_same_v<T, Half>) {
        x = FloatToHalf(UnitFloat(rng));
      } else if constexpr (std::is_same_v<T, BHalf>) {
        x = FloatToBHalf(UnitFloat(rng));
      } else if constexpr (std::is_floating_point_v<T>) {
        x = static_cast<T>(UnitFloat(rng));
      } else if constexpr (std::is_signed_v<T>) {
        x = static_cast<T>(static_cast<int64_t>(rng() % 21) - 10);
      } else {
        x = static_cast<T>(rng() % 11);
      }
    }
  });
  return tensor;
}

// The dims of a tensor input of `type`: declared extents, symbolic ones
// from `options`, others 1. `fixed` tells whether every extent is declared.
absl::StatusOr<std::vector<int64_t>> InputDims(const onnx::TypeProto::Tensor& type,
                                               const RandomInputOptions& options, bool* fixed) {
  std::vector<int64_t> dims;
  *fixed = true;
  for (const auto& dim : type.shape().dim()) {
    int64_t extent = 1;
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      extent = dim.dim_value();
    } else {
      *fixed = false;
      if (auto it = options.dims.find(dim.dim_param()); it != options.dims.end()) {
        extent = it->second;
      }
    }
    dims.push_back(extent);
  }
  int64_t count = 1;
  for (int64_t extent : dims) {
    if (extent > 0 && count > kMaxRandomElements / extent) {
      return absl::InvalidArgumentError(absl::StrCat(
          "more than ", kMaxRandomElements, " elements (size its dims with --dim)"));
    }
    count *= extent;
  }
  return dims;
}

// A random value of `type`.
absl::StatusOr<Value> RandomValue(const onnx::TypeProto& type, const RandomInputOptions& options,
                                  std::mt19937_64& rng) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      bool fixed = true;
      OC_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                          InputDims(type.tensor_type(), options, &fixed));
      OC_ASSIGN_OR_RETURN(Tensor tensor, RandomTensor(type.tensor_type().elem_type(), dims, rng));
      return Value(std::move(tensor));
    }
    case onnx::TypeProto::kSequenceType: {
      std::vector<Value> elements;
      for (int64_t i = 0; i < options.sequence_length; ++i) {
        OC_ASSIGN_OR_RETURN(Value element,
                            RandomValue(type.sequence_type().elem_type(), options, rng));
        elements.push_back(std::move(element));
      }
      return Value::Sequence(type.sequence_type().elem_type(), std::move(elements));
    }
    case onnx::TypeProto::kOptionalType: {
      OC_ASSIGN_OR_RETURN(Value content, RandomValue(type.optional_type().elem_type(), options, rng));
      return Value::Optional(type.optional_type().elem_type(), std::move(content));
    }
    default:
      return absl::UnimplementedError(absl::StrCat("random inputs of type '",
                                                   schema::TypeString(type),
                                                   "' are not supported"));
  }
}

// A random value for graph input `input`: by the role of the slot it feeds
// when it has one, with edge values when `options` asks for them.
absl::StatusOr<Value> RoleValue(const onnx::GraphProto& graph,
                                const onnx::ValueInfoProto& input,
                                const std::optional<RoleUse>& use,
                                const RandomInputOptions& options, const KnownValues& known,
                                std::mt19937_64& rng) {
  const onnx::TypeProto& type = input.type();
  if (use.has_value() && type.has_tensor_type()) {
    bool fixed = true;
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                        InputDims(type.tensor_type(), options, &fixed));
    absl::StatusOr<Tensor> tensor =
        RoleTensor(*use, type.tensor_type().elem_type(), dims, fixed, known, rng);
    if (tensor.ok()) return Value(*std::move(tensor));
  }
  OC_ASSIGN_OR_RETURN(Value value, RandomValue(type, options, rng));
  if (options.edge_values && value.is_tensor()) {
    AddEdgeValues(value.tensor(), FeedsExpLikeOp(graph, input.name()), rng);
  }
  return value;
}

// Random inputs by role: inputs whose role depends on another input's
// shape or value come after the others.
absl::StatusOr<std::vector<NamedValue>> RoleInputs(const onnx::GraphProto& graph,
                                                   const RandomInputOptions& options,
                                                   std::mt19937_64& rng) {
  std::vector<const onnx::ValueInfoProto*> fed = FedInputs(graph);
  std::vector<std::optional<RoleUse>> uses;
  for (const onnx::ValueInfoProto* input : fed) uses.push_back(FindRoleUse(graph, input->name()));
  KnownValues known = InitializerValues(graph);
  std::vector<std::optional<Value>> made(fed.size());
  for (bool dependent : {false, true}) {
    for (size_t k = 0; k < fed.size(); ++k) {
      if ((uses[k].has_value() && uses[k]->rule->reference >= 0) != dependent) continue;
      absl::StatusOr<Value> value = RoleValue(graph, *fed[k], uses[k], options, known, rng);
      if (!value.ok()) {
        return absl::Status(value.status().code(), absl::StrCat("input '", fed[k]->name(),
                                                                "': ", value.status().message()));
      }
      if (value->is_tensor()) known.Add(fed[k]->name(), value->tensor());
      made[k] = *std::move(value);
    }
  }
  std::vector<NamedValue> inputs;
  for (size_t k = 0; k < fed.size(); ++k) inputs.push_back({fed[k]->name(), *std::move(made[k])});
  return inputs;
}

}  // namespace

absl::StatusOr<std::vector<DataSet>> ListDataSets(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no such folder"));
  }
  std::vector<std::pair<int64_t, fs::path>> numbered;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    int64_t n = NumberIn(entry.path().filename().string(), "test_data_set_", "");
    if (n >= 0 && entry.is_directory(ec)) numbered.emplace_back(n, entry.path());
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<DataSet> sets;
  for (const auto& [n, path] : numbered) {
    sets.push_back({path.filename().string(), path.string(), NumberedFiles(path, "input_"),
                    NumberedFiles(path, "output_")});
  }
  if (sets.empty()) {
    DataSet self{"", dir, NumberedFiles(dir, "input_"), NumberedFiles(dir, "output_")};
    if (!self.input_files.empty() || !self.output_files.empty()) sets.push_back(std::move(self));
  }
  if (sets.empty()) {
    return absl::NotFoundError(absl::StrCat(
        dir, ": holds no test_data_set_* folders and no input_*.pb or output_*.pb files"));
  }
  return sets;
}

std::vector<const onnx::ValueInfoProto*> FedInputs(const onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> given;
  for (const auto& t : graph.initializer()) given.insert(t.name());
  for (const auto& t : graph.sparse_initializer()) given.insert(t.values().name());
  std::vector<const onnx::ValueInfoProto*> fed;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!given.contains(input.name())) fed.push_back(&input);
  }
  return fed;
}

absl::StatusOr<std::vector<NamedValue>> LoadInputs(const DataSet& set,
                                                   const onnx::GraphProto& graph,
                                                   int64_t max_elements) {
  return LoadValues(set.input_files, FedInputs(graph), "input", max_elements);
}

absl::StatusOr<std::vector<NamedValue>> LoadOutputs(const DataSet& set,
                                                    const onnx::GraphProto& graph,
                                                    int64_t max_elements) {
  std::vector<const onnx::ValueInfoProto*> outputs;
  for (const onnx::ValueInfoProto& output : graph.output()) outputs.push_back(&output);
  return LoadValues(set.output_files, outputs, "output", max_elements);
}

absl::Status WriteValues(const std::string& dir, absl::string_view prefix,
                         const std::vector<NamedValue>& values) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(dir, ": ", ec.message()));
  for (size_t k = 0; k < values.size(); ++k) {
    std::string path = (fs::path(dir) / absl::StrCat(prefix, "_", k, ".pb")).string();
    OC_RETURN_IF_ERROR(
        WriteFileAtomically(path, SerializeValue(values[k].value, values[k].name)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NamedValue>> RandomInputs(const onnx::GraphProto& graph,
                                                     const RandomInputOptions& options,
                                                     std::mt19937_64& rng) {
  if (options.by_role) return RoleInputs(graph, options, rng);
  std::vector<NamedValue> inputs;
  for (const onnx::ValueInfoProto* input : FedInputs(graph)) {
    absl::StatusOr<Value> value = RandomValue(input->type(), options, rng);
    if (!value.ok()) {
      return absl::Status(value.status().code(),
                          absl::StrCat("input '", input->name(), "': ", value.status().message()));
    }
    inputs.push_back({input->name(), *std::move(value)});
  }
  return inputs;
}

}  // namespace onnxconvert::eval
