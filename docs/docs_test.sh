#!/bin/sh
# The docs point at what exists: check_docs.py over docs/*.md, against the
# source tree the runfiles' WORKSPACE links to.
set -eu
root="$(dirname "$(readlink -f WORKSPACE)")"
exec /usr/bin/python3 docs/check_docs.py "$root" docs/*.md
