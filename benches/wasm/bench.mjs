// Wasm benchmark (issue 8, wasm part): the npm package `grammask` (Node, wasm)
// vs `@mlc-ai/web-xgrammar` (Emscripten wasm) in the same process, on the same
// token id streams (written by `grammask bench --dump-ids DIR`: `{file, ids}`).
// Run by benches/wasm/run.sh (which builds what it needs, benches/setup.sh
// included).
//
//   node benches/wasm/bench.mjs [--runs 3] [--json FILE] \
//     --case LABEL:STORE.gmask:IDS_DIR[:TOKENIZER.json] ...
//
// A case with a tokenizer also runs web-xgrammar's builtin JSON grammar on it.
//
// grammask, per stream: new Matcher, then for every token `fillMask` into one
// reused Uint32Array (timed) and `commitToken` (timed), plus the final mask.
// Time to first mask: blob bytes -> MaskStore.fromBytes -> new Matcher -> first
// fillMask (the wasm module is instantiated at import, outside this figure).
// web-xgrammar 0.1.27 has no fill-into-buffer call: its public mask API is
// `await matcher.getNextTokenBitmask()` (a fresh Int32Array per call), timed
// per token with `acceptToken`. Row "web-xgrammar (C++ only)" times the same
// mask computation through the binding handle without the copy into JS and the
// await (`handle.GetNextTokenBitmask(n)` then `.delete()` of the vector): a
// lower bound for xgrammar. Time to first mask: encoded vocab strings ->
// TokenizerInfo -> GrammarCompiler (cache off) -> builtin JSON grammar ->
// matcher -> first mask (binding instantiated beforehand, as for grammask).
// xgrammar's builtin JSON rejects whitespace around the top-level value; a
// rejected token ends that stream for xgrammar (as benches/peers/peers.py does), and
// acceptance is reported as accepted/total tokens.
//
// Statistics over all masks of all streams of one run; every figure is the
// median over runs (nearest-rank percentiles, as `grammask bench`).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const now = () => process.hrtime.bigint();
const us = (a, b) => Number(b - a) / 1e3;

// ------------------------------------------------------------------ args
const args = process.argv.slice(2);
let runs = 3, jsonOut = null;
const cases = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--runs') runs = Math.max(1, parseInt(args[++i], 10));
  else if (a === '--json') jsonOut = args[++i];
  else if (a === '--case') {
    const [label, store, ids, tokenizer] = args[++i].split(':');
    if (!label || !store || !ids) throw new Error(`--case LABEL:STORE:IDS_DIR[:TOKENIZER], got ${args[i]}`);
    cases.push({ label, store, ids, tokenizer });
  } else throw new Error(`unknown argument ${a}`);
}
if (!cases.length) throw new Error('no --case given');

// ------------------------------------------------------------------ modules
let t = now();
const { MaskStore, Matcher } = await import('grammask');
const gmInitMs = us(t, now()) / 1e3;
const require = createRequire(join(here, 'package.json'));
t = now();
const xgr = loadUmd(require.resolve('@mlc-ai/web-xgrammar'));
await xgr.Grammar.builtinJSONGrammar(); // instantiates the Emscripten module
const xgInitMs = us(t, now()) / 1e3;

// ------------------------------------------------------------------ helpers
/**
 * web-xgrammar 0.1.27 ships a UMD/CommonJS bundle (it calls `require`) inside a
 * `"type": "module"` package, so Node can neither import nor require it; it is
 * evaluated here as the CommonJS module it is.
 */
function loadUmd(path) {
  const module = { exports: {} };
  const fn = new Function('exports', 'module', 'require', '__filename', '__dirname', readFileSync(path, 'utf8'));
  fn.call(module.exports, module.exports, module, createRequire(path), path, dirname(path));
  return module.exports;
}
const pct = (sorted, p) => (sorted.length ? sorted[Math.round((sorted.length - 1) * p)] : 0);
const median = (v) => {
  const s = [...v].sort((a, b) => a - b), n = s.length;
  return n === 0 ? 0 : n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
function stats(times) {
  const s = Float64Array.from(times).sort();
  let sum = 0;
  for (const x of s) sum += x;
  let over1ms = 0;
  for (const x of s) if (x > 1000) over1ms++;
  return { mean: sum / Math.max(1, s.length), p50: pct(s, 0.5), p90: pct(s, 0.9), p99: pct(s, 0.99), p999: pct(s, 0.999), max: pct(s, 1), over1ms };
}
function readStreams(dir) {
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => {
    const v = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    return { name: v.file ?? f, ids: Uint32Array.from(v.ids) };
  });
}
/** Encoded vocab (strings by id) and EOS ids from tokenizer.json, as benches/peers/peers.py builds them. */
function encodedVocab(tokPath) {
  const tj = JSON.parse(readFileSync(tokPath, 'utf8'));
  const vocab = new Map(Object.entries(tj.model.vocab));
  for (const t of tj.added_tokens ?? []) vocab.set(t.content, t.id);
  let n = 0;
  for (const id of vocab.values()) n = Math.max(n, id + 1);
  const enc = new Array(n).fill('');
  for (const [s, id] of vocab) enc[id] = s;
  let eos = [];
  try {
    let e = JSON.parse(readFileSync(join(dirname(tokPath), 'tokenizer_config.json'), 'utf8')).eos_token;
    if (e && typeof e === 'object') e = e.content;
    const id = (tj.added_tokens ?? []).find((t) => t.content === e)?.id;
    if (id !== undefined) eos = [id];
  } catch { /* no tokenizer_config.json: xgrammar's defaults */ }
  return { enc, n, eos };
}

// ------------------------------------------------------------------ engines
function grammaskRun(bytes, streams) {
  const t0 = now();
  const store = MaskStore.fromBytes(bytes);
  const tl = now();
  const m0 = new Matcher(store);
  const buf = new Uint32Array(m0.maskWords);
  m0.fillMask(buf, 0);
  const t1 = now();
  m0.free();
  const mask = [], commit = [], rejected = [];
  let accepted = 0, total = 0;
  for (const s of streams) {
    const m = new Matcher(store);
    total += s.ids.length;
    for (let i = 0; i < s.ids.length; i++) {
      const id = s.ids[i];
      let a = now();
      m.fillMask(buf, 0);
      let b = now();
      mask.push(us(a, b));
      let ok = true;
      a = now();
      try { m.commitToken(id); } catch (e) { ok = false; rejected.push(`${s.name}: token #${i} (id ${id}): ${e.message}`); }
      b = now();
      commit.push(us(a, b));
      if (!ok) break;
      accepted++;
    }
    const a = now();
    m.fillMask(buf, 0);
    mask.push(us(a, now()));
    m.free();
  }
  store.free();
  return { load: us(t0, tl), ttfm: us(t0, t1), mask, commit, accepted, total, rejected };
}

async function xgrammarRun(vocab, streams, cppOnly) {
  const t0 = now();
  const info = await xgr.TokenizerInfo.createTokenizerInfo(vocab.enc, 'byte_level', false, vocab.n, vocab.eos.length ? vocab.eos : undefined);
  const compiler = await xgr.GrammarCompiler.createGrammarCompiler(info, false);
  const compiled = await compiler.compileBuiltinJSONGrammar();
  const tc = now();
  const m0 = await xgr.GrammarMatcher.createGrammarMatcher(compiled);
  await m0.getNextTokenBitmask();
  const t1 = now();
  m0.dispose();
  const mask = [], commit = [], rejected = [];
  let accepted = 0, total = 0;
  for (const s of streams) {
    const m = await xgr.GrammarMatcher.createGrammarMatcher(compiled);
    const h = m.handle;
    total += s.ids.length;
    const fill = async () => {
      if (cppOnly) {
        const a = now();
        h.GetNextTokenBitmask(vocab.n).delete();
        mask.push(us(a, now()));
        return null;
      }
      const a = now();
      const bm = await m.getNextTokenBitmask();
      mask.push(us(a, now()));
      return bm;
    };
    for (let i = 0; i < s.ids.length; i++) {
      const id = s.ids[i];
      const bm = await fill();
      const a = now();
      const ok = m.acceptToken(id);
      commit.push(us(a, now()));
      if (!ok) {
        const inMask = bm ? ((bm[id >> 5] >>> (id & 31)) & 1) === 1 : null;
        rejected.push(`${s.name}: token #${i} (id ${id} ${JSON.stringify(vocab.enc[id])}, in mask: ${inMask})`);
        break;
      }
      accepted++;
    }
    await fill();
    m.dispose();
  }
  compiled.dispose();
  compiler.dispose();
  info.dispose();
  return { load: us(t0, tc), ttfm: us(t0, t1), mask, commit, accepted, total, rejected };
}

function summarize(engine, c, rs) {
  const per = rs.map((r) => ({ ...stats(r.mask), commit: stats(r.commit).mean, load: r.load, ttfm: r.ttfm }));
  const med = (k) => median(per.map((p) => p[k]));
  const last = rs[rs.length - 1];
  // Per mask, its fastest time over the runs (the runs replay the same masks
  // in the same order): a tail figure that preemption on a busy machine
  // moves much less than the per-run percentiles.
  const n = Math.min(...rs.map((r) => r.mask.length));
  const fastest = stats(Array.from({ length: n }, (_, i) => Math.min(...rs.map((r) => r.mask[i]))));
  return {
    fastest: { p50: fastest.p50, p90: fastest.p90, p99: fastest.p99, p999: fastest.p999, max: fastest.max, over1ms: fastest.over1ms },
    case: c.label, engine, runs: rs.length, masks: last.mask.length, accepted: last.accepted, total: last.total,
    mean: med('mean'), p50: med('p50'), p90: med('p90'), p99: med('p99'), p999: med('p999'), max: med('max'), over1ms: med('over1ms'),
    commit: med('commit'), load: med('load'), ttfm: med('ttfm'), rejected: last.rejected.slice(0, 20),
    rejectedCount: last.rejected.length,
  };
}

// ------------------------------------------------------------------ main
const results = [];
for (const c of cases) {
  const bytes = new Uint8Array(readFileSync(c.store));
  const streams = readStreams(c.ids);
  const ntok = streams.reduce((a, s) => a + s.ids.length, 0);
  console.error(`[bench-wasm] ${c.label}: ${streams.length} streams, ${ntok} tokens, blob ${bytes.length} B`);
  grammaskRun(bytes, streams); // warm-up (JIT, wasm memory growth)
  const g = [];
  for (let r = 0; r < runs; r++) g.push(grammaskRun(bytes, streams));
  results.push({ ...summarize('grammask', c, g), blob: bytes.length });
  if (c.tokenizer) {
    const vocab = encodedVocab(c.tokenizer);
    for (const cppOnly of [false, true]) {
      const name = cppOnly ? 'web-xgrammar (C++ only)' : 'web-xgrammar';
      await xgrammarRun(vocab, streams.slice(0, 2), cppOnly); // warm-up
      const x = [];
      for (let r = 0; r < runs; r++) x.push(await xgrammarRun(vocab, streams, cppOnly));
      results.push(summarize(name, c, x));
    }
  }
}

// ------------------------------------------------------------------ sizes
function wasmSizes() {
  // The package ships one wasm per build, in web/ (the node glue points there).
  const dir = dirname(createRequire(import.meta.url).resolve('grammask'));
  const gmWasm = readFileSync(['web/grammask_bg.wasm', 'node/grammask_bg.wasm'].map((f) => join(dir, f)).find((f) => existsSync(f)));
  const xgJs = readFileSync(require.resolve('@mlc-ai/web-xgrammar'));
  const m = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/.exec(xgJs.toString('latin1'));
  const xgWasm = m ? Buffer.from(m[1], 'base64') : Buffer.alloc(0);
  const gz = (b) => gzipSync(b, { level: 9 }).length;
  return {
    grammask: { wasm: gmWasm.length, wasmGz: gz(gmWasm) },
    xgrammar: { wasm: xgWasm.length, wasmGz: gz(xgWasm), js: xgJs.length, jsGz: gz(xgJs) },
  };
}
const sizes = wasmSizes();

// ------------------------------------------------------------------ table
const f = (x) => (x >= 1000 ? `${(x / 1000).toFixed(x >= 10000 ? 1 : 2)} ms` : `${x.toFixed(x >= 100 ? 0 : 1)} µs`);
const head = ['case', 'engine', 'tokens acc./total', 'load / 1st mask', 'mean', 'p50', 'p90', 'p99', 'p99.9', 'max', '> 1 ms', 'commit mean'];
const rows = results.map((r) => [r.case, r.engine, `${r.accepted}/${r.total}`, `${f(r.load)} / ${f(r.ttfm)}`,
  f(r.mean), f(r.p50), f(r.p90), f(r.p99), f(r.p999), f(r.max), String(r.over1ms), f(r.commit)]);
const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r) => `| ${r.map((c, i) => c.padEnd(w[i])).join(' | ')} |`;
const out = [line(head), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.map(line)];
out.push('', `wasm sizes: grammask grammask_bg.wasm ${sizes.grammask.wasm} B (gzip -9 ${sizes.grammask.wasmGz} B); ` +
  `web-xgrammar wasm (base64 inside lib/index.js) ${sizes.xgrammar.wasm} B (gzip -9 ${sizes.xgrammar.wasmGz} B), ` +
  `lib/index.js ${sizes.xgrammar.js} B (gzip -9 ${sizes.xgrammar.jsGz} B)`);
out.push(`module init: grammask import ${gmInitMs.toFixed(1)} ms; web-xgrammar binding ${xgInitMs.toFixed(1)} ms (outside "1st mask")`);
out.push(`node ${process.version}; ${runs} runs + 1 warm-up; figures are medians over runs`);
for (const r of results) {
  const x = r.fastest;
  out.push(`${r.case} ${r.engine}, each mask's fastest of ${r.runs} runs: p50 ${f(x.p50)}, p90 ${f(x.p90)}, p99 ${f(x.p99)}, p99.9 ${f(x.p999)}, max ${f(x.max)}, > 1 ms ${x.over1ms}`);
}
for (const r of results) {
  if (r.rejectedCount) out.push(`rejected by ${r.engine} (${r.case}): ${r.rejectedCount} streams, e.g. ${r.rejected.slice(0, 3).join('; ')}`);
}
console.log(out.join('\n'));
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ results, sizes, gmInitMs, xgInitMs, node: process.version, runs }, null, 2) + '\n');
