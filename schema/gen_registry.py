#!/usr/bin/env python3
"""Generates schema/registry_data.cc from onnx-schemas-v1.22.0.json.

Usage: gen_registry.py SCHEMAS_JSON OUTPUT_CC

The output is checked into the repository so that the project never needs
the JSON at run time; registry_data_test checks that running this again
reproduces it byte for byte.
"""
import json
import sys

OPTIONS = {"Single": "ParamOption::kSingle", "Optional": "ParamOption::kOptional",
           "Variadic": "ParamOption::kVariadic"}
DIFFERENTIATION = {"Unknown": "Differentiation::kUnknown",
                   "Differentiable": "Differentiation::kDifferentiable",
                   "NonDifferentiable": "Differentiation::kNonDifferentiable"}


def c_string(text):
    out = ['"']
    for ch in text.encode("utf-8"):
        c = chr(ch)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif 0x20 <= ch < 0x7F and c != "?":
            out.append(c)
        else:
            out.append("\\%03o" % ch)
    out.append('"')
    return "".join(out)


def c_float(value):
    text = repr(float(value))
    if "inf" in text or "nan" in text:
        raise ValueError("non-finite default")
    return text + "f"


class Pool:
    """An append-only array of C++ initializers, addressed by (begin, count)."""

    def __init__(self):
        self.items = []
        self.seen = {}

    def add(self, items):
        """Appends `items` unless the same run was added before."""
        key = tuple(items)
        if not key:
            return 0, 0
        if key not in self.seen:
            self.seen[key] = len(self.items)
            self.items.extend(items)
        return self.seen[key], len(items)


def span(array, begin_count):
    begin, count = begin_count
    if count == 0:
        return "{}"
    return "{%s + %d, %d}" % (array, begin, count)


def param(p):
    return "{%s, %s, %s, %s, %d, %s}" % (
        c_string(p["name"]), c_string(p["type_str"]), OPTIONS[p["option"]],
        "true" if p["is_homogeneous"] else "false", p["min_arity"],
        DIFFERENTIATION[p["differentiation"]])


def attribute(a, ints, strings):
    has_default = "default_value" in a
    value = a.get("default_value")
    i, f, s, int_span, string_span = "0", "0.0f", '""', "{}", "{}"
    if has_default:
        kind = a["type"]
        if kind == "INT":
            i = str(int(value))
        elif kind == "FLOAT":
            f = c_float(value)
        elif kind == "STRING":
            s = c_string(value)
        elif kind == "INTS":
            int_span = span("kDefaultInts", ints.add([str(int(v)) for v in value]))
        elif kind == "STRINGS":
            string_span = span("kDefaultStrings", strings.add([c_string(v) for v in value]))
        else:
            raise ValueError("unsupported default for %s" % kind)
    return "{%s, onnx::AttributeProto::%s, %s, %s, {%s, %s, %s, %s, %s}}" % (
        c_string(a["name"]), a["type"], "true" if a["required"] else "false",
        "true" if has_default else "false", i, f, s, int_span, string_span)


def generate(schemas):
    params, attrs, constraints, types = Pool(), Pool(), Pool(), Pool()
    ints, strings, bodies, opsets = Pool(), Pool(), Pool(), Pool()
    rows = []
    for s in schemas:
        inputs = params.add([param(p) for p in s["inputs"]])
        outputs = params.add([param(p) for p in s["outputs"]])
        attr_span = attrs.add([attribute(a, ints, strings) for a in s["attributes"]])
        tc_rows = []
        for tc in s["type_constraints"]:
            allowed = types.add([c_string(t) for t in tc["allowed_type_strs"]])
            tc_rows.append("{%s, %s}" % (c_string(tc["type_param_str"]),
                                         span("kAllowedTypes", allowed)))
        tc_span = constraints.add(tc_rows)
        body_span = bodies.add(["{%d, %s}" % (b["opset"], c_string(b["text"]))
                                for b in s["function_bodies"]])
        opset_span = opsets.add([str(o) for o in s["context_dependent_function_opsets"]])
        rows.append("    {%s, %s, %d, %s, %d, %d, %d, %d,\n     %s, %s, %s, %s,\n"
                    "     %s, %s, %s, %s}" % (
                        c_string(s["domain"]), c_string(s["name"]), s["since_version"],
                        "true" if s["deprecated"] else "false", s["min_input"],
                        s["max_input"], s["min_output"], s["max_output"],
                        span("kParams", inputs), span("kParams", outputs),
                        span("kAttrs", attr_span), span("kConstraints", tc_span),
                        "true" if s["has_type_and_shape_inference"] else "false",
                        "true" if s["has_function"] else "false",
                        span("kBodies", body_span), span("kCdfOpsets", opset_span)))

    def array(ctype, name, pool):
        items = pool.items or ["{}"]
        return "constexpr %s %s[] = {\n%s,\n};\n" % (
            ctype, name, ",\n".join("    " + item for item in items))

    out = []
    out.append("// Generated by schema/gen_registry.py from onnx-schemas-v1.22.0.json;\n"
               "// do not edit. Every operator version of ONNX 1.22.\n\n"
               "#include \"schema/registry.h\"\n\n"
               "namespace onnxconvert::schema {\nnamespace {\n\n")
    out.append(array("FormalParam", "kParams", params))
    out.append(array("int64_t", "kDefaultInts", ints))
    out.append(array("absl::string_view", "kDefaultStrings", strings))
    out.append(array("AttrSpec", "kAttrs", attrs))
    out.append(array("absl::string_view", "kAllowedTypes", types))
    out.append(array("TypeConstraint", "kConstraints", constraints))
    out.append(array("FunctionBody", "kBodies", bodies))
    out.append(array("int", "kCdfOpsets", opsets))
    out.append("constexpr OpSchema kSchemas[] = {\n%s,\n};\n\n" % ",\n".join(rows))
    out.append("}  // namespace\n\n"
               "absl::Span<const OpSchema> GeneratedSchemas() { return kSchemas; }\n\n"
               "}  // namespace onnxconvert::schema\n")
    return "".join(out)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schemas = json.load(f)
    text = generate(schemas)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
