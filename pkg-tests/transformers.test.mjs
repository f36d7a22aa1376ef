// grammask/transformers with @huggingface/transformers 4.3.1 (installed in
// www/node_modules by scripts/setup/setup.sh) and the tiny random-weight ONNX model
// models/tiny-random-llama3 (scripts/setup/build-test-models.sh; Llama-3 tokenizer).
// A random model that is constrained is the strongest test of the masks:
// every generation that ends with EOS must parse (JSON.parse / native
// `grammask parse`). Default tier: 10 sampled generations per grammar;
// GRAMMASK_FULL=1: 50.
//
// A generation that runs out of max_new_tokens is not counted (attempts: up
// to twice the count). A random model almost never picks EOS among 128k allowed ids, so the test
// adds its own logits bias (a "length budget", not part of the adapter): EOS
// discouraged for the first few tokens, then encouraged, and closing
// characters encouraged more and more after 12 tokens. The bias only changes
// which allowed token is likely; the grammar processor runs last and decides
// what is allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { MaskStore, Matcher } from 'grammask';
import { GrammarLogitsProcessor, applyMask } from 'grammask/transformers';
import { FULL, ROOT, blobPath, cli, allowedIds, bit, rng, tokenIdOf, fixture } from './helpers.mjs';

const TF = path.join(ROOT, 'www/node_modules/@huggingface/transformers/dist/transformers.node.mjs');
const MODEL = 'tiny-random-llama3';
// Missing fixtures fail (scripts/setup/setup.sh, build-test-models.sh provide them).
const needModel = () => { fixture(path.join('models', MODEL, 'onnx/model.onnx'), 'run scripts/setup/build-test-models.sh'); fixture(TF, 'run scripts/setup/setup.sh (transformers.js)'); };
const EOS = 128001;

// A minimal stand-in for transformers.js's Tensor (what _call uses: dims, data).
const tensor = (rows, width, fill = 0) => ({ dims: [rows, width], data: new Float32Array(rows * width).fill(fill) });

test('applyMask: f32 and f16 bits, widths past the mask, count of allowed ids', () => {
  const r = rng(7);
  for (const width of [1, 31, 32, 33, 100, 1000]) {
    const words = Math.ceil((width - 3 > 0 ? width - 3 : width) / 32); // sometimes narrower than the logits
    const mask = new Uint32Array(words);
    for (let i = 0; i < words; i++) mask[i] = [0, 0xffffffff, (r.below(2 ** 32)) >>> 0][r.below(3)];
    const f32 = new Float32Array(width).map((_, i) => i + 0.5);
    const f16 = new Uint16Array(width).fill(0x3c00); // 1.0
    const n32 = applyMask(f32, mask), n16 = applyMask(f16, mask);
    let expect = 0;
    for (let i = 0; i < width; i++) {
      const on = i < words * 32 && bit(mask, i) === 1;
      if (on) expect++;
      assert.equal(f32[i], on ? i + 0.5 : -Infinity, `f32 id ${i} width ${width}`);
      assert.equal(f16[i], on ? 0x3c00 : 0xfc00, `f16 id ${i} width ${width}`);
    }
    assert.equal(n32, expect);
    assert.equal(n16, expect);
  }
  assert.throws(() => applyMask([1, 2], new Uint32Array(1)), TypeError);
  assert.throws(() => applyMask(new Float32Array(2), [1]), TypeError);
});

test('GrammarLogitsProcessor: masks, commits, wide logits, EOS, batches, refusals', () => {
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const V = store.vocabSize; // 128256
  const width = V + 70; // a model with padded logits
  const ref = new Matcher(store, { maskWidth: width });
  const open = tokenIdOf(store, '{'), quote = tokenIdOf(store, '"');
  assert.ok(ref.isAllowed(open));
  const proc = new GrammarLogitsProcessor(store, { eosTokenIds: [128009] });
  assert.equal(typeof proc, 'function', 'callable, as transformers.js expects processors to be');
  const prompt = [[128000n, 5n, 6n], [128000n, 7n, 8n]];
  let logits = tensor(2, width);
  proc(prompt, logits);
  const want = ref.computeMask();
  for (let row = 0; row < 2; row++) {
    const d = logits.data.subarray(row * width, (row + 1) * width);
    for (let i = 0; i < width; i++) assert.equal(d[i] === 0, i < V && bit(want, i) === 1, `row ${row} id ${i}`);
  }
  // Row 0 opens an object, row 1 emits a number: each row has its own matcher.
  const num = allowedIds(want).find((id) => /^[1-9]$/.test(new TextDecoder().decode(store.tokenBytes(id))));
  const ids = [[...prompt[0], BigInt(open)], [...prompt[1], BigInt(num)]];
  logits = tensor(2, width);
  proc(ids, logits);
  ref.commitToken(open);
  const m0 = ref.computeMask();
  for (let i = 0; i < V; i += 97) assert.equal(logits.data[i] === 0, bit(m0, i) === 1);
  assert.equal(logits.data[width + EOS], 0, 'row 1 (a number) may end: EOS allowed');
  assert.equal(logits.data[width + 128009], 0, 'the extra EOS id is allowed with the store one');
  assert.equal(logits.data[EOS], -Infinity, 'row 0 ("{") may not end');
  for (let i = V; i < width; i++) assert.equal(logits.data[i], -Infinity, 'ids past the vocabulary are masked');
  // Row 1 ends with the extra EOS id; afterwards only EOS ids are allowed for it.
  ids[0].push(BigInt(quote)); ids[1].push(128009n); // '"' opens a key
  logits = tensor(2, width);
  proc(ids, logits);
  assert.ok(proc.matchers[1].isStopped());
  const allowed1 = [];
  for (let i = 0; i < width; i++) if (logits.data[width + i] === 0) allowed1.push(i);
  assert.deepEqual(allowed1, [EOS, 128009]);
  ids[0].push(BigInt(open)); ids[1].push(BigInt(EOS)); // '{' inside a key string is fine; row 1 repeats EOS
  proc(ids, tensor(2, width));
  // A refused token throws (a processor after this one changed the choice).
  ids[0].push(BigInt(EOS)); ids[1].push(BigInt(EOS)); // the key string is still open: EOS is refused
  assert.throws(() => proc(ids, tensor(2, width)), /row 0: token 128001 .* is not allowed by the grammar/);
  // A token after EOS throws too.
  const p2 = new GrammarLogitsProcessor(store);
  const r2 = [[1n, BigInt(num)]];
  p2([[1n]], tensor(1, width));
  p2(r2, tensor(1, width));
  r2[0].push(BigInt(EOS));
  p2(r2, tensor(1, width));
  r2[0].push(5n);
  assert.throws(() => p2(r2, tensor(1, width)), /after its end of sequence/);
  // A new, unrelated call (shorter rows) starts a new generation.
  const l = tensor(1, width);
  p2([[1n, 2n]], l);
  assert.equal(p2.matchers[0].isStopped(), false);
  assert.equal(l.data[open], 0);
  proc.free(); p2.free(); ref.free(); store.free();
});

test('trigger: a trigger that has not appeared is reported (one console.warn, onStep freeTokens), and maxFreeTokens forces it', () => {
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const V = store.vocabSize;
  const word = tokenIdOf(store, 'Hello'), ticks = tokenIdOf(store, '```');
  const warnings = [];
  const warn = console.warn;
  console.warn = (...a) => { warnings.push(a.join(' ')); };
  try {
    // Run `n` free tokens ("Hello" each) through a processor; returns the last step's info and logits.
    const run = (options, n) => {
      const steps = [];
      const proc = new GrammarLogitsProcessor(store, { trigger: '```json\n', prefetchMs: 0, onStep: (s) => steps.push(s), ...options });
      const ids = [[1n]];
      let logits;
      for (let k = 0; k <= n; k++) {
        logits = tensor(1, V);
        proc(ids, logits);
        if (k < n) ids[0].push(BigInt(word));
      }
      proc.free();
      return { steps, logits };
    };
    // Default: no forcing, one warning after 256 free tokens (none before).
    let { steps, logits } = run({}, 255);
    assert.deepEqual(warnings, []);
    assert.deepEqual([steps.at(-1).phase, steps.at(-1).freeTokens], ['free', 255]);
    ({ steps, logits } = run({}, 300));
    assert.equal(warnings.length, 1, 'once per processor, not once per step');
    assert.match(warnings[0], /^grammask: row 0 wrote 256 tokens without the trigger "```json\\n", so the constraint does not apply yet; maxFreeTokens forces/);
    assert.deepEqual([steps.at(-1).phase, steps.at(-1).freeTokens], ['free', 300]);
    assert.equal(logits.data[word], 0, 'still free: no forcing by default');
    assert.equal(logits.data[EOS], -Infinity, 'triggerRequired: EOS refused before the trigger');
    // freeTokensWarning: earlier (and Infinity: never).
    warnings.length = 0;
    run({ freeTokensWarning: 3 }, 10);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /wrote 3 tokens without the trigger/);
    warnings.length = 0;
    run({ freeTokensWarning: Infinity }, 300);
    assert.deepEqual(warnings, []);
    // maxFreeTokens: the warning says the trigger is forced, and the mask allows only its continuations.
    ({ steps, logits } = run({ maxFreeTokens: 5 }, 5));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /wrote 5 tokens without the trigger .*; from now on only tokens that continue the trigger are allowed \(maxFreeTokens: 5\)/);
    assert.equal(logits.data[word], -Infinity, 'forced: free text refused');
    assert.equal(logits.data[ticks], 0, 'forced: the trigger\'s start allowed');
    assert.equal(steps.at(-1).freeTokens, 5);
    // freeTokensWarning: Infinity silences it at maxFreeTokens too (a reasoning budget is not a surprise); the forcing stays.
    warnings.length = 0;
    ({ steps, logits } = run({ maxFreeTokens: 5, freeTokensWarning: Infinity }, 5));
    assert.deepEqual(warnings, []);
    assert.equal(logits.data[word], -Infinity, 'forced without a warning: free text refused');
    assert.equal(logits.data[ticks], 0);
    // No warning when the trigger appears in time.
    warnings.length = 0;
    const proc = new GrammarLogitsProcessor(store, { trigger: '```json\n', freeTokensWarning: 2, prefetchMs: 0 });
    const ids = [[1n]];
    proc(ids, tensor(1, V));
    for (const t of ['```', 'json', '\n', '{"']) { ids[0].push(BigInt(tokenIdOf(store, t))); proc(ids, tensor(1, V)); }
    assert.deepEqual(proc.phases, ['constrained']);
    for (let k = 0; k < 4; k++) { ids[0].push(BigInt(tokenIdOf(store, 'a'))); proc(ids, tensor(1, V)); }
    assert.deepEqual(warnings, [], 'the trigger appeared at once (its first 2 tokens count as free ones, but the row was writing it)');
    proc.free();
    assert.throws(() => new GrammarLogitsProcessor(store, { freeTokensWarning: -1 }), /freeTokensWarning must be a number >= 0/);
  } finally {
    console.warn = warn;
    store.free();
  }
});

/** The test's length budget (see the header). */
function lengthBias(tok, promptLen) {
  const closers = [...new Set(['"', '}', ']', ')', '\n', '"}', '"]', '}}', ']]', '))', '\n\n', '0', '"\n', ')\n', "'"]
    .flatMap((s) => tok.encode(s, { add_special_tokens: false })))];
  const c = (ids, logits) => {
    const d = logits.data, w = logits.dims[1];
    for (let r = 0; r < ids.length; r++) {
      const n = ids[r].length - promptLen;
      d[r * w + EOS] += n < 6 ? -10 : 8;
      if (n > 12) for (const id of closers) d[r * w + id] += Math.min(2 * (n - 12), 24);
    }
    return logits;
  };
  return c;
}

const bytesOf = (store, ids) => Buffer.concat(ids.map((id) => Buffer.from(store.tokenBytes(id))));

async function loadTf() {
  const tf = await import(TF);
  tf.env.allowRemoteModels = false;
  tf.env.localModelPath = path.join(ROOT, 'models') + path.sep;
  return tf;
}

for (const grammar of ['json', 'python']) {
  test(`transformers.js generate (${MODEL}, sampled) under ${grammar}.lark: every finished text parses`, async (t) => {
    needModel();
    const tf = await loadTf();
    const store = MaskStore.fromBytes(fs.readFileSync(blobPath(grammar)));
    const tok = await tf.AutoTokenizer.from_pretrained(MODEL);
    const model = await tf.AutoModelForCausalLM.from_pretrained(MODEL, { dtype: 'fp32' });
    const count = FULL ? 50 : 10;
    const inputs = tok('Write it:');
    const promptLen = inputs.input_ids.dims[1];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `grammask-tf-${grammar}-`));
    let finished = 0, steps = 0, maskMs = 0, forced = 0, tokens = 0;
    const texts = [];
    const t0 = performance.now();
    let attempts = 0, unfinished = 0;
    for (let n = 0; finished < count && attempts < 2 * count; n++) {
      attempts++;
      const proc = new GrammarLogitsProcessor(store, { onStep: (s) => { steps++; maskMs += s.maskMs; if (s.forced) forced++; } });
      const out = await model.generate({ ...inputs, max_new_tokens: 200, do_sample: true, logits_processor: [lengthBias(tok, promptLen), proc] });
      const ids = out.tolist()[0].slice(promptLen).map(Number);
      tokens += ids.length;
      // The matcher agrees with what was generated (commits are checked on every step).
      assert.ok(ids.length > 0);
      // Out of max_new_tokens: a valid prefix (every token was committed), not counted.
      if (ids.at(-1) !== EOS) { unfinished++; proc.free(); continue; }
      finished++;
      const text = bytesOf(store, ids.slice(0, -1));
      fs.writeFileSync(path.join(dir, `g${String(n).padStart(3, '0')}.txt`), text);
      texts.push(text.toString('utf8'));
      proc.free();
    }
    const ms = performance.now() - t0;
    t.diagnostic(`${grammar}: ${finished} of ${attempts} generations finished with EOS (${unfinished} ran out of max_new_tokens), ${tokens} tokens, ${(tokens / ms * 1000).toFixed(0)} tokens/s, `
      + `mask ${(maskMs / steps).toFixed(2)} ms/step (compute + apply, 128256 logits), ${forced} forced steps`);
    assert.equal(finished, count, `${count} generations ended with EOS within ${2 * count} attempts`);
    if (grammar === 'json') {
      for (const s of texts) assert.doesNotThrow(() => JSON.parse(s), `JSON.parse(${JSON.stringify(s)})`);
    }
    // Native recognizer for both grammars.
    const lines = cli(['parse', '--json', '--grammar', path.join(ROOT, 'grammars', `${grammar}.lark`), dir], { okCodes: [0, 1] })
      .split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.file);
    assert.equal(lines.length, finished);
    assert.deepEqual(lines.filter((l) => !l.ok), [], 'every generated text parses natively');
    if (grammar === 'python') {
      // CPython's opinion (the grammar is Python 3.11's).
      // Reported, not asserted: python.lark accepts indentation before the
      // first statement (" x = 1"), which CPython refuses ("unexpected indent").
      const bad = pyCompileFailures(dir);
      t.diagnostic(`CPython compile(): ${finished - bad.length}/${finished} accepted${bad.length ? '; refused: ' + bad.slice(0, 3).join(' | ') : ''}`);
    }
    fs.rmSync(dir, { recursive: true });
    await model.dispose();
    store.free();
  });
}

function pyCompileFailures(dir) {
  const script = 'import sys,os\nbad=[]\nfor f in sorted(os.listdir(sys.argv[1])):\n'
    + '    src=open(os.path.join(sys.argv[1],f),"rb").read()\n'
    + '    try: compile(src,f,"exec")\n    except (SyntaxError, ValueError) as e: bad.append(f+": "+str(e))\nprint("\\n".join(bad))\n';
  return execPython(script, dir).split('\n').filter(Boolean);
}

function execPython(script, arg) {
  return execFileSync('python3', ['-c', script, arg], { encoding: 'utf8' });
}

test('GrammarLogitsProcessor: the idle-time hook warms the first mask, probes the event loop after the first step, then speculates each row\'s likeliest token (matchers unchanged), prefetches; off with prefetchMs: 0', async () => {
  const { PreparedVocab, compile } = await import('grammask');
  const vocab = PreparedVocab.fromTokenizerJson(fs.readFileSync(path.join(ROOT, 'models/llama3/tokenizer.json'), 'utf8'), { eosTokenIds: [EOS] });
  const store = compile(vocab, { type: 'lark', grammar: fs.readFileSync(path.join(ROOT, 'grammars/json.lark'), 'utf8') });
  const V = store.vocabSize;
  const idOf = (text) => { for (let id = 0; id < V; id++) if (new TextDecoder().decode(store.tokenBytes(id)) === text) return id; throw new Error(text); };
  const [open, brace, one, quote] = [idOf('['), idOf('{'), idOf('1'), idOf('"')];
  const events = [];
  class Spy extends Matcher {
    fillMask(out, off) { events.push('fill'); return super.fillMask(out, off); }
    commitToken(id) { events.push(`commit ${id}`); return super.commitToken(id); }
    rollback(n) { events.push(`rollback ${n ?? 1}`); return super.rollback(n); }
    prefetch(ms) { events.push(`prefetch ${ms > 0 && ms <= 3}`); return super.prefetch(ms); }
  }
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const logits = (...best) => { const t = tensor(best.length, V); best.forEach((id, i) => { t.data[i * V + id] = 5; }); return t; };
  const proc = new GrammarLogitsProcessor(store, { Matcher: Spy, prefetchMs: 3 });
  assert.equal(proc.prefetchTimeMs, 0);
  await tick();
  assert.equal(events.length, 3, events.join());
  assert.equal(events[0], 'fill', 'before the first step: one matcher computes the initial mask');
  assert.match(events[1], /^commit \d+$/, 'and commits one token (a loaded store decodes its token bytes then)');
  assert.equal(events[2], 'rollback 1', 'rolled back');
  const warmed = proc.spare;
  events.length = 0;
  proc([[1n], [2n]], logits(open, brace));
  assert.equal(proc.matchers[0], warmed, 'the first row takes the warmed matcher');
  assert.deepEqual(events, ['fill', 'fill'], 'during the step: only the two masks');
  events.length = 0;
  // Event-loop turns, not a fixed time: the hook's probe counts turns (a loaded machine delays timers).
  for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 1));
  assert.deepEqual(events, [], 'after the first step the hook only probes whether the event loop turns while the model runs');
  proc([[1n, BigInt(open)], [2n, BigInt(brace)]], logits(one, quote));
  assert.equal(proc.idle, true, 'the loop turned');
  events.length = 0;
  await tick();
  // Row 0 always speculates; row 1 and the prefetch only within the 3 ms budget.
  assert.deepEqual(events.slice(0, 3), [`commit ${one}`, 'fill', 'rollback 1'], 'row 0: its likeliest token, its mask, rolled back');
  const rest = events.slice(3).join(',');
  assert.match(rest, /^(commit \d+,fill,rollback 1,?)?(prefetch true)?$/, rest);
  if (rest.startsWith('commit')) assert.equal(events[3], `commit ${quote}`);
  assert.ok(proc.prefetchTimeMs > 0);
  // The matchers are unchanged: the next step commits other tokens, and its masks equal fresh matchers'.
  events.length = 0;
  proc([[1n, BigInt(open), BigInt(open)], [2n, BigInt(brace), BigInt(quote)]], logits(one, one));
  const fresh = (...ids) => { const m = new Matcher(store); for (const id of ids) m.commitToken(id); const w = m.computeMask(); m.free(); return w; };
  const masks = proc.matchers.map((m) => m.computeMask());
  assert.deepEqual(masks[0], fresh(open, open));
  assert.deepEqual(masks[1], fresh(brace, quote));
  const off = new GrammarLogitsProcessor(store, { Matcher: Spy, prefetchMs: 0 });
  await tick();
  events.length = 0;
  off([[1n]], logits(open));
  await tick();
  assert.deepEqual(events, ['fill'], 'prefetchMs: 0 turns the hook off (only the step\'s own mask)');
  assert.throws(() => new GrammarLogitsProcessor(store, { prefetchMs: -1 }), /prefetchMs must be a number >= 0/);
  proc.free(); off.free(); store.free();
});

test('GrammarLogitsProcessor: the idle-time hook stands by after a step whose forward pass blocked the thread', async () => {
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const V = store.vocabSize;
  const idOf = (text) => { for (let id = 0; id < V; id++) if (new TextDecoder().decode(store.tokenBytes(id)) === text) return id; throw new Error(text); };
  const [open, one] = [idOf('['), idOf('1')];
  const events = [];
  class Spy extends Matcher {
    commitToken(id) { events.push(`commit ${id}`); return super.commitToken(id); }
  }
  const logits = (id) => { const t = tensor(1, V); t.data[id] = 5; return t; };
  const proc = new GrammarLogitsProcessor(store, { Matcher: Spy, prefetchMs: 4 });
  await new Promise((r) => setTimeout(r, 5));
  proc([[1n]], logits(open));
  await new Promise((r) => setTimeout(r, 0)); // the hook runs; then the next step comes at once (a blocking forward pass)
  events.length = 0;
  proc([[1n, BigInt(open)]], logits(one));
  assert.equal(proc.idle, false, 'no event-loop turns between the hook and this step');
  events.length = 0;
  const turns = async (n) => { for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 1)); };
  await turns(10);
  assert.deepEqual(events, [], 'standing by: no speculation');
  proc([[1n, BigInt(open), BigInt(one)]], logits(one));
  assert.equal(proc.idle, true, 'the loop turned while "the model ran"');
  events.length = 0;
  await turns(10);
  assert.equal(events[0], `commit ${one}`, 'working again: the likeliest token is speculated');
  proc.free(); store.free();
});

test('GrammarLogitsProcessor: the idle-time hook changes no mask (trigger, closing, free text after; greedy logits)', async () => {
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const V = store.vocabSize;
  const byText = new Map();
  for (let id = 0; id < V; id++) { const t = new TextDecoder().decode(store.tokenBytes(id)); if (t && !byText.has(t)) byText.set(t, id); }
  const tokenize = (text) => { // longest match: any spelling of the text will do
    const ids = [];
    for (let i = 0; i < text.length;) {
      let n = Math.min(16, text.length - i);
      while (n > 1 && !byText.has(text.slice(i, i + n))) n--;
      ids.push(byText.get(text.slice(i, i + n)));
      i += n;
    }
    return ids;
  };
  const text = 'Sure:\n```json\n{"a": [1, 2],\n "b": "x\\n"}\n```\nDone.';
  const ids = tokenize(text);
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const run = async (prefetchMs) => {
    const proc = new GrammarLogitsProcessor(store, { trigger: '```json\n', closing: '\n```', prefetchMs });
    await tick();
    const out = [];
    for (let k = 0; k < ids.length; k++) {
      const t = tensor(1, V);
      t.data[ids[k]] = 5; // greedy picks the text's next token: the hook speculates it
      proc([[1n, ...ids.slice(0, k).map(BigInt)]], t);
      out.push(Uint8Array.from(t.data, (x) => (x === -Infinity ? 0 : 1)));
      await tick();
    }
    const spent = proc.prefetchTimeMs;
    proc.free();
    return { out, spent };
  };
  const off = await run(0), on = await run(4);
  assert.equal(off.spent, 0);
  assert.ok(on.spent > 0, 'the hook ran');
  for (let k = 0; k < ids.length; k++) assert.deepEqual(on.out[k], off.out[k], `step ${k}: the same allowed ids with and without the hook`);
  store.free();
});

test('transformers.js text-generation pipeline, batch of 2 (left padding), greedy', async (t) => {
  needModel();
  const tf = await loadTf();
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const gen = await tf.pipeline('text-generation', MODEL, { dtype: 'fp32' });
  const tok = gen.tokenizer;
  const proc = new GrammarLogitsProcessor(store);
  const prompts = ['A JSON value:', 'Hi'];
  const out = await gen(prompts, { max_new_tokens: 60, do_sample: false, logits_processor: [lengthBias(tok, 0), proc] });
  assert.equal(out.length, 2);
  for (let r = 0; r < 2; r++) {
    const full = out[r][0].generated_text;
    assert.ok(full.startsWith(prompts[r]));
    const gen = full.slice(prompts[r].length);
    t.diagnostic(`row ${r}: ${JSON.stringify(gen).slice(0, 120)}`);
    assert.ok(proc.matchers[r].isAccepting() || proc.matchers[r].isStopped(), `row ${r} ends in an accepting state`);
    assert.doesNotThrow(() => JSON.parse(gen), `row ${r}: ${gen}`);
  }
  await gen.dispose();
  store.free();
});
