// Model bytes -> the graph rewriter (rewrites/), exact and deploy profiles,
// as `onnx-convert optimize` and the Rewrite RPC run it on models from
// anyone.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "ir/model_io.h"
#include "rewrites/pass_manager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxconvert;
  if (size > fuzz::kMaxInputBytes) return 0;
  absl::StatusOr<onnx::ModelProto> model = ParseModel(fuzz::Bytes(data, size), "fuzz");
  if (!model.ok()) return 0;
  for (const char* profile : {"exact", "deploy"}) {
    onnx::ModelProto copy = *model;
    rewrites::RewriteOptions options;
    options.profile = profile;
    absl::StatusOr<rewrites::RewriteReport> report = rewrites::Optimize(copy, options);
    (void)report;
  }
  return 0;
}
