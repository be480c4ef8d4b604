// If, Loop and Scan across their versions: If before 11 needs branches that
// give each output one shape; Loop before 11 (ONNX Runtime, at
// least) needs the body's iteration count and condition typed as scalars;
// Scan 8 -> 9 removed the batch axis, which is rebuilt here as an outer
// Scan over the batch around the inner, batch-free Scan (and back).

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"
#include "google/protobuf/arena.h"

namespace onnxconvert::adapters {
namespace {

onnx::GraphProto* BodyOf(onnx::NodeProto& node) {
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == "body" && attribute.has_g()) return attribute.mutable_g();
  }
  return nullptr;
}

}  // namespace

// Gives Loop body inputs 0 (int64 iteration) and 1 (bool condition) a
// scalar type where the body leaves them untyped or unshaped.
absl::Status LoopScalarCounters(AdapterContext& ctx) {
  onnx::GraphProto* body = BodyOf(ctx.node);
  if (body == nullptr) return absl::OkStatus();
  constexpr int32_t kCounterTypes[] = {onnx::TensorProto::INT64, onnx::TensorProto::BOOL};
  for (int i = 0; i < 2 && i < body->input_size(); ++i) {
    onnx::TypeProto::Tensor* tensor = body->mutable_input(i)->mutable_type()->mutable_tensor_type();
    if (tensor->has_shape() && tensor->elem_type() != 0) continue;
    if (tensor->elem_type() == 0) tensor->set_elem_type(kCounterTypes[i]);
    if (!tensor->has_shape()) tensor->mutable_shape();
    ctx.changes.push_back({ChangeKind::kTypeSet, absl::StrCat("body input '", body->input(i).name(),
                                                              "' typed as a scalar")});
  }
  return absl::OkStatus();
}

namespace {

int64_t IntAttributeOr(const onnx::NodeProto& node, absl::string_view name, int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute != nullptr ? attribute->i() : fallback;
}

bool AllZero(const onnx::AttributeProto* attribute) {
  if (attribute == nullptr) return true;
  for (int64_t v : attribute->ints()) {
    if (v != 0) return false;
  }
  return true;
}

// `type` with one more leading dim of unknown size (a stack of values).
onnx::TypeProto Stacked(const onnx::TypeProto& type) {
  onnx::TypeProto stacked = type;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return stacked;
  onnx::TensorShapeProto* shape = stacked.mutable_tensor_type()->mutable_shape();
  shape->add_dim();
  for (int i = shape->dim_size() - 1; i > 0; --i) shape->mutable_dim()->SwapElements(i, i - 1);
  return stacked;
}

}  // namespace

// Scan-8 (a batch axis first, then the scan axis) -> an outer Scan-9 over
// the batch whose body runs the inner, batch-free Scan-9 on one batch
// element: states and scan inputs are sliced per batch, final states and
// scan outputs stacked back.
absl::Status ScanBatchToOuterScan(AdapterContext& ctx) {
  onnx::NodeProto& node = ctx.node;
  if (node.input_size() > 0 && !node.input(0).empty()) {
    return absl::FailedPreconditionError(
        "sequence_lens is given; Scan-9 scans every sequence to its full length");
  }
  onnx::AttributeProto* body_attribute = nullptr;
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == "body") body_attribute = &attribute;
  }
  if (body_attribute == nullptr || !body_attribute->has_g()) {
    return absl::FailedPreconditionError("the Scan has no body graph");
  }
  const int64_t scans = IntAttributeOr(node, "num_scan_inputs", 0);
  const int64_t states = node.input_size() - 1 - scans;
  if (states < 0) return absl::FailedPreconditionError("num_scan_inputs exceeds the inputs");
  const onnx::GraphProto& body = body_attribute->g();
  if (body.input_size() != states + scans || body.output_size() < states) {
    return absl::FailedPreconditionError("the body's inputs do not match the Scan's");
  }
  // The inner Scan: the original body, on one batch element. The new
  // graphs are made on the node's arena, if it has one, so that the body's
  // nodes move by address.
  google::protobuf::Arena* arena = node.GetArena();
  onnx::GraphProto& outer = *google::protobuf::Arena::CreateMessage<onnx::GraphProto>(arena);
  outer.set_name(ctx.rewriter.FreshName(absl::StrCat(body.name(), "_batch")));
  onnx::NodeProto* inner = outer.add_node();
  inner->set_op_type("Scan");
  inner->set_name(ctx.rewriter.FreshName(node.name().empty() ? "Scan" : node.name()));
  for (int i = 0; i < states + scans; ++i) {
    onnx::ValueInfoProto* input = outer.add_input();
    input->set_name(ctx.rewriter.FreshName(body.input(i).name()));
    *input->mutable_type() = i < states ? body.input(i).type() : Stacked(body.input(i).type());
    inner->add_input(input->name());
  }
  for (int i = 0; i < body.output_size(); ++i) {
    onnx::ValueInfoProto* output = outer.add_output();
    output->set_name(ctx.rewriter.FreshName(body.output(i).name()));
    *output->mutable_type() = i < states ? body.output(i).type() : Stacked(body.output(i).type());
    inner->add_output(output->name());
  }
  AddIntAttribute(*inner, "num_scan_inputs", scans);
  if (const onnx::AttributeProto* directions = FindAttribute(node, "directions")) {
    AddIntsAttribute(*inner, "scan_input_directions",
                     std::vector<int64_t>(directions->ints().begin(), directions->ints().end()));
  }
  onnx::AttributeProto* inner_body = inner->add_attribute();
  inner_body->set_name("body");
  inner_body->set_type(onnx::AttributeProto::GRAPH);
  // The body's nodes keep their place (one arena, or none: the unsafe-arena
  // moves neither copy nor leak).
  inner_body->unsafe_arena_set_allocated_g(body_attribute->unsafe_arena_release_g());
  body_attribute->unsafe_arena_set_allocated_g(&outer);
  // The outer Scan scans everything over the batch axis.
  node.mutable_input()->DeleteSubrange(0, 1);
  RemoveAttribute(node, "directions");
  RemoveAttribute(node, "num_scan_inputs");
  AddIntAttribute(node, "num_scan_inputs", states + scans);
  ctx.rewriter.TrackSubgraph(*body_attribute->mutable_g());
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted, absl::StrCat("inner Scan '", inner->name(),
                                               "' per batch element; the outer Scan "
                                               "scans the batch axis")});
  return absl::OkStatus();
}

// Scan-9 -> Scan-8 for a Scan over axis 0 with outputs in forward order:
// a batch of one is added in front of every input and removed from every
// output.
absl::Status ScanAddBatchOfOne(AdapterContext& ctx) {
  onnx::NodeProto& node = ctx.node;
  for (const char* name : {"scan_input_axes", "scan_output_axes", "scan_output_directions"}) {
    if (!AllZero(FindAttribute(node, name))) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, " is set; Scan-8 scans axis 1 after the batch and writes outputs forward"));
    }
  }
  auto unit_axis_node = [&](const char* op, const std::string& in, const std::string& out) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(
        ctx.rewriter.FreshName(absl::StrCat(node.name().empty() ? "Scan" : node.name(), "_", op)));
    n.add_input(in);
    n.add_output(out);
    AddIntsAttribute(n, "axes", {0});
    return n;
  };
  google::protobuf::RepeatedPtrField<std::string> inputs;
  inputs.Add("");  // no sequence_lens
  for (const std::string& input : node.input()) {
    std::string batched = ctx.rewriter.FreshName(absl::StrCat(input, "_batch"));
    ctx.rewriter.InsertBefore(unit_axis_node("Unsqueeze", input, batched));
    *inputs.Add() = batched;
  }
  node.mutable_input()->Swap(&inputs);
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    const std::string original = node.output(i);
    ctx.rewriter.InsertAfter(unit_axis_node("Squeeze", ctx.rewriter.DetachOutput(i), original));
  }
  if (const onnx::AttributeProto* directions = FindAttribute(node, "scan_input_directions")) {
    std::vector<int64_t> values(directions->ints().begin(), directions->ints().end());
    RemoveAttribute(node, "scan_input_directions");
    AddIntsAttribute(node, "directions", values);
  }
  for (const char* name : {"scan_input_axes", "scan_output_axes", "scan_output_directions"}) {
    RemoveAttribute(node, name);
  }
  ctx.changes.push_back({ChangeKind::kNodeInserted, "a batch of one added around the Scan"});
  return absl::OkStatus();
}

// If-1 wants both branches to give each output the same shape (If-11
// lets them differ): refused where their declared shapes are known to
// differ (rank or a size).
absl::Status IfBranchesOfOneShape(AdapterContext& ctx) {
  const onnx::GraphProto* then_branch = nullptr;
  const onnx::GraphProto* else_branch = nullptr;
  for (const onnx::AttributeProto& attribute : ctx.node.attribute()) {
    if (attribute.name() == "then_branch") then_branch = &attribute.g();
    if (attribute.name() == "else_branch") else_branch = &attribute.g();
  }
  if (then_branch == nullptr || else_branch == nullptr) return absl::OkStatus();
  int outputs = std::min(then_branch->output_size(), else_branch->output_size());
  for (int i = 0; i < outputs; ++i) {
    const onnx::TypeProto& a = then_branch->output(i).type();
    const onnx::TypeProto& b = else_branch->output(i).type();
    if (!a.tensor_type().has_shape() || !b.tensor_type().has_shape()) continue;
    const onnx::TensorShapeProto& x = a.tensor_type().shape();
    const onnx::TensorShapeProto& y = b.tensor_type().shape();
    bool differ = x.dim_size() != y.dim_size();
    for (int d = 0; !differ && d < x.dim_size(); ++d) {
      differ = x.dim(d).has_dim_value() && y.dim(d).has_dim_value() &&
               x.dim(d).dim_value() != y.dim(d).dim_value();
    }
    if (differ) {
      return absl::FailedPreconditionError(absl::StrCat(
          "output #", i, " has shapes of rank ", x.dim_size(), " and ", y.dim_size(),
          " (or other sizes) in then_branch and else_branch; ", ctx.to.Label(),
          " cannot express branches that give different shapes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
