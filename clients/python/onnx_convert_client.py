"""A small client for the onnx-convert gRPC service (package onnxconvert.v1).

The stubs are generated from proto/onnx_convert_service.proto with protoc's
Python output (see generate_stubs); Debian's python3-grpcio and
python3-protobuf run them.

    client = Client("127.0.0.1:50051")
    converted, report = client.convert(open("m.onnx", "rb").read(), target_opset=17)
"""

import importlib
import os
import subprocess
import sys
import tempfile

import grpc


def generate_stubs(proto_dir, out_dir):
    """Writes onnx_convert_service_pb2(_grpc).py for the protos in
    `proto_dir` into `out_dir` with protoc and grpc_python_plugin."""
    command = [
        "protoc", f"--proto_path={proto_dir}", f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
        os.path.join(proto_dir, "onnx_convert_service.proto"),
    ]
    subprocess.run(command, check=True)


def load_stubs(proto_dir=None):
    """Generates the stubs into a temporary folder (once) and imports them:
    returns (messages module, grpc module)."""
    if proto_dir is None:
        here = os.path.dirname(os.path.abspath(__file__))
        proto_dir = os.path.join(here, "..", "..", "proto")
    out_dir = tempfile.mkdtemp(prefix="onnx_convert_stubs_")
    generate_stubs(proto_dir, out_dir)
    sys.path.insert(0, out_dir)
    return (importlib.import_module("onnx_convert_service_pb2"),
            importlib.import_module("onnx_convert_service_pb2_grpc"))


class ConversionError(Exception):
    """A call the server refused: the gRPC code and its message (for
    FAILED_PRECONDITION, the step, node and reason)."""

    def __init__(self, code, message):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class Client:
    """Calls one onnx-convert server."""

    def __init__(self, address, proto_dir=None, timeout=60.0):
        self.pb, self.rpc = load_stubs(proto_dir)
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 1 << 30),
                              ("grpc.max_send_message_length", 1 << 30)])
        self.stub = self.rpc.OnnxConvertStub(self.channel)
        self.timeout = timeout

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as error:
            raise ConversionError(error.code(), error.details()) from None

    def convert(self, model_bytes, target_opset, ml_target_opset=None, ir_version=None,
                expand_functions=True, no_casts=False, name="model.onnx"):
        """Converts serialized model bytes; returns (converted bytes, report JSON)."""
        options = self.pb.ConvertOptions(target_opset=target_opset,
                                         expand_functions=expand_functions,
                                         no_casts=no_casts)
        if ml_target_opset is not None:
            options.ml_target_opset = ml_target_opset
        if ir_version is not None:
            options.ir_version = ir_version
        response = self._call(self.stub.Convert, self.pb.ConvertRequest(
            model=model_bytes, model_name=name, options=options))
        return response.model, response.report_json

    def check(self, model_bytes, name="model.onnx"):
        """The checker's verdict: (valid, [issue strings])."""
        response = self._call(self.stub.Check,
                              self.pb.ModelRequest(model=model_bytes, model_name=name))
        issues = [f"{i.path} {i.node}: {i.code}: {i.message}".strip() for i in response.issues]
        return response.valid, issues

    def capabilities(self):
        """{domain: (min opset, max opset)} the server converts."""
        response = self._call(self.stub.Capabilities, self.pb.CapabilitiesRequest())
        return {r.domain: (r.min_opset, r.max_opset) for r in response.opsets}
