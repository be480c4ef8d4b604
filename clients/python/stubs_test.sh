#!/bin/sh
# Fails when the checked-in stubs are stale: regenerates them from proto/
# into a temporary folder with generate_stubs.sh and compares every file.
set -eu
protos="$(dirname "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
fresh="${TEST_TMPDIR:-$(mktemp -d)}/stubs"
mkdir -p "$fresh"
sh "$here/generate_stubs.sh" "$fresh" "$protos"
stale=0
for f in "$fresh"/*.py; do
  name="$(basename "$f")"
  if [ ! -f "$here/$name" ]; then
    echo "clients/python/$name: not checked in"; stale=1
  elif ! cmp -s "$f" "$here/$name"; then
    echo "clients/python/$name: stale"; diff "$here/$name" "$f" | head -20; stale=1
  fi
done
for f in "$here"/*_pb2.py "$here"/*_pb2_grpc.py; do
  [ -f "$fresh/$(basename "$f")" ] || { echo "clients/python/$(basename "$f"): no proto makes it"; stale=1; }
done
if [ "$stale" -ne 0 ]; then
  echo "regenerate them: clients/python/generate_stubs.sh"
  exit 1
fi
echo "stubs: $(ls "$fresh" | wc -l) files up to date"
