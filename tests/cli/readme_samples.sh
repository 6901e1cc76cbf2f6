#!/usr/bin/env bash
# The README's sample outputs come from real runs, and this keeps them so.
#
# A sample is the fenced block that follows a line `<!-- sample: ARGS -->` in the README: what
# `build/onejob ARGS` prints, run from a scratch directory that holds the scenarios and the binary
# as build/onejob (so printed paths read as they would in a checkout; absolute ones, as replay
# lines print them, read as a checkout at /home/me/onejob). In a sample, a line "..."
# stands for any number of output lines; every other line must be an output line, in order, with
# the sample's first and last lines the output's first and last. What varies between runs of one
# build (wall time, the seconds a fuzz search took) is masked on both sides before comparing.
#
# Usage: readme_samples.sh ONEJOB README          check; exit 1 naming each sample that drifted
#        readme_samples.sh ONEJOB README --update  rewrite each sample from a fresh run, keeping
#                                                  its shape (lines before and after "...")
set -euo pipefail
onejob=$(realpath "$1")
readme=$(realpath "$2")
mode=${3:-check}
root=$(dirname "$readme")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build"
ln -s "$onejob" "$work/build/onejob"
ln -s "$root/scenarios" "$work/scenarios"

mask() {
  sed -E -e 's/in [0-9]+(\.[0-9]+)? s of wall time/in N s of wall time/' \
    -e 's/, [0-9]+\.[0-9]+ s, shrunk/, N s, shrunk/'
}

# Prints the new block (without fences) for sample lines in $sample_file and output in $out_file.
reshape() {
  local sample_file=$1 out_file=$2
  local before after total
  if ! grep -qx '\.\.\.' "$sample_file"; then
    cat "$out_file"
    return
  fi
  before=$(awk '$0 == "..." { exit } { n++ } END { print n + 0 }' "$sample_file")
  after=$(awk 'found { n++ } $0 == "..." { found = 1; n = 0 } END { print n + 0 }' "$sample_file")
  total=$(wc -l <"$out_file")
  if ((before + after >= total)); then
    cat "$out_file"
    return
  fi
  head -n "$before" "$out_file"
  echo "..."
  tail -n "$after" "$out_file"
}

# Whether the sample (masked) is the output (masked) with "..." lines standing for any lines.
matches() {
  awk -v sample="$1" '
    BEGIN {
      while ((getline line < sample) > 0) s[++ns] = line
    }
    { o[++no] = $0 }
    END {
      # Greedy in order: each run of sample lines between "..." must appear contiguously after the
      # previous one; the first run starts the output and the last run ends it.
      pos = 1; i = 1; first = 1
      while (i <= ns) {
        if (s[i] == "...") { first = 0; i++; continue }
        j = i; while (j <= ns && s[j] != "...") j++
        len = j - i; last = (j > ns)
        found = 0
        for (p = pos; p + len - 1 <= no; p++) {
          if (first && p != 1) break
          if (last && p + len - 1 != no) continue
          ok = 1
          for (k = 0; k < len; k++) if (o[p + k] != s[i + k]) { ok = 0; break }
          if (ok) { found = 1; pos = p + len; break }
        }
        if (!found) exit 1
        first = 0; i = j
      }
      exit 0
    }' "$2"
}

status=0
updated="$work/README.md"
: >"$updated"
state=text
args=""
while IFS= read -r line || [[ -n "$line" ]]; do
  case "$state" in
    text)
      printf '%s\n' "$line" >>"$updated"
      if [[ "$line" =~ ^\<!--\ sample:\ (.*)\ --\>$ ]]; then
        args=${BASH_REMATCH[1]}
        state=marker
      fi
      ;;
    marker)
      printf '%s\n' "$line" >>"$updated"
      [[ "$line" == '```'* ]] || { echo "$readme: a sample marker must be followed by a fenced block" >&2; exit 2; }
      : >"$work/sample"
      state=block
      ;;
    block)
      if [[ "$line" == '```' ]]; then
        # shellcheck disable=SC2086  # ARGS are words, as typed in the README
        (cd "$work" && build/onejob $args >"$work/out" 2>/dev/null) || true
        # Replay lines print absolute paths: the scratch directory reads as a checkout in a home.
        sed -i "s#${work}#/home/me/onejob#g" "$work/out"
        mask <"$work/out" >"$work/out.masked"
        mask <"$work/sample" >"$work/sample.masked"
        if [[ "$mode" == --update ]]; then
          reshape "$work/sample" "$work/out" >>"$updated"
        elif ! matches "$work/sample.masked" "$work/out.masked"; then
          echo "README sample of 'onejob $args' no longer matches a run; it prints:" >&2
          reshape "$work/sample" "$work/out" | sed 's/^/  | /' >&2
          echo "  (bash tests/cli/readme_samples.sh build/onejob README.md --update rewrites it)" >&2
          status=1
        else
          echo "ok: onejob $args"
        fi
        printf '%s\n' "$line" >>"$updated"
        state=text
      else
        printf '%s\n' "$line" >>"$work/sample"
      fi
      ;;
  esac
done <"$readme"
if [[ "$mode" == --update ]]; then
  cp "$updated" "$readme"
  echo "updated $readme"
fi
exit "$status"
