#!/usr/bin/env python3
"""Scale-out acceptance (issue 21 §4): one batch across three replicas.

Starts three onnx-convert-server replicas on loopback, then converts a
batch of small corpus models with

    onnx-convert batch IN -o OUT --to T --server ipv4:127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3

(round_robin, health checking and retries are the CLI's defaults). When
--kill-at of the models are done one replica gets SIGKILL; at --term-at
another gets SIGTERM (it drains). Checks:

- the batch exits 0 and its summary lists no failed model;
- every model has its output and report, and no temporary file is left;
- every output is byte-identical to the same batch run without --server;
- every replica served at least --min-share of all Convert calls (counted
  from the replicas' request logs, one line per call).

Prints the figures: models, calls per replica and their shares, each
stopped replica's share of the calls made before it stopped, the models
the batch tried a second time, and the times.

    tests/scale_out/replicas_test.py CLI SERVER [--models N] [--to T] ...

Exits 1 when a check fails, 2 when a tool or the corpus is missing.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The source tree and the corpus (tests/test_paths.py: the runfiles tree
# holds it in tests/, as the source tree does).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_paths import backend_corpus_root, corpus_models  # noqa: E402

LISTENING = re.compile(r"listening on [^\s:]+:(\d+)")
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] ")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cli", help="the onnx-convert binary")
    parser.add_argument("server", help="the onnx-convert-server binary")
    parser.add_argument("--corpus-root",
                        help="corpus folder (default: $ONNX_BACKEND_TESTS or "
                             "../shared/onnx-backend-tests beside the source tree)")
    parser.add_argument("--models", type=int, default=600,
                        help="models in the batch (at least 300 for the acceptance)")
    parser.add_argument("--max-bytes", type=int, default=16384,
                        help="only corpus models up to this size")
    parser.add_argument("--to", default="21", help="target opset")
    parser.add_argument("--jobs", default="4", help="the batch's -j")
    parser.add_argument("--kill-at", type=float, default=0.75,
                        help="share of the models done when replica 0 gets SIGKILL")
    parser.add_argument("--term-at", type=float, default=0.85,
                        help="share of the models done when replica 1 gets SIGTERM")
    parser.add_argument("--min-share", type=float, default=0.20,
                        help="least share of all Convert calls each replica serves")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    return parser.parse_args()


def candidate_models(root, max_bytes):
    """(name, path) of the corpus's small models, sorted by name."""
    return [(f"{suite}__{case}.onnx", path) for suite, case, path in corpus_models(root)
            if os.path.getsize(path) <= max_bytes]


def copy_models(folder, models):
    """Copies (never links: nothing may write through to the corpus)."""
    os.makedirs(folder)
    for name, path in models:
        shutil.copyfile(path, os.path.join(folder, name))


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def summary_models(out_dir):
    with open(os.path.join(out_dir, "batch-summary.json")) as f:
        return json.load(f)["models"]


class Replica:
    """One onnx-convert-server on a free loopback port, its log in a file."""

    def __init__(self, binary, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        # A session of its own: its workers are killed with it at the end.
        self.process = subprocess.Popen(
            [binary, "--port=0", "--workers=2", "--max_concurrent=4", "--grace_ms=10000"],
            stdout=subprocess.DEVNULL, stderr=self.log, start_new_session=True)
        self.port = None
        self.stopped_by = None
        self.calls_before_stop = None  # (its calls, all replicas' calls) then

    def wait_listening(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline and self.port is None:
            match = LISTENING.search(self.text())
            if match:
                self.port = int(match.group(1))
            elif self.process.poll() is not None:
                break
            else:
                time.sleep(0.05)
        return self.port is not None

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def convert_calls(self):
        """(answered OK, answered otherwise) Convert calls in its log."""
        ok = other = 0
        for line in self.text().splitlines():
            if " method=Convert " in line:
                if line.endswith("status=OK"):
                    ok += 1
                else:
                    other += 1
        return ok, other

    def close(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        self.log.close()


def stop(replica, how, replicas):
    """Sends `how` to `replica`, noting its and everyone's calls so far."""
    counts = [r.convert_calls()[0] for r in replicas]
    replica.calls_before_stop = (replica.convert_calls()[0], sum(counts))
    replica.stopped_by = how.name
    replica.process.send_signal(how)


def run_remote_batch(args, in_dir, out_dir, replicas, total):
    """The batch through the replicas, stopping two of them on the way.
    Returns (exit code, stdout, stderr, seconds)."""
    target = "ipv4:" + ",".join(f"127.0.0.1:{r.port}" for r in replicas)
    command = [args.cli, "batch", in_dir, "-o", out_dir, "--to", args.to, "-j", args.jobs,
               "--progress", "lines", "--server", target]
    start = time.time()
    batch = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    stdout = []
    reader = threading.Thread(target=lambda: stdout.append(batch.stdout.read()))
    reader.start()
    stderr = []
    plan = [(args.kill_at, replicas[0], signal.SIGKILL),
            (args.term_at, replicas[1], signal.SIGTERM)]
    for line in batch.stderr:
        stderr.append(line)
        match = PROGRESS.match(line)
        if stderr[-1].startswith("trying again"):
            plan = []  # the first pass is over
        while match and plan and int(match.group(1)) >= plan[0][0] * total:
            _, replica, how = plan.pop(0)
            stop(replica, how, replicas)
    code = batch.wait()
    reader.join()
    return code, "".join(stdout), "".join(stderr), time.time() - start


def files_under(folder):
    found = set()
    for parent, _, names in os.walk(folder):
        for name in names:
            found.add(os.path.relpath(os.path.join(parent, name), folder))
    return found


def main():
    args = parse_args()
    for tool in (args.cli, args.server):
        if not os.access(tool, os.X_OK):
            print(f"replicas_test: {tool}: not an executable", file=sys.stderr)
            return 2
    root = args.corpus_root or backend_corpus_root()
    candidates = candidate_models(root, args.max_bytes)
    if not candidates:
        print(f"replicas_test: no corpus model under {root}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="replicas_test.",
                            dir=os.environ.get("TEST_TMPDIR") or None)
    failures = []
    replicas = []
    try:
        # The models that convert locally, as many as asked for.
        copy_models(os.path.join(work, "candidates"), candidates)
        picked_run = run([args.cli, "batch", os.path.join(work, "candidates"), "-o",
                          os.path.join(work, "picked"), "--to", args.to, "-j", args.jobs,
                          "--progress", "lines"])
        converted = {m["name"] for m in summary_models(os.path.join(work, "picked"))
                     if m["status"] == "ok"}
        models = [m for m in candidates if m[0] in converted][:args.models]
        if len(models) < args.models:
            print(f"replicas_test: only {len(models)} of {len(candidates)} small corpus "
                  f"models convert to opset {args.to} (exit {picked_run.returncode})",
                  file=sys.stderr)
            return 2
        in_dir = os.path.join(work, "in")
        copy_models(in_dir, models)

        local_start = time.time()
        local = run([args.cli, "batch", in_dir, "-o", os.path.join(work, "local"), "--to",
                     args.to, "-j", args.jobs, "--progress", "lines"])
        local_seconds = time.time() - local_start
        if local.returncode != 0:
            print(f"replicas_test: the local batch exited {local.returncode}:\n"
                  f"{local.stderr}", file=sys.stderr)
            return 2

        for i in range(3):
            replicas.append(Replica(args.server, os.path.join(work, f"replica{i}.log")))
        for replica in replicas:
            if not replica.wait_listening():
                print(f"replicas_test: a replica did not start:\n{replica.text()}",
                      file=sys.stderr)
                return 2

        out_dir = os.path.join(work, "remote")
        code, out, err, seconds = run_remote_batch(args, in_dir, out_dir, replicas,
                                                   len(models))
        if code != 0:
            failures.append(f"the batch exited {code}:\n{err}{out}")
        for replica in replicas[:2]:
            if replica.stopped_by is None:
                failures.append(f"replica on port {replica.port} was not stopped: the "
                                f"batch ended first")

        # Outcomes, files, bytes.
        failed = [m["name"] for m in summary_models(out_dir) if m["status"] != "ok"]
        if failed:
            failures.append(f"{len(failed)} failed models: {failed[:10]}")
        local_files = files_under(os.path.join(work, "local"))
        remote_files = files_under(out_dir)
        if local_files != remote_files:
            failures.append(
                f"outputs differ from the local batch's: missing "
                f"{sorted(local_files - remote_files)[:10]}, extra "
                f"{sorted(remote_files - local_files)[:10]}")
        expected = {name for name, _ in models}
        expected |= {name[:-5] + ".report.json" for name in expected}
        expected.add("batch-summary.json")
        if remote_files != expected:
            failures.append(f"lost or partial outputs: missing "
                            f"{sorted(expected - remote_files)[:10]}, unexpected "
                            f"{sorted(remote_files - expected)[:10]}")
        different = []
        for name, _ in models:
            paths = [os.path.join(folder, name) for folder in (os.path.join(work, "local"),
                                                                out_dir)]
            if not all(os.path.exists(p) for p in paths):
                continue
            with open(paths[0], "rb") as a, open(paths[1], "rb") as b:
                if a.read() != b.read():
                    different.append(name)
        if different:
            failures.append(f"{len(different)} outputs not byte-identical to the local "
                            f"batch's: {different[:10]}")

        # Calls per replica.
        for replica in replicas:
            if replica.stopped_by == "SIGTERM":
                replica.process.wait(timeout=30)
        calls = [r.convert_calls() for r in replicas]
        total_ok = sum(ok for ok, _ in calls)
        second_pass = re.search(r"trying again (\d+) model", err)
        print(f"{len(models)} models (of {len(candidates)} corpus models <= "
              f"{args.max_bytes} bytes) to opset {args.to}, -j {args.jobs}: local batch "
              f"{local_seconds:.1f} s, through 3 replicas {seconds:.1f} s; exit {code}; "
              f"{len(failed)} failed; {len(different)} outputs differ; "
              f"{second_pass.group(1) if second_pass else 0} models tried a second time")
        for line in err.splitlines():
            if not PROGRESS.match(line):
                print(f"  batch: {line}")
        for i, (replica, (ok, other)) in enumerate(zip(replicas, calls)):
            share = ok / total_ok if total_ok else 0
            line = (f"replica {i} (port {replica.port}): {ok} Convert calls answered OK "
                    f"({share:.1%} of {total_ok}), {other} otherwise")
            if replica.stopped_by:
                mine, everyone = replica.calls_before_stop
                line += (f"; {replica.stopped_by} after {everyone} calls in all, "
                         f"{mine / everyone if everyone else 0:.1%} of them its own")
            print(line)
            if share < args.min_share:
                failures.append(f"replica {i} served {share:.1%} of the calls, under "
                                f"{args.min_share:.0%}")
    finally:
        for replica in replicas:
            replica.close()
        if args.keep or failures:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
