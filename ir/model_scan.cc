#include "ir/model_scan.h"

#include "ir/tensor_util.h"
#include "ir/wire_diagnostics.h"

namespace onnxconvert {
namespace {

// One Visit per message type of onnx.proto that holds other messages; the
// others are only noted. model_scan_test checks that every message field
// reachable from ModelProto is walked.
class Scanner {
 public:
  ModelScan Run(const onnx::ModelProto& model) {
    Note(model);
    NoteAll(model.opset_import());
    if (model.has_graph()) Visit(model.graph());
    NoteAll(model.metadata_props());
    for (const auto& training : model.training_info()) Visit(training);
    for (const auto& function : model.functions()) Visit(function);
    NoteAll(model.configuration());
    return scan_;
  }

 private:
  template <typename Message>
  void Note(const Message& message) {
    scan_.unknown_fields |= !message.unknown_fields().empty();
  }
  template <typename List>
  void NoteAll(const List& list) {
    for (const auto& message : list) Note(message);
  }
  template <typename List>
  void VisitAll(const List& list) {
    for (const auto& message : list) Visit(message);
  }

  void Visit(const onnx::GraphProto& graph) {
    Note(graph);
    VisitAll(graph.node());
    VisitAll(graph.initializer());
    VisitAll(graph.sparse_initializer());
    VisitAll(graph.input());
    VisitAll(graph.output());
    VisitAll(graph.value_info());
    for (const auto& annotation : graph.quantization_annotation()) {
      Note(annotation);
      NoteAll(annotation.quant_parameter_tensor_names());
    }
    NoteAll(graph.metadata_props());
  }
  void Visit(const onnx::NodeProto& node) {
    Note(node);
    VisitAll(node.attribute());
    NoteAll(node.metadata_props());
    for (const auto& device : node.device_configurations()) {
      Note(device);
      for (const auto& spec : device.sharding_spec()) {
        Note(spec);
        NoteAll(spec.index_to_device_group_map());
        for (const auto& dim : spec.sharded_dim()) {
          Note(dim);
          NoteAll(dim.simple_sharding());
        }
      }
    }
  }
  void Visit(const onnx::AttributeProto& attribute) {
    Note(attribute);
    if (attribute.has_t()) Visit(attribute.t());
    if (attribute.has_g()) Visit(attribute.g());
    if (attribute.has_sparse_tensor()) Visit(attribute.sparse_tensor());
    if (attribute.has_tp()) Visit(attribute.tp());
    VisitAll(attribute.tensors());
    VisitAll(attribute.graphs());
    VisitAll(attribute.sparse_tensors());
    VisitAll(attribute.type_protos());
  }
  void Visit(const onnx::TensorProto& tensor) {
    Note(tensor);
    scan_.external_tensors |= IsExternal(tensor);
    if (tensor.has_segment()) Note(tensor.segment());
    NoteAll(tensor.external_data());
    NoteAll(tensor.metadata_props());
  }
  void Visit(const onnx::SparseTensorProto& sparse) {
    Note(sparse);
    if (sparse.has_values()) Visit(sparse.values());
    if (sparse.has_indices()) Visit(sparse.indices());
  }
  void Visit(const onnx::ValueInfoProto& value) {
    Note(value);
    if (value.has_type()) Visit(value.type());
    NoteAll(value.metadata_props());
  }
  void Visit(const onnx::TensorShapeProto& shape) {
    Note(shape);
    NoteAll(shape.dim());
  }
  void Visit(const onnx::TypeProto& type) {
    Note(type);
    switch (type.value_case()) {
      case onnx::TypeProto::kTensorType:
        return VisitShapeOf(type.tensor_type());
      case onnx::TypeProto::kSparseTensorType:
        return VisitShapeOf(type.sparse_tensor_type());
      case onnx::TypeProto::kSequenceType:
        return VisitElementOf(type.sequence_type());
      case onnx::TypeProto::kOptionalType:
        return VisitElementOf(type.optional_type());
      case onnx::TypeProto::kMapType:
        Note(type.map_type());
        if (type.map_type().has_value_type()) Visit(type.map_type().value_type());
        return;
      case onnx::TypeProto::kOpaqueType:
        return Note(type.opaque_type());
      case onnx::TypeProto::VALUE_NOT_SET:
        return;
    }
  }
  // A tensor or sparse tensor type, and its shape.
  template <typename TensorType>
  void VisitShapeOf(const TensorType& tensor) {
    Note(tensor);
    if (tensor.has_shape()) Visit(tensor.shape());
  }
  // A sequence or optional type, and its element type.
  template <typename Container>
  void VisitElementOf(const Container& container) {
    Note(container);
    if (container.has_elem_type()) Visit(container.elem_type());
  }
  void Visit(const onnx::TrainingInfoProto& training) {
    Note(training);
    if (training.has_initialization()) Visit(training.initialization());
    if (training.has_algorithm()) Visit(training.algorithm());
    NoteAll(training.initialization_binding());
    NoteAll(training.update_binding());
  }
  void Visit(const onnx::FunctionProto& function) {
    Note(function);
    VisitAll(function.attribute_proto());
    VisitAll(function.node());
    NoteAll(function.opset_import());
    VisitAll(function.value_info());
    NoteAll(function.metadata_props());
  }

  ModelScan scan_;
};

}  // namespace

ModelScan ScanModel(const onnx::ModelProto& model) { return Scanner().Run(model); }

bool KeepsWireError(const onnx::ModelProto& model, const ModelScan& scan) {
  return scan.unknown_fields && NeedsWireCheck(model);
}

}  // namespace onnxconvert
