#!/usr/bin/env python3
"""Numbers of the compositions and default-attribute cases in ONNX Runtime.

Every case of the table (numeric_cases.txt: a model in ONNX text syntax at
its source opset, a target opset, optional input values and tolerance) is
parsed and converted with the CLI, and both models run in ONNX Runtime on
the same inputs (tools/ort/compare_models.js). A case passes when

  (a) the conversion succeeds and the converted model imports the target
      opset (and holds the ops the case names with `ops`),
  (b) every output has the same element type and shape as the original's,
      and equal values: integers and bools exactly, floats within rtol 1e-5
      and atol 1e-6, or the looser `tolerance` the case states, which only
      a conversion whose report marks a rounding-changed composition may
      state.

Inputs are the values a case states, else seeded random values of the
declared shape. A case marked `known-failure` is reported and does not fail
the run while it fails; once it passes, the mark must go. Exits 1 naming
each failed case, or when the cases run are not all the table's; exits 2
when a tool is missing or fails.
"""

import argparse
import collections
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import zlib

# The shared harness helpers (the runfiles tree holds the file beside this
# one; so does the source tree).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_conformance import (  # noqa: E402
    fail_setup, ort_environment, run_manifest, workspace_root)

DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-6

# The lowest opset ONNX Runtime runs.
ORT_MIN_OPSET = 7

# Element types by their name in ONNX text: (TensorProto code, kind).
ELEMENT_TYPES = {
    "float": (1, "float"), "uint8": (2, "uint"), "int8": (3, "int"), "uint16": (4, "uint"),
    "int16": (5, "int"), "int32": (6, "int"), "int64": (7, "int"), "bool": (9, "bool"),
    "float16": (10, "float16"), "double": (11, "float"), "uint32": (12, "uint"),
    "uint64": (13, "uint"),
}

# The values each integer type holds.
INTEGER_RANGES = {
    "uint8": (0, 2**8 - 1), "int8": (-2**7, 2**7 - 1), "uint16": (0, 2**16 - 1),
    "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1), "bool": (0, 1),
}

# The range of seeded random values by kind.
RANDOM_RANGES = {"float": (-2.0, 2.0), "float16": (-2.0, 2.0), "int": (-20, 20),
                 "uint": (0, 40), "bool": (0, 1)}

HEADER = re.compile(r"^=== (\S+) -> (\d+)\s*$")
INPUT = re.compile(r"^input (\w+)(\[[^\]]*\])? = (.+)$")
TOLERANCE = re.compile(r"^tolerance rtol=(\S+) atol=(\S+): (.+)$")
RANDOM = re.compile(r"^random(?:\(\s*(\S+)\s*,\s*(\S+)\s*\))?$")
VALUE_TOKEN = re.compile(r"\s*(-?inf|nan|true|false|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[\[\],])")


class CaseError(Exception):
    """A case of the table that cannot be read."""


Case = collections.namedtuple(
    "Case", "name family target line inputs tolerance ops known_failure reference_because "
            "model reference")


def parse_values(text):
    """The flat list of values of `text`: a number, or nested [..] lists of
    numbers, nan, inf, -inf, true and false."""
    values, pos = [], 0
    while pos < len(text):
        m = VALUE_TOKEN.match(text, pos)
        if not m:
            raise CaseError(f"cannot read the values at '{text[pos:]}'")
        token = m.group(1)
        pos = m.end()
        if token in "[],":
            continue
        if token in ("true", "false"):
            values.append(1 if token == "true" else 0)
        elif re.fullmatch(r"[-+]?\d+", token):
            values.append(int(token))
        else:
            values.append(float(token))
    return values


def parse_shape(text):
    """[2,3] -> [2, 3]; None -> None."""
    if text is None:
        return None
    inner = text[1:-1].strip()
    try:
        return [int(d) for d in inner.split(",")] if inner else []
    except ValueError:
        raise CaseError(f"shape {text} is not a list of numbers") from None


def parse_directive(line, case):
    """Reads one directive line of a case into `case` (a dict)."""
    m = INPUT.match(line)
    if m:
        name, shape, spec = m.group(1), parse_shape(m.group(2)), m.group(3).strip()
        if name in case["inputs"]:
            raise CaseError(f"input '{name}' is given twice")
        r = RANDOM.match(spec)
        if r:
            bounds = (float(r.group(1)), float(r.group(2))) if r.group(1) else None
            case["inputs"][name] = (shape, "random", bounds)
        else:
            case["inputs"][name] = (shape, "values", parse_values(spec))
        return
    m = TOLERANCE.match(line)
    if m:
        rtol, atol = float(m.group(1)), float(m.group(2))
        if rtol < DEFAULT_RTOL or atol < DEFAULT_ATOL:
            raise CaseError("a stated tolerance only loosens the default")
        case["tolerance"] = (rtol, atol, m.group(3))
        return
    if line.startswith("ops "):
        for op in line.split()[1:]:
            if not re.fullmatch(r"[+-]\w+", op):
                raise CaseError(f"'{op}' in ops is neither +Op nor -Op")
            case["ops"].append(op)
        return
    for key in ("known-failure", "reference"):
        if line.startswith(f"{key}: "):
            case[key.replace("-", "_")] = line.split(": ", 1)[1].strip()
            return
    raise CaseError(f"unknown line '{line}'")


def parse_cases(path):
    """The cases of the table, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    cases, case, part = [], None, None

    def finish():
        if case is None:
            return
        model = "\n".join(case["model"]).strip()
        reference = "\n".join(case["reference_lines"]).strip()
        where = f"{path}:{case['line']} ({case['name']})"
        if not model.startswith("<"):
            raise CaseError(f"{where}: no model text (a line starting with '<')")
        if bool(reference) != bool(case["reference"]):
            raise CaseError(f"{where}: a reference model and its 'reference:' reason go together")
        if case["target"] < ORT_MIN_OPSET:
            raise CaseError(f"{where}: ONNX Runtime runs opset {ORT_MIN_OPSET} and later only")
        cases.append(Case(case["name"], case["name"].split("/")[0], case["target"], case["line"],
                          case["inputs"], case["tolerance"], case["ops"], case["known_failure"],
                          case["reference"], model, reference or None))

    for number, line in enumerate(lines, 1):
        header = HEADER.match(line)
        if header:
            finish()
            case = {"name": header.group(1), "target": int(header.group(2)), "line": number,
                    "inputs": {}, "tolerance": None, "ops": [], "known_failure": None,
                    "reference": None, "model": [], "reference_lines": []}
            part = "directives"
            continue
        if line.startswith("==="):
            raise CaseError(f"{path}:{number}: a case header is '=== family/name -> TARGET'")
        if line.startswith("#") or case is None:
            if case is None and line.strip() and not line.startswith("#"):
                raise CaseError(f"{path}:{number}: text before the first case")
            continue
        if part == "directives":
            if line.startswith("<"):
                part = "model"
            elif line.strip():
                try:
                    parse_directive(line.strip(), case)
                except CaseError as e:
                    raise CaseError(f"{path}:{number} ({case['name']}): {e}") from None
                continue
            else:
                continue
        if line.strip() == "--- reference":
            part = "reference"
            continue
        case["model" if part == "model" else "reference_lines"].append(line)
    finish()
    names = [c.name for c in cases]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CaseError(f"{path}: cases named twice: {', '.join(twice)}")
    return cases


def count_headers(path):
    """The number of case headers in the table, counted on their own."""
    with open(path, encoding="utf-8") as f:
        return sum(1 for line in f if line.startswith("=== "))


# ---------------------------------------------------------------------------
# Inputs.

def declared_type(type_string):
    """'float[2,N]' -> ('float', [2, 'N']); 'float' (no shape) -> ('float', [])."""
    m = re.fullmatch(r"(\w+)(?:\[(.*)\])?", type_string)
    if not m or m.group(1) not in ELEMENT_TYPES:
        raise CaseError(f"input type '{type_string}' is not a tensor type the driver feeds")
    dims = [d.strip() for d in m.group(2).split(",")] if m.group(2) else []
    return m.group(1), [int(d) if re.fullmatch(r"\d+", d) else d for d in dims]


def stored(value, elem):
    """A value of element type `elem` as compare_models.js takes it."""
    kind = ELEMENT_TYPES[elem][1]
    if kind == "float16":
        if math.isnan(value):
            return 0x7E00
        if math.isinf(value):
            return 0x7C00 if value > 0 else 0xFC00
        try:
            return struct.unpack("<H", struct.pack("<e", value))[0]
        except OverflowError:
            raise CaseError(f"{value} is out of float16's range") from None
    if kind == "float":
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    lo, hi = INTEGER_RANGES[elem]
    if math.isnan(value) or math.isinf(value) or value != int(value) or not lo <= value <= hi:
        raise CaseError(f"{value} is not a value of {elem}")
    return value if kind == "bool" else str(int(value))


def case_inputs(case, declared):
    """The manifest's inputs of a case: [{name, data_type, dims, values}]."""
    unknown = sorted(set(case.inputs) - {d["name"] for d in declared})
    if unknown:
        raise CaseError(f"the case gives inputs the model does not have: {', '.join(unknown)}")
    inputs = []
    for d in declared:
        elem, dims = declared_type(d["type"])
        code, kind = ELEMENT_TYPES[elem]
        shape, how, data = case.inputs.get(d["name"], (None, "random", None))
        shape = dims if shape is None else shape
        if any(isinstance(x, str) for x in shape):
            raise CaseError(f"input '{d['name']}' is {d['type']}: the case must give its shape "
                            f"(input {d['name']}[...] = ...)")
        count = math.prod(shape)
        if how == "values":
            values = data
            if len(values) == 1 and count != 1:
                values = values * count  # one value fills the shape
            if len(values) != count:
                raise CaseError(f"input '{d['name']}' has {len(values)} values for shape {shape}")
        else:
            lo, hi = data or RANDOM_RANGES[kind]
            rng = random.Random(zlib.crc32(f"{case.name}/{d['name']}".encode()))
            if kind in ("float", "float16"):
                values = [round(rng.uniform(lo, hi), 4) for _ in range(count)]
            else:
                values = [rng.randint(int(lo), int(hi)) for _ in range(count)]
        inputs.append({"name": d["name"], "data_type": code, "dims": shape,
                       "values": [stored(v, elem) for v in values]})
    return inputs


# ---------------------------------------------------------------------------
# The CLI.

def run_cli(cli, args):
    """(exit code, stdout, stderr) of `onnx-convert args`."""
    try:
        p = subprocess.run([cli] + args, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        fail_setup(f"{cli} {' '.join(args)}: {e}")
    return p.returncode, p.stdout, p.stderr


def first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no message)")


def parse_model(cli, text, path):
    """Writes `text` and parses it into `path`; raises CaseError when it fails."""
    with open(path + ".txt", "w", encoding="utf-8") as f:
        f.write(text + "\n")
    code, _, err = run_cli(cli, ["parse", path + ".txt", "-o", path])
    if code != 0:
        raise CaseError(f"the model text does not parse: {first_line(err)}")


def inspect(cli, path):
    code, out, err = run_cli(cli, ["inspect", path, "--json"])
    if code != 0:
        raise CaseError(f"inspect {os.path.basename(path)}: {first_line(err)}")
    return json.loads(out)


def change_kinds(report):
    """The kinds of change the conversion report lists."""
    return {change["kind"] for step in report.get("steps", []) for node in step.get("nodes", [])
            for change in node.get("changes", [])}


def prepare(cli, case, folder):
    """Converts one case and checks (a); returns its manifest entry.
    Raises CaseError naming what failed."""
    os.makedirs(folder, exist_ok=True)
    original = os.path.join(folder, "original.onnx")
    converted = os.path.join(folder, "converted.onnx")
    report_path = os.path.join(folder, "report.json")
    parse_model(cli, case.model, original)
    code, _, err = run_cli(cli, ["convert", original, "--to", str(case.target), "-o", converted,
                                 "--report", report_path])
    if code != 0:
        raise CaseError(f"conversion to {case.target} failed (exit {code}): {first_line(err)}")
    summary = inspect(cli, converted)
    opsets = {o["domain"]: o["version"] for o in summary["opset_import"]}
    if opsets.get("") != case.target and opsets.get("ai.onnx") != case.target:
        raise CaseError(f"the converted model imports {opsets}, not opset {case.target}")
    ops = {o["op_type"] for o in summary["nodes"]["by_op"]}
    for op in case.ops:
        if (op[0] == "+") != (op[1:] in ops):
            raise CaseError(f"the converted model {'lacks' if op[0] == '+' else 'still has'} "
                            f"{op[1:]} (ops: {', '.join(sorted(ops))})")
    with open(report_path, encoding="utf-8") as f:
        kinds = change_kinds(json.load(f))
    rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    if case.tolerance:
        if "rounding-changed" not in kinds:
            raise CaseError("the case loosens the tolerance, but the conversion's report marks "
                            "no rounding-changed composition")
        rtol, atol = case.tolerance[0], case.tolerance[1]
    entry = {"id": case.name, "original": original, "converted": converted, "rtol": rtol,
             "atol": atol, "inputs": case_inputs(case, inspect(cli, original)["inputs"])}
    if case.reference:
        reference = os.path.join(folder, "reference.onnx")
        parse_model(cli, case.reference, reference)
        entry["reference"] = reference
    return entry


# ---------------------------------------------------------------------------
# Running and reporting.

def compare(script, entries, env, jobs, work):
    """Runs compare_models.js on `entries`; returns {id: result}."""
    p, results = run_manifest(script, entries, env, jobs, os.path.join(work, "manifest.jsonl"))
    if p.returncode != 0:
        fail_setup(f"compare_models.js failed (exit {p.returncode}): {p.stderr.strip()}")
    return results


def outcome_of(case, error, result):
    """(passed, detail) of one case."""
    if error:
        return False, error
    if result is None:
        return False, "compare_models.js gave no result"
    if result["status"] != "pass":
        return False, f"{result['status']}: {result['detail']}"
    if result["outputs"] == 0:
        return False, "no output was compared"
    if case.reference and "reference" not in result.get("baselines", []):
        return False, "the reference model was not run"
    return True, ""


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="path of the onnx-convert binary")
    parser.add_argument("--cases", required=True, help="the table of cases")
    parser.add_argument("--compare-models", default=None,
                        help="path of compare_models.js (default: the workspace's)")
    parser.add_argument("--work", default=None,
                        help="scratch directory (default: $TEST_TMPDIR or a temp dir)")
    parser.add_argument("--filter", default=None, help="regex on case names: run only those")
    parser.add_argument("--min-cases", type=int, default=1,
                        help="fail when the table has fewer cases")
    parser.add_argument("--jobs", type=int, default=2, help="ORT child processes")
    parser.add_argument("--verbose", action="store_true", help="print every case's outcome")
    args = parser.parse_args(argv)

    root = workspace_root()
    env = ort_environment(root)
    script = args.compare_models or os.path.join(root, "tools", "ort", "compare_models.js")
    work = args.work or tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"),
                                         prefix="compositions_numeric_")
    try:
        cases = parse_cases(args.cases)
    except CaseError as e:
        print(f"FAIL: the table of cases: {e}", file=sys.stderr)
        return 1
    in_table = count_headers(args.cases)
    if len(cases) != in_table:
        print(f"FAIL: read {len(cases)} cases, but the table has {in_table} headers",
              file=sys.stderr)
        return 1
    if in_table < args.min_cases:
        print(f"FAIL: the table has {in_table} cases, fewer than --min-cases {args.min_cases}",
              file=sys.stderr)
        return 1
    selected = [c for c in cases if not args.filter or re.search(args.filter, c.name)]
    if not selected:
        print(f"FAIL: no case matches --filter {args.filter}", file=sys.stderr)
        return 1

    entries, errors = [], {}
    for index, case in enumerate(selected):
        folder = os.path.join(work, f"{index:03d}_{re.sub(r'[^A-Za-z0-9_.-]', '_', case.name)}")
        try:
            entries.append(prepare(args.cli, case, folder))
        except CaseError as e:
            errors[case.name] = str(e)
    results = compare(script, entries, env, args.jobs, work) if entries else {}

    families = collections.OrderedDict()
    failures, known = [], []
    for case in selected:
        passed, detail = outcome_of(case, errors.get(case.name), results.get(case.name))
        row = families.setdefault(case.family, collections.Counter())
        row["cases"] += 1
        label = f"{case.name} (-> {case.target}, {os.path.basename(args.cases)}:{case.line})"
        if case.known_failure and not passed:
            row["known failure"] += 1
            known.append(f"{label}: {case.known_failure}\n    {detail}")
        elif case.known_failure:
            row["failed"] += 1
            failures.append(f"{label}: marked known-failure ({case.known_failure}), but it "
                            "passes: remove the mark")
        elif passed:
            row["pass"] += 1
        else:
            row["failed"] += 1
            failures.append(f"{label}: {detail}")
        if args.verbose:
            r = results.get(case.name) or {}
            against = f" (against the {' and the '.join(r.get('baselines', []))}" + (
                f"; ONNX Runtime on the original: {r['original_error']})"
                if r.get("original_error") else ")")
            print(f"  {'pass' if passed else 'FAIL'} {label}{against if passed else ': ' + detail}")

    columns = ["cases", "pass", "known failure", "failed"]
    width = max(len(f) for f in families) + 2
    print(f"compositions_numeric: {len(selected)} of {in_table} cases of "
          f"{os.path.basename(args.cases)}, each converted and run in ONNX Runtime against its "
          "original (or its reference)")
    print("family".ljust(width) + "".join(c.rjust(15) for c in columns))
    total = collections.Counter()
    for family, row in families.items():
        total.update(row)
        print(family.ljust(width) + "".join(str(row[c]).rjust(15) for c in columns))
    print("total".ljust(width) + "".join(str(total[c]).rjust(15) for c in columns))
    elements = sum(r.get("elements", 0) for r in results.values())
    print(f"{elements} output elements compared")
    for line in known:
        print(f"KNOWN FAILURE {line}")
    ran = total["pass"] + total["known failure"] + total["failed"]
    if ran != len(selected):
        failures.append(f"{ran} cases have an outcome, {len(selected)} were selected")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    if failures:
        print(f"{len(failures)} of {len(selected)} cases failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
