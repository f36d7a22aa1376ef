#!/usr/bin/env bash
# The whole test suite. Fast tier by default; GRAMMASK_FULL=1 runs the full
# corpus experiments.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
bash scripts/setup.sh
cargo test --profile ci
