#!/bin/sh
# Keeps deploy/ in step with the binaries: see manifests_check.py.
exec /usr/bin/python3 "$(dirname "$0")/manifests_check.py" "$@"
