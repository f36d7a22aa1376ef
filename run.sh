#!/usr/bin/env bash
# The main job on the embedded defaults: compile grammars/python.lark and
# grammars/json.lark for the Llama-3 tokenizer, show their stats, and replay a
# few real files through the masks.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
bash scripts/setup/setup.sh
cargo build --release --bin grammask
G=target/release/grammask
mkdir -p out
for g in json python; do
  b="out/$g-llama3.gmask"
  if [ ! -f "$b" ] || [ "$G" -nt "$b" ] || [ "grammars/$g.lark" -nt "$b" ]; then
    $G compile --grammar "grammars/$g.lark" --tokenizer models/llama3/tokenizer.json -o "$b"
  fi
  $G stats --store "out/$g-llama3.gmask"
done
PYLIB="$(python3 -c 'import sysconfig;print(sysconfig.get_paths()["stdlib"])')"
$G check --quiet --store out/python-llama3.gmask --tokenizer models/llama3/tokenizer.json \
  "$PYLIB/json/__init__.py" "$PYLIB/textwrap.py" "$PYLIB/dataclasses.py"
$G check --quiet --store out/json-llama3.gmask --tokenizer models/llama3/tokenizer.json grammars/cases/*.json
# The browser demo (README "Demo"): npm packages, blobs (above), www/dist.
# Serving is opt-in: SERVE=1 ./run.sh ends by serving it in the foreground
# (Ctrl-C to stop); otherwise run `node www/serve.mjs` yourself.
bash scripts/build/build-pkg.sh
GRAMMASK_BIN="$ROOT/$G" bash scripts/build/build-www.sh
if [ "${SERVE:-0}" = 1 ]; then
  exec node www/serve.mjs "${PORT:-8080}"
fi
echo "Demo built: node www/serve.mjs 8080, then open http://127.0.0.1:8080/ (or SERVE=1 ./run.sh)"
