#!/bin/bash
# The evaluator against ONNX Runtime (onnxruntime-node), one thread each,
# on real models (issue 19's acceptance): builds and runs
# //bench:eval_bench and tools/ort/bench_models.js, then prints per model
# ORT's CPU ms (optimizations 'all' and 'disabled'), the evaluator's, their
# ratios, what verification adds to a conversion as a ratio to one
# evaluation, and the evaluator's peak live bytes and peak RSS growth as
# ratios to the model's bytes.
#
# Usage: bench/eval_vs_ort.sh [CACHE_DIR] [MODEL...]
# CACHE_DIR: default $HOME/.cache/onnx-convert-real-models/corpus/real.
# ORT_NODE_MODULES: where onnxruntime-node is installed (default
# tools/ort/node_modules); ORT_RUNS: timed ORT runs per model (default 20).
# EVAL_NATIVE=1: the evaluator built for this machine's instruction set
# (--config=native, in its own output base), as ONNX Runtime picks its
# kernels for the CPU it runs on.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${1:-$HOME/.cache/onnx-convert-real-models/corpus/real}"
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(ppocr_v3_det silero_vad_v5 ppocr_v4_rec)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$repo"
bazel_cmd=(bazel)
flags=(-c opt)
if [ "${EVAL_NATIVE:-0}" = 1 ]; then
  bazel_cmd+=(--output_base="${EVAL_NATIVE_OUTPUT_BASE:-$HOME/.cache/onnx-convert-bazel-native}")
  flags+=(--config=native)
fi
"${bazel_cmd[@]}" build "${flags[@]}" //bench:eval_bench >&2
eval_bench="$("${bazel_cmd[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/bench/eval_bench"
NODE_PATH="${ORT_NODE_MODULES:-$repo/tools/ort/node_modules}" \
  node tools/ort/bench_models.js --runs "${ORT_RUNS:-20}" --tsv "$work/ort.tsv" \
  "$cache" "${models[@]}" >&2
"$eval_bench" "$cache" --models="$(IFS=,; echo "${models[*]}")" \
  --tsv="$work/eval.tsv" >&2

echo
echo "| model | ORT ms (all) | ORT ms (disabled) | eval ms | eval / ORT all | eval / ORT disabled | verify cost / eval | peak live / model bytes | RSS growth / model bytes |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
join -t $'\t' <(sort "$work/ort.tsv") <(sort "$work/eval.tsv") | sort -t $'\t' -k1,1 |
  awk -F'\t' '{
    # ORT: id, cpu all, wall all, cpu disabled, wall disabled; then the
    # evaluator: eval ms, convert ms, +verify ms, verify ratio, model
    # bytes, peak live, peak ratio, RSS growth, RSS ratio.
    printf "| %s | %.2f | %.2f | %.2f | %.1fx | %.1fx | %.2fx | %.2f | %.2f |\n",
      $1, $2, $4, $6, $6 / $2, $6 / $4, $9, $12, $14 }'
