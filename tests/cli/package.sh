#!/usr/bin/env bash
# The Debian package CPack builds from this build tree holds the binary, the scenario catalogue
# and the README; unpacked (as dpkg -i would lay it out), `onejob --version` answers and
# `onejob run` with no path runs the installed catalogue from any directory.
# Usage: package.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$(realpath "$1")
scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch"
scratch=$(realpath "$scratch")
cpack --config "$build/CPackConfig.cmake" -B "$scratch/out" >"$scratch/cpack.log" 2>&1 || {
  cat "$scratch/cpack.log" >&2
  exit 1
}
debs=("$scratch"/out/onejob_*_amd64.deb)
[[ -f ${debs[0]} && ${#debs[@]} -eq 1 ]] || { echo "no single onejob_<version>_amd64.deb in $scratch/out" >&2; ls "$scratch/out" >&2; exit 1; }
deb=${debs[0]}
echo "package: $(basename "$deb")"
dpkg-deb -c "$deb" >"$scratch/contents"
for want in ./usr/bin/onejob ./usr/share/onejob/scenarios/double_click.yaml \
  ./usr/share/onejob/scenarios/README.md ./usr/share/doc/onejob/README.md; do
  grep -q " $want\$" "$scratch/contents" || { echo "the package lacks $want" >&2; cat "$scratch/contents" >&2; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libpqxx* && $depends == *libyaml-cpp* ]] || { echo "Depends misses libraries: $depends" >&2; exit 1; }
echo "depends: $depends"
dpkg-deb -x "$deb" "$scratch/root"
onejob=$scratch/root/usr/bin/onejob
version=$(cd / && "$onejob" --version)
[[ $version == "onejob "[0-9]* ]] || { echo "--version printed: $version" >&2; exit 1; }
echo "$version"
catalogue=$(find "$scratch/root/usr/share/onejob/scenarios" -name '*.yaml' | wc -l)
out=$(cd / && "$onejob" run --report-dir "$scratch/reports") || { echo "$out" >&2; exit 1; }
summary=$(grep -E '^[0-9]+ scenarios: ' <<<"$out")
[[ $summary == "$catalogue scenarios: $catalogue passed"* ]] || { echo "from /: $summary (catalogue of $catalogue)" >&2; exit 1; }
echo "from /, the installed catalogue: $summary"
