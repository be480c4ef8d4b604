#include "converter/incremental_validation.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "schema/inference.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

// X -> Relu -> A -> Neg -> B -> Abs -> Y at opset 13.
constexpr absl::string_view kChain = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) {
  [relu] A = Relu(X)
  [neg] B = Neg(A)
  [abs] Y = Abs(B)
})";

// One behaviour: a change made by `edit` to a `T` (a node, a tensor), then
// validated.
template <typename T>
struct EditCase {
  std::string name;
  void (*edit)(T&);
  std::string error;  // "" when the change validates, else part of the error
};

// Checks `status` against what case `name` expects: OK for no `error`.
void ExpectVerdict(const std::string& name, const absl::Status& status, const std::string& error) {
  if (error.empty()) {
    EXPECT_TRUE(status.ok()) << name << ": " << status;
  } else {
    EXPECT_FALSE(status.ok()) << name;
    EXPECT_TRUE(absl::StrContains(status.message(), error)) << name << ": " << status;
  }
}

// The strict inference of `model`.
absl::StatusOr<schema::InferenceResult> StrictTypes(const onnx::ModelProto& model) {
  schema::InferenceOptions strict;
  strict.strict = true;
  return schema::InferModel(model, strict);
}

// The Relu node changed as `edit` says (its old inputs and outputs are
// those above), then validated on its own.
TEST(IncrementalValidatorTest, TouchedNodesValidateOnlyWhenTheirWiringAndTypesHold) {
  const EditCase<onnx::NodeProto> cases[] = {
      {"unchanged node", [](onnx::NodeProto&) {}, ""},
      {"another op, same types", [](onnx::NodeProto& n) { n.set_op_type("Sigmoid"); }, ""},
      {"reads a value defined after it",
       [](onnx::NodeProto& n) { n.set_input(0, "B"); }, "may be defined only after the node"},
      {"drops its old output",
       [](onnx::NodeProto& n) { n.set_output(0, "fresh"); }, "'A' is no longer defined"},
      {"defines a value defined elsewhere",
       [](onnx::NodeProto& n) { n.set_output(0, "Y"); }, "defined elsewhere too"},
      {"changes a type",
       [](onnx::NodeProto& n) {
         n.set_op_type("Cast");
         onnx::AttributeProto* to = n.add_attribute();
         to->set_name("to");
         to->set_type(onnx::AttributeProto::INT);
         to->set_i(onnx::TensorProto::INT64);
       },
       "'A' was tensor(float)"},
      {"breaks its op's rules",
       [](onnx::NodeProto& n) { n.add_input("X"); }, "arity"},
  };
  for (const EditCase<onnx::NodeProto>& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(kChain);
    absl::StatusOr<schema::InferenceResult> types = StrictTypes(model);
    ASSERT_TRUE(types.ok()) << types.status();
    onnx::NodeProto& relu = *model.mutable_graph()->mutable_node(0);
    const std::vector<absl::string_view> old_inputs = {"X"};
    const std::vector<absl::string_view> old_outputs = {"A"};
    c.edit(relu);
    const onnx::NodeProto* nodes[] = {&relu};
    TouchedGroup group{&model.graph(), nodes, old_inputs, old_outputs};
    IncrementalValidator validator(model);
    absl::Status status = validator.Validate({&group, 1}, {}, *types,
                                             [](const onnx::GraphProto*) { return nullptr; });
    ExpectVerdict(c.name, status, c.error);
  }
}

// A node inserted before the anchor may feed it under a new name.
TEST(IncrementalValidatorTest, InsertedNodesMayFeedTheAnchorUnderNewNames) {
  onnx::ModelProto model = testing::ModelFromText(kChain);
  absl::StatusOr<schema::InferenceResult> types = StrictTypes(model);
  ASSERT_TRUE(types.ok()) << types.status();
  onnx::NodeProto inserted;
  inserted.set_op_type("Identity");
  inserted.add_input("X");
  inserted.add_output("X_copy");
  onnx::NodeProto& relu = *model.mutable_graph()->mutable_node(0);
  relu.set_input(0, "X_copy");
  const std::vector<absl::string_view> old_inputs = {"X"};
  const std::vector<absl::string_view> old_outputs = {"A"};
  const onnx::NodeProto* nodes[] = {&inserted, &relu};
  TouchedGroup group{&model.graph(), nodes, old_inputs, old_outputs};
  IncrementalValidator validator(model);
  absl::Status status = validator.Validate({&group, 1}, {}, *types,
                                           [](const onnx::GraphProto*) { return nullptr; });
  ASSERT_TRUE(status.ok()) << status;
  // The new value has its type now.
  const auto& main = types->graphs.at(&model.graph()).types;
  ASSERT_TRUE(main.contains("X_copy"));
  EXPECT_EQ(main.at("X_copy")->tensor_type().shape().dim_size(), 2);
}

// The Neg node made an Add of a constant the step added to the main graph
// as `edit` makes it.
TEST(IncrementalValidatorTest, ConstantsAddedToTheMainGraphValidateWithTheirNodes) {
  const EditCase<onnx::TensorProto> cases[] = {
      {"a row to add", [](onnx::TensorProto&) {}, ""},
      {"data of the wrong size",
       [](onnx::TensorProto& t) { t.set_raw_data(std::string(4, '\0')); },
       "initializer 'c' added to the main graph"},
  };
  for (const EditCase<onnx::TensorProto>& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(kChain);
    absl::StatusOr<schema::InferenceResult> types = StrictTypes(model);
    ASSERT_TRUE(types.ok()) << types.status();
    onnx::NodeProto& neg = *model.mutable_graph()->mutable_node(1);
    neg.set_op_type("Add");
    neg.add_input("c");
    onnx::TensorProto& row = *model.mutable_graph()->add_initializer();
    row.set_name("c");
    row.set_data_type(onnx::TensorProto::FLOAT);
    row.add_dims(3);
    row.set_raw_data(std::string(12, '\0'));
    c.edit(row);
    const std::vector<absl::string_view> old_inputs = {"A"};
    const std::vector<absl::string_view> old_outputs = {"B"};
    const onnx::NodeProto* nodes[] = {&neg};
    TouchedGroup group{&model.graph(), nodes, old_inputs, old_outputs};
    const onnx::TensorProto* added[] = {&row};
    IncrementalValidator validator(model);
    absl::Status status = validator.Validate({&group, 1}, added, *types,
                                             [](const onnx::GraphProto*) { return nullptr; });
    ExpectVerdict(c.name, status, c.error);
  }
}

// An If whose then branch unsqueezes X at opset 12, for a step to 13.
constexpr absl::string_view kUnsqueezeInBranch = R"(<ir_version: 8, opset_import: ["" : 12]>
g (bool C, float[2,3] X) => (float[1,2,3] Y) {
  Y = If <then_branch = t () => (float[1,2,3] T) { [unsqueeze] T = Unsqueeze <axes = [0]> (X) },
          else_branch = e () => (float[1,2,3] E) { E = Unsqueeze <axes = [0]> (X) }> (C)
})";

// The then branch's Unsqueeze rewritten for opset 13, its axes an
// initializer added to the branch as `edit` makes it.
TEST(IncrementalValidatorTest, ConstantsAddedToSubgraphsValidateWithTheirNodes) {
  const EditCase<onnx::TensorProto> cases[] = {
      {"the axes as the attribute had them", [](onnx::TensorProto&) {}, ""},
      {"other axes, another type",
       [](onnx::TensorProto& t) { t.set_raw_data(std::string("\2\0\0\0\0\0\0\0", 8)); },
       "dimension 0 is 2 inferred, but 1 declared"},
      {"data of the wrong size",
       [](onnx::TensorProto& t) { t.set_raw_data(std::string(4, '\0')); },
       "initializer 'axes_0' added to a subgraph"},
  };
  for (const EditCase<onnx::TensorProto>& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(kUnsqueezeInBranch);
    absl::StatusOr<schema::InferenceResult> types = StrictTypes(model);
    ASSERT_TRUE(types.ok()) << types.status();
    model.mutable_opset_import(0)->set_version(13);
    onnx::GraphProto& branch = *model.mutable_graph()->mutable_node(0)->mutable_attribute(0)
                                    ->mutable_g();
    onnx::NodeProto& unsqueeze = *branch.mutable_node(0);
    unsqueeze.clear_attribute();
    unsqueeze.add_input("axes_0");
    onnx::TensorProto& axes = *branch.add_initializer();
    axes.set_name("axes_0");
    axes.set_data_type(onnx::TensorProto::INT64);
    axes.add_dims(1);
    axes.set_raw_data(std::string(8, '\0'));
    c.edit(axes);
    const std::vector<absl::string_view> old_inputs = {"X"};
    const std::vector<absl::string_view> old_outputs = {"T"};
    const onnx::NodeProto* nodes[] = {&unsqueeze};
    TouchedGroup group{&branch, nodes, old_inputs, old_outputs};
    const SubgraphInitializer added[] = {{&branch, &axes}};
    IncrementalValidator validator(model);
    absl::Status status = validator.Validate(
        {&group, 1}, {}, *types,
        [&model](const onnx::GraphProto* g) {
          return g == &model.graph() ? nullptr : &model.graph();
        },
        added);
    ExpectVerdict(c.name, status, c.error);
  }
}

}  // namespace
}  // namespace onnxconvert::converter
