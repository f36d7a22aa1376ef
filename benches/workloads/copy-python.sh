#!/usr/bin/env bash
# Copy the Python benchmark workload (benches/workloads/python-stdlib.txt: paths
# relative to this Python's stdlib) into out/workloads/python/. Used by
# benches/native/run.sh and benches/wasm/run.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PYLIB="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
rm -rf out/workloads/python && mkdir -p out/workloads/python
i=0
while read -r rel; do
  [ -n "$rel" ] || continue
  cp "$PYLIB/$rel" "out/workloads/python/$(printf '%02d' $i)-${rel//\//_}"
  i=$((i + 1))
done < benches/workloads/python-stdlib.txt
