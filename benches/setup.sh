#!/usr/bin/env bash
# The JS side of the wasm and side-by-side benchmarks (benches/README.md),
# after scripts/setup/setup.sh. Idempotent (the same lock stamp as setup.sh):
#   benches/wasm/node_modules   npm ci of benches/wasm/package-lock.json: the peers
#                               @mlc-ai/web-xgrammar and @huggingface/transformers-structured-output
#   benches/node_modules        a link to ../pkg-tests/node_modules, through which
#                               benches/wasm/*.mjs and benches/sbs/*.mjs import the built
#                               package `grammask` (scripts/build/build-pkg.sh installs it
#                               there) and transformers.js, as the package tests do
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf '[benches/setup] %s\n' "$*" >&2; }
. scripts/setup/npm-ci.sh
if [ ! -d benches/wasm/node_modules/@mlc-ai/web-xgrammar ] \
   || [ ! -d benches/wasm/node_modules/@huggingface/transformers-structured-output ] || lock_changed benches/wasm; then
  say "npm ci in benches/wasm (@mlc-ai/web-xgrammar, @huggingface/transformers-structured-output)"
  npm_ci benches/wasm >&2
fi
if [ "$(readlink benches/node_modules 2>/dev/null)" != ../pkg-tests/node_modules ]; then
  [ ! -e benches/node_modules ] || [ -L benches/node_modules ] || { echo "benches/node_modules is not a link: remove it" >&2; exit 1; }
  ln -sfn ../pkg-tests/node_modules benches/node_modules
  say "linked benches/node_modules -> ../pkg-tests/node_modules"
fi
