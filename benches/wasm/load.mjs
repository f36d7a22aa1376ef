// Load + first mask in wasm (issue 15: <= 5 ms): blob bytes -> MaskStore.fromBytes
// -> new Matcher -> first fillMask, N times per blob; min and median.
//   node benches/wasm/load.mjs [--runtime] STORE.gmask... [--n 20]
import { readFileSync } from 'node:fs';
const args = process.argv.slice(2);
let n = 20, entry = 'grammask';
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--n') n = parseInt(args[++i], 10);
  else if (args[i] === '--runtime') entry = 'grammask/runtime'; // the lean build (opt-level 2, no compiler)
  else files.push(args[i]);
}
const { MaskStore, Matcher } = await import(entry);
console.log(`entry: ${entry}`);
const ms = (a, b) => Number(b - a) / 1e6;
for (const f of files) {
  const bytes = new Uint8Array(readFileSync(f));
  const load = [], first = [];
  for (let i = 0; i <= n; i++) {
    const t0 = process.hrtime.bigint();
    const s = MaskStore.fromBytes(bytes);
    const t1 = process.hrtime.bigint();
    const m = new Matcher(s);
    m.fillMask(new Uint32Array(m.maskWords));
    const t2 = process.hrtime.bigint();
    m.free(); s.free();
    if (i > 0) { load.push(ms(t0, t1)); first.push(ms(t0, t2)); }
  }
  load.sort((a, b) => a - b); first.sort((a, b) => a - b);
  console.log(`${f}: ${bytes.length} B; load min ${load[0].toFixed(2)} ms median ${load[n >> 1].toFixed(2)} ms; load + first mask min ${first[0].toFixed(2)} ms median ${first[n >> 1].toFixed(2)} ms`);
}
