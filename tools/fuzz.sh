#!/bin/sh
# Runs a libFuzzer campaign on one fuzz target of fuzz/ and records it.
#
#   tools/fuzz.sh TARGET SECONDS
#
# TARGET is load_check_infer_fuzzer, convert_fuzzer, optimize_fuzzer, text_fuzzer or
# service_fuzzer. Builds it with clang-14, ASan + UBSan and libFuzzer
# (--config=fuzz, in an output base of its own), writes its seed corpus from
# the backend corpus (../shared/onnx-backend-tests) once, then fuzzes for
# SECONDS into fuzz/corpus/TARGET (kept between campaigns, not committed).
# Crashes land in fuzz/findings/TARGET/; turn each into a regression input
# under fuzz/regressions/TARGET/ once it is fixed. The last lines of the log
# (executions, coverage) go to fuzz/findings/TARGET/campaigns.log.
set -eu
cd "$(dirname "$0")/.."
target=$1
seconds=$2
base=${FUZZ_OUTPUT_BASE:-$HOME/.cache/bazel-onnx-convert-fuzz}

bazel --output_base="$base" build --config=fuzz "//fuzz:$target" >&2
binary="$(bazel --output_base="$base" info --config=fuzz bazel-bin 2>/dev/null)/fuzz/$target"

corpus="fuzz/corpus/$target"
findings="fuzz/findings/$target"
mkdir -p "$corpus" "$findings"
if [ -z "$(ls -A "$corpus")" ]; then
  seeds="fuzz/corpus/${target}_seeds"
  mkdir -p "$seeds"
  # The replay test writes the seeds it would replay.
  bazel test "//fuzz:${target}_replay" --test_filter='FuzzReplay.SeedCorpus' \
    --test_env=FUZZ_WRITE_SEEDS="$(pwd)/$seeds" --spawn_strategy=standalone --nocache_test_results >&2
  set -- "$seeds"
else
  set --
fi

# The service's calls that outlive their deadline finish on detached
# threads, which own what they hold until they end, and gRPC's threads are
# still running at exit: no leak to report, per input or at exit.
case "$target" in
  service_fuzzer) extra="-detect_leaks=0"; export ASAN_OPTIONS=detect_leaks=0 ;;
  *) extra="" ;;
esac

log="$findings/last.log"
"$binary" "$corpus" "$@" $extra -dict=fuzz/onnx.dict -max_total_time="$seconds" \
  -max_len=65536 -rss_limit_mb=4096 -timeout=30 \
  -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || true
{
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $target ${seconds}s at $(git rev-parse --short HEAD)"
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::|INFO: seed corpus|==[0-9]+==ERROR|SUMMARY)" "$log" | tail -n 12
  echo "crash files: $(ls "$findings" | grep -cE '^(crash|leak|timeout|oom)-' || true)"
} | tee -a "$findings/campaigns.log"
