#!/bin/sh
# The CPU a whole process of `onnx-convert` costs (user + sys, median of 20
# runs) for one small conversion (examples/tiny_cnn.onnx to opset 17) and
# for --version, beside the floor of /bin/true (issue 22: <= 5 ms):
#
#   bazel build //cli:onnx-convert && bench/startup.sh [bazel-bin/cli/onnx-convert]
set -eu
cli=${1:-bazel-bin/cli/onnx-convert}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
exec python3 - "$cli" "$out" <<'PY'
import os, statistics, sys
cli, out = sys.argv[1], sys.argv[2]

def cpu_ms(argv, runs=20):
    """Median user + sys milliseconds of `runs` runs of argv."""
    times = []
    for _ in range(runs):
        pid = os.fork()
        if pid == 0:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execv(argv[0], argv)
        _, status, usage = os.wait4(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(argv)} failed")
        times.append((usage.ru_utime + usage.ru_stime) * 1000)
    return statistics.median(times)

rows = [("/bin/true", ["/bin/true"]),
        ("onnx-convert --version", [cli, "--version"]),
        ("onnx-convert convert tiny_cnn --to 17",
         [cli, "convert", "examples/tiny_cnn.onnx", "-o", os.path.join(out, "t.onnx"), "--to", "17"])]
print("| process | CPU ms (user + sys, median of 20) |")
print("| --- | --- |")
for label, argv in rows:
    print(f"| {label} | {cpu_ms(argv):.2f} |")
PY
