// Model bytes -> load, check, infer (loose and strict), as `onnx-convert
// check` and `infer` do.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "ir/model_io.h"
#include "schema/checker.h"
#include "schema/inference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxconvert;
  if (size > fuzz::kMaxInputBytes) return 0;
  absl::StatusOr<onnx::ModelProto> model = ParseModel(fuzz::Bytes(data, size), "fuzz");
  if (!model.ok()) return 0;
  schema::CheckReport report = schema::CheckModel(*model);
  (void)report;
  for (bool strict : {false, true}) {
    absl::StatusOr<schema::InferenceResult> inferred =
        schema::InferModel(*model, schema::InferenceOptions{.strict = strict});
    (void)inferred;
  }
  return 0;
}
