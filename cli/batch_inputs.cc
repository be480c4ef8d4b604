#include "cli/batch_inputs.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace onnxconvert::cli {
namespace {
namespace fs = std::filesystem;

// A model found among the inputs, with the name its outputs take.
struct FoundModel {
  fs::path path;
  std::string name;
  std::string origin;  // the input (or manifest line) it came from
};

// Gathers models, skipping those under the output directory and repeats.
class Collector {
 public:
  explicit Collector(fs::path out_dir) : out_dir_(std::move(out_dir)) {}

  // Adds the models of one input; `in_manifest` makes any file a model.
  absl::Status Add(const fs::path& input, const std::string& origin, bool in_manifest);
  std::vector<FoundModel>& models() { return models_; }

 private:
  absl::Status AddDirectory(const fs::path& dir, const std::string& origin);
  absl::Status AddManifest(const fs::path& manifest);
  void AddModel(const fs::path& path, std::string name, const std::string& origin);
  bool UnderOutput(const fs::path& canonical) const;

  fs::path out_dir_;
  std::set<fs::path> seen_;
  std::vector<FoundModel> models_;
};

bool Collector::UnderOutput(const fs::path& canonical) const {
  auto [end, _] = std::mismatch(out_dir_.begin(), out_dir_.end(), canonical.begin(),
                                canonical.end());
  return end == out_dir_.end();
}

void Collector::AddModel(const fs::path& path, std::string name, const std::string& origin) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  if (UnderOutput(canonical) || !seen_.insert(canonical).second) return;
  models_.push_back({path, std::move(name), origin});
}

absl::Status Collector::AddDirectory(const fs::path& dir, const std::string& origin) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".onnx" &&
        !absl::StartsWith(it->path().filename().string(), ".")) {
      files.push_back(it->path());
    }
  }
  if (ec) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    // Lexical: a symlink among the files keeps its own name (fs::relative
    // would follow it out of the directory).
    AddModel(file, file.lexically_relative(dir).string(), origin);
  }
  return absl::OkStatus();
}

absl::Status Collector::AddManifest(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(manifest.string(), ": cannot read the manifest"));
  }
  fs::path base = manifest.parent_path();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    absl::string_view entry = absl::StripAsciiWhitespace(line);
    if (entry.empty() || absl::StartsWith(entry, "#")) continue;
    fs::path path(std::string{entry});
    if (path.is_relative()) path = base / path;
    absl::Status added =
        Add(path, absl::StrCat(manifest.string(), ":", number), /*in_manifest=*/true);
    if (!added.ok()) return added;
  }
  return absl::OkStatus();
}

absl::Status Collector::Add(const fs::path& input, const std::string& origin,
                            bool in_manifest) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) return AddDirectory(input, origin);
  if (!fs::is_regular_file(input, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", input.string(),
                                                   ": no such file or directory"));
  }
  if (in_manifest || input.extension() == ".onnx") {
    AddModel(input, input.filename().string(), origin);
    return absl::OkStatus();
  }
  return AddManifest(input);
}

// `name` without a final ".onnx", plus `suffix`.
std::string Sibling(const std::string& name, absl::string_view suffix) {
  absl::string_view stem = name;
  absl::ConsumeSuffix(&stem, ".onnx");
  return absl::StrCat(stem, suffix);
}

}  // namespace

absl::StatusOr<std::vector<BatchJob>> CollectBatchJobs(const std::vector<std::string>& inputs,
                                                       const std::string& out_dir,
                                                       absl::string_view report_extension) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(out_dir, ec), ec);
  Collector collector(out);
  for (const std::string& input : inputs) {
    absl::Status added = collector.Add(input, input, /*in_manifest=*/false);
    if (!added.ok()) return added;
  }
  if (collector.models().empty()) {
    return absl::InvalidArgumentError("no model (*.onnx) among the inputs");
  }
  std::map<std::string, std::string> origin_of_output;
  std::vector<BatchJob> jobs;
  for (const FoundModel& model : collector.models()) {
    fs::path name(model.name);
    if (name.empty() || name.is_absolute() || *name.begin() == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          model.path.string(), ": its output ", model.name, " would be outside ", out_dir));
    }
    if (fs::equivalent(model.path, fs::path(out_dir) / name, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat(model.path.string(), ": its output would overwrite it"));
    }
    auto [it, added] = origin_of_output.emplace(model.name, model.path.string());
    if (!added) {
      return absl::InvalidArgumentError(absl::StrCat(
          model.path.string(), ": would write ", model.name, " in ", out_dir, ", as ",
          it->second, " does (from ", model.origin, ")"));
    }
    BatchJob& job = jobs.emplace_back();
    job.input = model.path.string();
    job.name = model.name;
    job.output = (fs::path(out_dir) / model.name).string();
    job.report = (fs::path(out_dir) / Sibling(model.name, absl::StrCat(".report.",
                                                                      report_extension)))
                     .string();
    job.error = (fs::path(out_dir) / Sibling(model.name, ".error.txt")).string();
  }
  return jobs;
}

int ShardOf(absl::string_view name, int count) {
  constexpr uint64_t kFnvOffset = 14695981039346656037ull;
  constexpr uint64_t kFnvPrime = 1099511628211ull;
  uint64_t hash = kFnvOffset;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= kFnvPrime;
  }
  return static_cast<int>(hash % static_cast<uint64_t>(std::max(count, 1)));
}

std::vector<BatchJob> JobsOfShard(std::vector<BatchJob> jobs, const Shard& shard) {
  if (shard.count <= 1) return jobs;
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                            [&](const BatchJob& job) {
                              return ShardOf(job.name, shard.count) != shard.index;
                            }),
             jobs.end());
  return jobs;
}

}  // namespace onnxconvert::cli
