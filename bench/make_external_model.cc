// Writes a model with `mb` MiB of weights in an external-data file beside
// it: the chain of synthetic_models.h (opset 12) plus float initializers of
// at most 64 MiB each, stored in "<model>.data". The weights are written
// straight to the file, never held whole in memory. With "inside", the
// weights are the initializers' raw_data instead (at most ~2 GiB in all).
//   bazel run -c opt //bench:make_external_model -- /tmp/big/model.onnx 1024
//   bazel run -c opt //bench:make_external_model -- /tmp/big/inside.onnx 256 inside
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/synthetic_models.h"
#include "proto/onnx.pb.h"

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "inside")) {
    std::cerr << "usage: make_external_model MODEL.onnx MIB [inside]\n";
    return 2;
  }
  const bool inside = argc == 4;
  const std::string model_path = argv[1];
  const int64_t mib = std::atoll(argv[2]);
  const std::string data_name =
      absl::StrCat(model_path.substr(model_path.find_last_of('/') + 1), ".data");
  const std::string data_path = absl::StrCat(model_path, ".data");
  onnx::ModelProto model = onnxconvert::bench::MakeChainModel(1000);
  std::ofstream data;
  if (!inside) data.open(data_path, std::ios::binary | std::ios::trunc);
  constexpr int64_t kPieceMib = 64;
  std::string piece(static_cast<size_t>(kPieceMib) << 20, '\0');
  for (size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<char>((i * 2654435761u) >> 13);
  int64_t offset = 0;
  for (int64_t i = 0; offset < (mib << 20); ++i) {
    int64_t bytes = std::min<int64_t>(kPieceMib << 20, (mib << 20) - offset);
    onnx::TensorProto* weights = model.mutable_graph()->add_initializer();
    weights->set_name(absl::StrCat("weights_", i));
    weights->set_data_type(onnx::TensorProto::FLOAT);
    weights->add_dims(bytes / 4);
    offset += bytes;
    if (inside) {
      weights->set_raw_data(piece.data(), bytes);
      continue;
    }
    data.write(piece.data(), bytes);
    weights->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& key, const std::string& value) {
      onnx::StringStringEntryProto* entry = weights->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", data_name);
    add("offset", absl::StrCat(offset - bytes));
    add("length", absl::StrCat(bytes));
  }
  if (!inside) data.close();
  std::ofstream out(model_path, std::ios::binary | std::ios::trunc);
  if ((!inside && !data) || !model.SerializeToOstream(&out)) {
    std::cerr << "cannot write " << model_path << "\n";
    return 1;
  }
  return 0;
}
