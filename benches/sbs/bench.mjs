// Side by side in one Node process: grammask's StructuredOutputProcessor vs
// @huggingface/transformers-structured-output 4.3.0 (the same name and
// arguments), on the same schemas, the same transformers.js tokenizer and the
// same token streams (hand-written valid instances of each schema in
// pkg-tests/data/structured.json, compact and spaced, tokenized by the
// tokenizer, then EOS).
//
// Needs pkg/ installed (scripts/build/build-pkg.sh) and `bash benches/setup.sh`.
//
//   node benches/sbs/bench.mjs [--tokenizer tiny-random-llama3|smollm2-135m-instruct] [--runs 3] [--out out/sbs.md]
//
// Per engine and schema:
//  - construction: `cold` = the first processor for the tokenizer in this
//    process (the tokenizer's preparation included; each engine in its own
//    child process so that neither finds the other's caches or JIT warm);
//    `prepared` = a processor for a new schema once the tokenizer is prepared
//    (grammask: cache off, so the schema is compiled);
//  - per step: one processor call (commit the new token, mask + apply on a
//    [1, vocab] float32 logits tensor), timed with process.hrtime;
//  - exactness: at every step, the tokens one engine allows and the other
//    refuses, with zero logits (the official whitespace penalty then only acts
//    through its 4-token cap), counted by class (whitespace-only, EOS, special,
//    non-ASCII, other), with examples; and the stream tokens an engine refused.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { officialPackage } from '../wasm/peers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const TOKENIZER = opt('--tokenizer', 'tiny-random-llama3');
const RUNS = Number(opt('--runs', '3'));
const OUT = opt('--out', 'out/sbs.md');
const ENGINE = opt('--engine', null); // internal: the child process's engine
const DATA = JSON.parse(fs.readFileSync(path.join(ROOT, 'pkg-tests/data/structured.json'), 'utf8'));

async function loadTf() {
  const T = await import('@huggingface/transformers');
  T.env.allowRemoteModels = false;
  T.env.localModelPath = path.join(ROOT, 'models') + path.sep;
  return T;
}

async function engineOf(name) {
  if (name === 'grammask') {
    const { StructuredOutputProcessor } = await import('grammask/transformers');
    return { make: (tok, rf) => new StructuredOutputProcessor(tok, rf, { cache: false }), warmup: (tok) => StructuredOutputProcessor.warmup(tok) };
  }
  const { StructuredOutputProcessor } = await officialPackage();
  return { make: (tok, rf) => new StructuredOutputProcessor(tok, rf), warmup: (tok) => StructuredOutputProcessor.warmup(tok) };
}

/** Python json.dumps defaults: ", " and ": " separators. */
function dumps(v) {
  if (Array.isArray(v)) return `[${v.map(dumps).join(', ')}]`;
  if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${dumps(x)}`).join(', ')}}`;
  return JSON.stringify(v);
}

function streams(tok) {
  const eos = tok.eos_token_id;
  const out = [];
  for (const s of DATA.schemas) {
    for (const [i, v] of s.instances.entries()) {
      for (const style of ['compact', 'spaced']) {
        const text = style === 'compact' ? JSON.stringify(v) : dumps(v);
        out.push({ schema: s.name, instance: i, style, text, ids: [...tok.encode(text, { add_special_tokens: false }), eos] });
      }
    }
  }
  return out;
}

const hr = () => Number(process.hrtime.bigint()) / 1e6;

/** The child: one engine, every schema; prints JSON lines. */
async function child(name) {
  const T = await loadTf();
  const tok = await T.AutoTokenizer.from_pretrained(TOKENIZER);
  const eng = await engineOf(name);
  let V = 0; // the logits width: max id + 1 (the model's vocabulary)
  for (const id of [...Object.values(tok._tokenizerJSON.model.vocab), ...tok._tokenizerJSON.added_tokens.map((a) => a.id)]) if (id >= V) V = id + 1;
  const schemas = DATA.schemas;
  const result = { engine: name, vocab: V, construct: {}, failures: {}, steps: [], allowed: {} };
  // Cold: the first processor (tokenizer preparation included).
  let t0 = hr();
  try { eng.make(tok, { type: 'json_schema', json_schema: schemas[0].schema }); } catch (e) { result.failures[schemas[0].name] = e.message; }
  result.coldMs = hr() - t0;
  for (const s of schemas) {
    const times = [];
    for (let r = 0; r < RUNS; r++) {
      t0 = hr();
      try { eng.make(tok, { type: 'json_schema', json_schema: s.schema }); } catch (e) { result.failures[s.name] = e.message.slice(0, 200); break; }
      times.push(hr() - t0);
    }
    times.sort((a, b) => a - b);
    if (times.length) result.construct[s.name] = times[times.length >> 1];
  }
  // Per step, on the streams; the allowed sets are recorded (as id lists) for the exactness comparison.
  const width = V;
  for (const st of streams(tok)) {
    if (result.failures[st.schema]) continue;
    const s = schemas.find((x) => x.name === st.schema);
    const key = `${st.schema}#${st.instance}/${st.style}`;
    const allowedPerStep = [];
    let refusedAt = null;
    for (let r = 0; r < RUNS; r++) {
      const proc = eng.make(tok, { type: 'json_schema', json_schema: s.schema });
      const ids = [1n];
      const data = new Float32Array(width);
      for (let k = 0; k < st.ids.length; k++) { // the last mask is the one before EOS (generation stops after it)
        data.fill(0);
        const logits = { dims: [1, width], data };
        let ms;
        try {
          const a = hr();
          proc([ids], logits);
          ms = hr() - a;
        } catch (e) {
          if (r === 0) refusedAt = { step: k, error: e.message.slice(0, 160) };
          break;
        }
        if (r === RUNS - 1) result.steps.push(ms);
        if (r === 0) {
          const allowed = [];
          for (let i = 0; i < width; i++) if (data[i] !== -Infinity) allowed.push(i);
          allowedPerStep.push(allowed);
          if (data[st.ids[k]] === -Infinity) { refusedAt = { step: k, token: st.ids[k] }; break; }
        }
        ids.push(BigInt(st.ids[k]));
      }
    }
    result.allowed[key] = { allowedPerStep, refusedAt, ids: st.ids, text: st.text };
  }
  process.stdout.write(JSON.stringify(result));
}

function pct(a, p) { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN; }

async function main() {
  if (ENGINE) return child(ENGINE);
  const run = (name) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--engine', name, '--tokenizer', TOKENIZER, '--runs', String(RUNS)],
    { cwd: path.join(ROOT, 'pkg-tests'), maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  const G = run('grammask');
  const O = run('official');
  const T = await loadTf();
  const tok = await T.AutoTokenizer.from_pretrained(TOKENIZER);
  const { PreparedVocab } = await import('grammask');
  const vocab = PreparedVocab.fromTokenizer(tok);
  const bytes = (ids) => Buffer.concat(ids.map((id) => Buffer.from(vocab.tokenBytes(id))));
  const text = (id) => JSON.stringify(bytes([id]).toString('latin1')).slice(1, -1);
  const special = new Set(tok._tokenizerJSON.added_tokens.filter((a) => a.special).map((a) => a.id));
  /** A UTF-8 prefix: could more bytes complete it into valid UTF-8? */
  const utf8Prefix = (b) => {
    for (let cut = 0; cut <= 3 && cut <= b.length; cut++) {
      try { new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(0, b.length - cut)); } catch { continue; }
      const tail = b.subarray(b.length - cut);
      if (cut === 0) return true;
      const lead = tail[0], need = lead >= 0xf5 ? 0 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
      return need > cut && [...tail.subarray(1)].every((x) => (x & 0xc0) === 0x80);
    }
    return false;
  };
  const classOf = (id, prefixIds) => {
    if (id === tok.eos_token_id) return 'EOS';
    if (special.has(id)) return 'special';
    const b = bytes([id]);
    if (!utf8Prefix(Buffer.concat([bytes(prefixIds), b]))) return 'breaks UTF-8';
    const s = b.toString('utf8');
    if (/^\s+$/.test(s)) return 'whitespace-only';
    if (/\s/.test(s) && /^[\s{}[\],:]+$|^\s|\s$/.test(s)) return 'structural whitespace';
    return /[^\x00-\x7f]/.test(s) ? 'non-ASCII' : 'other';
  };
  const diff = { gOnly: {}, oOnly: {}, examples: {} };
  let compared = 0;
  for (const [key, g] of Object.entries(G.allowed)) {
    const o = O.allowed[key];
    if (!o) continue;
    const n = Math.min(g.allowedPerStep.length, o.allowedPerStep.length);
    for (let k = 0; k < n; k++) {
      compared++;
      const gs = new Set(g.allowedPerStep[k]), os = new Set(o.allowedPerStep[k]);
      const prefix = JSON.stringify(bytes(g.ids.slice(0, k)).toString('latin1')).slice(1, -1);
      for (const [a, b, into] of [[gs, os, 'gOnly'], [os, gs, 'oOnly']]) {
        for (const id of a) {
          if (b.has(id)) continue;
          const c = classOf(id, g.ids.slice(0, k));
          diff[into][c] = (diff[into][c] ?? 0) + 1;
          const ex = (diff.examples[`${into}/${c}`] ??= []);
          if (ex.length < 4) ex.push(`"${prefix.slice(-24)}" + "${text(id)}"`);
        }
      }
    }
  }
  const lines = [];
  const row = (e, R) => {
    const c = Object.values(R.construct);
    return `| ${e} | ${Object.keys(R.failures).length} / ${DATA.schemas.length} | ${R.coldMs.toFixed(1)} ms | ${pct(c, 0.5).toFixed(2)} ms | ${pct(c, 0.9).toFixed(2)} ms | `
      + `${pct(R.steps, 0.5).toFixed(3)} ms | ${pct(R.steps, 0.9).toFixed(3)} ms | ${pct(R.steps, 0.99).toFixed(3)} ms | ${Math.max(...R.steps).toFixed(3)} ms | `
      + `${Object.values(R.allowed).filter((x) => x.refusedAt).length} |`;
  };
  lines.push(`Tokenizer: ${TOKENIZER} (${G.vocab} ids); ${DATA.schemas.length} schemas, ${Object.keys(G.allowed).length} streams; ${RUNS} runs; Node ${process.version}`);
  lines.push('', '| engine | schemas refused | construction cold (1st, tokenizer prep. incl.) | construction, tokenizer prepared p50 | p90 | step (commit + mask + apply) p50 | p90 | p99 | max | streams refused |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  lines.push(row('grammask', G), row('@huggingface/transformers-structured-output 4.3.0', O));
  lines.push('', `Exactness: ${compared} steps compared (zero logits).`, '', '| class | allowed by grammask only | allowed by the official package only |', '|---|---:|---:|');
  for (const c of ['whitespace-only', 'structural whitespace', 'breaks UTF-8', 'EOS', 'special', 'non-ASCII', 'other']) lines.push(`| ${c} | ${diff.gOnly[c] ?? 0} | ${diff.oOnly[c] ?? 0} |`);
  lines.push('', 'Examples (text so far + token):');
  for (const [k, v] of Object.entries(diff.examples)) lines.push(`- ${k}: ${v.join('; ')}`);
  for (const [e, R] of [['grammask', G], ['official', O]]) {
    for (const [s, f] of Object.entries(R.failures)) lines.push(`- ${e} refused schema ${s}: ${f}`);
    for (const [k, v] of Object.entries(R.allowed)) if (v.refusedAt) lines.push(`- ${e} refused stream ${k} at step ${v.refusedAt.step}: ${v.refusedAt.error ?? `token "${text(v.refusedAt.token)}"`}`);
  }
  fs.mkdirSync(path.dirname(path.resolve(ROOT, OUT)), { recursive: true });
  fs.writeFileSync(path.resolve(ROOT, OUT), lines.join('\n') + '\n');
  console.log(lines.join('\n'));
}

main().catch((e) => { console.error(e); process.exit(1); });
