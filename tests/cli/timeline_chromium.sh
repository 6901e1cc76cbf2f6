#!/usr/bin/env bash
# The HTML timeline as a browser shows it: headless Chromium loads the pages onejob writes and
# this checks the DOM its script built, a screenshot, and a 100,000-event page.
#   timeline_chromium.sh ONEJOB SCENARIO_DIR WORK_DIR
set -euo pipefail
onejob=$1
scenarios=$2
work=$3
rm -rf "$work"
mkdir -p "$work"

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "FAIL: chromium is not installed (the setup script installs it: apt-get install chromium)"
  exit 1
fi
# Root needs --no-sandbox; a private profile keeps runs from sharing state.
chrome() {
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
    --window-size=1400,1800 "$@" 2>/dev/null
}
fail() {
  echo "FAIL: $*"
  exit 1
}
expect_in() {  # FILE PATTERN WHAT
  grep -q -- "$2" "$1" || fail "$3 (no '$2' in $1)"
}

# 1. A passing scenario: the winning fallback, the discarded primary and the cancel.
"$onejob" replay "$scenarios/reverse_order_completion.yaml" --html --report-dir "$work/pass" \
  >/dev/null
page="$work/pass/html/reverse-order-completion.html"
[[ -s "$page" ]] || fail "no timeline written at $page"
chrome --dump-dom "file://$page" >"$work/pass.dom"
expect_in "$work/pass.dom" 'data-rendered="yes"' "the page's script did not finish"
expect_in "$work/pass.dom" 'class="cas winner"' "no CAS winner drawn"
expect_in "$work/pass.dom" 'class="cas discarded"' "no discarded result drawn"
expect_in "$work/pass.dom" 'class="cancel"' "no operator cancel drawn"
drawn=$(grep -o 'data-drawn="[0-9]*"' "$work/pass.dom" | grep -o '[0-9]*')
[[ "${drawn:-0}" -gt 20 ]] || fail "the lanes drew ${drawn:-no} events"
if grep -q 'id="violation-marker"' "$work/pass.dom"; then fail "a passing run shows a violation"; fi
chrome --screenshot="$work/pass.png" "file://$page" >/dev/null
[[ "$(head -c 8 "$work/pass.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] ||
  fail "the screenshot is not a PNG"
size=$(stat -c %s "$work/pass.png")
# A blank page compresses to a few kilobytes; the rendered timeline is far larger.
[[ "$size" -gt 40000 ]] || fail "the screenshot is $size bytes: nothing rendered?"
echo "passing run: $drawn events drawn, screenshot $size bytes ($work/pass.png)"

# 2. A failing run (a named defect on): the violation is highlighted in the lanes.
set +e
"$onejob" run "$scenarios/reverse_order_completion.yaml" --defect blind-overwrite \
  --report-dir "$work/fail" >/dev/null
status=$?
set -e
[[ $status -eq 1 ]] || fail "the defect run exited $status, expected 1"
page="$work/fail/html/reverse-order-completion.html"
[[ -s "$page" ]] || fail "a failing run wrote no timeline"
chrome --dump-dom "file://$page" >"$work/fail.dom"
expect_in "$work/fail.dom" 'data-verdict="fail"' "the page does not say the run failed"
expect_in "$work/fail.dom" 'id="violation-marker"' "the lanes do not mark the violation"
expect_in "$work/fail.dom" '>I5<' "the violated rule is not named"
chrome --screenshot="$work/fail.png" "file://$page" >/dev/null
echo "failing run: violation marked ($work/fail.png)"

# 3. A fuzz repro gets its timeline too, with the violation marked.
set +e
"$onejob" fuzz --defect timeout-is-failure --cases 50 --seed 1 --report-dir "$work/fuzz" >/dev/null 2>&1
status=$?
set -e
[[ $status -eq 1 ]] || fail "the fuzz campaign with a defect exited $status, expected 1"
page=$(ls "$work"/fuzz/html/*.html 2>/dev/null | head -1)
[[ -n "$page" ]] || fail "the fuzz repro has no timeline"
chrome --dump-dom "file://$page" >"$work/fuzz.dom"
expect_in "$work/fuzz.dom" 'id="violation-marker"' "the fuzz repro's lanes do not mark the violation"
echo "fuzz repro: violation marked ($page)"

# 4. A run of about 100,000 events: generated here (4,990 creates, faults on every link).
big="$work/big.yaml"
{
  echo "name: big-timeline"
  echo "seed: 7"
  echo "topology: {api_nodes: 2, workers: 4}"
  echo "policy: {client_timeout: 5s, client_retries: 3, lb_timeout: 2s, lb_retries: 1}"
  echo "providers:"
  echo "  - {name: alpha, latency: {min: 50ms, max: 500ms}}"
  echo "network:"
  for link in client_lb lb_api worker_provider node_store; do
    echo "  $link: {drop_request: 1%, duplicate: 2%, reorder: 1%}"
  done
  echo "clients:"
  for c in 0 1 2 3 4 5 6 7 8 9; do echo "  - {name: c$c, owner: o$c}"; done
  echo "timeline:"
  for ((i = 0; i < 4990; ++i)); do
    echo "  - {at: $((i * 20))ms, create_job: {client: c$((i % 10)), key: k$i, body: {operation: classify, provider: alpha, input: {text: t$i}}}}"
  done
} >"$big"
"$onejob" replay "$big" --html --report-dir "$work/big" >"$work/big.out" || true
page="$work/big/html/big-timeline.html"
[[ -s "$page" ]] || fail "no timeline for the big run: $(tail -3 "$work/big.out")"
events=$(grep -o '<dt>events</dt><dd>[0-9]*' "$page" | grep -o '[0-9]*$')
[[ "${events:-0}" -ge 100000 ]] || fail "the big run has only ${events:-0} events"
start=$(date +%s%N)
chrome --dump-dom "file://$page" >"$work/big.dom"
wall_ms=$((($(date +%s%N) - start) / 1000000))
expect_in "$work/big.dom" 'data-rendered="yes"' "the big page's script did not finish"
render_ms=$(grep -o 'data-render-ms="[0-9]*"' "$work/big.dom" | grep -o '[0-9]*')
in_view=$(grep -o 'data-in-view="[0-9]*"' "$work/big.dom" | grep -o '[0-9]*')
drawn=$(grep -o 'data-drawn="[0-9]*"' "$work/big.dom" | grep -o '[0-9]*')
[[ "$drawn" -lt "$in_view" ]] || fail "the big page drew every one of $in_view events"
echo "big run: $events events, page $(($(stat -c %s "$page") / 1024)) KiB;" \
  "rendered in ${render_ms} ms after navigation (${drawn} marks for ${in_view} events in view);" \
  "chromium start to DOM dump ${wall_ms} ms"
