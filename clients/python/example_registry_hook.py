#!/usr/bin/python3
"""A model registry's upload hook: converts each uploaded model to a target
opset through onnx-convert servers and stores the converted model and its
report beside the original (or, when it cannot be converted, why).

    clients/python/example_registry_hook.py --server dns:///onnx-convert-headless:50051 \\
        --store /srv/registry --to 17 examples/tiny_cnn.onnx

A registry calls `on_model_uploaded(client, model_id, model_bytes, store)`
from its upload handler; `store` is anything with put(key, bytes) (here a
folder, DirectoryStore).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_convert_client  # noqa: E402


class DirectoryStore:
    """Stores each key as a file under a folder."""

    def __init__(self, root):
        self.root = root

    def put(self, key, data):
        """Writes `data` (bytes) as `key`, atomically."""
        path = os.path.join(self.root, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)


def on_model_uploaded(client, model_id, model_bytes, store, target_opset=17,
                      **convert_options):
    """Converts the uploaded model to `target_opset` and stores, under
    "<model_id>/opset<N>/": model.onnx and report.json when it converts,
    else error.json (the code, message, and the step and node at fault).
    `convert_options` go to Client.convert (ml_target_opset, no_casts...).
    Returns a summary dict for the registry's own records."""
    prefix = f"{model_id}/opset{target_opset}"
    request_id = f"registry-{model_id}-opset{target_opset}"
    try:
        converted, report = client.convert(model_bytes, target_opset,
                                           name=f"{model_id}.onnx", request_id=request_id,
                                           **convert_options)
    except onnx_convert_client.ConversionError as error:
        failure = {"code": error.code.name, "message": error.message}
        if error.detail is not None:
            failure.update(step=f"{error.detail.from_opset}->{error.detail.to_opset}",
                           node=error.detail.node, op=error.detail.op_version,
                           reason=error.detail.reason)
        store.put(f"{prefix}/error.json", json.dumps(failure, indent=2).encode())
        return {"model": model_id, "converted": False, **failure}
    store.put(f"{prefix}/model.onnx", converted)
    store.put(f"{prefix}/report.json", report.encode())
    steps = json.loads(report).get("steps", [])
    return {"model": model_id, "converted": True, "bytes": len(converted),
            "steps": len(steps)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051", help="any gRPC target")
    parser.add_argument("--store", required=True, help="the registry's folder")
    parser.add_argument("--to", type=int, default=17)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    store = DirectoryStore(args.store)
    failed = 0
    with onnx_convert_client.Client(args.server) as client:
        for path in args.models:
            with open(path, "rb") as f:
                model = f.read()
            model_id = os.path.splitext(os.path.basename(path))[0]
            summary = on_model_uploaded(client, model_id, model, store, args.to)
            failed += not summary["converted"]
            print(json.dumps(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
