#!/usr/bin/env bash
# Assemble the demo page (www/dist/) and the Cloudflare Worker's inputs
# (www/worker/vendor/) from the built packages (scripts/build/build-pkg.sh) and
# blobs in out/. Needs www/node_modules (scripts/setup/setup.sh) for transformers.js
# and onnxruntime-web's wasm. Idempotent and quick (copies only).
#   www/dist/           index.html, app.js, worker.js (the engine, a module Web Worker),
#                       vendor/ (transformers.js, onnxruntime-web wasm),
#                       grammask/ (the web build + grammask/transformers, importing ./web.js,
#                       and mask-bits.js),
#                       grammars/*.lark, blobs/*.gmask + blobs.json (prebuilt stores)
#   www/worker/vendor/  grammask web build (with the compiler: POST /mask compiles schemas)
#                       and its mask-bits.js
#                       + store.gmask (WORKER_BLOB, default out/json-llama3.gmask)
# Blobs: out/<grammar>-<tokenizer>.gmask for json and python × llama3, and ×
# smollm2-135m-instruct when that model was built (compiled by run.sh / the
# tests; compiled here with the CLI if missing: GRAMMASK_BIN or target/release).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
say() { printf '[build-www] %s\n' "$*"; }
[ -f pkg/web.js ] && [ -f pkg/web/grammask_bg.wasm ] || { echo "pkg/ missing: run scripts/build/build-pkg.sh" >&2; exit 1; }
TF=www/node_modules/@huggingface/transformers/dist/transformers.js
ORT=www/node_modules/onnxruntime-web/dist
[ -f "$TF" ] || { echo "$TF missing: run scripts/setup/setup.sh" >&2; exit 1; }
BIN="${GRAMMASK_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/grammask}"
[ -x "$BIN" ] || BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/grammask"
mkdir -p out
TOKS=(llama3)
[ -f models/smollm2-135m-instruct/tokenizer.json ] && TOKS+=(smollm2-135m-instruct)
for t in "${TOKS[@]}"; do
  for g in json python; do
    if [ ! -f "out/$g-$t.gmask" ]; then
      [ -x "$BIN" ] || cargo build --release --bin grammask
      say "compiling out/$g-$t.gmask"
      "$BIN" compile --grammar "grammars/$g.lark" --tokenizer "models/$t/tokenizer.json" -o "out/$g-$t.gmask"
    fi
  done
done

D=www/dist
rm -rf "$D"
mkdir -p "$D/vendor" "$D/grammars" "$D/blobs"
cp www/src/index.html www/src/app.js www/src/worker.js "$D/"
cp "$TF" "$D/vendor/transformers.js"
cp "$ORT/ort-wasm-simd-threaded.asyncify.mjs" "$ORT/ort-wasm-simd-threaded.asyncify.wasm" "$D/vendor/"
mkdir -p "$D/grammask/web"
cp pkg/web.js pkg/core.mjs pkg/webgpu.js pkg/transformers.js pkg/mask-bits.js "$D/grammask/"
cp pkg/web/grammask.js pkg/web/grammask_bg.wasm "$D/grammask/web/"
mkdir -p "$D/grammask/transformers"
cp pkg/transformers/*.js "$D/grammask/transformers/"
# Module workers have no import maps: the adapter imports the web entry by
# path (its one import of the package is transformers/grammask.js).
sed "s#from 'grammask';#from '../web.js';#" pkg/transformers/grammask.js > "$D/grammask/transformers/grammask.js"
grep -q "from '../web.js';" "$D/grammask/transformers/grammask.js" || { echo "cannot rewrite the import of grammask/transformers" >&2; exit 1; }
! grep -l "from 'grammask'" "$D"/grammask/*.js "$D"/grammask/transformers/*.js || { echo "another import of 'grammask' in the adapter" >&2; exit 1; }
cp grammars/json.lark grammars/python.lark "$D/grammars/"
# Prebuilt blobs, indexed by tokenizer fingerprint (the page compiles in the
# browser when none matches the chosen model's tokenizer).
node --input-type=module - "$D" "${TOKS[@]}" <<'JS'
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(path.resolve('pkg-tests/package.json'));
const { MaskStore } = require('grammask');
const [dist, ...toks] = process.argv.slice(2);
const list = [];
for (const t of toks) {
  for (const g of ['json', 'python']) {
    const file = `out/${g}-${t}.gmask`;
    const s = MaskStore.fromBytes(fs.readFileSync(file));
    const name = `${g}-${s.tokenizerFingerprint}.gmask`;
    fs.copyFileSync(file, path.join(dist, 'blobs', name));
    list.push({ grammar: g, tokenizerFingerprint: s.tokenizerFingerprint, file: `blobs/${name}`, bytes: fs.statSync(file).size, tokenizer: t });
    s.free();
  }
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
cp pkg/web.js pkg/core.mjs pkg/mask-bits.js "$W/grammask/"
cp pkg/web/grammask.js pkg/web/grammask_bg.wasm "$W/grammask/web/"
cp "${WORKER_BLOB:-out/json-llama3.gmask}" "$W/store.gmask"
say "www/dist/ ($(du -sh "$D" | cut -f1)) and www/worker/vendor/ ready"
