#!/usr/bin/env bash
# Per-request JSON Schema benchmark on a real-world corpus (issue 20): the npm
# package grammask (wasm, Node) and llguidance (native, Python) in the same
# invocation, one after the other, on the same schemas and the same token ids.
#
#   bash benches/schemas/run.sh
#   env: N=400 SEED=20 CAP_S=60 ENGINES="grammask llguidance"
#        (also: native = grammask natively, benches/schemas/native.rs; xgrammar = @mlc-ai/web-xgrammar,
#        official = @huggingface/transformers-structured-output, both in Node, through benches/schemas/js.mjs;
#        ENGINES="grammask llguidance native xgrammar official" is the full comparison, about an hour)
#        CORPUS=out/schemas-corpus OUT=out/schemas-bench   (where the corpus and the results go)
#        REPO=PATH   a git directory or checkout of guidance-ai/jsonschemabench
#                    (default: cloned into out/jsonschemabench)
#
# Steps: corpus.py (out/schemas-corpus/) -> ids.py (Llama-3 ids, once) ->
# js.mjs (out/schemas-bench/grammask-wasm.json, and xgrammar.json / official.json) -> llguidance_native.py
# (out/schemas-bench/llguidance.json) -> table.py (out/schemas-bench/table.md)
# -> chart.py (out/schemas-bench/chart.svg).
# Needs: the built package in pkg-tests/node_modules (scripts/build/build-pkg.sh),
# models/llama3/tokenizer.json (scripts/setup/setup.sh), python3 and PyPI for
# .venv-bench (llguidance==1.9.1, tokenizers, numpy; created or completed here).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
N="${N:-400}"; SEED="${SEED:-20}"; CAP_S="${CAP_S:-60}"; ENGINES="${ENGINES:-grammask llguidance}"
say() { printf '[schemas] %s\n' "$*" >&2; }
CORPUS="${CORPUS:-out/schemas-corpus}"; OUT="${OUT:-out/schemas-bench}"
mkdir -p "$OUT"
t0=$(date +%s)

PY=.venv-bench/bin/python
[ -x "$PY" ] || { say "creating .venv-bench"; python3 -m venv .venv-bench; }
if ! "$PY" -c 'import importlib.metadata as m, tokenizers, numpy; assert m.version("llguidance") == "1.9.1"' 2>/dev/null; then
  say "pip install llguidance==1.9.1 tokenizers numpy into .venv-bench"
  "$PY" -m pip install --quiet --disable-pip-version-check llguidance==1.9.1 tokenizers numpy
fi
[ -f pkg-tests/node_modules/grammask/package.json ] || { say "no built package: bash scripts/build/build-pkg.sh"; exit 1; }
if [ "$(readlink benches/node_modules 2>/dev/null)" != ../pkg-tests/node_modules ]; then
  [ ! -e benches/node_modules ] || [ -L benches/node_modules ] || { say "benches/node_modules is not a link: remove it"; exit 1; }
  ln -sfn ../pkg-tests/node_modules benches/node_modules   # as benches/setup.sh does
fi

python3 benches/schemas/corpus.py ${REPO:+--repo "$REPO"} --n "$N" --seed "$SEED" --out "$CORPUS"
"$PY" benches/schemas/ids.py --corpus "$CORPUS"
results=()
for e in $ENGINES; do
  s=$(date +%s)
  case "$e" in
    grammask)   node benches/schemas/js.mjs --corpus "$CORPUS" --out "$OUT/grammask-wasm.json" --cap-s "$CAP_S" 2> "$OUT/grammask-wasm.log"; results+=("$OUT/grammask-wasm.json") ;;
    native)     cargo build --release --example schema_corpus >&2
                target/release/examples/schema_corpus "$CORPUS" "$OUT/grammask-native.json" "$CAP_S" 2> "$OUT/grammask-native.log"; results+=("$OUT/grammask-native.json") ;;
    xgrammar|official)
                bash benches/setup.sh
                node benches/schemas/js.mjs --engine "$e" --corpus "$CORPUS" --out "$OUT/$e.json" --cap-s "$CAP_S" 2> "$OUT/$e.log"; results+=("$OUT/$e.json") ;;
    llguidance) "$PY" benches/schemas/llguidance_native.py --corpus "$CORPUS" --out "$OUT/llguidance.json" --cap-s "$CAP_S" 2> "$OUT/llguidance.log"; results+=("$OUT/llguidance.json") ;;
    *) say "unknown engine $e"; exit 1 ;;
  esac
  say "$e: $(( $(date +%s) - s )) s (log: $OUT/$e*.log)"
done
python3 benches/schemas/table.py "${results[@]}" --corpus "$CORPUS" > "$OUT/table.md"
python3 benches/schemas/chart.py "${results[@]}" --out "$OUT/chart.svg" >&2
cat "$OUT/table.md"
say "total $(( $(date +%s) - t0 )) s; $OUT/table.md, $OUT/chart.svg"
