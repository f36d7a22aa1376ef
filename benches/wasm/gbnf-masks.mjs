// GBNF grammars on the general (Earley) parser, compiled per request in wasm
// (issue 23, with issue 20's per-request budgets): for each grammar and each
// workload text, compile(vocab, {type: 'gbnf', grammar}) + the first mask
// (timed together), then the text teacher-forced token by token (Llama-3,
// encoded by transformers.js) with every mask timed. The wasm twin of
// `examples/grammar_masks` (docs/gbnf.md, "Speed of the general parser").
//   cd benches && node wasm/gbnf-masks.mjs   (after benches/setup.sh)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { PreparedVocab, compile, Matcher } = await import('grammask');
const { AutoTokenizer } = await import('@huggingface/transformers');
const dir = path.join(ROOT, 'models/llama3');
const vocab = PreparedVocab.fromTokenizerJson(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'), { eosTokenIds: [128001] });
vocab.prepare(); // the token trie, once per tokenizer (not timed)
const tok = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
const W = path.join(ROOT, 'benches/workloads/gbnf');
const pct = (v, p) => v[Math.min(v.length - 1, Math.round((v.length - 1) * p))];
const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(1)} ms` : `${(ms * 1e3).toFixed(0)} µs`);
console.log('| grammar × texts | compile + first mask (per text) | masks | mask p50 | p99 | max |');
console.log('|---|---|---:|---:|---:|---:|');
for (const [g, re] of [['c', /^c_.*\.c$/], ['arithmetic', /^arith_.*\.txt$/]]) {
  const grammar = fs.readFileSync(path.join(ROOT, `grammars/gbnf/llama.cpp/${g}.gbnf`), 'utf8');
  const files = fs.readdirSync(W).filter((f) => re.test(f)).sort();
  const times = [], firsts = [];
  for (const f of files) {
    const ids = Array.from(tok.encode(fs.readFileSync(path.join(W, f), 'utf8'), { add_special_tokens: false }));
    const t0 = performance.now();
    const store = compile(vocab, { type: 'gbnf', grammar });
    const m = new Matcher(store);
    const w = new Uint32Array(m.maskWords);
    m.fillMask(w);
    firsts.push(performance.now() - t0);
    for (const id of ids) {
      if (!((w[id >>> 5] >>> (id & 31)) & 1)) throw new Error(`${f}: token ${id} refused`);
      m.commitToken(id);
      const a = performance.now();
      m.fillMask(w);
      times.push(performance.now() - a);
    }
    m.free();
    store.free();
  }
  times.sort((a, b) => a - b);
  console.log(`| ${g}.gbnf × ${files.length} | ${firsts.map(fmt).join(', ')} | ${times.length} | ${fmt(pct(times, 0.5))} | ${fmt(pct(times, 0.99))} | ${fmt(times.at(-1))} |`);
}
