#!/usr/bin/env bash
# The whole test suite. Fast tier by default; GRAMMASK_FULL=1 runs the full
# corpus experiments and the full-tier tests.
#
# Skips are declared and checked: the cargo tests that do not run by default
# are the #[ignore]d ones listed in tests/data/ignored.tsv (the suite checks
# the list; the "full" ones run here in the full tier), and the Node tests
# that skip are exactly those of pkg-tests/data/skips.json (pkg-tests/skips.mjs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
bash scripts/setup/setup.sh
# Checked-in generated files (Unicode classes, Python string terminals, Lark's
# terminal order) against their generators: fails on drift.
bash scripts/gen/check.sh
# One test binary, tests/suite/ (one area: cargo test --profile ci --test suite experiments::).
cargo test --profile ci
if [ "${GRAMMASK_FULL:-0}" = 1 ]; then
  mapfile -t FULL_TESTS < <(awk -F'\t' '!/^#/ && $2 == "full" {print $1}' tests/data/ignored.tsv)
  cargo test --profile ci --test suite -- --ignored --exact "${FULL_TESTS[@]}"
fi
# The npm packages (wasm) and their tests: experiments 1-3 replayed in wasm,
# error paths, memory, headless Chromium.
bash scripts/build/build-pkg.sh
# The demo page and the Worker's inputs (www/dist, www/worker/vendor) for
# pkg-tests demo/worker; the adapter tests use models/tiny-random-llama3 (setup).
GRAMMASK_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/ci/grammask" bash scripts/build/build-www.sh
# Node: the major pkg-tests/package.json's "engines" names (scripts/setup/setup.sh checks it too).
# The test files are named, not the directory (whose meaning for --test changed in Node 21).
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 20 ]; then
  echo "test.sh: Node >= 20 is required (pkg-tests/package.json engines); this is $(node --version)" >&2
  exit 1
fi
mkdir -p out
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./pkg-tests/skips.mjs --test-reporter-destination=out/pkg-tests-skips.json \
  pkg-tests/*.test.mjs
node pkg-tests/skips.mjs out/pkg-tests-skips.json
