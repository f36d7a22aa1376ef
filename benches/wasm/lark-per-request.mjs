// Lark grammars compiled per request in wasm (issue 20): for each grammar,
// compile(vocab, {type: 'lark', grammar}) + the first mask (timed together),
// then random walks through the masks with every mask timed, and after each
// commit a prefetch(4) as the transformers.js processor does (the npm package
// in Node, Llama-3; a walk ends at EOS-only, a dead end or --tokens).
//   node benches/wasm/lark-per-request.mjs [--walks 3] [--tokens 200] GRAMMAR.lark...
// Default grammars: the syncode C, Go, Java, SQL and Python grammars
// (grammars/thirdparty/, fetched by scripts/setup/setup.sh).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); if (i < 0) return dflt; const v = args[i + 1]; args.splice(i, 2); return Number(v); };
const walks = opt('--walks', 3), maxTokens = opt('--tokens', 200);
const files = args.length ? args : ['c', 'go', 'java', 'sql', 'python'].map((g) => path.join(ROOT, `grammars/thirdparty/syncode/${g}.lark`));
const { PreparedVocab, compile, Matcher } = await import('grammask');
const tok = fs.readFileSync(path.join(ROOT, 'models/llama3/tokenizer.json'), 'utf8');
const vocab = PreparedVocab.fromTokenizerJson(tok, { eosTokenIds: [128001] });
vocab.prepare(); // the token trie, once per tokenizer (not timed)
let seed = 0x2545f491;
const rand = (n) => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) % n; };
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.round((s.length - 1) * p))]; };
const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(1)} ms` : `${(ms * 1e3).toFixed(0)} µs`);
console.log('| grammar | compile + first mask | masks | mask p50 | p99 | max | longest prefetch(4 ms) | deferred positions left |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const f of files) {
  const grammar = fs.readFileSync(f, 'utf8');
  const t0 = performance.now();
  let store;
  try {
    store = compile(vocab, { type: 'lark', grammar });
  } catch (e) {
    console.log(`| ${path.basename(f)} | refused: ${String(e.message).slice(0, 80)} | | | | | | |`);
    continue;
  }
  const first = new Matcher(store);
  const mask = new Uint32Array(first.maskWords);
  first.fillMask(mask);
  const firstMs = performance.now() - t0;
  first.free();
  const times = [];
  let pending = false, prefetchMax = 0;
  for (let w = 0; w < walks; w++) {
    const m = new Matcher(store);
    for (let k = 0; k < maxTokens; k++) {
      const a = performance.now();
      m.fillMask(mask);
      times.push(performance.now() - a);
      const allowed = [];
      for (let i = 0; i < mask.length; i++) for (let b = mask[i]; b; b &= b - 1) allowed.push(i * 32 + 31 - Math.clz32(b & -b));
      const choices = allowed.filter((t) => t !== 128001);
      if (!choices.length) break;
      // Alternate any allowed token and a short one, so structures close.
      const short = k % 2 ? choices.filter((t) => store.tokenBytes(t).length <= 2) : [];
      const pool = short.length ? short : choices;
      m.commitToken(pool[rand(pool.length)]);
      // Idle time, as the transformers.js processor spends it (4 ms).
      const p = performance.now();
      m.prefetch(4);
      prefetchMax = Math.max(prefetchMax, performance.now() - p);
    }
    pending = m.prefetch(0);
    m.free();
  }
  console.log(`| ${path.basename(path.dirname(f))}/${path.basename(f)} | ${fmt(firstMs)} | ${times.length} | ${fmt(pct(times, 0.5))} | ${fmt(pct(times, 0.99))} | ${fmt(Math.max(...times))} | ${fmt(prefetchMax)} | ${pending ? 'yes' : 'no'} |`);
  store.free();
}
