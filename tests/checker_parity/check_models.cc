// Reads model paths, one a line, from stdin and checks each as
// `onnx-convert check` does (LoadModel, then CheckModel), printing one line
// for each: "accept<TAB>PATH", or "refuse<TAB>PATH<TAB>first error" (a model
// that does not load is refused with the load error). One process for many
// models, for checker_parity_test.

#include <iostream>
#include <optional>
#include <string>

#include "absl/strings/str_replace.h"
#include "ir/model_io.h"
#include "schema/checker.h"

namespace {

// The first error for `path`, or nullopt when the model loads and checks.
std::optional<std::string> FirstError(const std::string& path) {
  absl::StatusOr<onnxconvert::LoadedModel> loaded = onnxconvert::LoadModel(path);
  absl::Status status = loaded.ok() ? onnxconvert::schema::CheckModel(loaded->model).status()
                                    : loaded.status();
  if (status.ok()) return std::nullopt;
  return absl::StrReplaceAll(status.ToString(), {{"\n", " "}, {"\t", " "}});
}

}  // namespace

int main() {
  std::string path;
  while (std::getline(std::cin, path)) {
    if (path.empty()) continue;
    std::optional<std::string> error = FirstError(path);
    if (!error) {
      std::cout << "accept\t" << path << "\n";
    } else {
      std::cout << "refuse\t" << path << "\t" << *error << "\n";
    }
  }
  return 0;
}
