// PlainNodeMemo: what it recalls for nodes alike and not alike.

#include "converter/plain_node_memo.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "schema/registry.h"

namespace onnxconvert::converter {
namespace {

// A type in text syntax ("float[N,4]"), as a graph input declares it.
onnx::TypeProto TypeOf(absl::string_view text) {
  absl::StatusOr<onnx::GraphProto> graph =
      ParseGraphText(absl::StrCat("g (", text, " X) => () {}"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? graph->input(0).type() : onnx::TypeProto();
}

class PlainNodeMemoTest : public ::testing::Test {
 protected:
  const schema::OpSchema& relu_ = *schema::Registry::Get().Lookup("", "Relu", 13);
  const schema::OpSchema& add_ = *schema::Registry::Get().Lookup("", "Add", 13);
  google::protobuf::Arena arena_;
  PlainNodeMemo memo_{arena_};
  onnx::TypeProto float_n4_ = TypeOf("float[N,4]");
  onnx::TypeProto float_n4_again_ = TypeOf("float[N,4]");
  onnx::TypeProto float_n5_ = TypeOf("float[N,5]");
  std::vector<absl::string_view> named_ = {"Y"};
};

TEST_F(PlainNodeMemoTest, RecallsWhatItRemembersForNodesAlike) {
  const onnx::TypeProto* inputs[] = {&float_n4_};
  EXPECT_EQ(memo_.Recall(relu_, "", inputs, named_), nullptr);
  const onnx::TypeProto* outputs[] = {&float_n4_};
  schema::InputFact fact{0, nullptr, nullptr};
  memo_.Remember(outputs, {&fact, 1});
  EXPECT_EQ(memo_.size(), 1u);
  // Equal input types at another address are alike.
  memo_.ForgetRecent();
  const onnx::TypeProto* again[] = {&float_n4_again_};
  const PlainNodeMemo::Entry* entry = memo_.Recall(relu_, "", again, named_);
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->types.size(), 1u);
  EXPECT_EQ(entry->types[0]->SerializeAsString(), float_n4_.SerializeAsString());
  // Kept in the memo's arena, not the caller's type.
  EXPECT_NE(entry->types[0], &float_n4_);
  ASSERT_EQ(entry->facts.size(), 1u);
  EXPECT_EQ(entry->facts[0].input, 0u);
}

// Another op, input type, attribute or named outputs is not alike; what a
// Recall found is not remembered again.
TEST_F(PlainNodeMemoTest, NodesNotAlikeRecallNothing) {
  const onnx::TypeProto* inputs[] = {&float_n4_};
  const onnx::TypeProto* outputs[] = {&float_n4_};
  ASSERT_EQ(memo_.Recall(relu_, "", inputs, named_), nullptr);
  memo_.Remember(outputs, {});
  const onnx::TypeProto* other_type[] = {&float_n5_};
  std::vector<absl::string_view> unnamed = {""};
  EXPECT_EQ(memo_.Recall(relu_, "", other_type, named_), nullptr);
  EXPECT_EQ(memo_.Recall(add_, "", inputs, named_), nullptr);
  EXPECT_EQ(memo_.Recall(relu_, "\x2a\x00", inputs, named_), nullptr);
  EXPECT_EQ(memo_.Recall(relu_, "", inputs, unnamed), nullptr);
  const onnx::TypeProto* absent[] = {nullptr};
  EXPECT_EQ(memo_.Recall(relu_, "", absent, named_), nullptr);
  ASSERT_NE(memo_.Recall(relu_, "", inputs, named_), nullptr);
  memo_.Remember(outputs, {});  // the last Recall found it: not a new entry
  EXPECT_EQ(memo_.size(), 1u);
}

TEST_F(PlainNodeMemoTest, NodesWithTooManyOutputsAreNotRemembered) {
  std::vector<absl::string_view> many(PlainNodeMemo::kMaxOutputs + 1, "Y");
  const onnx::TypeProto* inputs[] = {&float_n4_};
  EXPECT_EQ(memo_.Recall(relu_, "", inputs, many), nullptr);
  std::vector<const onnx::TypeProto*> outputs(many.size(), &float_n4_);
  memo_.Remember(outputs, {});
  EXPECT_EQ(memo_.size(), 0u);
}

}  // namespace
}  // namespace onnxconvert::converter
