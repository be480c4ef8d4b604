#!/bin/sh
# The checked-in registry agrees with onnx-schemas-v1.22.0.json one for one:
# the generator reproduces registry_data.cc byte for byte, and every fact of
# every schema, dumped from the compiled registry, equals the JSON's.
set -u
workspace=$(dirname "$(readlink -f WORKSPACE)")
json="$workspace/../shared/spec/onnx-schemas-v1.22.0.json"
if [ ! -f "$json" ]; then
  echo "FAIL: the schema JSON is missing: expected $json (../shared/spec beside the checkout)"
  exit 1
fi
out=${TEST_TMPDIR:-/tmp}
python3 "$workspace/schema/gen_registry.py" "$json" "$out/registry_data.cc" || exit 1
if ! cmp -s "$out/registry_data.cc" "$workspace/schema/registry_data.cc"; then
  echo "FAIL: schema/registry_data.cc is stale: run schema/gen_registry.py"
  exit 1
fi
schema/dump_registry > "$out/registry.txt" || exit 1
python3 "$workspace/schema/dump_json.py" "$json" > "$out/json.txt" || exit 1
if ! diff "$out/json.txt" "$out/registry.txt" > "$out/diff.txt"; then
  echo "FAIL: registry and JSON differ:"
  head -40 "$out/diff.txt"
  exit 1
fi
echo "PASS: $(grep -c deprecated= "$out/registry.txt") schemas, $(wc -l < "$out/registry.txt") facts agree"
