#!/bin/sh
# manifests_check.py finds what it is meant to: each case breaks one file
# of a copy of deploy/ and expects the check to name the fault. The
# unbroken copy may fail only on flags pending merge.
#   manifests_check_test.sh SERVER CLI STATUS CONTAINERFILE MANIFEST...
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
server="$1"; cli="$2"; status="$3"; shift 3
work="${TEST_TMPDIR:-$(mktemp -d)}"
check() {  # DIR: the check's output on the copy in DIR
  /usr/bin/python3 "$here/manifests_check.py" "$server" "$cli" "$status" \
    "$1/Containerfile" "$1"/*.yaml || true
}
rm -rf "$work/base"; mkdir -p "$work/base"
for f in "$@"; do cp "$f" "$work/base/"; done

out="$(check "$work/base")"
if echo "$out" | grep FAIL | grep -v "pending merge"; then
  echo "the checked-in deploy/ fails for more than pending flags"; exit 1
fi

failed=0
cases=0
while IFS='|' read -r file edit expected; do
  [ -n "$file" ] || continue
  cases=$((cases + 1))
  rm -rf "$work/case"; cp -r "$work/base" "$work/case"
  sed -i "$edit" "$work/case/$file"
  if cmp -s "$work/case/$file" "$work/base/$file"; then
    echo "case '$edit' changed nothing in $file"; failed=1; continue
  fi
  out="$(check "$work/case")"
  if ! echo "$out" | grep "^FAIL" | grep -qF -- "$expected"; then
    echo "case $file '$edit': expected a failure with '$expected', got:"; echo "$out"
    failed=1
  fi
done <<'CASES'
deployment.yaml|s/--workers=2/--wrokers=2/|--wrokers is unknown to onnx-convert-server
deployment.yaml|s/memory: 2Gi/memory: 3Gi/|should both be --max_inflight_bytes
deployment.yaml|s/terminationGracePeriodSeconds: 40/terminationGracePeriodSeconds: 30/|is not beyond the preStop sleep and --grace_ms
deployment.yaml|/readinessProbe:/,/service:/s/port: 50051/port: 50052/|no readinessProbe of grpc on --port 50051
deployment.yaml|s/containerPort: 9464/containerPort: 9465/|--metrics_port 9464 is not a containerPort
deployment.yaml|s/drop: \["ALL"\]/drop: ["ALL"/|kubectl cannot decode it
Containerfile|s/ libre2-9//|does not install libre2-9
Containerfile|s/--metrics=false/--metricz=false/|--metricz is unknown to onnx-convert-status
Containerfile|s/EXPOSE 50051 9464/EXPOSE 50051/|--metrics_port 9464 is not EXPOSEd
Containerfile|s# bin/onnx-convert-status##|does not copy onnx-convert-status
batch-job.yaml|s#dns:///onnx-convert-headless:50051#dns:///onnx-convert:50051#|is not dns:/// of a headless Service port
batch-job.yaml|s#(JOB_COMPLETION_INDEX)/4#(JOB_COMPLETION_INDEX)/3#|is not $(JOB_COMPLETION_INDEX)/completions
batch-job.yaml|s/- --progress/- --progres/|--progres is unknown to onnx-convert
batch-job.yaml|s/- batch$/- batches/|onnx-convert has no command 'batches'
batch-job.yaml|s/completionMode: Indexed/completionMode: NonIndexed/|not an Indexed Job
service.yaml|s/clusterIP: None/clusterIP: 10.0.0.9/|no headless Service
service.yaml|s/targetPort: metrics/targetPort: metric/|targets metric
hpa.yaml|s/name: cpu/name: memory/|not an autoscaling/v2 one on CPU
pdb.yaml|s/kind: PodDisruptionBudget/kind: PodBudget/|no PodDisruptionBudget
CASES
[ "$failed" -eq 0 ] || exit 1
echo "manifests_check: $cases broken copies, each fault named"
