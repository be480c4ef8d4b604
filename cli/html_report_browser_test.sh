#!/bin/sh
# Converts examples/tiny_cnn.onnx to opset 17 with --report report.html,
# renders the page in headless Chromium with the network unreachable, and
# checks the rendered DOM. Skips only when /usr/bin/chromium is absent
# (tools/install-deps.sh installs it).
# Usage: html_report_browser_test.sh ONNX_CONVERT TINY_CNN_ONNX
set -eu

convert="$1"
model="$2"
chromium="${CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$chromium" ]; then
  echo "SKIP: $chromium is absent" >&2
  exit 0
fi

work="${TEST_TMPDIR:-$(mktemp -d)}/html_report"
mkdir -p "$work"
"$convert" convert "$model" -o "$work/out.onnx" --to 17 --report "$work/report.html" \
  >"$work/convert.log"
[ -s "$work/report.html" ] || { echo "FAIL: no report.html" >&2; exit 1; }

# Headless Chromium with its own profile; a proxy that does not exist makes
# any network fetch fail, so the page must render from the file alone.
render() {
  timeout 60 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
    --disable-dev-shm-usage --user-data-dir="$work/profile" \
    --proxy-server="http://127.0.0.1:9" --proxy-bypass-list="<-loopback>" \
    "$@" "file://$work/report.html" 2>"$work/chromium.log"
}

render --dump-dom >"$work/dom.html"
render --virtual-time-budget=2000 --dump-dom >"$work/dom_settled.html"

fail=0
expect() {  # expect FILE PATTERN: the rendered DOM matches PATTERN
  if ! grep -q -- "$2" "$1"; then
    echo "FAIL: $(basename "$1") lacks: $2" >&2
    fail=1
  fi
}
for dom in "$work/dom.html" "$work/dom_settled.html"; do
  expect "$dom" '<h1>Conversion report: <code>tiny_cnn.onnx</code></h1>'
  expect "$dom" '<tr class="step"><td><a href="#step-0">ai.onnx '
  expect "$dom" '<section id="step-0">'
  expect "$dom" '<td>main</td><td><code>'
  expect "$dom" '<dt>Nodes converted</dt>'
  # One step row per step of the conversion's text output.
  steps=$(grep -c '^step ' "$work/convert.log" || true)
  rows=$(grep -o '<tr class="step">' "$dom" | wc -l)
  if [ "$steps" -eq 0 ] || [ "$rows" -ne "$steps" ]; then
    echo "FAIL: $(basename "$dom") shows $rows step rows, the conversion ran $steps steps" >&2
    fail=1
  fi
done
# A node name from the conversion log appears in the page.
node=$(grep -v ', unchanged$' "$work/convert.log" |
  sed -n 's/^  main \xE2\x80\xBA \([^:]*\):.*/\1/p' | head -n 1)
[ -n "$node" ] && expect "$work/dom.html" "<code>$node</code>"

if [ "$fail" -ne 0 ]; then
  cat "$work/convert.log" "$work/chromium.log" >&2
  exit 1
fi
echo "PASS: rendered $(grep -o '<tr class="step">' "$work/dom.html" | wc -l) step rows, node $node"
