#!/usr/bin/env python3
"""The reference evaluator on the real-model corpus (issue 19 acceptance).

Runs `onnx-convert run MODEL --inputs CASE --compare CASE` on every model of
the real-model corpus that tools/real-models.js writes ($ONNX_REAL_MODELS or
~/.cache/onnx-convert-real-models, its corpus/real/ folder): each case's
test_data_set_0 holds the inputs and ONNX Runtime's outputs (graph
optimizations off). Prints one line per model (pass, FAIL with the worst
element, or ERROR with the evaluator's message) and a summary; exits 1 when
any model does not pass or fewer than --min-cases models ran. When the
corpus is absent, prints a notice and exits 0.

--known-divergent ID names a model whose expected outputs are ONNX
Runtime's own deviation from the spec's result (shown against a
double-precision evaluation; tests/conformance/README.md): it must still run
and is reported as "known"; it fails the run if it errors, or if it passes
(then the entry is stale and goes).
"""

import argparse
import os
import re
import subprocess
import sys
import time

# The corpus folder of the ORT harness (the runfiles tree holds the file
# beside this one; so does the source tree).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_conformance import real_models_root  # noqa: E402


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True, help="the onnx-convert binary")
    parser.add_argument("--cases-filter", default="",
                        help="a regular expression the case ids must match (all by default)")
    parser.add_argument("--min-cases", type=int, default=1,
                        help="fewest cases that must run when the corpus is present")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds one model may run")
    parser.add_argument("--known-divergent", action="append", default=[], metavar="ID",
                        help="a model whose ORT outputs deviate from the spec's result")
    return parser.parse_args(argv)


def cases(real, pattern):
    """The case ids under `real` with a model.onnx, sorted, matching `pattern`."""
    if not os.path.isdir(real):
        return []
    found = sorted(c for c in os.listdir(real)
                   if os.path.isfile(os.path.join(real, c, "model.onnx")))
    return [c for c in found if re.search(pattern, c)]


def worst_line(stdout):
    """The line of the first output that differs, else of the last output."""
    lines = [l for l in stdout.splitlines() if "output '" in l]
    failing = [l for l in lines if "FAIL" in l]
    return (failing or lines or [""])[0 if failing else -1].strip()


def run_case(cli, folder, timeout):
    """(outcome, detail, seconds) of one case: pass, FAIL or ERROR."""
    model = os.path.join(folder, "model.onnx")
    start = time.monotonic()
    try:
        done = subprocess.run([cli, "run", model, "--inputs", folder, "--compare", folder],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "ERROR", f"timed out after {timeout:.0f} s", time.monotonic() - start
    seconds = time.monotonic() - start
    if done.returncode == 0:
        return "pass", worst_line(done.stdout), seconds
    if "outputs differ" in done.stderr:
        return "FAIL", worst_line(done.stdout), seconds
    return "ERROR", done.stderr.strip().splitlines()[-1] if done.stderr.strip() else \
        f"exit {done.returncode}", seconds


def main(argv):
    """Runs every case; returns the exit status."""
    args = parse_args(argv)
    real = os.path.join(real_models_root(), "real")
    ids = cases(real, args.cases_filter)
    if not ids:
        print(f"NOTICE: skipped: the real-model corpus is absent ({real}). "
              "Fetch it with: node tools/real-models.js  (tools/install-deps.sh does)")
        return 0
    known = set(args.known_divergent)
    outcomes = {}
    for case in ids:
        outcome, detail, seconds = run_case(args.cli, os.path.join(real, case), args.timeout)
        if case in known:
            outcome = {"FAIL": "known", "pass": "STALE"}.get(outcome, outcome)
        outcomes[case] = outcome
        print(f"{outcome:5} {case:28} {seconds:6.1f} s  {detail}", flush=True)
    count = lambda name: sum(1 for o in outcomes.values() if o == name)
    print(f"\n{count('pass')} of {len(ids)} real models give ONNX Runtime's outputs "
          f"(fail {count('FAIL')}, error {count('ERROR')}, known ORT divergence "
          f"{count('known')}, stale --known-divergent {count('STALE')})")
    if count("STALE"):
        print("FAIL: a --known-divergent model passes now: drop it from the list")
    if len(ids) < args.min_cases:
        print(f"FAIL: {len(ids)} cases ran, fewer than --min-cases {args.min_cases}")
        return 1
    return 0 if count("pass") + count("known") == len(ids) else 1

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
