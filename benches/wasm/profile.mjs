// Where a wasm mask's time goes (issue 15): the same replay as bench.mjs
// (grammask only), timed at each layer of the call, in one Node process:
//   api      Matcher.fillMask (core.js: argument checks, guard, then raw)
//   raw      RawMatcher.fillMask (wasm-bindgen glue, fill, copy into `out`)
//   fill     RawMatcher.fillMaskBuffer (the fill alone: the mask stays in
//            wasm memory; no copy)
//   copy     out.set(view of wasm memory): the copy alone, in JS
//   call     a trivial wasm call (maskWords getter): the JS->wasm call cost
// Each figure is the median over runs of the p50/p99 over all masks.
//
//   node benches/wasm/profile.mjs --raw PATH/grammask.js --case LABEL:STORE:IDS_DIR [--runs 3]
//
// With `node --cpu-prof --cpu-prof-dir DIR ... --only fill` the V8 profile
// names the wasm functions (build without wasm-opt, or with -g, to keep names).
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { makeApi } from '../../js/core.js';

const args = process.argv.slice(2);
let runs = 3, rawPath = null, only = null;
const cases = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--runs') runs = Math.max(1, parseInt(args[++i], 10));
  else if (a === '--raw') rawPath = resolve(args[++i]);
  else if (a === '--only') only = args[++i];
  else if (a === '--case') {
    const [label, store, ids] = args[++i].split(':');
    cases.push({ label, store, ids });
  } else throw new Error(`unknown argument ${a}`);
}
if (!rawPath || !cases.length) throw new Error('--raw PATH/grammask.js and --case LABEL:STORE:IDS_DIR needed');
const raw = createRequire(import.meta.url)(rawPath);
const api = makeApi(raw, () => true);

const now = () => process.hrtime.bigint();
const us = (a, b) => Number(b - a) / 1e3;
const pct = (s, p) => (s.length ? s[Math.round((s.length - 1) * p)] : 0);
const median = (v) => {
  const s = [...v].sort((a, b) => a - b), n = s.length;
  return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
function readStreams(dir) {
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => Uint32Array.from(JSON.parse(readFileSync(join(dir, f), 'utf8')).ids));
}

const layers = {
  api: (m, r, buf) => m.fillMask(buf, 0),
  raw: (m, r, buf) => r.fillMask(buf, 0),
  fill: (m, r) => r.fillMaskBuffer(),
  call: (m, r) => r.maskWords,
};

for (const c of cases) {
  const bytes = new Uint8Array(readFileSync(c.store));
  const streams = readStreams(c.ids);
  const results = {};
  for (const [name, f] of Object.entries(layers)) {
    if (only && name !== only) continue;
    if (name === 'fill' && typeof raw.RawMatcher.prototype.fillMaskBuffer !== 'function') continue;
    const p50 = [], p99 = [], mean = [];
    for (let run = 0; run <= runs; run++) {
      const store = api.MaskStore.fromBytes(bytes);
      const rs = raw.RawMaskStore.fromBytes(bytes);
      const times = [];
      for (const ids of streams) {
        const m = new api.Matcher(store);
        const buf = new Uint32Array(m.maskWords);
        // A RawMatcher on a raw store of the same blob, fed the same tokens.
        const r = new raw.RawMatcher(rs);
        for (let i = 0; i <= ids.length; i++) {
          const a = now();
          f(m, r, buf);
          times.push(us(a, now()));
          if (i < ids.length) { m.commitToken(ids[i]); r.commitToken(ids[i]); }
        }
        m.free();
        r.free();
      }
      store.free();
      rs.free();
      if (run === 0) continue; // warm-up
      const s = Float64Array.from(times).sort();
      let sum = 0;
      for (const x of s) sum += x;
      p50.push(pct(s, 0.5)); p99.push(pct(s, 0.99)); mean.push(sum / s.length);
    }
    results[name] = { mean: median(mean), p50: median(p50), p99: median(p99) };
  }
  if (!only || only === 'copy') {
    // The copy alone: a view of a wasm-memory-sized buffer into `out`.
    const words = new api.Matcher(api.MaskStore.fromBytes(bytes)).maskWords;
    const src = new Uint32Array(words), out = new Uint32Array(words), t = [];
    for (let i = 0; i < 200000; i++) { const a = now(); out.set(src, 0); t.push(us(a, now())); }
    const s = Float64Array.from(t).sort();
    results.copy = { mean: NaN, p50: pct(s, 0.5), p99: pct(s, 0.99) };
  }
  const f = (x) => (Number.isNaN(x) ? '-' : x.toFixed(2));
  console.log(`${c.label}: layer  mean  p50  p99 (µs, median of ${runs} runs)`);
  for (const [k, v] of Object.entries(results)) console.log(`  ${k.padEnd(5)} ${f(v.mean)} ${f(v.p50)} ${f(v.p99)}`);
}
