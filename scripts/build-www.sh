#!/usr/bin/env bash
# Assemble the demo page (www/dist/) and the Cloudflare Worker's inputs
# (www/worker/vendor/) from the built packages (scripts/build-pkg.sh) and
# blobs in out/. Needs www/node_modules (scripts/setup.sh) for transformers.js
# and onnxruntime-web's wasm. Idempotent and quick (copies only).
#   www/dist/           index.html, app.js, vendor/ (transformers.js, ort wasm),
#                       grammask/ + grammask-compiler/ (web builds + adapters),
#                       grammars/*.lark, blobs/*.gmask + blobs.json (prebuilt stores)
#   www/worker/vendor/  grammask web build + store.gmask (WORKER_BLOB, default out/json-llama3.gmask)
# Blobs: out/<grammar>-llama3.gmask for json and python (compiled by run.sh /
# the tests; compiled here with the CLI if missing: GRAMMASK_BIN or target/release).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf '[build-www] %s\n' "$*"; }
[ -f pkg/web.js ] && [ -f pkg-compiler/web.js ] || { echo "pkg/ or pkg-compiler/ missing: run scripts/build-pkg.sh" >&2; exit 1; }
TF=www/node_modules/@huggingface/transformers/dist/transformers.js
ORT=www/node_modules/onnxruntime-web/dist
[ -f "$TF" ] || { echo "$TF missing: run scripts/setup.sh" >&2; exit 1; }
BIN="${GRAMMASK_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/grammask}"
[ -x "$BIN" ] || BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/grammask"
mkdir -p out
for g in json python; do
  if [ ! -f "out/$g-llama3.gmask" ]; then
    [ -x "$BIN" ] || cargo build --release --bin grammask
    say "compiling out/$g-llama3.gmask"
    "$BIN" compile --grammar "grammars/$g.lark" --tokenizer models/llama3/tokenizer.json -o "out/$g-llama3.gmask"
  fi
done

D=www/dist
rm -rf "$D"
mkdir -p "$D/vendor" "$D/grammars" "$D/blobs"
cp www/src/index.html www/src/app.js "$D/"
cp "$TF" "$D/vendor/transformers.js"
cp "$ORT/ort-wasm-simd-threaded.asyncify.mjs" "$ORT/ort-wasm-simd-threaded.asyncify.wasm" "$D/vendor/"
for p in pkg pkg-compiler; do
  n=grammask; [ "$p" = pkg-compiler ] && n=grammask-compiler
  mkdir -p "$D/$n/web"
  cp "$p/web.js" "$p/core.mjs" "$p/transformers.js" "$p/webgpu.js" "$D/$n/"
  cp "$p/web/grammask.js" "$p/web/grammask_bg.wasm" "$D/$n/web/"
done
cp grammars/json.lark grammars/python.lark "$D/grammars/"
# Prebuilt blobs, indexed by tokenizer fingerprint (the page compiles in the
# browser when none matches the chosen model's tokenizer).
node --input-type=module - "$D" <<'JS'
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(path.resolve('pkg-tests/package.json'));
const { MaskStore } = require('grammask');
const [dist] = process.argv.slice(2);
const list = [];
for (const g of ['json', 'python']) {
  const file = `out/${g}-llama3.gmask`;
  const s = MaskStore.fromBytes(fs.readFileSync(file));
  const name = `${g}-${s.tokenizerFingerprint}.gmask`;
  fs.copyFileSync(file, path.join(dist, 'blobs', name));
  list.push({ grammar: g, tokenizerFingerprint: s.tokenizerFingerprint, file: `blobs/${name}`, bytes: fs.statSync(file).size, tokenizer: 'llama3' });
  s.free();
}
fs.writeFileSync(path.join(dist, 'blobs.json'), JSON.stringify(list, null, 1) + '\n');
// Local models (served from models/ by www/serve.mjs): folders with onnx/model.onnx.
const models = fs.existsSync('models') ? fs.readdirSync('models').filter((m) => fs.existsSync(path.join('models', m, 'onnx/model.onnx'))) : [];
fs.writeFileSync(path.join(dist, 'models.json'), JSON.stringify(models) + '\n');
console.log(`[build-www] blobs: ${list.map((b) => b.file).join(', ')}; local models: ${models.join(', ') || 'none'}`);
JS

W=www/worker/vendor
rm -rf "$W"
mkdir -p "$W/grammask/web"
cp pkg/web.js pkg/core.mjs "$W/grammask/"
cp pkg/web/grammask.js pkg/web/grammask_bg.wasm "$W/grammask/web/"
cp "${WORKER_BLOB:-out/json-llama3.gmask}" "$W/store.gmask"
say "www/dist/ ($(du -sh "$D" | cut -f1)) and www/worker/vendor/ ready"
