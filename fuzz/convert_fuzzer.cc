// Model bytes -> convert to opset 7 and to 21: whole (ConvertModel), and
// window by window with windows of one node (the large-model path forced on
// small models), as the CLI and the service convert.
#include <optional>
#include <cstddef>
#include <cstdint>
#include <string>

#include "converter/converter.h"
#include "converter/windowed.h"
#include "fuzz/fuzz_util.h"
#include "ir/model_io.h"
#include "ir/model_sink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxconvert;
  if (size > fuzz::kMaxInputBytes) return 0;
  std::string_view bytes = fuzz::Bytes(data, size);
  absl::StatusOr<onnx::ModelProto> model = ParseModel(bytes, "fuzz");
  for (int64_t target : {7, 21}) {
    converter::ConvertOptions options;
    options.target_opset = target;
    options.no_casts = target != 7;
    if (model.ok()) {
      absl::StatusOr<converter::ConversionResult> whole = converter::ConvertModel(*model, options);
      (void)whole;
    }
    converter::WindowOptions windows;
    windows.window_nodes = 1;
    windows.min_nodes = 0;
    windows.header_only_bytes = 64;
    StringModelSink sink;
    absl::StatusOr<std::optional<converter::ConversionReport>> windowed =
        converter::ConvertBytes(fuzz::AbslBytes(data, size), options, sink, windows);
    (void)windowed;
  }
  return 0;
}
