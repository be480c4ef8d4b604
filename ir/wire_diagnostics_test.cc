#include "ir/wire_diagnostics.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {
namespace {

std::string Bytes(std::initializer_list<int> values) {
  std::string bytes;
  for (int v : values) bytes.push_back(static_cast<char>(v));
  return bytes;
}

// A length-delimited field: tag byte, one-byte length, payload.
std::string Field(int tag, const std::string& payload) {
  return Bytes({tag, static_cast<int>(payload.size())}) + payload;
}

onnx::ModelProto SampleModel() {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.set_producer_name("test");
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("g");
  onnx::TensorProto* weight = graph->add_initializer();
  weight->set_name("W");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(3);
  for (float v : {1.f, 2.f, 3.f}) weight->add_float_data(v);
  onnx::TensorProto* shape = graph->add_initializer();
  shape->set_name("S");
  shape->set_data_type(onnx::TensorProto::INT64);
  for (int64_t v : {-1, 300, 70000}) shape->add_int64_data(v);
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("If");
  node->add_input("c");
  node->add_output("y");
  onnx::AttributeProto* branch = node->add_attribute();
  branch->set_name("then_branch");
  branch->set_type(onnx::AttributeProto::GRAPH);
  branch->mutable_g()->add_node()->set_op_type("Identity");
  onnx::AttributeProto* alpha = node->add_attribute();
  alpha->set_name("alpha");
  alpha->set_f(0.5f);
  graph->add_input()->set_name("c");
  return model;
}

struct WireCase {
  std::string name;
  std::string bytes;
  std::string problem;  // substring of the problem
  int64_t offset;
  std::string path;
};

std::vector<WireCase> WireCases() {
  return {
      {"truncated_tag", Bytes({0x80}), "truncated field tag", 0, "ModelProto"},
      {"wrong_wire_type", Bytes({0x08, 0x0a, 0x38, 0x05}),
       "field ModelProto.graph (7) has wire type varint, its declared type "
       "needs length-delimited",
       2, "ModelProto"},
      {"nested_wrong_wire_type", Field(0x3a, Field(0x0a, Bytes({0x20, 0x01}))),
       "field NodeProto.op_type (4) has wire type varint", 4,
       "ModelProto.graph > GraphProto.node[0]"},
      {"second_element",
       Field(0x3a, Field(0x0a, "") + Field(0x0a, Bytes({0x20, 0x01}))),
       "NodeProto.op_type", 6, "ModelProto.graph > GraphProto.node[1]"},
      {"scalar_as_length_delimited", Field(0x0a, "ab"),
       "field ModelProto.ir_version (1) has wire type length-delimited", 0,
       "ModelProto"},
      {"length_past_end", Bytes({0x3a, 0x7f, 0x00}),
       "length 127 of ModelProto.graph runs past the end of its message (1 "
       "bytes left)",
       0, "ModelProto"},
      {"nested_length_past_end", Field(0x3a, Bytes({0x0a, 0x05, 0x00})),
       "length 5 of GraphProto.node runs past the end of its message", 2,
       "ModelProto.graph"},
      {"unknown_field_past_end", Bytes({0xa2, 0x06, 0x05, 0x00}),
       "length 5 of field 100 runs past the end", 0, "ModelProto"},
      {"truncated_length", Bytes({0x3a, 0xff}), "truncated length", 1,
       "ModelProto"},
      {"truncated_varint", Bytes({0x08, 0x80, 0x80}), "truncated varint", 1,
       "ModelProto"},
      {"overlong_varint",
       Bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
              0x01}),
       "varint longer than 10 bytes", 1, "ModelProto"},
      {"invalid_wire_type", Bytes({0x0f, 0x00}), "invalid wire type 7 for field 1",
       0, "ModelProto"},
      {"start_group", Bytes({0x93, 0x03}),
       "group tag (start-group) for field 50", 0, "ModelProto"},
      {"end_group", Bytes({0x0c}), "group tag (end-group) for field 1", 0,
       "ModelProto"},
      {"field_zero", Bytes({0x00, 0x01}), "invalid field number 0", 0,
       "ModelProto"},
      {"truncated_fixed64", Bytes({0xa1, 0x06, 0x01, 0x02, 0x03}),
       "truncated fixed64 value: needs 8 bytes, 3 left", 0, "ModelProto"},
      {"packed_fixed_remainder",
       Field(0x3a, Field(0x2a, Field(0x22, Bytes({0, 0, 0})))),
       "packed TensorProto.float_data holds 3 bytes, not a multiple of 4", 4,
       "ModelProto.graph > GraphProto.initializer[0]"},
      {"packed_varint_truncated",
       Field(0x3a, Field(0x2a, Field(0x3a, Bytes({0x80, 0x80})))),
       "truncated or overlong varint in packed TensorProto.int64_data", 6,
       "ModelProto.graph > GraphProto.initializer[0]"},
      {"deep_path",
       Field(0x3a, Field(0x0a, Field(0x2a, Field(0x32, Bytes({0x18}))))),
       "truncated varint", 9,
       "ModelProto.graph > GraphProto.node[0] > NodeProto.attribute[0] > "
       "AttributeProto.g"},
  };
}

TEST(WireDiagnosticsTest, ReportsOffsetPathAndProblem) {
  for (const WireCase& c : WireCases()) {
    std::optional<WireError> error =
        FindWireError(c.bytes, *onnx::ModelProto::descriptor());
    ASSERT_TRUE(error.has_value()) << c.name;
    EXPECT_TRUE(absl::StrContains(error->problem, c.problem))
        << c.name << ": " << error->problem;
    EXPECT_EQ(error->offset, c.offset) << c.name;
    EXPECT_EQ(error->path, c.path) << c.name;
    EXPECT_EQ(error->ToString(),
              error->problem + " at byte " + std::to_string(c.offset) + " (" +
                  c.path + ")")
        << c.name;
  }
}

TEST(WireDiagnosticsTest, WellFormedInputsHaveNoError) {
  const std::string unknown_fields =
      Bytes({0xa0, 0x06, 0x05}) +                           // varint field 100
      Bytes({0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8}) +         // fixed64 field 101
      Bytes({0xb2, 0x06, 0x02, 0xff, 0xff}) +               // bytes field 102
      Bytes({0xbd, 0x06, 1, 2, 3, 4});                      // fixed32 field 103
  const std::string unpacked_floats =  // float_data as separate fixed32 values
      Field(0x3a, Field(0x2a, Bytes({0x25, 0, 0, 0x80, 0x3f, 0x25, 0, 0, 0, 0x40})));
  const std::string cases[] = {
      "",
      SampleModel().SerializeAsString(),
      SampleModel().SerializeAsString() + unknown_fields,
      unpacked_floats,
  };
  for (const std::string& bytes : cases) {
    std::optional<WireError> error =
        FindWireError(bytes, *onnx::ModelProto::descriptor());
    EXPECT_FALSE(error.has_value()) << error->ToString();
    onnx::ModelProto model;
    EXPECT_TRUE(model.ParseFromString(bytes));
  }
}

// Subgraphs nested `depth` levels: graph > node > attribute > g > node ...
std::string NestedGraphs(int depth) {
  onnx::ModelProto model;
  onnx::GraphProto* graph = model.mutable_graph();
  for (int i = 0; i < depth; ++i) {
    graph = graph->add_node()->add_attribute()->mutable_g();
  }
  graph->set_name("innermost");
  return model.SerializeAsString();
}

TEST(WireDiagnosticsTest, NestingLimitMatchesProtobuf) {
  // Each level adds three messages; protobuf's limit (100) falls inside.
  for (int depth = 30; depth <= 36; ++depth) {
    std::string bytes = NestedGraphs(depth);
    onnx::ModelProto model;
    bool parsed = model.ParseFromString(bytes);
    std::optional<WireError> error =
        FindWireError(bytes, *onnx::ModelProto::descriptor());
    EXPECT_EQ(parsed, !error.has_value()) << depth;
    if (error) {
      EXPECT_TRUE(absl::StrContains(error->problem, "nested deeper than 100"))
          << error->problem;
    }
  }
}

TEST(WireDiagnosticsTest, CustomRecursionLimit) {
  std::string bytes = NestedGraphs(2);  // 7 levels below the ModelProto
  EXPECT_FALSE(FindWireError(bytes, *onnx::ModelProto::descriptor(), 7)
                   .has_value());
  EXPECT_TRUE(FindWireError(bytes, *onnx::ModelProto::descriptor(), 6)
                  .has_value());
}

// ModelProto.graph, then (node, attribute, g) repeated: `levels` nested
// length-delimited fields, built outside-in in linear time.
std::string DeeplyNested(int levels) {
  auto varint_size = [](uint64_t v) {
    int size = 1;
    for (; v >= 0x80; v >>= 7) ++size;
    return size;
  };
  auto tag_of = [](int level) {
    static constexpr int kCycle[] = {0x0a, 0x2a, 0x32};
    return level == 0 ? 0x3a : kCycle[(level - 1) % 3];
  };
  std::vector<uint64_t> payload(levels, 0);  // innermost payload is empty
  for (int level = levels - 1; level > 0; --level) {
    payload[level - 1] = 1 + varint_size(payload[level]) + payload[level];
  }
  std::string bytes;
  for (int level = 0; level < levels; ++level) {
    bytes.push_back(static_cast<char>(tag_of(level)));
    for (uint64_t v = payload[level];; v >>= 7) {
      bytes.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
      if (v < 0x80) break;
    }
  }
  return bytes;
}

TEST(WireDiagnosticsTest, VeryDeepInputDoesNotExhaustTheStack) {
  std::string bytes = DeeplyNested(300000);
  EXPECT_FALSE(FindWireError(bytes, *onnx::ModelProto::descriptor(),
                             /*recursion_limit=*/1 << 30)
                   .has_value());
  std::optional<WireError> error =
      FindWireError(bytes, *onnx::ModelProto::descriptor());
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(absl::StrContains(error->problem, "nested deeper than 100"));
}

// The walk and protobuf's parser agree: every input protobuf rejects gets an
// error, and on input protobuf accepts the walk errs exactly when
// NeedsWireCheck finds what protobuf kept as unknown fields.
void ExpectAgreement(const std::string& bytes, const std::string& label) {
  onnx::ModelProto model;
  bool parsed = model.ParseFromString(bytes);
  std::optional<WireError> error =
      FindWireError(bytes, *onnx::ModelProto::descriptor());
  if (!parsed) {
    EXPECT_TRUE(error.has_value()) << label << ": protobuf rejects it";
  } else {
    EXPECT_EQ(NeedsWireCheck(model), error.has_value())
        << label << ": " << (error ? error->ToString() : "no wire error");
  }
}

TEST(WireDiagnosticsTest, NeedsWireCheckFindsWhatProtobufKeptAsUnknown) {
  const struct {
    std::string name;
    std::string bytes;
    bool needs_check;
  } cases[] = {
      {"clean", SampleModel().SerializeAsString(), false},
      {"undeclared_field", Bytes({0xa0, 0x06, 0x05}), false},
      {"unknown_enum_value",  // AttributeProto.type = 99 inside a node
       Field(0x3a, Field(0x0a, Field(0x2a, Bytes({0xa0, 0x01, 0x63})))), false},
      {"declared_wrong_wire_type", Bytes({0x38, 0x05}), true},
      {"nested_wrong_wire_type", Field(0x3a, Field(0x0a, Bytes({0x20, 0x01}))),
       true},
      {"undeclared_group", Bytes({0x93, 0x03, 0x94, 0x03}), true},
  };
  for (const auto& c : cases) {
    onnx::ModelProto model;
    ASSERT_TRUE(model.ParseFromString(c.bytes)) << c.name;
    EXPECT_EQ(NeedsWireCheck(model), c.needs_check) << c.name;
    EXPECT_EQ(FindWireError(c.bytes, *onnx::ModelProto::descriptor()).has_value(),
              c.needs_check)
        << c.name;
  }
}

TEST(WireDiagnosticsTest, AgreesWithProtobufOnTruncations) {
  std::string good = SampleModel().SerializeAsString();
  for (size_t cut = 0; cut < good.size(); ++cut) {
    ExpectAgreement(good.substr(0, cut), "cut at " + std::to_string(cut));
  }
}

TEST(WireDiagnosticsTest, AgreesWithProtobufOnMutations) {
  std::string good = SampleModel().SerializeAsString();
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < flips; ++i) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    ExpectAgreement(bytes, "seed " + std::to_string(seed));
  }
}

TEST(WireDiagnosticsTest, AgreesWithProtobufOnRandomBytes) {
  for (uint32_t seed = 0; seed < 500; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes(1 + rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    ExpectAgreement(bytes, "seed " + std::to_string(seed));
  }
}

}  // namespace
}  // namespace onnxconvert
