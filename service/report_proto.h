#ifndef ONNX_CONVERT_SERVICE_REPORT_PROTO_H_
#define ONNX_CONVERT_SERVICE_REPORT_PROTO_H_

// Conversions between the library's result structs and the onnxconvert.v1
// messages. The server fills messages from structs; clients turn messages
// back into the same structs, so that a remote run prints exactly what a
// local one does (the formatting code is shared, not copied).

#include "absl/status/statusor.h"
#include "converter/converter.h"
#include "ir/model_summary.h"
#include "proto/onnx_convert_service.pb.h"
#include "rewrites/pass_manager.h"
#include "schema/checker.h"

namespace onnxconvert::service {

namespace v1 = ::onnxconvert::v1;

// The conversion options a request carries, as the converter takes them.
converter::ConvertOptions OptionsFromProto(const v1::ConvertOptions& proto);

// The converter's options as a request carries them.
v1::ConvertOptions OptionsToProto(const converter::ConvertOptions& options);

// A conversion report as its message.
v1::ConversionReport ReportToProto(const converter::ConversionReport& report);

// A conversion report message as the converter's struct; a change kind or
// step validation this build does not know is an InvalidArgument error
// naming it.
absl::StatusOr<converter::ConversionReport> ReportFromProto(const v1::ConversionReport& proto);

// A checker report as its message.
v1::CheckResponse CheckReportToProto(const schema::CheckReport& report);

// A checker report message as the checker's struct; an issue code this
// build does not know is an InvalidArgument error naming it.
absl::StatusOr<schema::CheckReport> CheckReportFromProto(const v1::CheckResponse& proto);

// A model summary as its message.
v1::ModelSummary SummaryToProto(const ModelSummary& summary);

// A model summary message as the struct `inspect` prints.
ModelSummary SummaryFromProto(const v1::ModelSummary& proto);

// The rewrite options an optimize request carries, as the pass manager takes them.
rewrites::RewriteOptions RewriteOptionsFromProto(const v1::RewriteOptions& proto);

// A rewrite report as its message.
v1::RewriteReport RewriteReportToProto(const rewrites::RewriteReport& report);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_REPORT_PROTO_H_
