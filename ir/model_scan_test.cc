// ScanModel against every message field reachable from ModelProto: a model
// with an unknown field planted at the end of each field finds it, and a
// tensor planted there with external data is found too.

#include "ir/model_scan.h"

#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "ir/wire_diagnostics.h"

namespace onnxconvert {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// A chain of message fields from ModelProto, ending at every message field
// of every message type reachable from it (each type by its first chain).
std::vector<std::vector<const FieldDescriptor*>> EveryMessageField() {
  std::vector<std::vector<const FieldDescriptor*>> chains;
  absl::flat_hash_set<const Descriptor*> seen = {onnx::ModelProto::descriptor()};
  std::deque<std::pair<const Descriptor*, std::vector<const FieldDescriptor*>>> queue = {
      {onnx::ModelProto::descriptor(), {}}};
  while (!queue.empty()) {
    auto [type, chain] = queue.front();
    queue.pop_front();
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
      std::vector<const FieldDescriptor*> longer = chain;
      longer.push_back(field);
      chains.push_back(longer);
      if (seen.insert(field->message_type()).second) queue.push_back({field->message_type(), longer});
    }
  }
  return chains;
}

// The message at the end of `chain` in `model`, made on the way.
Message* Plant(onnx::ModelProto& model, const std::vector<const FieldDescriptor*>& chain) {
  Message* message = &model;
  for (const FieldDescriptor* field : chain) {
    const google::protobuf::Reflection& reflection = *message->GetReflection();
    message = field->is_repeated() ? reflection.AddMessage(message, field)
                                   : reflection.MutableMessage(message, field);
  }
  return message;
}

std::string Name(const std::vector<const FieldDescriptor*>& chain) {
  std::string name = "ModelProto";
  for (const FieldDescriptor* field : chain) name += "." + field->name();
  return name;
}

TEST(ModelScanTest, EveryMessageFieldIsWalked) {
  std::vector<std::vector<const FieldDescriptor*>> chains = EveryMessageField();
  ASSERT_GE(chains.size(), 58u);  // the message fields of onnx.proto
  int tensors = 0;
  for (const auto& chain : chains) {
    onnx::ModelProto model;
    Message* planted = Plant(model, chain);
    EXPECT_EQ(ScanModel(model).unknown_fields, false) << Name(chain);
    planted->GetReflection()->MutableUnknownFields(planted)->AddVarint(9999, 1);
    EXPECT_EQ(ScanModel(model).unknown_fields, true) << Name(chain);
    EXPECT_EQ(ScanModel(model).external_tensors, false) << Name(chain);
    if (auto* tensor = dynamic_cast<onnx::TensorProto*>(planted)) {
      ++tensors;
      tensor->set_data_location(onnx::TensorProto::EXTERNAL);
      EXPECT_EQ(ScanModel(model).external_tensors, true) << Name(chain);
    }
  }
  EXPECT_GE(tensors, 5);  // initializer, t, tensors, sparse values and indices
}

TEST(ModelScanTest, AWellFormedModelHasNothingToCheck) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 13]>
    g (float[N,4] X) => (float[N,4] Y) <float[4] w = {1, 2, 3, 4}> {
      Y = Add(X, w)
    })");
  ASSERT_TRUE(model.ok()) << model.status();
  ModelScan scan = ScanModel(*model);
  EXPECT_FALSE(scan.unknown_fields);
  EXPECT_FALSE(scan.external_tensors);
  EXPECT_FALSE(KeepsWireError(*model, scan));
}

TEST(ModelScanTest, AWireErrorIsAnUnknownField) {
  // A declared field (NodeProto.op_type, a string) sent as a varint: kept
  // unknown by protobuf, reported by NeedsWireCheck, seen by the scan.
  onnx::ModelProto model;
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->GetReflection()->MutableUnknownFields(node)->AddVarint(4, 7);
  std::string bytes = model.SerializeAsString();
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_TRUE(ScanModel(parsed).unknown_fields);
  EXPECT_TRUE(NeedsWireCheck(parsed));
  EXPECT_TRUE(KeepsWireError(parsed, ScanModel(parsed)));
}

}  // namespace
}  // namespace onnxconvert
