#!/usr/bin/env python3
"""Numeric conformance of converted models in ONNX Runtime (issue 4 §5).

Converts every case of the ONNX backend corpus to every target opset
(convert_corpus), runs the original models in ONNX Runtime (the baseline,
tools/ort/run_models.js), then runs the converted models of every case whose
baseline passes, and prints a table by direction and target: pairs counted,
converted, refused, ORT pass, mismatch and error; every mismatch and ORT
error of a converted model; and the refusal reasons grouped.

Exits 1 on any mismatch (a converted model that runs but gives other
outputs), or when the upgrade pass rate is below --min-up or the downgrade
pass rate below --min-down. The downgrade rate leaves out the pairs refused
because the model cannot be expressed at the target (see REFUSAL_CLASSES).
Exits 2 when a tool is missing or fails.

--corpus-root DIR takes another corpus of the same layout (node/, simple/,
real/ folders of cases with model.onnx and test_data_set_*); --real-models
takes the real-model corpus that tools/real-models.js writes
($ONNX_REAL_MODELS or ~/.cache/onnx-convert-real-models, its corpus/ folder)
and, when it is absent, prints a notice and exits 0; its models run with
ONNX Runtime's graph optimizations off, as their test data were made (the
kernels the graph names, not fusions and layouts that round otherwise). --per-case prints each
case's outcome at every target.

--verify N cross-checks the converter's own verification (ConvertOptions::
verify, the built-in evaluator on N random input sets, comparing the
original with the converted model) against ONNX Runtime (the converted
model against the case's expected outputs): a table of verify verdict
(pass, fail, skipped) by ORT verdict (pass, mismatch, ORT error, not run)
over the converted pairs, the agreement over the pairs both could judge,
and every disagreement. It fails the run when a pair ORT finds mismatched
passed verification, or when the agreement is below --min-verify-agreement.
"""

import argparse
import collections
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

# The source tree and the corpus (tests/test_paths.py: the runfiles tree
# holds it in tests/, as the source tree does).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_paths import backend_corpus_root, workspace_root  # noqa: E402,F401

INSTALL_HINT = ("tools/install-deps.sh  (or: cd tools/ort && "
                "ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)")

# Refusal classes, first match wins: (class, regex on the message, whether
# the model could be expressed at the target). Inexpressible refusals are
# left out of the downgrade pass rate; the others count as failures.
REFUSAL_CLASSES = [
    # The spec gives such an op a function body that depends on the input
    # types: it could be expanded, so it counts against the rate.
    ("op gone at target, type-dependent body not expanded yet",
     r"its function body depends on the input types", True),
    ("op does not exist at target (no function body)", r" does not exist before opset \d+", False),
    ("type not allowed at target",
     r"' is [^,]+, which \S+ does not allow for |holds their values exactly|which Cast at opset "
     r"\d+ cannot do|cannot be cast back", False),
    ("dynamic input needs attribute at target",
     r"is not a constant, and \S+ needs it as an attribute", False),
    # The op exists at the target, but not with the behaviour this node
    # asks for (an attribute value or input rank the older version lacks).
    ("behaviour not expressible at target",
     r"cannot express|cannot do|samples 4-D inputs only|samples asymmetrically", False),
    # Max/Min/Sum/Mean before 8 take inputs of one shape, and Expand (8)
    # does not exist there: unequal or unknown shapes have no exact form.
    ("shapes not provably equal where the target does not broadcast",
     r"does not broadcast, and the shapes of .* are not known to be equal", False),
    ("no adapter yet", r": no adapter yet for ", True),
    ("axis semantics differ (adapter limit)", r"compute different things there", True),
    ("adapter leaves node unfit", r"leaves the node unfit", True),
    ("constant needed in function body", r"inside a function body", True),
    ("other refusal", r"", True),
]

# ONNX Runtime's message for an op version it has no kernel for.
RUNTIME_GAP = re.compile(r"Could not find an implementation for \w+\(\d+\)")

# Outcome columns of the table, in order.
COLUMNS = ["pairs", "converted", "refused", "inexpressible", "op_gone", "failed",
           "pass", "mismatch", "ort_error", "runtime_gap", "unsupported", "rate", "ops_rate"]

# The refusal class of pairs whose model uses an op that does not exist at
# the target: left out of `ops_rate`, the rate over the pairs whose ops all
# exist at the target.
OP_GONE = "op does not exist at target (no function body)"
# Columns computed from the counts.
RATES = ("rate", "ops_rate")


def parse_args(argv):
    """The driver's flags."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--convert-corpus", required=True,
                        help="path of the convert_corpus binary")
    parser.add_argument("--run-models", default=None,
                        help="path of run_models.js (default: the workspace's)")
    parser.add_argument("--work", default=None,
                        help="scratch directory (default: $TEST_TMPDIR or a temp dir)")
    parser.add_argument("--sample", type=int, default=1, help="keep every N-th case")
    parser.add_argument("--targets", default=None, help="comma-separated target opsets")
    parser.add_argument("--cases-filter", default=None, help="regex on case names")
    parser.add_argument("--no-casts", action="store_true",
                        help="refuse types a target version lacks instead of casting exactly")
    parser.add_argument("--min-up", type=float, default=1.0,
                        help="lowest accepted upgrade pass rate")
    parser.add_argument("--min-down", type=float, default=0.95,
                        help="lowest accepted downgrade pass rate (expressible pairs)")
    parser.add_argument("--min-down-ops", type=float, default=0.0,
                        help="lowest accepted downgrade pass rate over the pairs whose ops all "
                             "exist at the target")
    parser.add_argument("--atol", type=float, default=None,
                        help="absolute tolerance of floats (default: the harness's 1e-7)")
    parser.add_argument("--atol-scale", type=float, default=0.0,
                        help="atol grows to this times the largest magnitude of each expected "
                             "output (real models: deep networks whose small outputs carry the "
                             "rounding of their large ones)")
    parser.add_argument("--jobs", type=int, default=2, help="ORT child processes")
    parser.add_argument("--json", default=None, help="write the table as JSON here")
    parser.add_argument("--corpus-root", default=None,
                        help="corpus folder (default: $ONNX_BACKEND_TESTS or ../shared/onnx-backend-tests)")
    parser.add_argument("--real-models", action="store_true",
                        help="the real-model corpus of tools/real-models.js; skipped when absent")
    parser.add_argument("--per-case", action="store_true",
                        help="print each case's outcome at every target")
    parser.add_argument("--verify", type=int, default=0,
                        help="verify each conversion on N random input sets and cross-check "
                             "the verdicts with ORT's (0: off)")
    parser.add_argument("--inject-fault", default="",
                        help="test only: corrupt every node this adapter converts (e.g. "
                             "'Clip 11->10'), so that ORT finds mismatches verify must fail")
    parser.add_argument("--min-verify-mismatches", type=int, default=0,
                        help="fewest pairs ORT must find mismatched (with --inject-fault)")
    parser.add_argument("--min-verify-agreement", type=float, default=0.0,
                        help="lowest accepted share of the pairs both verify and ORT judged "
                             "on which they agree")
    return parser.parse_args(argv)


def fail_setup(message):
    """Reports a missing or failing tool and exits 2."""
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(2)


def ort_environment(root):
    """The environment for run_models.js; exits naming the install command
    when ONNX Runtime is missing."""
    modules = os.path.join(root, "tools", "ort", "node_modules")
    if not os.path.isdir(os.path.join(modules, "onnxruntime-node")):
        fail_setup(f"ONNX Runtime (onnxruntime-node) is missing: expected {modules}/"
                   f"onnxruntime-node. Install it with: {INSTALL_HINT}")
    if shutil.which("node") is None:
        fail_setup(f"node is not on PATH. Install it with: {INSTALL_HINT}")
    env = dict(os.environ)
    env["NODE_PATH"] = modules
    env["ALLOW_RELEASED_ONNX_OPSET_ONLY"] = "0"
    return env


def real_models_root():
    """The corpus folder tools/real-models.js writes: $ONNX_REAL_MODELS/corpus
    or, under the user's home directory (from the password database, since
    Bazel tests get a HOME of their own), .cache/onnx-convert-real-models/corpus."""
    cache = os.environ.get("ONNX_REAL_MODELS") or os.path.join(
        pwd.getpwuid(os.getuid()).pw_dir, ".cache", "onnx-convert-real-models")
    return os.path.join(cache, "corpus")


def read_lines(path):
    """The JSON objects of a JSON-lines file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run_converter(args, work):
    """Runs convert_corpus into `work`."""
    command = [args.convert_corpus, "--out", work, "--sample", str(args.sample)]
    if args.targets:
        command += ["--targets", args.targets]
    if args.cases_filter:
        command += ["--cases-filter", args.cases_filter]
    if args.no_casts:
        command.append("--no-casts")
    if args.verify:
        command += ["--verify", str(args.verify)]
    if args.inject_fault:
        command += ["--inject-fault", args.inject_fault]
    env = dict(os.environ)
    env["ONNX_BACKEND_TESTS"] = args.corpus_root or backend_corpus_root()
    if subprocess.run(command, env=env).returncode != 0:
        fail_setup(f"{' '.join(command)} failed")


def run_models(script, manifest, entries, env, jobs, results_path, atol_scale=0.0,
               optimize=True, atol=None):
    """Runs `entries` in ORT; returns {id: result}."""
    if atol is not None:
        entries = [{**e, "atol": atol} for e in entries]
    if atol_scale:
        entries = [{**e, "atol_scale": atol_scale} for e in entries]
    if not optimize:
        entries = [{**e, "optimize": False} for e in entries]
    with open(manifest, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(e) + "\n" for e in entries)
    with open(results_path, "w", encoding="utf-8") as out:
        code = subprocess.run(["node", script, manifest, "--jobs", str(jobs)],
                              env=env, stdout=out).returncode
    if code != 0:
        fail_setup(f"run_models.js failed on {manifest} (exit {code})")
    results = {r["id"]: r for r in read_lines(results_path)}
    missing = [e["id"] for e in entries if e["id"] not in results]
    if missing:
        fail_setup(f"run_models.js gave no result for {len(missing)} entries, e.g. {missing[0]}")
    return results


def run_manifest(script, entries, env, jobs, manifest):
    """Runs the node `script` on `entries`, written to the JSON-lines file
    `manifest`; returns the finished process (output captured) and
    {id: result} of the JSON lines it printed."""
    with open(manifest, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(e) + "\n" for e in entries)
    process = subprocess.run(["node", script, manifest, "--jobs", str(jobs)], env=env,
                             capture_output=True, text=True)
    results = {}
    for line in process.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            results[result["id"]] = result
    return process, results


def classify_refusal(message):
    """(class, expressible) of a refusal message."""
    for name, pattern, expressible in REFUSAL_CLASSES:
        if re.search(pattern, message):
            return name, expressible
    raise AssertionError("REFUSAL_CLASSES ends with a catch-all")


def refusal_reason(message):
    """The reason part of a refusal, with value names elided, for grouping."""
    reason = message.split("): ", 1)[1] if "): " in message else message
    reason = re.sub(r"'[^']*' \(", "'…' (", reason)
    reason = re.sub(r"^'[^']*' is ", "'…' is ", reason)
    return re.sub(r" \(allowed: .*\)$", "", reason)


def error_cause(detail):
    """An ORT error message reduced to its cause, for grouping."""
    cause = re.sub(r"Load model from \S+ failed:", "", detail)
    cause = re.sub(r"In Node, \(.*?\) : \(.*?\) -> \(.*?\) , ", "", cause)
    cause = re.sub(r"/onnxruntime_src/\S+ \S+::[^ ]+\([^)]*\)( \[with [^]]*\])? ", "", cause)
    return re.sub(r"\d+", "N", cause)[:200]


def pair_outcome(conversion, result):
    """The outcome of one counted (case, target): a table column name."""
    outcome = conversion["outcome"]
    if outcome == "refused":
        _, expressible = classify_refusal(conversion["message"])
        return "refused" if expressible else "inexpressible"
    if outcome == "failed" or result is None:
        return "failed"
    # A valid model whose op version ONNX Runtime registers no kernel for
    # (e.g. Swish-24 in a model of opset 25, or Max-6 on int32): a gap of
    # the runtime, listed, and left out of the rates.
    if result["status"] == "ort_error" and RUNTIME_GAP.search(result.get("detail", "")):
        return "runtime_gap"
    return result["status"]


def new_row():
    """A table row of zero counts."""
    return collections.OrderedDict((c, 0) for c in COLUMNS if c not in RATES)


def add_pair(row, outcome):
    """Counts one pair with `outcome` in a table row."""
    row["pairs"] += 1
    if outcome in ("pass", "mismatch", "ort_error", "runtime_gap", "unsupported"):
        row["converted"] += 1
    if outcome == "inexpressible":
        row["refused"] += 1
    row[outcome] += 1


def pass_rate(row, direction):
    """Passes over the pairs that count: all upgrades; downgrades that
    converted or were refused for a missing adapter."""
    denominator = (row["pairs"] - row["runtime_gap"] -
                   (row["inexpressible"] if direction.endswith("down") else 0))
    return row["pass"] / denominator if denominator else 1.0


def ops_rate(row):
    """Passes over the pairs whose ops all exist at the target (every
    refusal but a missing op counts against it)."""
    denominator = row["pairs"] - row["runtime_gap"] - row["op_gone"]
    return row["pass"] / denominator if denominator else 1.0


def tabulate(conversions, baseline, converted):
    """The tables, lists and groups of the report."""
    by_direction = collections.defaultdict(new_row)
    by_target = collections.defaultdict(new_row)
    mismatches, errors = [], []
    refusals = collections.Counter()
    refusal_classes = collections.Counter()
    for c in conversions:
        if baseline.get(c["case"], {}).get("status") != "pass":
            continue
        result = converted.get(c["id"]) if c["id"] else None
        outcome = pair_outcome(c, result)
        add_pair(by_direction[c["direction"]], outcome)
        add_pair(by_target[(c["direction"], c["target"])], outcome)
        pair = {"case": c["case"], "source": c["source"], "target": c["target"],
                "direction": c["direction"]}
        if outcome == "mismatch":
            mismatches.append({**pair, "detail": result["detail"]})
        elif outcome in ("ort_error", "runtime_gap", "unsupported", "failed"):
            detail = result["detail"] if result else c["message"]
            errors.append({**pair, "status": outcome, "detail": detail, "cause": error_cause(detail)})
        if c["outcome"] == "refused":
            name, _ = classify_refusal(c["message"])
            if name == OP_GONE:
                by_direction[c["direction"]]["op_gone"] += 1
                by_target[(c["direction"], c["target"])]["op_gone"] += 1
            refusal_classes[(c["direction"], name)] += 1
            refusals[(c["direction"], name, refusal_reason(c["message"]))] += 1
    return by_direction, by_target, mismatches, errors, refusals, refusal_classes


# Width of each table column.
WIDTHS = {c: max(len(c) + 1, 7) for c in COLUMNS}


def format_header():
    """The table's header line."""
    return f"{'':<12}" + "".join(f"{c:>{WIDTHS[c]}}" for c in COLUMNS)


def format_row(label, row, direction):
    """One table line: counts and the pass rate."""
    cells = "".join(f"{row[c]:>{WIDTHS[c]}}" for c in COLUMNS if c not in RATES)
    return (f"{label:<12}{cells}{100 * pass_rate(row, direction):>{WIDTHS['rate'] - 1}.1f}%"
            f"{100 * ops_rate(row):>{WIDTHS['ops_rate'] - 1}.1f}%")


def pairs_by_case(members):
    """'case (source) -> t1, t2' lines for a list of pairs."""
    targets = collections.defaultdict(list)
    for m in members:
        targets[(m["case"], m["source"])].append(str(m["target"]))
    return [f"{case} ({source}) -> {', '.join(t)}" for (case, source), t in targets.items()]


def print_errors(errors):
    """Every ORT error of a converted model, grouped by cause."""
    groups = collections.defaultdict(list)
    for e in errors:
        groups[(e["status"], e["cause"])].append(e)
    print(f"\nORT errors of converted models: {len(errors)} in {len(groups)} causes")
    for (status, cause), members in sorted(groups.items(), key=lambda g: -len(g[1])):
        print(f"  {len(members):>4}  {status}: {cause}")
        print(f"        e.g. {members[0]['detail'][:400]}")
        for line in pairs_by_case(members):
            print(f"        {line}")


def print_report(stats, baseline):
    """The baseline, the table, mismatches, ORT errors and refusals."""
    by_direction, by_target, mismatches, errors, refusals, refusal_classes = stats
    statuses = collections.Counter(r["status"] for r in baseline.values())
    print(f"baseline (original models in ORT): {len(baseline)} cases: "
          + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
    print("pairs of baseline-passing cases; refused counts every refusal, inexpressible "
          "those not expressible at the target (left out of the downgrade rate), op_gone "
          "those whose model uses an op missing at the target (left out of ops_rate, the "
          "rate over pairs whose ops all exist at the target)\n")
    print(format_header())
    for direction in ("up", "down", "ml-up", "ml-down"):
        if direction in by_direction:
            print(format_row(direction, by_direction[direction], direction))
    print()
    order = {"up": 0, "down": 1, "ml-up": 2, "ml-down": 3}
    for (direction, target) in sorted(by_target, key=lambda k: (order[k[0]], k[1])):
        print(format_row(f"{direction} -> {target}", by_target[(direction, target)], direction))
    print(f"\nmismatches: {len(mismatches)}")
    for m in mismatches:
        print(f"  {m['case']} {m['source']} -> {m['target']}: {m['detail']}")
    print_errors(errors)
    print("\nrefusals by class:")
    for (direction, name), count in sorted(refusal_classes.items()):
        print(f"  {count:>5}  {direction:<4} {name}")
    print("\nrefusal reasons:")
    for (direction, name, reason), count in sorted(refusals.items(), key=lambda r: -r[1]):
        print(f"  {count:>5}  {direction:<4} [{name}] {reason}")


# One letter per outcome in the per-case table.
OUTCOME_MARKS = {"pass": "P", "mismatch": "M", "ort_error": "E", "runtime_gap": "G",
                 "unsupported": "U", "failed": "F", "refused": "R", "inexpressible": "X"}


def case_matrix(conversions, baseline, converted):
    """{case: {target: outcome}} over baseline-passing cases, the source
    opset of each case, and every target seen."""
    matrix = collections.defaultdict(dict)
    sources, targets = {}, set()
    for c in conversions:
        if baseline.get(c["case"], {}).get("status") != "pass" or c["direction"].startswith("ml-"):
            continue
        result = converted.get(c["id"]) if c["id"] else None
        matrix[c["case"]][c["target"]] = pair_outcome(c, result)
        sources[c["case"]] = c["source"]
        targets.add(c["target"])
    return matrix, sources, sorted(targets)


def print_case_matrix(conversions, baseline, converted):
    """Each case's outcome at every target: P pass, X refused as not
    expressible, R refused otherwise, M mismatch, E ORT error, G runtime gap,
    U unsupported, F failed, = the source opset."""
    matrix, sources, targets = case_matrix(conversions, baseline, converted)
    print("\nper case (P pass, X refused: inexpressible, R refused, M mismatch, E ORT error, "
          "G runtime gap, U unsupported, F failed, = source opset):")
    width = max([len(c) for c in matrix] + [4])
    print(f"  {'case':<{width}} src " + " ".join(f"{t:>2}" for t in targets))
    for case in sorted(matrix):
        cells = [" =" if t == sources[case] else f" {OUTCOME_MARKS[matrix[case].get(t, 'failed')]}"
                 for t in targets]
        print(f"  {case:<{width}} {sources[case]:>3} " + " ".join(cells))
    not_passing = sorted(c for c, r in baseline.items() if r["status"] != "pass")
    for case in not_passing:
        print(f"  {case}: original model {baseline[case]['status']}: {baseline[case].get('detail', '')}")


# The cross-check's verdicts: the converter's verification, and ONNX
# Runtime's by the pair outcome of the table (unsupported: the harness
# could not exchange the values, so ORT did not judge the pair).
VERIFY_VERDICTS = ["pass", "fail", "skipped"]
ORT_VERDICTS = ["pass", "mismatch", "ort_error", "not_run"]
ORT_VERDICT_OF_OUTCOME = {"pass": "pass", "mismatch": "mismatch", "ort_error": "ort_error",
                          "runtime_gap": "ort_error", "unsupported": "not_run"}
# The verdict pairs counted as agreement, among the pairs both judged.
AGREEING = {("pass", "pass"), ("fail", "mismatch")}

# Classes of verification skips, first match wins: (class, regex on the
# reason).
SKIP_CLASSES = [
    ("non-deterministic op", r"non-deterministic"),
    ("op the evaluator lacks", r": no kernel for "),
    ("no random inputs for the graph", r"^no random inputs"),
    ("converted model cannot be evaluated", r"^the converted model cannot be evaluated"),
    ("original invalid on random inputs", r"^the original cannot be evaluated"),
    ("other", r""),
]


def skip_class(reason):
    """The class of a verification skip reason."""
    return next(name for name, pattern in SKIP_CLASSES if re.search(pattern, reason))


def skip_reason(reason):
    """A skip reason with names and numbers elided, for grouping."""
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r"\[[^\]]*\]", "[…]", reason)
    return re.sub(r"(?<![A-Za-z0-9.])-?\d+(\.\d+)?(e-?\d+)?", "N", reason)[:160]


def ort_verdict(conversion, baseline, converted):
    """ORT's verdict on a converted pair: not_run when the original does
    not pass in ORT (the converted model is then not run)."""
    if baseline.get(conversion["case"], {}).get("status") != "pass":
        return "not_run"
    result = converted.get(conversion["id"])
    if result is None:
        return "not_run"
    return ORT_VERDICT_OF_OUTCOME[pair_outcome(conversion, result)]


def cross_check(conversions, baseline, converted):
    """Verify verdict by ORT verdict over the converted pairs: the table,
    the agreement over the pairs both judged, the disagreements and the
    skip reasons."""
    table = collections.Counter()
    disagreements, unjudged_mismatches = [], []
    skip_classes, skip_reasons = collections.Counter(), collections.Counter()
    for c in conversions:
        if c["outcome"] != "ok" or not c.get("verify"):
            continue
        verify, ort = c["verify"], ort_verdict(c, baseline, converted)
        table[(verify, ort)] += 1
        if verify == "skipped":
            skip_classes[skip_class(c["verify_message"])] += 1
            skip_reasons[skip_reason(c["verify_message"])] += 1
        if verify == "skipped" and ort == "mismatch":
            unjudged_mismatches.append({"case": c["case"], "source": c["source"],
                                        "target": c["target"], "reason": c["verify_message"]})
        if verify in ("pass", "fail") and ort in ("pass", "mismatch") and \
                (verify, ort) not in AGREEING:
            disagreements.append({"case": c["case"], "source": c["source"], "target": c["target"],
                                  "direction": c["direction"], "verify": verify, "ort": ort,
                                  "verify_message": c["verify_message"],
                                  "ort_detail": converted[c["id"]]["detail"]})
    both = sum(n for (v, o), n in table.items() if v in ("pass", "fail") and o in ("pass", "mismatch"))
    agreed = sum(table[k] for k in AGREEING)
    return {"table": table, "both_judged": both, "agreed": agreed,
            "agreement": agreed / both if both else 1.0, "disagreements": disagreements,
            "missed_mismatches": [d for d in disagreements if d["ort"] == "mismatch"],
            "skipped": sum(n for (v, _), n in table.items() if v == "skipped"),
            "unjudged_mismatches": unjudged_mismatches,
            "skip_classes": skip_classes, "skip_reasons": skip_reasons}


def print_cross_check(check):
    """The verify-by-ORT table, the agreement, the disagreements and the
    skip reasons."""
    print("\nverify (converter, evaluator on random inputs) by ORT (expected outputs), "
          "converted pairs:")
    print(f"  {'verify':<10}" + "".join(f"{o:>11}" for o in ORT_VERDICTS) + f"{'total':>11}")
    for v in VERIFY_VERDICTS:
        cells = [check["table"][(v, o)] for o in ORT_VERDICTS]
        print(f"  {v:<10}" + "".join(f"{n:>11}" for n in cells) + f"{sum(cells):>11}")
    print(f"agreement: {check['agreed']} / {check['both_judged']} pairs both judged = "
          f"{100 * check['agreement']:.2f}%; verify skipped {check['skipped']} pairs")
    print(f"disagreements: {len(check['disagreements'])} "
          f"({len(check['missed_mismatches'])} ORT mismatches that verify passed)")
    for d in check["disagreements"]:
        print(f"  {d['case']} {d['source']} -> {d['target']}: verify {d['verify']}, ORT {d['ort']}")
        if d["verify_message"]:
            print(f"        verify: {d['verify_message'][:400]}")
        if d["ort_detail"]:
            print(f"        ORT: {d['ort_detail'][:400]}")
    print(f"ORT mismatches verify skipped: {len(check['unjudged_mismatches'])}")
    for m in check["unjudged_mismatches"]:
        print(f"  {m['case']} {m['source']} -> {m['target']}: {m['reason'][:300]}")
    print("verify skips by class:")
    for name, count in check["skip_classes"].most_common():
        print(f"  {count:>5}  {name}")
    print("top verify skip reasons:")
    for reason, count in check["skip_reasons"].most_common(15):
        print(f"  {count:>5}  {reason}")


def verify_failures(check, args):
    """The cross-check's failures, as sentences."""
    failures = []
    if check["missed_mismatches"]:
        failures.append(f"{len(check['missed_mismatches'])} pairs ORT finds mismatched "
                        "passed verification")
    mismatched = sum(check["table"][(v, "mismatch")] for v in VERIFY_VERDICTS)
    if mismatched < args.min_verify_mismatches:
        failures.append(f"ORT finds {mismatched} pairs mismatched < {args.min_verify_mismatches} "
                        "(the injected fault shows too rarely to test verify)")
    if check["agreement"] < args.min_verify_agreement:
        failures.append(f"verify agrees with ORT on {check['agreement']:.4f} of the pairs both "
                        f"judged < {args.min_verify_agreement}")
    return failures


def cross_check_json(check, args):
    """The cross-check as JSON data."""
    return {
        "verify_sets": args.verify,
        "table": {v: {o: check["table"][(v, o)] for o in ORT_VERDICTS} for v in VERIFY_VERDICTS},
        "both_judged": check["both_judged"],
        "agreed": check["agreed"],
        "agreement": check["agreement"],
        "min_agreement": args.min_verify_agreement,
        "skipped": check["skipped"],
        "skip_classes": dict(check["skip_classes"].most_common()),
        "skip_reasons": [{"reason": r, "count": n} for r, n in check["skip_reasons"].most_common()],
        "disagreements": check["disagreements"],
        "unjudged_mismatches": check["unjudged_mismatches"],
    }


def verdict(stats, args):
    """The failures that make the run fail, as sentences."""
    by_direction, _, mismatches, *_ = stats
    failures = []
    # With a fault injected, mismatches are the point (verify must fail
    # them) and pass rates mean nothing.
    if args.inject_fault:
        return failures
    if mismatches:
        failures.append(f"{len(mismatches)} converted models give other outputs than expected")
    for direction, minimum in (("up", args.min_up), ("down", args.min_down)):
        rate = pass_rate(by_direction[direction], direction)
        if rate < minimum:
            failures.append(f"{direction} pass rate {rate:.4f} < {minimum}")
    down_ops = ops_rate(by_direction["down"])
    if down_ops < args.min_down_ops:
        failures.append(f"down pass rate over pairs whose ops exist at the target {down_ops:.4f} "
                        f"< {args.min_down_ops}")
    return failures


def write_json(path, stats, baseline, failures, args, seconds, matrix=None, conversions=None,
               check=None):
    """The report as JSON at `path` (with `matrix`, each case's outcome at
    every target: case_matrix's result; with `conversions`, every refused
    pair; with `check`, the verify cross-check)."""
    by_direction, by_target, mismatches, errors, refusals, refusal_classes = stats
    report = {
        "baseline": collections.Counter(r["status"] for r in baseline.values()),
        "by_direction": {d: {**row, "rate": pass_rate(row, d), "ops_rate": ops_rate(row)}
                         for d, row in by_direction.items()},
        "by_target": [{"direction": d, "target": t, **row, "rate": pass_rate(row, d),
                       "ops_rate": ops_rate(row)}
                      for (d, t), row in sorted(by_target.items())],
        "mismatches": mismatches,
        "ort_errors": errors,
        "refusal_classes": [{"direction": d, "class": n, "count": c}
                            for (d, n), c in sorted(refusal_classes.items())],
        "refusals": [{"direction": d, "class": n, "reason": r, "count": c}
                     for (d, n, r), c in sorted(refusals.items(), key=lambda r: -r[1])],
        "thresholds": {"min_up": args.min_up, "min_down": args.min_down,
                       "min_down_ops": args.min_down_ops},
        "sample": args.sample,
        "failures": failures,
        "seconds": seconds,
    }
    if conversions is not None:
        report["refused_pairs"] = [
            {"case": c["case"], "target": c["target"], "direction": c["direction"],
             "reason": refusal_reason(c["message"])}
            for c in conversions
            if c["outcome"] == "refused" and baseline.get(c["case"], {}).get("status") == "pass"]
    if check is not None:
        report["verify_cross_check"] = cross_check_json(check, args)
    if matrix is not None:
        outcomes, sources, _ = matrix
        report["cases"] = {case: {"source": sources[case], "targets": {str(t): o for t, o in row.items()}}
                           for case, row in sorted(outcomes.items())}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


def main(argv):
    """Converts, runs, reports; returns the exit status."""
    start = time.monotonic()
    args = parse_args(argv)
    root = workspace_root()
    if args.real_models and not args.corpus_root:
        args.corpus_root = real_models_root()
        real = os.path.join(args.corpus_root, "real")
        if not os.path.isdir(real) or not any(
                os.path.isfile(os.path.join(real, c, "model.onnx")) for c in os.listdir(real)):
            print(f"NOTICE: skipped: the real-model corpus is absent ({args.corpus_root}/real). "
                  "Fetch it with: node tools/real-models.js  (tools/install-deps.sh does)")
            return 0
    env = ort_environment(root)
    script = args.run_models or os.path.join(root, "tools", "ort", "run_models.js")
    work = args.work or tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"), prefix="ort_conformance_")
    run_converter(args, work)
    baseline_entries = read_lines(os.path.join(work, "baseline.jsonl"))
    baseline = run_models(script, os.path.join(work, "baseline.run.jsonl"), baseline_entries,
                          env, args.jobs, os.path.join(work, "baseline.results.jsonl"),
                          args.atol_scale, not args.real_models, args.atol)
    passing = {case for case, r in baseline.items() if r["status"] == "pass"}
    entries = [e for e in read_lines(os.path.join(work, "converted.jsonl"))
               if e["id"].rsplit("@", 1)[0] in passing]
    converted = run_models(script, os.path.join(work, "converted.run.jsonl"), entries,
                           env, args.jobs, os.path.join(work, "converted.results.jsonl"),
                           args.atol_scale, not args.real_models, args.atol)
    stats = tabulate(read_lines(os.path.join(work, "conversions.jsonl")), baseline, converted)
    print_report(stats, baseline)
    if args.per_case:
        print_case_matrix(read_lines(os.path.join(work, "conversions.jsonl")), baseline, converted)
    failures = verdict(stats, args)
    conversions = read_lines(os.path.join(work, "conversions.jsonl"))
    check = cross_check(conversions, baseline, converted) if args.verify else None
    if check is not None:
        print_cross_check(check)
        failures += verify_failures(check, args)
    seconds = round(time.monotonic() - start, 1)
    json_path = args.json or os.path.join(
        os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", work), "ort_conformance.json")
    matrix = case_matrix(conversions, baseline, converted) if args.per_case else None
    write_json(json_path, stats, baseline, failures, args, seconds, matrix, conversions, check)
    print(f"\nwall time {seconds} s; JSON: {json_path}; scratch: {work}")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        if args.inject_fault:
            print(f"PASS: fault injected into '{args.inject_fault}'; every pair ORT finds "
                  "mismatched failed verify")
        else:
            print(f"PASS: no mismatch; up >= {args.min_up}, down >= {args.min_down}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
