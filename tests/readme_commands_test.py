#!/usr/bin/env python3
"""Runs every onnx-convert command line of README.md on the example model.

The command lines are the lines of the README's code blocks (indented by
four spaces or fenced) that start with `bazel-bin/cli/onnx-convert` or
`onnx-convert`. Each runs, in README order, with /bin/sh in a temporary
folder that holds the files the README names: `examples/tiny_cnn.onnx` and
`model.onnx`, `extra.onnx`, `models/` (copies of the example model),
`ml_model.onnx` (a small ai.onnx.ml model), `list.manifest` and `my.rules`.
A line ending in `# needs a server` runs against a server this test starts,
its address put in place of the README's `127.0.0.1:50051`.

Fails when a line exits non-zero, when a file a line names after `-o` is
not there afterwards, when a command of `onnx-convert --help` is in no
line, or when README.md is longer than 250 lines.

usage: readme_commands_test.py CLI SERVER README EXAMPLE_MODEL
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

MAX_README_LINES = 250
README_ADDRESS = "127.0.0.1:50051"
NEEDS_SERVER = "# needs a server"
PREFIXES = ("bazel-bin/cli/onnx-convert ", "onnx-convert ")

# A small model of the ai.onnx.ml domain for the README's --ml-to line.
ML_MODEL_TEXT = """<
  ir_version: 8,
  opset_import: ["" : 15, "ai.onnx.ml" : 2]
>
ml (float[N,4] x) => (float[N,4] y) {
  y = ai.onnx.ml.Binarizer <threshold = 0.5> (x)
}
"""

# A rule file of the user's own for the README's --rules line.
RULES_TEXT = """rule double_relu
  pattern (X) => (Y) { T = Relu(X)
    Y = Relu(T) }
  replace (X) => (Y) { Y = Relu(X) }
"""


def command_lines(readme_text):
    """The README's onnx-convert command lines, in order, joined across `\\`."""
    lines, fenced, pending = [], False, ""
    for raw in readme_text.splitlines():
        if raw.strip().startswith("```"):
            fenced = not fenced
            continue
        if not (fenced or raw.startswith("    ")):
            pending = ""
            continue
        text = raw.strip()
        if pending:
            text = pending + " " + text
            pending = ""
        elif not text.startswith(PREFIXES):
            continue
        if text.endswith("\\"):
            pending = text[:-1].rstrip()
            continue
        lines.append(text)
    return lines


def cli_commands(cli):
    """The command names `onnx-convert --help` lists."""
    help_text = subprocess.run([cli, "--help"], capture_output=True, text=True,
                               check=True).stdout
    section = help_text.split("commands:", 1)[1]
    return set(re.findall(r"^  ([a-z]+) ", section, re.M))


def command_of(line):
    """The command a line runs: its first word that is not an option."""
    words = shlex.split(line, comments=True)[1:]
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option == "--server" and words:
            words.pop(0)
        elif option == "--version":
            return "version"
    return words[0] if words else ""


def outputs_of(line):
    """The files or folders a line names after -o."""
    words = shlex.split(line, comments=True)
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-o"]


def make_workspace(work, cli, example):
    """Fills `work` with the files the README's lines read."""
    os.makedirs(os.path.join(work, "bazel-bin", "cli"))
    os.symlink(cli, os.path.join(work, "bazel-bin", "cli", "onnx-convert"))
    os.makedirs(os.path.join(work, "bin"))
    os.symlink(cli, os.path.join(work, "bin", "onnx-convert"))
    os.makedirs(os.path.join(work, "examples"))
    os.makedirs(os.path.join(work, "models", "sub"))
    for name in ("examples/tiny_cnn.onnx", "model.onnx", "extra.onnx",
                 "models/a.onnx", "models/sub/b.onnx"):
        shutil.copyfile(example, os.path.join(work, name))
    with open(os.path.join(work, "list.manifest"), "w") as f:
        f.write("# one input per line\nmodel.onnx\n")
    with open(os.path.join(work, "my.rules"), "w") as f:
        f.write(RULES_TEXT)
    with open(os.path.join(work, "ml.txt"), "w") as f:
        f.write(ML_MODEL_TEXT)
    subprocess.run([cli, "parse", "ml.txt", "-o", "ml_model.onnx"], cwd=work,
                   check=True)


class Server:
    """An onnx-convert-server on a free loopback port, started on demand."""

    def __init__(self, binary, work):
        self.binary, self.work, self.process, self.address = binary, work, None, None

    def start(self):
        if self.process:
            return self.address
        log_path = os.path.join(self.work, "server.log")
        log = open(log_path, "w")
        self.process = subprocess.Popen(
            [self.binary, "--port", "0", "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(log_path) as f:
                found = re.search(r"listening on (\S+)", f.read())
            if found:
                self.address = found.group(1)
                return self.address
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        with open(log_path) as f:
            sys.exit("the server did not start:\n" + f.read())

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=30)


def main():
    cli, server_binary, readme, example = (os.path.abspath(a) for a in sys.argv[1:5])
    with open(readme) as f:
        readme_text = f.read()
    failures = []
    count = len(readme_text.splitlines())
    if count > MAX_README_LINES:
        failures.append(f"README.md has {count} lines, more than {MAX_README_LINES}")

    lines = command_lines(readme_text)
    commands = {command_of(line) for line in lines}
    missing = sorted(cli_commands(cli) - commands)
    if missing:
        failures.append("commands the README runs nowhere: " + ", ".join(missing))

    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    make_workspace(work, cli, example)
    env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"],
               HOME=work)
    server = Server(server_binary, work)
    try:
        for line in lines:
            run_line = line
            if line.endswith(NEEDS_SERVER):
                run_line = line.replace(README_ADDRESS, server.start())
            result = subprocess.run(["/bin/sh", "-c", run_line], cwd=work, env=env,
                                    capture_output=True, text=True, timeout=120)
            gone = [o for o in outputs_of(line)
                    if not os.path.exists(os.path.join(work, o))]
            if result.returncode != 0 or gone:
                failures.append(f"{line}\n  exit {result.returncode}"
                                + (f", no {', '.join(gone)}" if gone else "")
                                + f"\n  stderr: {result.stderr.strip()}")
            else:
                print(f"ok: {line}")
    finally:
        server.stop()

    print(f"{len(lines)} command lines run, {len(failures)} failures")
    if not lines:
        failures.append("no onnx-convert command line found in README.md")
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
