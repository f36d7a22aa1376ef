// grammask/transformers StructuredOutputProcessor with a real transformers.js
// tokenizer (Llama-3, from models/tiny-random-llama3 via AutoTokenizer):
//  - the chat-shaped rules (trigger, closing) keep masks exact: at every step
//    of random walks, the processor's mask is compared with a brute-force
//    reference over all 128,256 tokens (a token is allowed iff text + token is
//    a prefix of FREE · trigger · L · closing · FREE, with the first trigger);
//  - completion rules (EOS only once nothing but whitespace can follow; a
//    bounded whitespace run), batches (one state per row), refusals (a store
//    for another tokenizer, logits of another width, a refused token),
//    LogitsProcessorList compatibility, caches and warmup;
//  - with the tiny random-weight model, generate() under trigger + closing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { MaskStore, PreparedVocab, compile } from 'grammask';
import { StructuredOutputProcessor, GrammarLogitsProcessor } from 'grammask/transformers';
import { ROOT, bit, blobPath, rng, fixture } from './helpers.mjs';

const TF = path.join(ROOT, 'www/node_modules/@huggingface/transformers/dist/transformers.node.mjs');
const MODEL = 'tiny-random-llama3';
const EOS = 128001, V = 128256;

let tfp = null;
async function tf() {
  if (!tfp) {
    // Missing fixtures fail (scripts/setup/setup.sh provides them).
    fixture(TF, 'run scripts/setup/setup.sh (transformers.js)');
    fixture(path.join('models', MODEL, 'tokenizer.json'), 'run scripts/setup/setup.sh (models/tiny-random-llama3)');
    tfp = import(TF).then((m) => {
      m.env.allowRemoteModels = false;
      m.env.localModelPath = path.join(ROOT, 'models') + path.sep;
      return m;
    });
  }
  return tfp;
}
let tokp = null;
const tokenizer = async () => (tokp ??= (await tf()).AutoTokenizer.from_pretrained(MODEL));

// A minimal stand-in for transformers.js's Tensor (what _call uses: dims, data).
const tensor = (rows, width) => ({ dims: [rows, width], data: new Float32Array(rows * width) });
const latin1 = (b) => Buffer.from(b).toString('latin1');

// ---- the brute-force reference ------------------------------------------------

/** Token texts (latin1 strings of the bytes) and special flags. */
function tokenTexts(vocab) {
  const tt = vocab.tokenTable();
  const texts = new Array(vocab.vocabSize);
  for (let i = 0; i < texts.length; i++) texts[i] = latin1(tt.bytes.subarray(tt.offsets[i], tt.offsets[i + 1]));
  const special = (id) => bit(tt.special, id) === 1;
  return { texts, special };
}

/**
 * The language FREE · trigger · L · closing · FREE (L finite; trigger or
 * closing may be absent). state(text): 'free' | 'inside' | 'after' | null
 * (not a prefix); complete(text): may the text end here?
 */
function reference(L, trigger, closing) {
  const inside = (s) => { // s: the text after the trigger
    if (L.some((l) => l.startsWith(s))) return 'inside';
    if (closing === undefined) return null;
    for (const l of L) {
      if (!s.startsWith(l)) continue;
      const rest = s.slice(l.length);
      if (rest.startsWith(closing)) return 'after';
      if (closing.startsWith(rest)) return 'inside'; // a closing in progress
    }
    return null;
  };
  const split = (t) => {
    if (trigger === undefined) return t;
    const i = t.indexOf(trigger);
    return i < 0 ? null : t.slice(i + trigger.length);
  };
  return {
    state(t) { const s = split(t); return s === null ? 'free' : inside(s); },
    complete(t) {
      const s = split(t);
      if (s === null) return false; // the trigger is required
      if (closing === undefined) return L.includes(s);
      return L.some((l) => s.startsWith(l) && s.slice(l.length).startsWith(closing));
    },
  };
}

function expectedMask(ref, texts, special, text, eosIds) {
  const st = ref.state(text);
  const allowed = new Set();
  for (let id = 0; id < texts.length; id++) {
    if (eosIds.includes(id)) continue;
    if (special(id)) { if (st === 'free' || st === 'after') allowed.add(id); continue; }
    if (texts[id] && ref.state(text + texts[id]) !== null) allowed.add(id);
  }
  if (ref.complete(text)) for (const e of eosIds) allowed.add(e);
  return allowed;
}

/**
 * One random walk: at every step the processor's mask equals the reference.
 * While the text is a proper prefix of `target`, a random allowed token that
 * keeps it so (every tokenization of the target is possible, including tokens
 * that straddle the trigger or the closing); then random allowed tokens.
 */
function walk(proc, ref, { texts, special }, seed, steps, target) {
  const r = rng(seed);
  const ids = [[128000n]];
  let text = '';
  let checked = 0;
  for (let step = 0; step < steps; step++) {
    const logits = tensor(1, V);
    proc(ids, logits);
    const got = [];
    for (let i = 0; i < V; i++) if (logits.data[i] === 0) got.push(i);
    const want = expectedMask(ref, texts, special, text, [EOS]);
    const gotSet = new Set(got);
    const extra = got.filter((i) => !want.has(i)).slice(0, 5).map((i) => [i, texts[i]]);
    const missing = [...want].filter((i) => !gotSet.has(i)).slice(0, 5).map((i) => [i, texts[i]]);
    assert.deepEqual({ extra, missing }, { extra: [], missing: [] }, `seed ${seed} step ${step}, text ${JSON.stringify(text)}`);
    checked++;
    if (got.length === 0 || (got.length === 1 && got[0] === EOS)) break;
    const pool = got.filter((i) => i !== EOS && texts[i] && target.startsWith(text + texts[i]));
    const pick = pool.length ? pool[r.below(pool.length)] : got[r.below(got.length)];
    if (pick === EOS) break;
    ids[0].push(BigInt(pick));
    text += texts[pick];
  }
  return { text, checked };
}

const L = ['yes', 'no', 'no way', 'y', 'maybe\nso'];
const GRAMMAR = 'start: "yes" | "no" | "no way" | "y" | "maybe\\nso"\n';

for (const [name, trigger, closing] of [
  ['trigger + closing', '```json\n', '\n```'],
  ['closing only', undefined, '\n```'],
  ['trigger only', '```json\n', undefined],
]) {
  test(`StructuredOutputProcessor (${name}): masks equal a brute-force reference at every step`, async (t) => {
    const tok = await tokenizer();
    const proc0 = new StructuredOutputProcessor(tok, { type: 'lark', grammar: GRAMMAR }, { trigger, closing });
    const tt = tokenTexts(proc0.vocab);
    const ref = reference(L, trigger, closing);
    const targets = [
      'Here:\n```json\nno way\n```\nDone.', '```json\nmaybe\nso\n```', 'x```json\ny\n```\n', 'no\n```', 'yes\n```!', '```json\nyes',
    ].filter((x) => ref.state(x) !== null);
    let checked = 0;
    const ends = [];
    for (let k = 0; k < 2 * targets.length; k++) {
      const proc = new StructuredOutputProcessor(tok, { type: 'lark', grammar: GRAMMAR }, { trigger, closing });
      assert.equal(proc.store, proc0.store, 'the compiled store is cached per tokenizer and format');
      const target = targets[k % targets.length];
      const w = walk(proc, ref, tt, k * 7 + name.length, target.length + 4, target);
      checked += w.checked;
      // Every walk went through its target (then, maybe, on past it).
      assert.ok(w.text.startsWith(target), `the walk followed ${JSON.stringify(target)}: ${JSON.stringify(w.text)}`);
      ends.push(w.text);
      proc.free();
    }
    t.diagnostic(`${checked} masks checked over ${V} tokens; walks: ${ends.map((e) => JSON.stringify(e.slice(0, 40))).join(', ')}`);
  });
}

test('StructuredOutputProcessor: stop when complete, bounded trailing whitespace', async () => {
  const tok = await tokenizer();
  const vocab = PreparedVocab.fromTokenizer(tok);
  const tid = (s) => { const ids = tok.encode(s, { add_special_tokens: false }); assert.equal(ids.length, 1, s); return ids[0]; };
  const run = (proc, pieces) => {
    const ids = [[128000n]];
    let logits = tensor(1, V);
    proc(ids, logits);
    for (const p of pieces) {
      ids[0].push(BigInt(tid(p)));
      logits = tensor(1, V);
      proc(ids, logits);
    }
    const allowed = [];
    for (let i = 0; i < V; i++) if (logits.data[i] === 0) allowed.push(i);
    return allowed;
  };
  const braces = { type: 'lark', grammar: 'start: "{" "}"\n%ignore /[ \\t\\n]+/\n' };
  // After "{}" only whitespace could follow: EOS only.
  assert.deepEqual(run(new StructuredOutputProcessor(tok, braces), ['{', '}']), [EOS]);
  // Without the rule: whitespace tokens and EOS.
  const loose = run(new StructuredOutputProcessor(tok, braces, { stopWhenComplete: false }), ['{', '}']);
  assert.ok(loose.includes(EOS) && loose.includes(tid('\n')) && loose.includes(tid('  ')) && loose.length > 100);
  // A run of whitespace while complete: at most maxTrailingWhitespace tokens.
  const as = { type: 'lark', grammar: 'start: "a"+\n%ignore " "\n' };
  const two = run(new StructuredOutputProcessor(tok, as, { maxTrailingWhitespace: 2 }), ['a', ' ', ' ']);
  assert.deepEqual(two, [EOS]);
  const one = run(new StructuredOutputProcessor(tok, as, { maxTrailingWhitespace: 2 }), ['a', ' ']);
  assert.ok(one.includes(tid('a')) && one.includes(tid(' ')) && one.includes(EOS));
  // Extra EOS ids (the model's generation config) count as EOS too.
  const gen = run(new StructuredOutputProcessor(tok, braces, { generationConfig: { eos_token_id: [128001, 128009] } }), ['{', '}']);
  assert.deepEqual(gen, [EOS, 128009]);
  vocab.free();
});

test('StructuredOutputProcessor: batches, refusals, LogitsProcessorList, warmup and caches', async () => {
  const T = await tf();
  const tok = await tokenizer();
  // The warm-up walks its whole instance through the masks (with this
  // vocabulary and the processor's default whitespace), once.
  assert.equal(StructuredOutputProcessor.warmup(tok), true, 'the warm-up instance is walked to its end');
  assert.equal(StructuredOutputProcessor.warmup(tok), true);
  const fmt = { type: 'lark', grammar: 'start: ("a" | "b")+ "."\n' };
  const t0 = performance.now();
  const proc = new StructuredOutputProcessor(tok, fmt, { trigger: ':' });
  const t1 = performance.now();
  const again = new StructuredOutputProcessor(tok, fmt, { trigger: ':' });
  const t2 = performance.now();
  assert.equal(proc.vocab, again.vocab, 'one vocabulary per tokenizer');
  assert.equal(proc.store, again.store, 'one store per tokenizer and format');
  assert.notEqual(new StructuredOutputProcessor(tok, fmt, { cache: false }).store, proc.store);
  const tid = (s) => tok.encode(s, { add_special_tokens: false })[0];
  // Three rows, each with its own state.
  const ids = [[1n], [1n, 2n], [1n]];
  proc(ids, tensor(3, V));
  ids[0].push(BigInt(tid(':'))); ids[1].push(BigInt(tid('Hi'))); ids[2].push(BigInt(tid(':')));
  proc(ids, tensor(3, V));
  ids[0].push(BigInt(tid('a'))); ids[1].push(BigInt(tid(':'))); ids[2].push(BigInt(tid('b')));
  let l = tensor(3, V);
  proc(ids, l);
  assert.deepEqual(proc.phases, ['constrained', 'constrained', 'constrained']);
  assert.equal(l.data[V + tid('a')], 0, 'row 1 just entered the constrained part');
  assert.equal(l.data[V + tid('.')], -Infinity, 'row 1: "." needs a letter first');
  assert.equal(l.data[tid('.')], 0, 'row 0 may end its sentence');
  // A refused token throws, naming the row and the token.
  ids[0].push(BigInt(tid('x'))); ids[1].push(BigInt(tid('a'))); ids[2].push(BigInt(tid('a')));
  assert.throws(() => proc(ids, tensor(3, V)), /row 0: token \d+ .* is not allowed by the grammar/);
  // EOS before the trigger (required by default) is refused.
  const p2 = new StructuredOutputProcessor(tok, fmt, { trigger: ':' });
  p2([[1n]], tensor(1, V));
  assert.throws(() => p2([[1n, BigInt(EOS)]], tensor(1, V)), /EOS before the trigger string/);
  // Logits of another width: the store was built for another tokenizer.
  const p3 = new StructuredOutputProcessor(tok, fmt);
  assert.throws(() => p3([[1n]], tensor(1, 49152)), /logits are 49152 wide but the store's vocabulary has 128256 tokens/);
  assert.throws(() => p3([[1n]], tensor(1, V + 5000)), /more than maxLogitsPadding = 1024/);
  p3([[1n]], tensor(1, V + 64)); // padding is fine
  // A store built for another tokenizer is refused up front.
  const qdir = path.join(ROOT, 'models/qwen3');
  const qwen = PreparedVocab.fromTokenizerJson(fs.readFileSync(path.join(qdir, 'tokenizer.json'), 'utf8'),
    { tokenizerConfig: fs.readFileSync(path.join(qdir, 'tokenizer_config.json'), 'utf8') });
  const qstore = compile(qwen, { type: 'lark', grammar: 'start: "a"' });
  assert.throws(() => new StructuredOutputProcessor(tok, { type: 'store', store: qstore }), (e) => e.kind === 'BlobTokenizer' && /another tokenizer/.test(e.message));
  assert.throws(() => new GrammarLogitsProcessor(qstore, { tokenizer: tok }), (e) => e.kind === 'BlobTokenizer');
  const jstore = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  new GrammarLogitsProcessor(jstore, { tokenizer: tok }).free(); // the right one passes
  new StructuredOutputProcessor(tok, { type: 'store', store: jstore }).free();
  // Options are JS names; unknown ones are refused.
  assert.throws(() => new StructuredOutputProcessor(tok, fmt, { stopWhenDone: true }), /unknown option stopWhenDone/);
  assert.throws(() => new StructuredOutputProcessor(tok, fmt, { trigger: '' }), /trigger must be a non-empty string/);
  assert.throws(() => new StructuredOutputProcessor({}, fmt), /transformers\.js tokenizer/);
  // transformers.js's own list takes it as a list (extend) or as one processor.
  const list = new T.LogitsProcessorList();
  const p4 = new StructuredOutputProcessor(tok, fmt);
  list.extend(p4);
  assert.equal(list.processors.length, 1);
  assert.equal(list.processors[0], p4.processor);
  const list2 = new T.LogitsProcessorList();
  list2.push(p4);
  const l4 = tensor(1, V);
  list2([[1n]], l4);
  assert.equal(l4.data[tid('a')], 0);
  assert.equal(l4.data[tid('.')], -Infinity);
  // Time to construct with the tokenizer prepared (store compiled / cached).
  assert.ok(t1 - t0 < 60_000 && t2 - t1 < 1_000, `construction ${(t1 - t0).toFixed(1)} ms, cached ${(t2 - t1).toFixed(1)} ms`);
  for (const p of [proc, again, p2, p3, p4]) p.free();
  qstore.free(); qwen.free(); jstore.free();
});

test('StructuredOutputProcessor: refs for remote $ref, one cached store per registry', async () => {
  const tok = await tokenizer();
  const fmt = { type: 'json_schema', json_schema: { $id: 'https://example.com/s.json', type: 'object',
    properties: { v: { $ref: 'defs.json#/$defs/v' } }, required: ['v'], additionalProperties: false } };
  assert.throws(() => new StructuredOutputProcessor(tok, fmt), (e) => e.kind === 'Schema' && /"https:\/\/example\.com\/defs\.json".*refs/.test(e.message));
  const as = (type) => new StructuredOutputProcessor(tok, fmt, { refs: { 'https://example.com/defs.json': { $defs: { v: { type } } } } });
  const pi = as('integer'), ps = as('string');
  assert.notEqual(pi.store, ps.store, 'the registry is part of the cache key');
  const again = as('integer');
  assert.equal(again.store, pi.store);
  again.free();
  const prefix = tok.encode('{"v":', { add_special_tokens: false }).map(BigInt);
  const tid = (x) => tok.encode(x, { add_special_tokens: false })[0];
  for (const [p, int] of [[pi, true], [ps, false]]) {
    const ids = [1n];
    for (const id of prefix) { p([ids], tensor(1, V)); ids.push(id); }
    const l = tensor(1, V);
    p([ids], l);
    assert.equal(l.data[tid('7')], int ? 0 : -Infinity, `digit after {"v": (${int ? 'integer' : 'string'})`);
    assert.equal(l.data[tid('"')], int ? -Infinity : 0, `quote after {"v": (${int ? 'integer' : 'string'})`);
    p.free();
  }
});

test('transformers.js generate with the tiny random model under trigger + closing', async (t) => {
  fixture(path.join('models', MODEL, 'onnx/model.onnx'), 'run scripts/setup/build-test-models.sh');
  const T = await tf();
  const tok = await tokenizer();
  const model = await T.AutoModelForCausalLM.from_pretrained(MODEL, { dtype: 'fp32' });
  const inputs = tok(['Answer:', 'Please answer:'], { padding: true });
  // A random model never writes the trigger by itself: after 3 free tokens it is forced.
  const proc = new StructuredOutputProcessor(tok, { type: 'lark', grammar: GRAMMAR },
    { trigger: '```json\n', closing: '\n```', maxFreeTokens: 3, onStep: (s) => { phases.add(s.phase); } });
  const phases = new Set();
  const out = await model.generate({ ...inputs, max_new_tokens: 40, do_sample: true, logits_processor: proc });
  const n = inputs.input_ids.dims[1];
  const ref = reference(L, '```json\n', '\n```');
  for (const row of out.tolist()) {
    const gen = row.slice(n).map(Number);
    const text = latin1(Buffer.concat(gen.filter((id) => id !== EOS).map((id) => Buffer.from(proc.vocab.tokenBytes(id)))));
    t.diagnostic(`generated: ${JSON.stringify(text)}`);
    assert.notEqual(ref.state(text), null, 'a prefix of the language');
    assert.ok(text.includes('```json\n'), 'the trigger was forced after 3 free tokens');
  }
  assert.ok(phases.has('free') && phases.has('constrained'));
  await model.dispose();
});
