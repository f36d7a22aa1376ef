// Shared helpers of the package tests: the native CLI (reference), blobs
// cached in out/, corpus lists, the mask hash of `grammask masks`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { MaskStore } from 'grammask';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FULL = process.env.GRAMMASK_FULL === '1';
export const LLAMA3 = path.join(ROOT, 'models/llama3/tokenizer.json');

/**
 * A fixture the tests need: missing, the test fails with how to make it (a
 * test never skips for a missing fixture; the skips are declared in
 * pkg-tests/data/skips.json). `p`: a path relative to the repository root, or absolute.
 */
export function fixture(p, how) {
  const abs = path.resolve(ROOT, p);
  if (!fs.existsSync(abs)) throw new Error(`${p} is missing: ${how}`);
  return abs;
}

const TARGET = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target');
let bin = null;

/**
 * The native CLI (built with the `ci` profile that test.sh's cargo test uses),
 * or $GRAMMASK_BIN. Note: a CARGO_TARGET_DIR shared with other checkouts may
 * hold another checkout's binary at target/ci/grammask (cargo does not copy a
 * fresh build there again); blobPath() detects the mismatch.
 */
export function grammaskBin() {
  if (bin) return bin;
  if (process.env.GRAMMASK_BIN) return (bin = process.env.GRAMMASK_BIN);
  execFileSync('cargo', ['build', '--quiet', '--profile', 'ci', '--bin', 'grammask'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  return (bin = path.join(TARGET, 'ci', 'grammask'));
}

/** Run the CLI; returns stdout. `okCodes`: exit codes that are not failures. */
export function cli(args, { okCodes = [0], maxBuffer = 1 << 30 } = {}) {
  try {
    return execFileSync(grammaskBin(), args, { cwd: ROOT, maxBuffer, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if (okCodes.includes(e.status)) return e.stdout;
    throw new Error(`grammask ${args.join(' ')} failed (${e.status}): ${e.stderr}`);
  }
}

/**
 * out/<grammar>-<tokenizer>[-raw].gmask, compiled by the native CLI unless a
 * blob newer than the grammar and the tokenizer is there and loads.
 */
export function blobPath(grammar, { tokenizer = 'llama3', raw = false } = {}) {
  const g = path.join(ROOT, 'grammars', `${grammar}.lark`);
  const t = path.join(ROOT, 'models', tokenizer, 'tokenizer.json');
  const out = path.join(ROOT, 'out', `${grammar}-${tokenizer}${raw ? '-raw' : ''}.gmask`);
  const loadsInWasm = () => { MaskStore.fromBytes(fs.readFileSync(out)).free(); };
  const fresh = () => {
    if (!fs.existsSync(out)) return false;
    const m = fs.statSync(out).mtimeMs;
    if (m < fs.statSync(g).mtimeMs || m < fs.statSync(t).mtimeMs) return false;
    try { cli(['stats', '--json', '--store', out]); loadsInWasm(); return true; } catch { return false; }
  };
  if (!fresh()) {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const args = ['compile', '--json', '--grammar', g, '--tokenizer', t, '-o', out];
    if (raw) args.push('--no-streamline');
    cli(args);
    try {
      loadsInWasm();
    } catch (e) {
      throw new Error(`${out}, made by ${grammaskBin()}, does not load in the wasm package (${e.message}): the native CLI is `
        + 'not built from this checkout (a CARGO_TARGET_DIR shared with other checkouts?); set GRAMMASK_BIN');
    }
  }
  return out;
}

/** Files of `python3 scripts/experiments/corpus.py KIND` (stdlib | json), in its order. */
export function corpus(kind) {
  return execFileSync('python3', [path.join(ROOT, 'scripts/experiments/corpus.py'), kind], { encoding: 'utf8', maxBuffer: 1 << 28 })
    .split('\n').filter(Boolean);
}

/**
 * The native reference for FILES: per file { file, ids, hashes, violation, eos_ok }
 * (`grammask masks`, see its --help for the hash).
 */
export function nativeMasks(store, files, tokenizer = LLAMA3) {
  const list = path.join(fs.mkdtempSync(path.join(ROOT, 'out', 'list-')), 'files.txt');
  fs.writeFileSync(list, files.join('\n') + '\n');
  const outp = cli(['masks', '--store', store, '--tokenizer', tokenizer, '--files-from', list], { okCodes: [0, 1] });
  fs.rmSync(path.dirname(list), { recursive: true });
  return outp.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** The mask hash of `grammask masks` over `words[off .. off + n]`. */
export function maskHash(words, off = 0, n = words.length - off) {
  let a = 0x811c9dc5 | 0;
  let b = 0x9747b28c | 0;
  for (let i = 0; i < n; i++) {
    const w = words[off + i];
    a = Math.imul(a ^ w, 0x01000193);
    b = (Math.imul(b ^ w, 0x27d4eb2d) + i) | 0;
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** splitmix64 over BigInt (deterministic random choices). */
export function rng(seed) {
  let s = BigInt.asUintN(64, BigInt(seed));
  const M = (1n << 64n) - 1n;
  const next = () => {
    s = (s + 0x9e3779b97f4a7c15n) & M;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
    return z ^ (z >> 31n);
  };
  return {
    below: (n) => Number(next() % BigInt(n)),
    unit: () => Number(next() >> 11n) / 2 ** 53,
  };
}

// Mask bits (token id = bit id & 31 of word id >> 5), read here on purpose
// and not through the package's js/mask-bits.js: these two are the tests'
// independent judge of the masks the package produces and consumes.

/** The allowed token ids of a mask. */
export function allowedIds(mask, out = []) {
  out.length = 0;
  for (let w = 0; w < mask.length; w++) {
    let bits = mask[w];
    while (bits !== 0) {
      const low = bits & -bits;
      out.push(w * 32 + 31 - Math.clz32(low));
      bits ^= low;
    }
  }
  return out;
}

export const bit = (mask, id) => (mask[id >>> 5] >>> (id & 31)) & 1;

/** Token ids whose bytes are exactly `text` (first match), via the store. */
export function tokenIdOf(store, text) {
  const want = new TextEncoder().encode(text);
  for (let id = 0; id < store.vocabSize; id++) {
    const b = store.tokenBytes(id);
    if (b.length === want.length && b.every((x, i) => x === want[i])) return id;
  }
  throw new Error(`no token with bytes ${JSON.stringify(text)}`);
}

const TF = path.join(ROOT, 'www/node_modules/@huggingface/transformers/dist/transformers.node.mjs');
let tfp = null;
/** transformers.js (www's copy), local models only (models/). */
export async function transformersJs() {
  if (!tfp) {
    fixture(TF, 'run scripts/setup/setup.sh (transformers.js)');
    tfp = import(TF).then((m) => {
      m.env.allowRemoteModels = false;
      m.env.localModelPath = path.join(ROOT, 'models') + path.sep;
      return m;
    });
  }
  return tfp;
}
const toks = new Map();
/** transformers.js's tokenizer of models/NAME, loaded once. */
export async function tokenizer(name) {
  fixture(path.join('models', name, 'tokenizer.json'), 'run scripts/setup/setup.sh (models/)');
  if (!toks.has(name)) toks.set(name, (await transformersJs()).AutoTokenizer.from_pretrained(name));
  return toks.get(name);
}

/**
 * Teacher-force token ids through fresh matcher `m` (freed here), checking at
 * each step that the mask and `isAllowed` agree: null (accepted and
 * complete), the index of the first refused token, or the length if the
 * text is incomplete.
 */
export function refusedAt(m, tokIds) {
  try {
    for (let i = 0; i < tokIds.length; i++) {
      const allowed = m.isAllowed(tokIds[i]);
      if ((bit(m.computeMask(), tokIds[i]) === 1) !== allowed) throw new Error(`token ${i}: mask and isAllowed disagree`);
      if (!allowed) return i;
      m.commitToken(tokIds[i]);
    }
    return m.isAccepting() ? null : tokIds.length;
  } finally { m.free(); }
}

/** The calling thread's run-queue wait so far, in ms (Linux `/proc/thread-self/schedstat`), or null. */
export function runQueueWaitMs() {
  try { return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6; } catch { return null; }
}

/**
 * Times a transformers.js processor's calls as the OS ran them: wraps the
 * grammask processor's `_call` (passed to generate() unchanged) and after
 * each call hands `onCall({ wallMs, waitMs })` its wall time and the
 * thread's run-queue wait during it: time the thread was ready to run but
 * the OS gave its core to another thread (on a shared 2-core machine, most
 * of a slow step's wall time). `wallMs - waitMs` is the call's time on a
 * core. `waitMs` is null where schedstat is not available.
 */
function timeCalls(proc, onCall) {
  // A StructuredOutputProcessor is a list: generate() calls the processor inside.
  const inner = proc.processor ?? proc;
  const call = inner._call;
  inner._call = function (...args) {
    const w0 = runQueueWaitMs();
    const t0 = performance.now();
    try {
      return call.apply(this, args);
    } finally {
      const t1 = performance.now();
      const w1 = runQueueWaitMs();
      onCall({ wallMs: t1 - t0, waitMs: w0 === null || w1 === null ? null : w1 - w0, t0, t1 });
    }
  };
  return proc;
}

/**
 * V8's garbage collections as `PerformanceObserver` reports them (entries
 * arrive asynchronously): `gcMsIn(t0, t1)` is the collection time inside
 * [t0, t1] (performance.now() times) among those reported so far.
 */
function gcLog() {
  const entries = [];
  const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) entries.push([e.startTime, e.startTime + e.duration, e.detail?.kind ?? 0]); });
  obs.observe({ entryTypes: ['gc'] });
  const inside = (t0, t1) => entries.filter(([s, e]) => Math.min(e, t1) > Math.max(s, t0));
  return {
    gcMsIn: (t0, t1) => inside(t0, t1).reduce((a, [s, e]) => a + Math.min(e, t1) - Math.max(s, t0), 0),
    /** The kinds (perf_hooks constants: 1 major, 2 minor, 4 incremental, 8 weak callbacks) of those collections, or-ed. */
    gcKindsIn: (t0, t1) => inside(t0, t1).reduce((a, [, , k]) => a | k, 0),
    stop: () => obs.disconnect(),
  };
}

/**
 * Per-step timing of a grammask processor inside generate() (batch 1: one
 * onStep per call), for the real-model tests:
 *
 *     const rec = stepRecorder();
 *     const proc = rec.wrap(new StructuredOutputProcessor(tok, rf, { onStep: rec.onStep }));
 *     rec.start(proc); await model.generate(...); const steps = await rec.finish();
 *
 * Each step is `[gm, wall, core, gcMs, gcKinds]`: grammask's time (commit +
 * mask + apply, plus the idle-time hook's time since the previous step:
 * `prefetchTimeMs` grows when it runs), the step's wall time (from the end
 * of the previous step, step 0 from `start`), grammask's time on a core (the
 * call's part less the run-queue wait during the call, see `timeCalls`; the
 * hook's time counted whole), and V8's collection time inside the call and
 * its kinds (`gcLog`).
 */
export function stepRecorder() {
  const gc = gcLog();
  let steps = [], proc = null, hookSeen = 0, last = 0;
  const onCall = ({ wallMs, waitMs, t0, t1 }) => {
    const st = steps.at(-1);
    if (!st || st.t0 !== undefined) return;
    Object.assign(st, { t0, t1 });
    if (waitMs !== null) st.core = Math.min(st.call, Math.max(0, wallMs - waitMs)) + st.hook;
  };
  return {
    onStep: (s) => {
      const now = performance.now();
      const seen = proc?.prefetchTimeMs ?? 0;
      const call = s.maskMs + s.commitMs, hook = seen - hookSeen;
      steps.push({ gm: call + hook, wall: now - last, core: call + hook, call, hook });
      hookSeen = seen;
      last = now;
    },
    wrap: (p) => timeCalls(p, onCall),
    start(p) {
      steps = [];
      proc = p;
      hookSeen = p.prefetchTimeMs ?? 0;
      last = performance.now();
    },
    async finish() {
      await new Promise((res) => setTimeout(res, 0)); // the gc entries of the run
      const at = (f, st) => (st.t0 === undefined ? 0 : f(st.t0, st.t1));
      return steps.map((st) => [st.gm, st.wall, st.core, at(gc.gcMsIn, st), at(gc.gcKindsIn, st)]);
    },
    stop: () => gc.stop(),
  };
}
