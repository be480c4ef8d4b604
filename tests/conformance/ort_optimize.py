#!/usr/bin/env python3
"""The graph rewriter against ONNX Runtime (issue 20's acceptance): every
case of the ONNX backend corpus (or every Nth) is optimized with
`onnx-convert optimize --profile PROFILE`; ONNX Runtime runs the original
and the optimized model on the case's inputs against its expected outputs
(tools/ort/run_models.js). The run fails when optimize fails or crashes on
a model, or when an original ORT passes does not pass once optimized,
except the cases listed --known-divergent (each must still fail, or the
entry is stale). Prints the tally and every regression.

Each optimized model is optimized again and must come out byte for byte
the same (a fixed point). With --convert-to OPSET the model is converted
and optimized in one call (`convert --to OPSET --optimize=PROFILE`): the
property that converting then optimizing computes what ORT computes for
the original; a conversion the converter refuses (no equivalent at the
target, exit 1 with a refusal) is counted, not failed.

--table prints a markdown row per case: nodes and bytes before and after
(from the JSON report) and ORT's verdict on the original and the result;
ONNX_BACKEND_TESTS names another corpus (the real models:
~/.cache/onnx-convert-real-models/corpus).

Usage: ort_optimize.py --cli PATH [--profile exact|deploy] [--sample N]
                       [--convert-to OPSET] [--known-divergent ID]... [--jobs N]
                       [--table]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

# The shared ORT helpers, next to this file (and among its runfiles).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_conformance import backend_corpus_root, run_manifest, workspace_root  # noqa: E402

INSTALL_HINT = "tools/install-deps.sh  (or: cd tools/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)"


def fail_setup(message):
    print(f"ort_optimize: {message}", file=sys.stderr)
    sys.exit(2)


def cases(corpus, sample):
    """(id, case dir) of every corpus case with a data set, every `sample`th."""
    found = []
    for group in sorted(os.listdir(corpus)):
        folder = os.path.join(corpus, group)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            case = os.path.join(folder, name)
            if os.path.isfile(os.path.join(case, "model.onnx")) and os.path.isdir(
                    os.path.join(case, "test_data_set_0")):
                found.append((f"{group}/{name}", case))
    return found[::sample]


def run_ort(root, manifest_entries, work, label, jobs):
    """{id: status} of ORT on the entries."""
    modules = os.path.join(root, "tools", "ort", "node_modules")
    if not os.path.isdir(os.path.join(modules, "onnxruntime-node")) or not shutil.which("node"):
        fail_setup(f"ONNX Runtime (onnxruntime-node) or node is missing; install: {INSTALL_HINT}")
    env = dict(os.environ, NODE_PATH=modules, ALLOW_RELEASED_ONNX_OPSET_ONLY="0")
    _, results = run_manifest(os.path.join(root, "tools", "ort", "run_models.js"),
                              manifest_entries, env, jobs, os.path.join(work, f"{label}.jsonl"))
    return results


def same_bytes(a, b):
    """Whether files `a` and `b` hold the same bytes."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def print_table(entries, before, after):
    """A markdown row per optimized case: nodes, bytes, ORT before and after."""
    print("| model | nodes | bytes | ORT original / optimized |")
    print("| --- | --- | --- | --- |")
    for entry in entries:
        with open(entry["model"] + ".report.json", encoding="utf-8") as f:
            report = json.load(f)
        name = entry["id"].split("/")[-1]
        was = before.get(entry["id"], {}).get("status", "missing")
        now = after.get(entry["id"], {}).get("status", "missing")
        print(f"| {name} | {report['nodes_before']:,} -> {report['nodes_after']:,} | "
              f"{report['bytes_before']:,} -> {report['bytes_after']:,} | {was} / {now} |")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--profile", default="exact")
    parser.add_argument("--sample", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--known-divergent", action="append", default=[])
    parser.add_argument("--convert-to", type=int, default=0)
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--atol-scale", type=float, default=0,
                        help="atol grows to this times each expected output's magnitude, "
                             "and ORT runs without graph optimizations (the real models: 1e-5)")
    args = parser.parse_args(argv)
    root = workspace_root()
    corpus = backend_corpus_root()
    if not os.path.isdir(corpus):
        fail_setup(f"no corpus at {corpus}")
    work = tempfile.mkdtemp(prefix="ort_optimize_", dir=os.environ.get("TEST_TMPDIR"))
    originals, optimized, failures, refused, not_fixed = [], [], [], [], []
    verb = f"convert --to {args.convert_to} --optimize" if args.convert_to else "optimize"
    for case_id, case in cases(corpus, args.sample):
        out = os.path.join(work, case_id.replace("/", "__") + ".onnx")
        model = os.path.join(case, "model.onnx")
        if args.convert_to:
            command = [args.cli, "convert", model, "-o", out, "--to", str(args.convert_to),
                       f"--optimize={args.profile}"]
        else:
            command = [args.cli, "optimize", model, "-o", out, "--profile", args.profile]
            if args.table:
                command += ["--report", out + ".report.json"]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode == 1 and args.convert_to and not os.path.exists(out):
            refused.append(case_id)  # no equivalent at the target: said, not written
            continue
        if run.returncode != 0:
            failures.append(f"{case_id}: {verb} exit {run.returncode}: "
                            f"{run.stderr.strip().splitlines()[-1:] or ''}")
            continue
        again = out + ".again.onnx"
        rerun = subprocess.run([args.cli, "optimize", out, "-o", again, "--profile",
                                args.profile], capture_output=True, text=True)
        if rerun.returncode != 0 or not same_bytes(out, again):
            not_fixed.append(f"{case_id}: optimized again, it "
                             f"{'fails: ' + rerun.stderr.strip()[-200:] if rerun.returncode else 'changes'}")
        extra = {"atol_scale": args.atol_scale, "optimize": False} if args.atol_scale else {}
        originals.append({"id": case_id, "model": os.path.join(case, "model.onnx"),
                          "case_dir": case, **extra})
        optimized.append({"id": case_id, "model": out, "case_dir": case, **extra})
    before = run_ort(root, originals, work, "original", args.jobs)
    after = run_ort(root, optimized, work, "optimized", args.jobs)
    tally = collections.Counter((before.get(e["id"], {}).get("status", "missing"),
                                 after.get(e["id"], {}).get("status", "missing"))
                                for e in originals)
    print(f"{verb} --profile {args.profile}: {len(originals)} cases optimized, "
          f"{len(failures)} failed, {len(refused)} refused by the converter, "
          f"{len(originals) - len(not_fixed)} unchanged when optimized again")
    for (was, now), count in sorted(tally.items()):
        print(f"  original {was:12} optimized {now:12} {count}")
    regressions = sorted(case for case in before
                         if before[case]["status"] == "pass" and
                         after.get(case, {}).get("status") != "pass")
    known = set(args.known_divergent)
    for case in regressions:
        mark = "known" if case in known else "REGRESSION"
        print(f"  {mark}: {case}: {after.get(case, {}).get('detail', '')[:200]}")
    stale = sorted(known - set(regressions) - {c for c in known if c not in before})
    for case in stale:
        print(f"  stale --known-divergent {case}: it passes now")
    for failure in failures:
        print(f"  OPTIMIZE FAILED: {failure}")
    for case in not_fixed:
        print(f"  NOT A FIXED POINT: {case}")
    if args.table:
        print_table(optimized, before, after)
    bad = [c for c in regressions if c not in known]
    ok = not bad and not failures and not stale and not not_fixed
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
