// ONNX text -> parse -> print -> parse: what parses prints to text that
// parses again to the same model.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_util.h"
#include "ir/text_parser.h"
#include "ir/text_printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxconvert;
  if (size > fuzz::kMaxInputBytes) return 0;
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(fuzz::AbslBytes(data, size));
  if (!model.ok()) return 0;
  std::string printed = PrintModelText(*model);
  absl::StatusOr<onnx::ModelProto> again = ParseModelText(printed);
  if (!again.ok() || PrintModelText(*again) != printed) {
    // A model the printer wrote that does not read back as itself.
    std::abort();
  }
  return 0;
}
