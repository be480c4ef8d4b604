#ifndef ONNX_CONVERT_CONVERTER_REPORT_TESTING_H_
#define ONNX_CONVERT_CONVERTER_REPORT_TESTING_H_

// For tests that compare conversion reports.

#include <string>

#include "converter/converter.h"

namespace onnxconvert::converter {

// `report` as JSON with its timings zeroed, for comparing two conversions.
inline std::string UntimedJson(ConversionReport report) {
  for (StepReport& step : report.steps) step.milliseconds = 0;
  return report.ToJson();
}

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_REPORT_TESTING_H_
