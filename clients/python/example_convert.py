#!/usr/bin/python3
"""Converts a model through a running onnx-convert server.

    clients/python/example_convert.py --server 127.0.0.1:50051 \\
        examples/tiny_cnn.onnx cnn17.onnx --to 17 [--report report.json]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_convert_client  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051",
                        help="any gRPC target: HOST:PORT, dns:///HOST:PORT, ipv4:A:P,B:P")
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--to", type=int, required=True)
    parser.add_argument("--ml-to", type=int, default=None)
    parser.add_argument("--report", default=None)
    args = parser.parse_args()
    client = onnx_convert_client.Client(args.server)  # round_robin, retries
    with open(args.input, "rb") as f:
        model = f.read()
    try:
        converted, report = client.convert(model, args.to, ml_target_opset=args.ml_to,
                                           name=args.input)
    except onnx_convert_client.ConversionError as error:
        print(f"{args.input}: {error}", file=sys.stderr)
        return 1
    with open(args.output, "wb") as f:
        f.write(converted)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    print(f"{args.input} -> {args.output}: opset {args.to}, {len(converted)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
