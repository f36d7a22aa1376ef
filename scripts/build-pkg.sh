#!/usr/bin/env bash
# Build the npm packages from the Rust crate (wasm32-unknown-unknown, no threads):
#   pkg/           `grammask`           runtime only (--no-default-features --features wasm)
#   pkg-compiler/  `grammask-compiler`  the same API plus compileStore (--features wasm,compiler)
# Each holds wasm-pack builds for the web, nodejs and bundler targets under
# web/, node/, bundler/, the hand-written JS layer (js/) and index.d.ts.
# wasm-opt -O3 is the npm `binaryen` one (pkg-tests/node_modules/.bin/wasm-opt);
# wasm-pack's own wasm-opt is off (Cargo.toml metadata), and `--mode no-install`
# makes wasm-pack use the wasm-bindgen on PATH (its version must equal the
# crate's pinned wasm-bindgen), never a download.
# Then both packages are packed (npm pack: checks the `files` whitelist) into
# out/npm/ and unpacked into pkg-tests/node_modules/, where pkg-tests import
# them by name, as users do.
#
# Options (environment): GRAMMASK_PKG_ONLY=runtime|compiler builds one package;
# GRAMMASK_NO_WASM_OPT=1 skips wasm-opt (faster, bigger; for debugging).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf '[build-pkg] %s\n' "$*"; }
export PATH="$HOME/.cargo/bin:$PATH"

WB_VERSION="$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' Cargo.toml)"
[ -n "$WB_VERSION" ] || { echo "cannot read the pinned wasm-bindgen version from Cargo.toml" >&2; exit 1; }
command -v wasm-pack >/dev/null || { echo "wasm-pack not found: run scripts/setup.sh" >&2; exit 1; }
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" || true
[ "$have" = "$WB_VERSION" ] || { echo "wasm-bindgen $WB_VERSION needed on PATH (found '${have:-none}'): run scripts/setup.sh" >&2; exit 1; }
WASM_OPT="$ROOT/pkg-tests/node_modules/.bin/wasm-opt"
if [ "${GRAMMASK_NO_WASM_OPT:-0}" != 1 ] && [ ! -x "$WASM_OPT" ]; then
  echo "$WASM_OPT not found: run scripts/setup.sh (npm ci in pkg-tests)" >&2; exit 1
fi
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
OPT_CACHE="$TARGET_DIR/wasm-opt-cache"
mkdir -p "$OPT_CACHE" out/npm

# simd128 (fixed-width SIMD: every current browser, Node >= 16, Deno and
# workerd run it): the mask OR/copy loops use v128. Set for the wasm target
# only (not for build scripts); RUSTFLAGS from the caller are kept.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="${CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS:-} -C target-feature=+simd128"
# The features rustc enables by default for wasm32-unknown-unknown, plus
# simd128; nothing about threads or atomics.
OPT_FEATURES=(--enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd)

optimize() { # in-place wasm-opt -O3, cached by the input's hash
  local f="$1" key
  key="$(sha256sum "$f" | cut -c1-32)"
  if [ ! -f "$OPT_CACHE/$key.wasm" ]; then
    local t0=$SECONDS
    "$WASM_OPT" -O3 "${OPT_FEATURES[@]}" "$f" -o "$OPT_CACHE/$key.tmp"
    mv "$OPT_CACHE/$key.tmp" "$OPT_CACHE/$key.wasm"
    say "  wasm-opt -O3 $(basename "$(dirname "$f")")/$(basename "$f"): $((SECONDS - t0)) s"
  fi
  cp "$OPT_CACHE/$key.wasm" "$f"
}

build_one() { # name outdir features
  local name="$1" out="$2" features="$3"
  say "== $name ($out/, features: $features)"
  rm -rf "$out"
  mkdir -p "$out"
  for t in web nodejs bundler; do
    local dir="$t"
    [ "$t" = nodejs ] && dir=node
    say "wasm-pack build --release --target $t"
    wasm-pack --quiet build --release --mode no-install --no-pack --no-opt --target "$t" --out-dir "$ROOT/$out/$dir" --out-name grammask \
      -- --no-default-features --features "$features"
    rm -f "$out/$dir/.gitignore" "$out/$dir/package.json" "$out/$dir/README.md" "$out/$dir"/*.d.ts
    if [ "${GRAMMASK_NO_WASM_OPT:-0}" != 1 ]; then optimize "$out/$dir/grammask_bg.wasm"; fi
  done
  # wasm-bindgen's nodejs output is CommonJS; the package is "type": "module".
  printf '{ "type": "commonjs" }\n' > "$out/node/package.json"
  { cat js/core.js; printf '\nexport { makeApi };\n'; } > "$out/core.mjs"
  { printf "'use strict';\n"; cat js/core.js; printf '\nmodule.exports = { makeApi };\n'; } > "$out/core.cjs"
  cp js/web.js js/node.mjs js/node.cjs js/bundler.js "$out/"
  # Adapters: grammask/transformers (imports the package by its own name) and
  # grammask/webgpu (js/mask.wgsl inlined as MASK_WGSL; the .wgsl ships too).
  sed "s/from 'grammask';/from '$name';/" js/transformers.js > "$out/transformers.js"
  node -e 'const fs=require("fs");const [src,wgsl,dst]=process.argv.slice(1);
    const s=fs.readFileSync(src,"utf8"),k="/*@MASK_WGSL@*/ \x27\x27";
    if(!s.includes(k))throw new Error("MASK_WGSL placeholder missing in "+src);
    fs.writeFileSync(dst,s.replace(k,JSON.stringify(fs.readFileSync(wgsl,"utf8"))));' js/webgpu.js js/mask.wgsl "$out/webgpu.js"
  cp js/mask.wgsl js/transformers.d.ts js/webgpu.d.ts "$out/"
  if [ "$name" = grammask-compiler ]; then
    cat js/index.d.ts js/compiler.d.ts > "$out/index.d.ts"
  else
    cp js/index.d.ts "$out/index.d.ts"
  fi
  node - "$out" "$name" "$VERSION" <<'JS'
const fs = require('fs');
const [out, name, version] = process.argv.slice(2);
const compiler = name.endsWith('-compiler');
const ts = './index.d.ts';
const pkg = {
  name, version,
  description: compiler
    ? 'Grammar-constrained decoding for LLMs (WebAssembly), with the grammar compiler: compile Lark grammars for a tokenizer in the browser'
    : 'Grammar-constrained decoding for LLMs (WebAssembly): token masks from precompiled grammar mask stores',
  license: 'MIT OR Apache-2.0',
  type: 'module',
  main: './node.cjs',
  module: './bundler.js',
  types: ts,
  exports: {
    '.': {
      types: ts,
      node: { import: './node.mjs', require: './node.cjs' },
      browser: './bundler.js',
      default: './bundler.js',
    },
    './web': { types: ts, default: './web.js' },
    './bundler': { types: ts, default: './bundler.js' },
    './node': { types: ts, import: './node.mjs', require: './node.cjs' },
    './web/grammask_bg.wasm': './web/grammask_bg.wasm',
    './transformers': { types: './transformers.d.ts', default: './transformers.js' },
    './webgpu': { types: './webgpu.d.ts', default: './webgpu.js' },
    './mask.wgsl': './mask.wgsl',
    './package.json': './package.json',
  },
  files: [
    'index.d.ts', 'core.mjs', 'core.cjs', 'web.js', 'node.mjs', 'node.cjs', 'bundler.js',
    'web/grammask.js', 'web/grammask_bg.wasm',
    'node/grammask.js', 'node/grammask_bg.wasm', 'node/package.json',
    'bundler/grammask.js', 'bundler/grammask_bg.js', 'bundler/grammask_bg.wasm',
    'transformers.js', 'transformers.d.ts', 'webgpu.js', 'webgpu.d.ts', 'mask.wgsl',
  ],
  sideEffects: ['./bundler.js', './bundler/grammask.js'],
  engines: { node: '>=20' },
  keywords: ['llm', 'grammar', 'constrained-decoding', 'wasm', 'lark', 'json', 'tokenizer'],
};
fs.writeFileSync(`${out}/package.json`, JSON.stringify(pkg, null, 2) + '\n');
fs.writeFileSync(`${out}/README.md`, `# ${name}\n\n${pkg.description}.\n\nSee the grammask README (sections "JS API" and "npm package").\n`);
JS
  for dir in web node bundler; do
    [ -f "$out/$dir/grammask_bg.wasm" ] || { echo "missing $out/$dir/grammask_bg.wasm" >&2; exit 1; }
  done
  local raw gz
  raw=$(stat -c %s "$out/web/grammask_bg.wasm")
  gz=$(gzip -9 -c "$out/web/grammask_bg.wasm" | wc -c)
  say "$name: grammask_bg.wasm $raw bytes, $gz bytes gzip -9"
  printf '{"package":"%s","wasm_bytes":%d,"wasm_gzip_bytes":%d}\n' "$name" "$raw" "$gz" > "out/npm/$name.size.json"
  # Pack (applies the files whitelist) and install the tarball where pkg-tests import it.
  local tgz
  tgz="$(cd "$out" && npm pack --silent --pack-destination "$ROOT/out/npm" | tail -n1)"
  rm -rf "pkg-tests/node_modules/$name"
  mkdir -p "pkg-tests/node_modules/$name"
  tar -xzf "out/npm/$tgz" -C "pkg-tests/node_modules/$name" --strip-components=1
  say "$name: packed out/npm/$tgz, installed into pkg-tests/node_modules/$name"
}

only="${GRAMMASK_PKG_ONLY:-}"
[ "$only" = compiler ] || build_one grammask pkg wasm
[ "$only" = runtime ] || build_one grammask-compiler pkg-compiler wasm,compiler
say "done"
