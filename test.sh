#!/usr/bin/env bash
# The whole test suite. Fast tier by default; GRAMMASK_FULL=1 runs the full
# corpus experiments.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
bash scripts/setup/setup.sh
# Checked-in generated files (Unicode classes, Python string terminals, Lark's
# terminal order) against their generators: fails on drift.
bash scripts/gen/check.sh
cargo test --profile ci
# The npm packages (wasm) and their tests: experiments 1-3 replayed in wasm,
# error paths, memory, headless Chromium.
bash scripts/build/build-pkg.sh
# The demo page and the Worker's inputs (www/dist, www/worker/vendor) for
# pkg-tests demo/worker; the adapter tests use models/tiny-random-llama3 (setup).
GRAMMASK_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/ci/grammask" bash scripts/build/build-www.sh
node --test pkg-tests/
