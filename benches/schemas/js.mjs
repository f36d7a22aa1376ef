// A JS engine on the real-world schema corpus of benches/schemas/ (issue 20):
// per request, compile + first mask, then every mask of the corpus' test
// instances, teacher-forced. The engine is the npm package `grammask` (wasm, in
// Node; the default) or a JS peer of benches/sbs/adapters.mjs:
// `--engine xgrammar` (@mlc-ai/web-xgrammar 0.1.27, wasm) or `--engine official`
// (@huggingface/transformers-structured-output 4.3.0, pure JS; its only API is
// the logits processor, so its "mask" is one processor call on a float32 row).
//
//   node benches/schemas/js.mjs [--engine grammask|xgrammar|official] [--corpus out/schemas-corpus]
//        [--out out/schemas-bench/ENGINE.json (grammask: grammask-wasm.json)] [--cap-s 60] [--hard-cap-s CAP+120] [--only NAME,...]
//
// Needs the built package in pkg-tests/node_modules (scripts/build/build-pkg.sh) and
// the link benches/node_modules -> ../pkg-tests/node_modules (benches/setup.sh, or run.sh);
// the peers in benches/wasm/node_modules (benches/setup.sh).
// Inputs: corpus.py's OUT/NAME.json (the schema) and ids.py's OUT/ids/NAME.json (the
// instances' Llama-3 ids) and OUT/ids/_tokenizer.json (tokenizer path, EOS id).
//
// Procedure, in ONE worker process, schemas in name order:
//  - grammask: PreparedVocab.fromTokenizerJson(tokenizer.json, {eosTokenIds}) + prepare(),
//    once, not timed; the peers: their tokenizer setup (not timed); then one warm-up
//    compile + mask of a tiny schema (not timed);
//  - first mask = compile(vocab, {type: 'json_schema', json_schema}) (grammask's default
//    options: whitespace 'default', accepting compact and `, `/`: ` spacing; not lenient;
//    the peers: compact separators, no indent) + a new matcher + the first mask;
//  - then per test instance (valid and invalid), a fresh matcher on the same compiled
//    constraint: before each token one mask (grammask: fillMask into one reused
//    Uint32Array; timed, alone), check the token's bit, commit; a refused token ends
//    the instance (refusedAt = its index); after the last token one more timed mask
//    and the EOS check. Accepted = every token allowed and EOS allowed at the end.
//  - times: performance.now() (µs, fractional), every mask recorded;
//  - per-schema cap (--cap-s, wall clock from the start of the compile): checked
//    between masks, since wasm calls are synchronous; the rest of the schema is then
//    skipped and the schema marked `timeout`. One call that runs past the cap cannot
//    be interrupted in its thread, so the parent process watches the worker and kills
//    it when one schema passes --hard-cap-s; that schema is marked `timeout` (killed)
//    and a new worker goes on with the next schema (a new vocab, not timed).
//  - memory: process.memoryUsage().rss after every schema (max), wasmMemoryBytes()
//    (grammask), and process.resourceUsage().maxRSS at the end of each worker (max over
//    workers; for a worker killed by the watchdog, its VmHWM from /proc just before the kill).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const CORPUS = path.resolve(ROOT, opt('--corpus', 'out/schemas-corpus'));
const ENGINE = opt('--engine', 'grammask');
const OUT = path.resolve(ROOT, opt('--out', `out/schemas-bench/${ENGINE === 'grammask' ? 'grammask-wasm' : ENGINE}.json`));
const CAP_S = Number(opt('--cap-s', '60'));
const HARD_CAP_S = Number(opt('--hard-cap-s', String(CAP_S + 120)));
const ONLY = opt('--only', null)?.split(',');
const WORKER_FROM = opt('--worker-from', null); // internal: a worker starting at this schema index
const r2 = (x) => Math.round(x * 100) / 100;

function schemaNames() {
  return fs.readdirSync(CORPUS).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5))
    .filter((n) => !ONLY || ONLY.includes(n)).sort();
}

// ---------------------------------------------------------------- the worker
/** The engine under test: `eng` has the interface of benches/sbs/adapters.mjs. */
async function openEngine(tk) {
  const { makeEngine } = await import('../sbs/adapters.mjs');
  const t0 = performance.now();
  const eng = await makeEngine(ENGINE, { eos: tk.eos, width: tk.vocab_size, tokenizerDir: path.dirname(tk.tokenizer), layout: 'compact', prepare: true });
  return { eng, prepMs: r2(performance.now() - t0), vocabSize: eng.vocabSize ?? tk.vocab_size, memory: eng.memory ?? (() => null) };
}

async function worker(from) {
  const tk = JSON.parse(fs.readFileSync(path.join(CORPUS, 'ids', '_tokenizer.json'), 'utf8'));
  const { eng, prepMs, vocabSize, memory } = await openEngine(tk);
  { // warm-up, not timed: one tiny schema through compile, matcher and mask (JIT, allocator)
    const s = await eng.compile({ type: 'object', properties: { a: { type: 'string' } } });
    const m = await eng.matcher(s); await eng.mask(m); eng.freeMatcher(m); eng.free(s);
  }
  const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
  emit({ vocab: { prepMs, vocabSize, eos: tk.eos } });
  const names = schemaNames();
  let peakRss = process.memoryUsage().rss;
  for (let i = from; i < names.length; i++) {
    const name = names[i];
    emit({ start: i, name });
    const doc = JSON.parse(fs.readFileSync(path.join(CORPUS, name + '.json'), 'utf8'));
    const tests = JSON.parse(fs.readFileSync(path.join(CORPUS, 'ids', name + '.json'), 'utf8')).tests;
    const r = { name, status: 'ok', error: null, compileUs: null, firstMaskUs: null, masksUs: [], tests: [] };
    const start = performance.now();
    let store = null;
    try {
      store = await eng.compile(doc.schema);
      r.compileUs = r2((performance.now() - start) * 1000);
      const m0 = await eng.matcher(store);
      await eng.mask(m0);
      r.firstMaskUs = r2((performance.now() - start) * 1000);
      eng.freeMatcher(m0);
      const w = eng.warnings?.(store) ?? []; // read after the clock stopped
      if (w.length) r.warnings = w.slice(0, 20).map((x) => String(x).slice(0, 300));
    } catch (e) {
      if (store) { try { eng.free(store); } catch { /* already unusable */ } }
      store = null;
      r.status = 'error';
      r.error = { name: e?.name ?? null, kind: e?.kind ?? null, message: String(e?.message ?? e).slice(0, 500) };
    }
    if (store) {
      const over = () => performance.now() - start > CAP_S * 1000;
      for (const t of tests) {
        if (r.status === 'timeout' || over()) { r.status = 'timeout'; r.tests.push({ valid: t.valid, notRun: true }); continue; }
        const m = await eng.matcher(store);
        let refusedAt = null, error;
        try {
          for (let k = 0; k <= t.ids.length; k++) {
            const a = performance.now();
            const allowed = await eng.mask(m);
            r.masksUs.push(r2((performance.now() - a) * 1000));
            if (k === t.ids.length) { if (!eng.accepting(m)) refusedAt = k; break; }
            if (!allowed(t.ids[k]) || !eng.commit(m, t.ids[k])) { refusedAt = k; break; }
            if (over()) { r.status = 'timeout'; break; }
          }
        } catch (e) { refusedAt ??= -1; error = String(e?.message ?? e).slice(0, 300); }
        eng.freeMatcher(m);
        if (r.status === 'timeout' && refusedAt === null) r.tests.push({ valid: t.valid, notRun: true, cutAt: r.masksUs.length });
        else r.tests.push({ valid: t.valid, accepted: refusedAt === null, refusedAt, nTokens: t.ids.length, ...(error ? { error } : {}) });
      }
      eng.free(store);
    }
    r.wallMs = r2(performance.now() - start);
    const rss = process.memoryUsage().rss;
    if (rss > peakRss) peakRss = rss;
    r.rss = rss;
    r.wasmMemory = memory();
    emit({ result: r });
  }
  emit({ done: true, peakRss, maxRssKiB: process.resourceUsage().maxRSS, wasmMemory: memory() });
}

// ---------------------------------------------------------------- the parent: a watchdog over workers
function runWorker(from, onLine) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args, '--worker-from', String(from)],
      { cwd: path.join(ROOT, 'benches'), stdio: ['ignore', 'pipe', 'inherit'] });
    let timer = null;
    const hwm = () => { // the worker's peak RSS so far (Linux), read before it is killed
      try { return Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]); } catch { return 0; }
    };
    const arm = () => { clearTimeout(timer); timer = setTimeout(() => { child.killedByWatchdog = true; child.hwmKiB = hwm(); child.kill('SIGKILL'); }, HARD_CAP_S * 1000); };
    readline.createInterface({ input: child.stdout }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      const o = JSON.parse(l);
      if (o.start !== undefined || o.vocab) arm();
      if (o.done) clearTimeout(timer);
      onLine(o);
    });
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, killed: !!child.killedByWatchdog, hwmKiB: child.hwmKiB ?? 0 }); });
  });
}

async function main() {
  if (WORKER_FROM !== null) return worker(Number(WORKER_FROM));
  const names = schemaNames();
  let ident;
  if (ENGINE === 'grammask') {
    const PKG = path.join(ROOT, 'pkg-tests/node_modules/grammask');
    const { version } = JSON.parse(fs.readFileSync(path.join(PKG, 'package.json'), 'utf8'));
    const wasm = fs.readFileSync(path.join(PKG, 'web/grammask_bg.wasm')); // the package under test changes with rebuilds: identify it
    const wasmSha = (await import('node:crypto')).createHash('sha256').update(wasm).digest('hex').slice(0, 12);
    ident = { engine: 'grammask', label: `grammask ${version} (npm package, wasm, Node ${process.version})`,
      package: { path: fs.realpathSync(PKG), wasmBytes: wasm.length, wasmSha256: wasmSha, installed: fs.statSync(path.join(PKG, 'web')).mtime.toISOString() } };
  } else {
    const pkg = { xgrammar: '@mlc-ai/web-xgrammar', official: '@huggingface/transformers-structured-output' }[ENGINE];
    if (!pkg) throw new Error(`unknown --engine ${ENGINE} (grammask, xgrammar or official)`);
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'benches/wasm/node_modules', pkg, 'package.json'), 'utf8'));
    ident = { engine: ENGINE === 'official' ? 'transformers-structured-output' : 'web-xgrammar',
      label: `${pkg} ${version} (${ENGINE === 'official' ? 'JS' : 'wasm'}, Node ${process.version})`, package: { name: pkg, version } };
  }
  const out = {
    ...ident,
    corpus: fs.readFileSync(path.join(CORPUS, 'MANIFEST.txt'), 'utf8').split('\n').slice(0, 3).join('\n'),
    capS: CAP_S, hardCapS: HARD_CAP_S, host: `${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
    started: new Date().toISOString(), vocab: null, workers: 0, peakRss: 0, maxRssKiB: 0, wasmMemory: 0, schemas: [],
  };
  const t0 = performance.now();
  let next = 0, current = null;
  while (next < names.length) {
    out.workers++;
    const res = await runWorker(next, (o) => {
      if (o.vocab) out.vocab ??= o.vocab;
      if (o.start !== undefined) current = o.start;
      if (o.result) {
        out.schemas.push(o.result);
        out.peakRss = Math.max(out.peakRss, o.result.rss);
        next = current + 1;
        current = null;
        const s = o.result;
        process.stderr.write(`[${ENGINE}] ${out.schemas.length}/${names.length} ${s.name}: ${s.status}` +
          `${s.firstMaskUs != null ? ` first ${(s.firstMaskUs / 1000).toFixed(1)} ms` : ''}, ${s.masksUs.length} masks, ${(s.wallMs / 1000).toFixed(1)} s\n`);
      }
      if (o.done) { out.peakRss = Math.max(out.peakRss, o.peakRss); out.maxRssKiB = Math.max(out.maxRssKiB, o.maxRssKiB); out.wasmMemory = Math.max(out.wasmMemory, o.wasmMemory); }
    });
    out.maxRssKiB = Math.max(out.maxRssKiB, res.hwmKiB);
    if (current !== null) { // the worker died inside a schema: killed by the watchdog, or crashed
      const name = names[current];
      const why = res.killed ? `killed after ${HARD_CAP_S} s (one call past the cap)` : `worker exited (${res.signal ?? res.code}) inside this schema`;
      process.stderr.write(`[${ENGINE}] ${name}: ${why}\n`);
      out.schemas.push({ name, status: res.killed ? 'timeout' : 'crash', error: { name: null, kind: null, message: why }, compileUs: null, firstMaskUs: null, masksUs: [], tests: [], wallMs: null });
      next = current + 1;
      current = null;
    } else if (next < names.length && res.code !== 0) {
      throw new Error(`worker exited with ${res.signal ?? res.code} between schemas`);
    }
  }
  out.wallS = r2((performance.now() - t0) / 1000);
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(out) + '\n');
  process.stderr.write(`[${ENGINE}] ${names.length} schemas in ${out.wallS} s -> ${path.relative(ROOT, OUT)}\n`);
}

main().catch((e) => { console.error(e); process.exit(1); });
