#!/usr/bin/env python3
"""The graph rewriter against ONNX Runtime (issue 20's acceptance): every
case of the ONNX backend corpus (or every Nth) is optimized with
`onnx-convert optimize --profile PROFILE`; ONNX Runtime runs the original
and the optimized model on the case's inputs against its expected outputs
(tools/ort/run_models.js). The run fails when optimize fails or crashes on
a model, or when an original ORT passes does not pass once optimized,
except the cases listed --known-divergent (each must still fail, or the
entry is stale). Prints the tally and every regression.

Usage: ort_optimize.py --cli PATH [--profile exact|deploy] [--sample N]
                       [--known-divergent ID]... [--jobs N]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

INSTALL_HINT = "tools/install-deps.sh  (or: cd tools/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)"


def fail_setup(message):
    print(f"ort_optimize: {message}", file=sys.stderr)
    sys.exit(2)


def workspace_root():
    """The source tree, through the //:WORKSPACE runfile symlink or else this
    file's place."""
    runfiles = os.path.join(os.environ.get("TEST_SRCDIR", ""), "onnx_convert", "WORKSPACE")
    for link in ("WORKSPACE", runfiles):
        if os.path.exists(link):
            return os.path.dirname(os.path.realpath(link))
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


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
    manifest = os.path.join(work, f"{label}.jsonl")
    with open(manifest, "w", encoding="utf-8") as f:
        for entry in manifest_entries:
            f.write(json.dumps(entry) + "\n")
    env = dict(os.environ, NODE_PATH=modules, ALLOW_RELEASED_ONNX_OPSET_ONLY="0")
    out = subprocess.run(["node", os.path.join(root, "tools", "ort", "run_models.js"), manifest,
                          "--jobs", str(jobs)], env=env, capture_output=True, text=True)
    results = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            results[result["id"]] = result
    return results


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--profile", default="exact")
    parser.add_argument("--sample", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--known-divergent", action="append", default=[])
    args = parser.parse_args(argv)
    root = workspace_root()
    corpus = os.environ.get("ONNX_BACKEND_TESTS") or os.path.join(
        os.path.dirname(root), "shared", "onnx-backend-tests")
    if not os.path.isdir(corpus):
        fail_setup(f"no corpus at {corpus}")
    work = tempfile.mkdtemp(prefix="ort_optimize_", dir=os.environ.get("TEST_TMPDIR"))
    originals, optimized, failures = [], [], []
    for case_id, case in cases(corpus, args.sample):
        out = os.path.join(work, case_id.replace("/", "__") + ".onnx")
        run = subprocess.run([args.cli, "optimize", os.path.join(case, "model.onnx"), "-o", out,
                              "--profile", args.profile], capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{case_id}: optimize exit {run.returncode}: "
                            f"{run.stderr.strip().splitlines()[-1:] or ''}")
            continue
        originals.append({"id": case_id, "model": os.path.join(case, "model.onnx"),
                          "case_dir": case})
        optimized.append({"id": case_id, "model": out, "case_dir": case})
    before = run_ort(root, originals, work, "original", args.jobs)
    after = run_ort(root, optimized, work, "optimized", args.jobs)
    tally = collections.Counter((before.get(e["id"], {}).get("status", "missing"),
                                 after.get(e["id"], {}).get("status", "missing"))
                                for e in originals)
    print(f"optimize --profile {args.profile}: {len(originals)} cases optimized, "
          f"{len(failures)} failed to optimize")
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
    bad = [c for c in regressions if c not in known]
    ok = not bad and not failures and not stale
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
