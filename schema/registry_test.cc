#include "schema/registry.h"

#include <chrono>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "schema/type_strings.h"

namespace onnxconvert::schema {
namespace {

struct LookupCase {
  std::string domain;
  std::string op;
  int64_t opset;
  int expected_since;  // 0: absent
};

TEST(RegistryTest, LookupFindsTheVersionActiveAtAnOpset) {
  const LookupCase cases[] = {
      {"", "Add", 13, 13},          {"", "Add", 12, 7},
      {"", "Add", 27, 14},          {"ai.onnx", "Add", 14, 14},
      {"", "Softmax", 12, 11},      {"", "Softmax", 13, 13},
      {"", "GroupNormalization", 17, 0}, {"", "GroupNormalization", 18, 18},
      {"", "GroupNormalization", 21, 21}, {"", "Relu", 1, 1},
      {"", "Relu", 0, 0},           {"", "NoSuchOp", 13, 0},
      {"ai.onnx.ml", "LabelEncoder", 3, 2}, {"ai.onnx.ml", "LabelEncoder", 4, 4},
      {"ai.onnx.ml", "TreeEnsemble", 4, 0}, {"ai.onnx.ml", "TreeEnsemble", 5, 5},
      {"com.vendor", "Add", 13, 0},
  };
  const Registry& registry = Registry::Get();
  for (const LookupCase& c : cases) {
    const OpSchema* schema = registry.Lookup(c.domain, c.op, c.opset);
    std::string label = absl::StrCat(c.domain, ".", c.op, "@", c.opset);
    if (c.expected_since == 0) {
      EXPECT_EQ(schema, nullptr) << label;
      continue;
    }
    ASSERT_NE(schema, nullptr) << label;
    EXPECT_EQ(schema->since_version, c.expected_since) << label;
    EXPECT_EQ(schema->name, c.op);
  }
}

TEST(RegistryTest, VersionHistories) {
  const Registry& registry = Registry::Get();
  auto versions = [&](absl::string_view domain, absl::string_view op) {
    absl::Span<const int> span = registry.VersionsOf(domain, op);
    return std::vector<int>(span.begin(), span.end());
  };
  EXPECT_EQ(versions("", "Softmax"), (std::vector<int>{1, 11, 13}));
  EXPECT_EQ(versions("", "Reshape"), (std::vector<int>{1, 5, 13, 14, 19, 21, 23, 24, 25}));
  EXPECT_TRUE(versions("", "Nope").empty());
  EXPECT_EQ(registry.MaxOpset(""), 27);
  EXPECT_EQ(registry.MaxOpset("ai.onnx"), 27);
  EXPECT_EQ(registry.MaxOpset("ai.onnx.ml"), 5);
  EXPECT_FALSE(registry.KnowsDomain("com.microsoft"));
}

TEST(RegistryTest, ChangedAtListsTheOpsWithANewVersion) {
  bool softmax = false, relu = false;
  for (const OpSchema* schema : Registry::Get().ChangedAt("", 13)) {
    EXPECT_EQ(schema->since_version, 13);
    softmax |= schema->name == "Softmax";
    relu |= schema->name == "Relu";
  }
  EXPECT_TRUE(softmax);
  EXPECT_TRUE(relu);  // Relu-13 widened its types
  bool relu_at_12 = false;
  for (const OpSchema* schema : Registry::Get().ChangedAt("", 12)) {
    relu_at_12 |= schema->name == "Relu";
  }
  EXPECT_FALSE(relu_at_12);
}

TEST(RegistryTest, SchemaFacts) {
  const OpSchema* conv = Registry::Get().Lookup("", "Conv", 11);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->Label(), "Conv-11");
  const AttrSpec* auto_pad = conv->FindAttr("auto_pad");
  ASSERT_NE(auto_pad, nullptr);
  EXPECT_EQ(auto_pad->type, onnx::AttributeProto::STRING);
  EXPECT_TRUE(auto_pad->has_default);
  EXPECT_EQ(auto_pad->default_value.s, "NOTSET");
  EXPECT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->inputs[2].option, ParamOption::kOptional);
  const TypeConstraint* t = conv->FindConstraint("T");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->allowed_types.front(), "tensor(float16)");

  const OpSchema* mvn = Registry::Get().Lookup("", "MeanVarianceNormalization", 13);
  ASSERT_NE(mvn, nullptr);
  const AttrSpec* axes = mvn->FindAttr("axes");
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(std::vector<int64_t>(axes->default_value.ints.begin(), axes->default_value.ints.end()),
            (std::vector<int64_t>{0, 2, 3}));
  const OpSchema* ln = Registry::Get().Lookup("ai.onnx.ml", "LabelEncoder", 4);
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->Label(), "ai.onnx.ml.LabelEncoder-4");
}

// Every static function body parses as ONNX text with our parser.
TEST(RegistryTest, EveryStaticFunctionBodyParses) {
  int bodies = 0;
  for (const OpSchema& schema : Registry::Get().All()) {
    for (const FunctionBody& body : schema.function_bodies) {
      absl::StatusOr<onnx::FunctionProto> function = ParseFunctionText(body.text);
      EXPECT_TRUE(function.ok()) << schema.Label() << " body at opset " << body.opset << ": "
                                 << function.status();
      if (function.ok()) {
        EXPECT_EQ(function->name(), schema.name);
      }
      ++bodies;
    }
    EXPECT_EQ(schema.FunctionBodyFor(0), nullptr);
  }
  EXPECT_GE(bodies, 38);
  const OpSchema* gelu = Registry::Get().Lookup("", "Gelu", 20);
  ASSERT_NE(gelu, nullptr);
  EXPECT_TRUE(gelu->has_function);
}

TEST(RegistryTest, SchemasAreSortedAndUnique) {
  absl::Span<const OpSchema> all = Registry::Get().All();
  EXPECT_EQ(all.size(), 639u);
  for (size_t i = 1; i < all.size(); ++i) {
    auto key = [](const OpSchema& s) { return std::tie(s.domain, s.name, s.since_version); };
    EXPECT_LT(key(all[i - 1]), key(all[i])) << all[i].Label();
  }
}

// The element types a constraint allows, as bits, agree with its type
// strings, for every formal parameter of every version.
TEST(RegistryTest, TensorElemMasksAgreeWithTheTypeStrings) {
  int checked = 0;
  for (const OpSchema& op : Registry::Get().All()) {
    for (absl::Span<const FormalParam> formals : {op.inputs, op.outputs}) {
      for (const FormalParam& formal : formals) {
        absl::Span<const absl::string_view> allowed = op.AllowedTypes(formal);
        uint64_t mask = TensorElemMask(allowed);
        EXPECT_EQ(TensorElemMask(allowed), mask) << op.Label();
        for (int32_t elem = 1; elem < 64; ++elem) {
          onnx::TypeProto type;
          type.mutable_tensor_type()->set_elem_type(elem);
          std::string text = TypeString(type);
          bool listed = !text.empty() && absl::c_linear_search(allowed, text);
          ASSERT_EQ(((mask >> elem) & 1) != 0, listed)
              << op.Label() << " " << formal.name << " " << elem;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

}  // namespace
}  // namespace onnxconvert::schema
