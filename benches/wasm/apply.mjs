// applyMask cost (issue 15): masking a model's float32 logits with a grammask
// mask, per step, in Node. Masks are real: every MASK_STEP-th mask of the
// replay of each case's token streams (as bench.mjs). Variants:
//   js        grammask/transformers applyMask (plain JS, what the processor
//             uses): runs of empty words filled at once, full words skipped,
//             only the cleared ids of mixed words written
//   bit-loop  the previous applyMask (a test of all 32 bits of every mixed
//             word), for comparison
// A wasm simd128 apply was measured too (issue 15) and lost: copying 128,256
// float32 into wasm memory and back alone takes about as long as the whole
// JS apply (see docs/measurements.md).
// Every variant must give the same logits (checked) and the same count.
//
//   node benches/wasm/apply.mjs --case LABEL:STORE:IDS_DIR [--width 128256] [--runs 3]
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MaskStore, Matcher } from 'grammask';
import * as tf from 'grammask/transformers';

const args = process.argv.slice(2);
let runs = 3, width = 128256, step = 7;
const cases = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--runs') runs = Math.max(1, parseInt(args[++i], 10));
  else if (a === '--width') width = parseInt(args[++i], 10);
  else if (a === '--step') step = parseInt(args[++i], 10);
  else if (a === '--case') { const [label, store, ids] = args[++i].split(':'); cases.push({ label, store, ids }); }
  else throw new Error(`unknown argument ${a}`);
}
const now = () => process.hrtime.bigint();
const us = (a, b) => Number(b - a) / 1e3;
const pct = (s, p) => s[Math.round((s.length - 1) * p)];
const median = (v) => { const s = [...v].sort((a, b) => a - b), n = s.length; return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2; };

function bitLoop(logits, mask) {
  const neg = -Infinity, n = logits.length, full = Math.min(mask.length, n >>> 5);
  let allowed = 0;
  for (let w = 0; w < full; w++) {
    const bits = mask[w], base = w << 5;
    if (bits === 0xffffffff) { allowed += 32; continue; }
    if (bits === 0) { logits.fill(neg, base, base + 32); continue; }
    for (let b = 0; b < 32; b++) {
      if ((bits >>> b) & 1) allowed++;
      else logits[base + b] = neg;
    }
  }
  for (let i = full << 5; i < n; i++) {
    const w = i >>> 5;
    if (w < mask.length && (mask[w] >>> (i & 31)) & 1) allowed++;
    else logits[i] = neg;
  }
  return allowed;
}
const variants = { js: tf.applyMask, 'bit-loop': bitLoop };

const template = new Float32Array(width);
for (let i = 0; i < width; i++) template[i] = Math.sin(i * 12.9898) * 10;

for (const c of cases) {
  const store = MaskStore.fromBytes(new Uint8Array(readFileSync(c.store)));
  const masks = [];
  for (const f of readdirSync(c.ids).filter((f) => f.endsWith('.json')).sort()) {
    const ids = JSON.parse(readFileSync(join(c.ids, f), 'utf8')).ids;
    const m = new Matcher(store, { maskWidth: width });
    for (let i = 0; i <= ids.length; i++) {
      if (i % step === 0) masks.push(m.fillMask(new Uint32Array(m.maskWords)));
      if (i < ids.length) m.commitToken(ids[i]);
    }
    m.free();
  }
  store.free();
  // Same result from every variant, on every mask.
  const ref = new Float32Array(width), got = new Float32Array(width);
  for (const mask of masks) {
    ref.set(template);
    const n0 = tf.applyMask(ref, mask);
    for (const [name, f] of Object.entries(variants)) {
      got.set(template);
      const n1 = f(got, mask);
      if (n1 !== n0) throw new Error(`${name}: ${n1} allowed, js says ${n0}`);
      for (let i = 0; i < width; i++) if (!Object.is(got[i], ref[i])) throw new Error(`${name}: logit ${i} differs`);
    }
  }
  const logits = new Float32Array(width);
  console.log(`${c.label}: ${masks.length} masks, ${width} float32 logits; µs per applyMask, median of ${runs} runs (+1 warm-up)`);
  for (const [name, f] of Object.entries(variants)) {
    const r = { mean: [], p50: [], p99: [], max: [] };
    for (let run = 0; run <= runs; run++) {
      const t = [];
      for (const mask of masks) {
        logits.set(template);
        const a = now();
        f(logits, mask);
        t.push(us(a, now()));
      }
      if (run === 0) continue;
      const s = Float64Array.from(t).sort();
      r.mean.push(s.reduce((x, y) => x + y, 0) / s.length); r.p50.push(pct(s, 0.5)); r.p99.push(pct(s, 0.99)); r.max.push(pct(s, 1));
    }
    console.log(`  ${name.padEnd(8)} mean ${median(r.mean).toFixed(1)}  p50 ${median(r.p50).toFixed(1)}  p99 ${median(r.p99).toFixed(1)}  max ${median(r.max).toFixed(1)}`);
  }
}
