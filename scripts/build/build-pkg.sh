#!/usr/bin/env bash
# Build the npm package `grammask` from the Rust crate (wasm32-unknown-unknown,
# no threads) into pkg/:
#   pkg/{web,node,bundler}/    the full build (--features wasm,compiler): masks,
#                              blobs, vocabularies, and compile() for JSON Schema,
#                              regex, any JSON and Lark; entries web.js, node.mjs,
#                              node.cjs, bundler.js (import 'grammask', 'grammask/web', ...)
#   pkg/runtime/{web,node}/    the lean runtime (--features wasm): blobs, matchers,
#                              vocabularies and fingerprints, no compiler; for
#                              Workers and pages that load prebuilt blobs
#                              (import 'grammask/runtime')
# plus the hand-written JS layer (js/core.js → core.mjs, copied, and core.cjs,
# derived from it; shared by both builds), index.d.ts / runtime.d.ts, the
# adapters grammask/transformers (js/transformers.js + js/transformers/) and
# grammask/webgpu, and js/mask-bits.js. pkg/package.json is js/package.json
# (the exports map and the files whitelist), copied; its version must equal
# Cargo.toml's; pkg/README.md is js/README.md (the npm page), and the docs it
# links to are copied from docs/ (the docs/ entries of `files`). The
# tokenizers crate is in neither build (only the native CLI encodes text).
# Cargo profiles `wasm` (runtime build) and `wasm-full` (the compiler build, at
# opt-level "s" for the 600 KiB budget) in Cargo.toml: release with the compiler-only crates at
# opt-level "s". wasm-opt (-O3; -Os for the full build) is the npm `binaryen` one (pkg-tests/node_modules/.bin/wasm-opt);
# wasm-pack's own wasm-opt is off (Cargo.toml metadata), and `--mode no-install`
# makes wasm-pack use the wasm-bindgen on PATH (its version must equal the
# crate's pinned wasm-bindgen), never a download.
# Then the package is packed (npm pack: checks the `files` whitelist) into
# out/npm/ and unpacked into pkg-tests/node_modules/grammask, where pkg-tests
# import it by name, as users do. Sizes: out/npm/grammask.size.json.
#
# Options (environment): GRAMMASK_NO_WASM_OPT=1 skips wasm-opt (faster,
# bigger; for debugging); GRAMMASK_JS_ONLY=1 keeps the wasm builds already in
# pkg/ and redoes the JS layer, the package and its installation (seconds).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
say() { printf '[build-pkg] %s\n' "$*"; }
export PATH="$HOME/.cargo/bin:$PATH"

WB_VERSION="$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' Cargo.toml)"
[ -n "$WB_VERSION" ] || { echo "cannot read the pinned wasm-bindgen version from Cargo.toml" >&2; exit 1; }
command -v wasm-pack >/dev/null || { echo "wasm-pack not found: run scripts/setup/setup.sh" >&2; exit 1; }
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" || true
[ "$have" = "$WB_VERSION" ] || { echo "wasm-bindgen $WB_VERSION needed on PATH (found '${have:-none}'): run scripts/setup/setup.sh" >&2; exit 1; }
WASM_OPT="$ROOT/tools/wasm/node_modules/.bin/wasm-opt"
if [ "${GRAMMASK_NO_WASM_OPT:-0}" != 1 ] && [ ! -x "$WASM_OPT" ]; then
  echo "$WASM_OPT not found: run scripts/setup/setup.sh (npm ci in tools/wasm)" >&2; exit 1
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

optimize() { # file level: in-place wasm-opt at that level (-O3, -Os), cached by the input's hash and level
  local f="$1" level="$2" key
  key="$(sha256sum "$f" | cut -c1-32)$level"
  if [ ! -f "$OPT_CACHE/$key.wasm" ]; then
    local t0=$SECONDS
    "$WASM_OPT" "$level" "${OPT_FEATURES[@]}" "$f" -o "$OPT_CACHE/$key.tmp"
    mv "$OPT_CACHE/$key.tmp" "$OPT_CACHE/$key.wasm"
    say "  wasm-opt $level $(basename "$(dirname "$f")")/$(basename "$f"): $((SECONDS - t0)) s"
  fi
  cp "$OPT_CACHE/$key.wasm" "$f"
}

wasm_build() { # features target outdir
  local features="$1" t="$2" out="$3" profile=wasm rf="" level=-O3
  # The full build (compiler) at opt-level "s" (profile wasm-full): 600 KiB gzip budget.
  # Its functions marked #[inline] (std's and hashbrown's generics included) are
  # inlined up to LLVM cost 50, not the default 325 (a Cargo profile cannot set
  # llvm-args), and wasm-opt runs at -Os: 21 KB gzip less at cost 100 (schema corpus
  # timings unchanged), then 4.9 KB less at 50 with -Os (mask times the same within
  # noise; docs/measurements.md). The runtime build keeps the defaults and -O3.
  # LLVM's inline threshold for the other functions is 30 (opt-level "s" uses 75): 9 KB gzip less
  # (session 14: 591,922 -> 582,911 B wasm; 40: 589,247, 20: 581,164).
  case "$features" in *compiler*) profile=wasm-full; rf=" -C llvm-args=-inlinehint-threshold=50 -C llvm-args=-inline-threshold=30"; level=-Os ;; esac
  say "wasm-pack build --profile $profile --target $t (features: $features) -> $out/"
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS$rf" wasm-pack --quiet build --profile "$profile" --mode no-install --no-pack --no-opt --target "$t" --out-dir "$ROOT/$out" --out-name grammask \
    -- --no-default-features --features "$features"
  rm -f "$out/.gitignore" "$out/package.json" "$out/README.md" "$out"/*.d.ts
  if [ "${GRAMMASK_NO_WASM_OPT:-0}" != 1 ]; then optimize "$out/grammask_bg.wasm" "$level"; fi
  [ -f "$out/grammask_bg.wasm" ] || { echo "missing $out/grammask_bg.wasm" >&2; exit 1; }
}

out=pkg
if [ "${GRAMMASK_JS_ONLY:-0}" = 1 ]; then
  # Only the JS layer changed: keep the wasm builds in pkg/ (they must exist).
  [ -f "$out/web/grammask_bg.wasm" ] && [ -f "$out/runtime/web/grammask_bg.wasm" ] || { echo "pkg/ has no wasm builds: run without GRAMMASK_JS_ONLY" >&2; exit 1; }
  say "GRAMMASK_JS_ONLY=1: reusing the wasm builds in $out/"
else
rm -rf "$out"
mkdir -p "$out/runtime"
for t in web nodejs bundler; do
  dir="$t"; [ "$t" = nodejs ] && dir=node
  wasm_build wasm,compiler "$t" "$out/$dir"
done
for t in web nodejs; do
  dir="$t"; [ "$t" = nodejs ] && dir=node
  wasm_build wasm "$t" "$out/runtime/$dir"
done
# wasm-bindgen 0.2.130 emits the same .wasm for every target (only the JS
# glue differs): ship one copy per build, in web/, and point the node and
# bundler glue at it. (Should the files ever differ, each target keeps its own.)
share_wasm() { # dir target
  local d="$1" t="$2"
  if cmp -s "$d/web/grammask_bg.wasm" "$d/$t/grammask_bg.wasm"; then
    rm "$d/$t/grammask_bg.wasm"
    if [ "$t" = node ]; then
      grep -q '`${__dirname}/grammask_bg.wasm`' "$d/node/grammask.js" || { echo "unexpected wasm-bindgen node glue" >&2; exit 1; }
      sed -i 's#`${__dirname}/grammask_bg.wasm`#`${__dirname}/../web/grammask_bg.wasm`#' "$d/node/grammask.js"
    else
      grep -q 'from "./grammask_bg.wasm"' "$d/bundler/grammask.js" || { echo "unexpected wasm-bindgen bundler glue" >&2; exit 1; }
      sed -i 's#from "./grammask_bg.wasm"#from "../web/grammask_bg.wasm"#' "$d/bundler/grammask.js"
    fi
  else
    say "note: $d/$t/grammask_bg.wasm differs from $d/web's: shipped separately"
  fi
}
share_wasm "$out" node
share_wasm "$out" bundler
share_wasm "$out/runtime" node
fi
# wasm-bindgen's nodejs output is CommonJS; the package is "type": "module".
printf '{ "type": "commonjs" }\n' > "$out/node/package.json"
printf '{ "type": "commonjs" }\n' > "$out/runtime/node/package.json"
# core.mjs is js/core.js; core.cjs is derived from it for node.cjs (Node 20
# before 20.19 cannot require() an ES module): each `export function NAME`
# becomes `function NAME`, plus `module.exports = { NAME, ... };`, and both
# forms must export the same names.
# Anything else only a module may hold (import or export statements,
# import.meta) is refused; import() works in both.
# Shipped without its whole-line comments (`//` lines and `/** … */` blocks
# that start a line): every byte of the entry counts against the gzip budget,
# and the API's documentation is index.d.ts.
node - js/core.js "$out/core.mjs" <<'JS'
const fs = require('fs');
const [src, dst] = process.argv.slice(2);
const out = [];
let inDoc = false;
for (const l of fs.readFileSync(src, 'utf8').split('\n')) {
  if (inDoc) { if (l.includes('*/')) inDoc = false; continue; }
  if (/^\s*\/\//.test(l)) continue;
  if (/^\s*\/\*\*/.test(l)) { if (!l.includes('*/')) inDoc = true; continue; }
  out.push(l);
}
fs.writeFileSync(dst, out.join('\n'));
JS
node - "$out/core.mjs" "$out/core.cjs" <<'JS'
const fs = require('fs');
const [src, dst] = process.argv.slice(2);
const s = fs.readFileSync(src, 'utf8');
const code = s.split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join('\n');
const exp = [...s.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]);
const other = code.split('\n').filter((l) => /import\.meta/.test(l) || (/^\s*(import|export)\b/.test(l) && !/^export function \w+\(/.test(l)));
if (exp.length === 0 || other.length) throw new Error(`${src}: expected only \`export function NAME(\` lines as module syntax; found ${JSON.stringify(other)}`);
fs.writeFileSync(dst, "'use strict';\n" + s.replace(/^export function (\w+)\(/gm, 'function $1(') + `\nmodule.exports = { ${exp.join(', ')} };\n`);
JS
node --input-type=module -e 'import { createRequire } from "node:module";
  const [mjs, cjs] = process.argv.slice(1);
  const a = Object.keys(await import(mjs)).sort(), b = Object.keys(createRequire(import.meta.url)(cjs)).sort();
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`core.mjs exports ${a}, core.cjs ${b}`);' "$ROOT/$out/core.mjs" "$ROOT/$out/core.cjs"
cp js/web.js js/node.mjs js/node.cjs js/bundler.js "$out/"
# The runtime entries: the same files, one folder down (core.* is shared).
for f in web.js node.mjs node.cjs; do
  sed "s#'./core.mjs'#'../core.mjs'#; s#'./core.cjs'#'../core.cjs'#" "js/$f" > "$out/runtime/$f"
done
cp js/transformers.js js/transformers.d.ts js/webgpu.d.ts js/mask.wgsl js/index.d.ts js/runtime.d.ts js/mask-bits.js "$out/"
rm -rf "$out/transformers"
mkdir -p "$out/transformers"
cp js/transformers/*.js "$out/transformers/"
# grammask/webgpu: js/mask.wgsl inlined as MASK_WGSL (the .wgsl ships too).
node -e 'const fs=require("fs");const [src,wgsl,dst]=process.argv.slice(1);
  const s=fs.readFileSync(src,"utf8"),k="/*@MASK_WGSL@*/ \x27\x27";
  if(!s.includes(k))throw new Error("MASK_WGSL placeholder missing in "+src);
  fs.writeFileSync(dst,s.replace(k,JSON.stringify(fs.readFileSync(wgsl,"utf8"))));' js/webgpu.js js/mask.wgsl "$out/webgpu.js"
# The package README is js/README.md; the docs it links to ship under docs/
# (the docs/ entries of the files whitelist, copied from docs/).
cp js/README.md "$out/README.md"
rm -rf "$out/docs"
node -e 'const fs=require("fs"),path=require("path");const [out]=process.argv.slice(1);
  for (const f of JSON.parse(fs.readFileSync("js/package.json","utf8")).files.filter((f)=>f.startsWith("docs/"))) {
    fs.mkdirSync(path.dirname(out+"/"+f),{recursive:true}); fs.copyFileSync(f,out+"/"+f); }' "$out"
# package.json: js/package.json as it is (exports map, files whitelist), its
# version checked against Cargo.toml's. Only when wasm-bindgen emitted
# different .wasm files per target (see share_wasm) are those added to files.
node - "$out" "$VERSION" <<'JS'
const fs = require('fs');
const [out, version] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync('js/package.json', 'utf8'));
if (pkg.version !== version) throw new Error(`js/package.json has version ${pkg.version}, Cargo.toml ${version}: make them equal`);
const extra = ['node', 'bundler', 'runtime/node'].map((d) => `${d}/grammask_bg.wasm`).filter((f) => fs.existsSync(`${out}/${f}`));
if (extra.length) pkg.files.splice(pkg.files.indexOf('runtime/node/package.json') + 1, 0, ...extra);
const missing = pkg.files.filter((f) => !fs.existsSync(`${out}/${f}`));
if (missing.length) throw new Error(`js/package.json lists files that ${out}/ lacks: ${missing.join(', ')}`);
fs.writeFileSync(`${out}/package.json`, JSON.stringify(pkg, null, 2) + '\n');
JS
# Sizes: what a page downloads for each entry (JS + wasm), raw and gzip -9.
node - "$out" <<'JS' > out/npm/grammask.size.json
const fs = require('fs'), zlib = require('zlib');
const [out] = process.argv.slice(2);
const entry = (files) => {
  let raw = 0, gzip = 0;
  for (const f of files) { const b = fs.readFileSync(`${out}/${f}`); raw += b.length; gzip += zlib.gzipSync(b, { level: 9 }).length; }
  return { files, raw, gzip };
};
const wasm = (f) => { const b = fs.readFileSync(`${out}/${f}`); return { raw: b.length, gzip: zlib.gzipSync(b, { level: 9 }).length }; };
console.log(JSON.stringify({
  web: entry(['web.js', 'core.mjs', 'web/grammask.js', 'web/grammask_bg.wasm']),
  runtimeWeb: entry(['runtime/web.js', 'core.mjs', 'runtime/web/grammask.js', 'runtime/web/grammask_bg.wasm']),
  wasm: wasm('web/grammask_bg.wasm'),
  runtimeWasm: wasm('runtime/web/grammask_bg.wasm'),
}, null, 1));
JS
tgz="$(cd "$out" && npm pack --silent --pack-destination "$ROOT/out/npm" | tail -n1)"
node -e 'const fs=require("fs");const [f,t]=process.argv.slice(1);const j=JSON.parse(fs.readFileSync(f));j.tarball={file:t,bytes:fs.statSync("out/npm/"+t).size};fs.writeFileSync(f,JSON.stringify(j,null,1)+"\n")' out/npm/grammask.size.json "$tgz"
say "sizes (raw / gzip -9): $(node -e 'const j=require(process.argv[1]);const f=(e)=>e.raw+" / "+e.gzip;console.log("web entry "+f(j.web)+"; runtime web entry "+f(j.runtimeWeb)+"; tarball "+j.tarball.bytes)' "$ROOT/out/npm/grammask.size.json")"
rm -rf pkg-tests/node_modules/grammask pkg-tests/node_modules/grammask-compiler
mkdir -p pkg-tests/node_modules/grammask
tar -xzf "out/npm/$tgz" -C pkg-tests/node_modules/grammask --strip-components=1
say "packed out/npm/$tgz, installed into pkg-tests/node_modules/grammask"
say "done"
