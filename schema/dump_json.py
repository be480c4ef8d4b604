#!/usr/bin/env python3
"""Prints onnx-schemas-v1.22.0.json in the line format of dump_registry.cc."""
import json
import struct
import sys


def flag(value):
    return "1" if value else "0"


def param(p):
    return "|".join([p["name"], p["type_str"], p["option"], flag(p["is_homogeneous"]),
                     str(p["min_arity"]), p["differentiation"]])


def float32_text(value):
    # absl::StrCat prints a float with 6 significant digits (%g).
    single = struct.unpack("f", struct.pack("f", float(value)))[0]
    return "%g" % single


def default(a):
    if "default_value" not in a:
        return "-"
    value = a["default_value"]
    kind = a["type"]
    if kind == "FLOAT":
        return float32_text(value)
    if kind in ("INTS", "STRINGS"):
        return ",".join(str(v) for v in value)
    return str(value)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schemas = json.load(f)
    out = sys.stdout
    for s in schemas:
        i = "%s/%s/%d" % (s["domain"], s["name"], s["since_version"])
        out.write("%s deprecated=%s inputs=%d..%d outputs=%d..%d inference=%s function=%s\n" % (
            i, flag(s["deprecated"]), s["min_input"], s["max_input"], s["min_output"],
            s["max_output"], flag(s["has_type_and_shape_inference"]), flag(s["has_function"])))
        for p in s["inputs"]:
            out.write("%s in %s\n" % (i, param(p)))
        for p in s["outputs"]:
            out.write("%s out %s\n" % (i, param(p)))
        for a in s["attributes"]:
            out.write("%s attr %s|%s|%s|%s\n" % (i, a["name"], a["type"], flag(a["required"]),
                                                 default(a)))
        for c in s["type_constraints"]:
            out.write("%s constraint %s|%s\n" % (i, c["type_param_str"],
                                                 ",".join(c["allowed_type_strs"])))
        for b in s["function_bodies"]:
            out.write("%s body %d|%d\n" % (i, b["opset"], len(b["text"].encode("utf-8"))))
        out.write("%s context_dependent %s\n" % (
            i, ",".join(str(o) for o in s["context_dependent_function_opsets"])))


if __name__ == "__main__":
    main()
