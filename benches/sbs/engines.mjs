// JSON Schema engines side by side on the official JSON Schema Test Suite
// (issue 12, item 7): the same schemas, the same instances, the same
// tokenizer and the same token ids for
//  - grammask (this npm package, wasm, in Node): compile(PreparedVocab, {type: 'json_schema'}) + Matcher;
//  - @huggingface/transformers-structured-output 4.3.0 (pure JS, in Node): its
//    StructuredOutputProcessor is its only API, so a "mask" is one processor
//    call (mask + apply on a float32 logits row of the vocabulary's width);
//  - @mlc-ai/web-xgrammar 0.1.27 (Emscripten wasm, in Node): compileJSONSchema
//    (strictMode off, separators of the layout) + getNextTokenBitmask;
//  - llguidance 1.9 (native, Python binding; benches/sbs/llg_engine.py in
//    the .venv-bench venv, created here on first use from PyPI):
//    grammar_from_json_schema with x-guidance separators + fill_next_token_bitmask.
//
// Needs pkg/ installed (scripts/build/build-pkg.sh) and `bash benches/setup.sh`.
//
//   node benches/sbs/engines.mjs [--draft draft2020-12] [--layout compact|spaced]
//        [--tokenizer llama3] [--engines grammask,official,xgrammar,llguidance]
//        [--budget-s 900] [--out out/engines.md] [--files enum,required,...] [--reuse]
//
// Instances are serialized under grammask's policy (keys in the order the
// schema declares them, as `grammask::schema::serialize`; compact or Python
// json.dumps spacing), tokenized once by the transformers.js tokenizer, then
// replayed through each engine: at every step the engine's mask must allow
// the next token, and after the last token the engine must accept (EOS
// allowed). A valid instance refused is a validation error, an invalid
// instance accepted an invalidation error. `first mask` = schema -> compiled
// constraint -> first mask (the tokenizer prepared beforehand, not counted);
// mask times are every mask of every replayed instance. Each engine runs in
// its own process, one after the other; an engine that exceeds its time
// budget leaves its remaining schemas "not run".
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_LABELS, loadTf, makeEngine } from './adapters.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const DRAFT = opt('--draft', 'draft2020-12');
const LAYOUT = opt('--layout', 'compact');
const TOKENIZER = opt('--tokenizer', 'llama3');
const ENGINES = opt('--engines', 'grammask,official,xgrammar,llguidance').split(',');
const BUDGET_S = Number(opt('--budget-s', '900'));
const OUT = opt('--out', 'out/engines.md');
const REUSE = args.includes('--reuse'); // reuse an engine's raw output from a previous run (OUT.<engine>.out), same job
const FILES = opt('--files', null)?.split(','); // only these suite files (e.g. enum,required)
const ENGINE = opt('--engine', null); // internal: the child's engine
const JOB = opt('--job', null); // internal: the child's job file
const SUITE = path.join(ROOT, 'models/schema/suite/tests', DRAFT);
const TOK_DIR = path.join(ROOT, 'models', TOKENIZER);
const hr = () => Number(process.hrtime.bigint()) / 1e6;

// ---------------------------------------------------------------- serialization (grammask's policy)
function keyRank(schema) {
  const rank = new Map();
  const add = (k) => { if (!rank.has(k)) rank.set(k, rank.size); };
  const walkConst = (v, d) => {
    if (d > 200) return;
    if (Array.isArray(v)) v.forEach((c) => walkConst(c, d + 1));
    else if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) { add(k); walkConst(c, d + 1); }
  };
  const walk = (v, d) => {
    if (d > 200) return;
    if (Array.isArray(v)) { v.forEach((c) => walk(c, d + 1)); return; }
    if (!v || typeof v !== 'object') return;
    if (v.properties && typeof v.properties === 'object' && !Array.isArray(v.properties)) Object.keys(v.properties).forEach(add);
    if (Array.isArray(v.required)) v.required.filter((k) => typeof k === 'string').forEach(add);
    for (const [k, c] of Object.entries(v)) if (k !== 'enum' && k !== 'const') walk(c, d + 1);
    if ('const' in v) walkConst(v.const, d + 1);
    if (Array.isArray(v.enum)) v.enum.forEach((c) => walkConst(c, d + 1));
  };
  walk(schema, 0);
  return rank;
}
function serialize(v, spaced, rank) {
  const [comma, colon] = spaced ? [', ', ': '] : [',', ':'];
  if (Array.isArray(v)) return `[${v.map((x) => serialize(x, spaced, rank)).join(comma)}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).map((k, i) => [rank.get(k) ?? Infinity, i, k]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return `{${keys.map(([, , k]) => JSON.stringify(k) + colon + serialize(v[k], spaced, rank)).join(comma)}}`;
  }
  if (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) >= 1e21) return BigInt(v).toString();
  if (typeof v === 'number' && Number.isFinite(v) && v !== 0 && Math.abs(v) < 1e-6) return v.toFixed(20).replace(/0+$/, '');
  return JSON.stringify(v);
}

// ---------------------------------------------------------------- engines (children): benches/sbs/adapters.mjs

async function child(name) {
  const job = JSON.parse(fs.readFileSync(JOB, 'utf8'));
  const t0 = hr();
  const eng = await makeEngine(name, { eos: job.eos, width: job.width, tokenizerDir: TOK_DIR, layout: LAYOUT });
  const prepMs = hr() - t0;
  process.stdout.write(JSON.stringify({ prepMs }) + '\n');
  const deadline = Date.now() + BUDGET_S * 1000;
  for (const g of job.groups) {
    const out = { error: null, firstMaskMs: null, instances: [], maskMs: [] };
    if (Date.now() > deadline) { out.notRun = true; process.stdout.write(JSON.stringify(out) + '\n'); continue; }
    let c;
    try {
      const a = hr();
      c = await eng.compile(g.schema);
      const m0 = await eng.matcher(c);
      await eng.mask(m0);
      out.firstMaskMs = hr() - a;
      eng.freeMatcher(m0);
    } catch (e) {
      out.error = String(e?.message ?? e).slice(0, 300);
      process.stdout.write(JSON.stringify(out) + '\n');
      continue;
    }
    for (const inst of g.instances) {
      let refusedAt = null, error;
      const m = await eng.matcher(c);
      try {
        for (let k = 0; k < inst.ids.length; k++) {
          const a = hr();
          const allowed = await eng.mask(m);
          out.maskMs.push(hr() - a);
          if (!allowed(inst.ids[k]) || !eng.commit(m, inst.ids[k])) { refusedAt = k; break; }
        }
        if (refusedAt === null) {
          const a = hr();
          await eng.mask(m);
          out.maskMs.push(hr() - a);
          if (!eng.accepting(m)) refusedAt = inst.ids.length;
        }
      } catch (e) { refusedAt ??= -1; error = String(e?.message ?? e).slice(0, 200); }
      eng.freeMatcher(m);
      out.instances.push({ accepted: refusedAt === null, refusedAt, ...(error ? { error } : {}) });
    }
    eng.free(c);
    process.stdout.write(JSON.stringify(out) + '\n');
  }
}

// ---------------------------------------------------------------- the orchestrator
function llgPython() {
  const venv = path.join(ROOT, '.venv-bench');
  const py = path.join(venv, 'bin', 'python');
  const ok = () => fs.existsSync(py) && spawnSync(py, ['-c', 'import llguidance, numpy'], { stdio: 'ignore' }).status === 0;
  if (!ok()) {
    if (!fs.existsSync(py)) execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(py, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'llguidance==1.9.*', 'numpy'], { stdio: 'inherit' });
  }
  return py;
}

function runEngine(name, job, jobFile) {
  const t0 = Date.now();
  const cache = path.resolve(ROOT, OUT.replace(/\.md$/, '') + `.${name}.out`);
  let text;
  if (REUSE && fs.existsSync(cache)) {
    text = fs.readFileSync(cache, 'utf8');
  } else {
  if (name === 'llguidance') {
    const input = JSON.stringify({ tokenizer: path.join(TOK_DIR, 'tokenizer.json'), eos: job.eos, layout: LAYOUT,
      groups: job.groups.map((g) => ({ schema: g.schema, instances: g.instances.map((i) => ({ ids: i.ids })) })) });
    const r = spawnSync(llgPython(), [path.join(HERE, 'llg_engine.py')], { input, encoding: 'utf8', maxBuffer: 1 << 30, timeout: (BUDGET_S + 120) * 1000, stdio: ['pipe', 'pipe', 'inherit'] });
    text = JSON.stringify({ prepMs: null }) + '\n' + (r.stdout ?? '');
  } else {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--engine', name, '--job', jobFile, '--tokenizer', TOKENIZER, '--layout', LAYOUT, '--budget-s', String(BUDGET_S)],
      { cwd: path.join(ROOT, 'pkg-tests'), encoding: 'utf8', maxBuffer: 1 << 30, timeout: (BUDGET_S + 300) * 1000, stdio: ['ignore', 'pipe', 'inherit'] });
    text = r.stdout ?? '';
    if (r.status !== 0) process.stderr.write(`engine ${name} exited with ${r.status ?? r.signal}\n`);
  }
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  fs.writeFileSync(cache, text);
  }
  // Engines may print their own diagnostics on stdout (web-xgrammar's [WARNING] lines): only JSON lines are results.
  const lines = text.split('\n').filter((l) => l.startsWith('{"')).map((l) => JSON.parse(l));
  const [head, ...groups] = lines;
  while (groups.length < job.groups.length) groups.push({ notRun: true, instances: [], maskMs: [] });
  return { prepMs: head?.prepMs ?? null, groups, wallS: (Date.now() - t0) / 1000 };
}

const pct = (a, p) => { const s = Float64Array.from(a).sort(); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN; };
const ms = (x) => (Number.isNaN(x) ? '-' : x >= 100 ? `${x.toFixed(0)} ms` : x >= 1 ? `${x.toFixed(1)} ms` : `${(x * 1000).toFixed(1)} µs`);

async function main() {
  if (ENGINE) return child(ENGINE);
  const T = await loadTf();
  const tok = await T.AutoTokenizer.from_pretrained(TOKENIZER);
  const tj = tok._tokenizerJSON;
  let width = 0;
  for (const id of [...Object.values(tj.model.vocab), ...tj.added_tokens.map((a) => a.id)]) if (id >= width) width = id + 1;
  const eos = [tok.eos_token_id];
  const groups = [];
  let nInst = 0;
  for (const f of fs.readdirSync(SUITE).filter((x) => x.endsWith('.json') && (!FILES || FILES.includes(x.slice(0, -5)))).sort()) {
    for (const g of JSON.parse(fs.readFileSync(path.join(SUITE, f), 'utf8'))) {
      const rank = keyRank(g.schema);
      const instances = g.tests.map((t) => {
        const text = serialize(t.data, LAYOUT === 'spaced', rank);
        nInst++;
        return { test: t.description, valid: t.valid, text, ids: [...tok.encode(text, { add_special_tokens: false })] };
      });
      groups.push({ file: f.replace(/\.json$/, ''), group: g.description, schema: g.schema, instances });
    }
  }
  // Round-robin over the files (each file's 1st group, then each 2nd, ...): an
  // engine cut off by its budget has still seen every keyword.
  const byFile = {};
  for (const g of groups) (byFile[g.file] ??= []).push(g);
  const order = [];
  for (let k = 0; order.length < groups.length; k++) for (const gs of Object.values(byFile)) if (gs[k]) order.push(gs[k]);
  groups.splice(0, groups.length, ...order);
  const job = { width, eos, groups };
  const jobFile = path.join(os.tmpdir(), `grammask-engines-${process.pid}.json`);
  fs.writeFileSync(jobFile, JSON.stringify(job));
  const results = {};
  for (const e of ENGINES) {
    process.stderr.write(`[engines] ${e}: ${groups.length} schemas, ${nInst} instances...\n`);
    results[e] = runEngine(e, job, jobFile);
    process.stderr.write(`[engines] ${e}: ${results[e].wallS.toFixed(0)} s\n`);
  }
  fs.rmSync(jobFile, { force: true });

  const label = ENGINE_LABELS;
  const lines = [];
  lines.push(`Official JSON Schema Test Suite ${DRAFT} (${groups.length} schemas, ${nInst} instances: ${groups.flatMap((g) => g.instances).filter((i) => i.valid).length} valid), `
    + `${LAYOUT} layout; tokenizer ${TOKENIZER} (${width} ids, EOS ${eos}); Node ${process.version}; ${os.cpus().length} CPUs, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; budget ${BUDGET_S} s per engine.`);
  lines.push('', '| engine | schemas compiled | compile failures | not run (budget) | valid refused (validation errors) | invalid accepted (invalidation errors) | first mask p50 | p90 | p99 | mask p50 | p99 | max | tokenizer prep. |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const details = [];
  for (const e of ENGINES) {
    const R = results[e];
    let ok = 0, fail = 0, notRun = 0, vr = 0, vn = 0, ia = 0, inv = 0;
    const first = [], masks = [];
    const failEx = [], vrEx = [], iaEx = [];
    R.groups.forEach((r, gi) => {
      const g = groups[gi];
      if (r.notRun) { notRun++; return; }
      if (r.error) { fail++; if (failEx.length < 6) failEx.push(`${g.file}: ${g.group}: ${r.error.slice(0, 140)}`); return; }
      ok++;
      first.push(r.firstMaskMs);
      for (const x of r.maskMs) masks.push(x);
      r.instances.forEach((res, k) => {
        const inst = g.instances[k];
        if (inst.valid) { vn++; if (!res.accepted) { vr++; if (vrEx.length < 10) vrEx.push(`${g.file}: ${g.group} / ${inst.test}: \`${inst.text.slice(0, 80)}\` (at token ${res.refusedAt}${res.error ? ': ' + res.error.slice(0, 80) : ''})`); } }
        else { inv++; if (res.accepted) { ia++; if (iaEx.length < 10) iaEx.push(`${g.file}: ${g.group} / ${inst.test}: \`${inst.text.slice(0, 80)}\``); } }
      });
    });
    lines.push(`| ${label[e]} | ${ok} / ${groups.length} | ${fail} | ${notRun} | ${vr} / ${vn} | ${ia} / ${inv} | ${ms(pct(first, 0.5))} | ${ms(pct(first, 0.9))} | ${ms(pct(first, 0.99))} | `
      + `${ms(pct(masks, 0.5))} | ${ms(pct(masks, 0.99))} | ${ms(masks.length ? Math.max(...masks) : NaN)} | ${R.prepMs == null ? '-' : ms(R.prepMs)} |`);
    details.push(`- ${e}: ${R.wallS.toFixed(0)} s wall; ${masks.length} masks`);
    for (const x of failEx) details.push(`  - compile failure: ${x}`);
    for (const x of vrEx) details.push(`  - valid refused: ${x}`);
    for (const x of iaEx) details.push(`  - invalid accepted: ${x}`);
  }
  // The schemas every engine compiled: the same instances for all.
  const common = groups.map((_, gi) => ENGINES.every((e) => { const r = results[e].groups[gi]; return !r.notRun && !r.error; }));
  const nCommon = common.filter(Boolean).length;
  lines.push('', `On the ${nCommon} schemas every engine compiled (${groups.filter((_, i) => common[i]).reduce((n, g) => n + g.instances.length, 0)} instances):`, '',
    '| engine | valid refused | invalid accepted | first mask p50 | p99 | mask p50 | p99 |', '|---|---:|---:|---:|---:|---:|---:|');
  for (const e of ENGINES) {
    let vr = 0, ia = 0;
    const first = [], masks = [];
    results[e].groups.forEach((r, gi) => {
      if (!common[gi]) return;
      first.push(r.firstMaskMs);
      for (const x of r.maskMs) masks.push(x);
      r.instances.forEach((res, k) => { const v = groups[gi].instances[k].valid; if (v && !res.accepted) vr++; if (!v && res.accepted) ia++; });
    });
    lines.push(`| ${e} | ${vr} | ${ia} | ${ms(pct(first, 0.5))} | ${ms(pct(first, 0.99))} | ${ms(pct(masks, 0.5))} | ${ms(pct(masks, 0.99))} |`);
  }
  lines.push('', 'Details (examples):', ...details);
  fs.mkdirSync(path.dirname(path.resolve(ROOT, OUT)), { recursive: true });
  fs.writeFileSync(path.resolve(ROOT, OUT), lines.join('\n') + '\n');
  fs.writeFileSync(path.resolve(ROOT, OUT.replace(/\.md$/, '') + '.json'), JSON.stringify({ groups: groups.map(({ file, group, instances }) => ({ file, group, instances: instances.map(({ test, valid, text }) => ({ test, valid, text })) })), results }) + '\n');
  console.log(lines.join('\n'));
}

main().catch((e) => { console.error(e); process.exit(1); });
