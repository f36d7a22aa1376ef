#!/usr/bin/env bash
# The whole test suite. Fast tier by default; GRAMMASK_FULL=1 runs the full
# corpus experiments.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
bash scripts/setup.sh
cargo test --profile ci
# The npm packages (wasm) and their tests: experiments 1-3 replayed in wasm,
# error paths, memory, headless Chromium.
bash scripts/build-pkg.sh
node --test pkg-tests/
