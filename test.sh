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
# The demo page and the Worker's inputs (www/dist, www/worker/vendor) for
# pkg-tests demo/worker; the adapter tests use models/tiny-random-llama3 (setup).
GRAMMASK_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/ci/grammask" bash scripts/build-www.sh
node --test pkg-tests/
