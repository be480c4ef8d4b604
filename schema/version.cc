#include "schema/version.h"

#include "absl/strings/str_cat.h"
#include "base/json_writer.h"
#include "schema/build_commit.h"
#include "schema/registry.h"

namespace onnxconvert {
namespace {

// The newest IR version the checker accepts.
constexpr int kNewestIrVersion = 13;

}  // namespace

const char* BuildCommit() { return kBuildCommit; }

std::string VersionText() {
  const schema::Registry& registry = schema::Registry::Get();
  return absl::StrCat("onnx-convert ", kToolVersion, " (commit ", kBuildCommit, ")\n",
                      "ONNX spec ", kOnnxSpecVersion, ": ai.onnx opsets 1-", registry.MaxOpset(""),
                      ", ai.onnx.ml opsets 1-", registry.MaxOpset("ai.onnx.ml"), ", IR version ",
                      kNewestIrVersion, "\n");
}

std::string VersionJson() {
  const schema::Registry& registry = schema::Registry::Get();
  JsonWriter json;
  json.BeginObject();
  json.Key("version").String(kToolVersion).Key("commit").String(kBuildCommit);
  json.Key("onnx_spec").String(kOnnxSpecVersion);
  json.Key("opsets").BeginObject();
  json.Key("ai.onnx").BeginArray().Int(1).Int(registry.MaxOpset("")).EndArray();
  json.Key("ai.onnx.ml").BeginArray().Int(1).Int(registry.MaxOpset("ai.onnx.ml")).EndArray();
  json.EndObject();
  json.Key("ir_version").Int(kNewestIrVersion);
  json.EndObject();
  return json.Finish();
}

}  // namespace onnxconvert
