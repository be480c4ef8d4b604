#!/usr/bin/python3
"""Exports a torchvision model to ONNX for the real-model corpus (a test tool).

    /usr/bin/python3 tools/torch-export.py SPEC_JSON OUT.onnx

SPEC_JSON is the "export" entry of a model of tools/real-models.json:

    {"torchvision": "detection.maskrcnn_resnet50_fpn",   # models.<this>
     "kwargs": {"weights_backbone": null},               # constructor arguments
     "inputs": [[3, 320, 320]],                          # shapes, seeded U[0, 1)
     "as_list": true,                                    # the inputs as one list
     "opset": 11}

The weights are torchvision's initialization under torch.manual_seed(0), not
trained ones (nothing is downloaded: weights=None), so the graph is the
exporter's for the real architecture and the bytes are the same on every
run of the same Debian packages (python3-torch 1.13.1, python3-torchvision
0.14.1; tools/real-models.js pins their sha256). The model is written to a
file beside OUT and renamed, so OUT is never partial.
"""

import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    spec = json.loads(argv[1])
    out = argv[2]
    import torch  # Debian: python3-torch
    import torchvision  # Debian: python3-torchvision

    torch.manual_seed(0)
    module = torchvision.models
    *path, name = spec["torchvision"].split(".")
    for part in path:
        module = getattr(module, part)
    model = getattr(module, name)(weights=None, **spec.get("kwargs", {})).eval()
    inputs = [torch.rand(*shape) for shape in spec["inputs"]]
    args = (inputs,) if spec.get("as_list") else tuple(inputs)
    partial = out + ".partial"
    with torch.no_grad():
        torch.onnx.export(model, args, partial, opset_version=spec["opset"],
                          do_constant_folding=True)
    os.replace(partial, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
