// grammask × transformers.js (`@huggingface/transformers` 4.x): logits
// processors that constrain `generate()` / `pipeline(...)`.
//
//   import { StructuredOutputProcessor } from 'grammask/transformers';
//   const processor = new StructuredOutputProcessor(tokenizer, { type: 'json_schema', json_schema: schema });
//   await model.generate({ ...inputs, max_new_tokens: 256, logits_processor: processor });
//
// `StructuredOutputProcessor(tokenizer, responseFormat, options?)` has the
// name and argument shape of @huggingface/transformers-structured-output: it
// reads the vocabulary from the transformers.js tokenizer (cached per
// tokenizer), compiles the response format (cached per vocabulary and
// format) and behaves as a `LogitsProcessorList` holding one processor.
// `GrammarLogitsProcessor(store, options?)` is the same engine for a
// MaskStore (e.g. a blob compiled offline).
//
// Semantics of one call `(input_ids, logits)` (transformers.js calls it once
// per generation step with every row's ids so far and the next-token logits,
// a float32 Tensor [batch, width]):
//  - first call (or a new generation, see `_isContinuation`): every row's
//    length is recorded as its prompt length; nothing is committed (the
//    constraint applies to the generated text only);
//  - later calls: the tokens appended to each row since the previous call are
//    committed to that row's state; a token the constraint refuses throws (it
//    means something after this processor changed the choice, or the store
//    was built for another tokenizer: the constraint is never silently dropped);
//  - then each row's logits outside its mask become -Infinity.
//  - EOS: the store's EOS ids are allowed exactly when the text is complete;
//    `eosTokenIds` / `generationConfig` / `model` add ids that count as EOS
//    too. Once a row committed an EOS, only EOS ids are allowed for it (rows
//    that finished early in a batch keep producing EOS until the batch stops).
//  - Stopping as soon as the output is complete (`stopWhenComplete`, default
//    true): once the text is complete and nothing but whitespace could follow
//    (a JSON value after its last `}`), only EOS is allowed; and while it is
//    complete at most `maxTrailingWhitespace` (default 4) whitespace-only
//    tokens may follow each other before only EOS is allowed.
//  - Chat-shaped output (`trigger`, `closing`): the model writes freely until
//    its text contains `trigger` (e.g. "```python\n"), then the constraint
//    applies from the byte after it, and (with `closing`, e.g. "\n```") the
//    constrained part ends where the closing string follows a complete
//    output; the text after it is free again. Masks stay exact: a token that
//    completes the trigger is allowed only if its rest starts a valid output;
//    a token that completes the output and begins the closing is allowed.
//
// This file imports the package itself ('grammask').
import { Matcher as DefaultMatcher, MaskStore, PreparedVocab, compile } from 'grammask';

const NEG_INF_F16 = 0xfc00; // -Infinity as IEEE 754 binary16 bits

/**
 * Set every logit whose bit is clear in `mask` to -Infinity (in place).
 * `logits`: Float32Array / Float64Array, or a Uint16Array of float16 bits
 * (or a Float16Array). Ids >= 32 * mask.length are masked too.
 * Returns the number of allowed ids within `logits`.
 */
export function applyMask(logits, mask) {
  if (!(mask instanceof Uint32Array)) throw new TypeError('grammask: applyMask expects the mask as a Uint32Array');
  let neg;
  if (logits instanceof Float32Array || logits instanceof Float64Array) neg = -Infinity;
  else if (logits instanceof Uint16Array) neg = NEG_INF_F16;
  else if (typeof Float16Array === 'function' && logits instanceof Float16Array) neg = -Infinity;
  else throw new TypeError('grammask: applyMask expects a Float32Array, Float64Array, Float16Array or Uint16Array (float16 bits)');
  const n = logits.length;
  const full = Math.min(mask.length, n >>> 5);
  let allowed = 0;
  let w = 0;
  while (w < full) {
    const bits = mask[w];
    if (bits === 0) {
      // A run of empty words: one fill.
      let e = w + 1;
      while (e < full && mask[e] === 0) e++;
      logits.fill(neg, w << 5, e << 5);
      w = e;
      continue;
    }
    w++;
    if (bits === 0xffffffff) { allowed += 32; continue; }
    allowed += popcount(bits);
    // Clear the ids whose bit is clear, lowest first.
    const base = (w - 1) << 5;
    let z = ~bits;
    while (z !== 0) {
      logits[base + bitIndex(z)] = neg;
      z &= z - 1;
    }
  }
  // The tail: a partial word, then ids the mask does not cover.
  for (let i = full << 5; i < n; i++) {
    const w = i >>> 5;
    if (w < mask.length && (mask[w] >>> (i & 31)) & 1) allowed++;
    else logits[i] = neg;
  }
  return allowed;
}

// ---- helpers ------------------------------------------------------------------

/** Number of set bits of a 32-bit word. */
function popcount(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Index of the lowest set bit of a non-zero 32-bit word. */
function bitIndex(x) {
  return 31 - Math.clz32(x & -x);
}

function idOf(x) {
  const n = typeof x === 'bigint' ? Number(x) : x;
  if (!Number.isInteger(n) || n < 0) throw new TypeError(`grammask: bad token id in input_ids: ${String(x)}`);
  return n;
}

const isSet = (mask, id) => ((mask[id >>> 5] >>> (id & 31)) & 1) === 1;
const setBit = (mask, id) => { mask[id >>> 5] |= 1 << (id & 31); };
const clearBit = (mask, id) => { mask[id >>> 5] &= ~(1 << (id & 31)); };
const enc = new TextEncoder();

function eosIdsOf(x, what) {
  if (x === undefined || x === null) return [];
  const a = typeof x === 'number' || typeof x === 'bigint' ? [x] : Array.from(x);
  return a.map((v) => {
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (!Number.isInteger(n) || n < 0) throw new TypeError(`grammask: ${what} must hold token ids, got ${String(v)}`);
    return n;
  });
}

/** Extra EOS ids from the options: eosTokenIds, generationConfig.eos_token_id, model.generation_config.eos_token_id. */
function extraEos(options) {
  const out = eosIdsOf(options.eosTokenIds, 'eosTokenIds');
  let gc = options.generationConfig;
  if (typeof gc === 'string') gc = JSON.parse(gc);
  if (gc) out.push(...eosIdsOf(gc.eos_token_id, 'generationConfig.eos_token_id'));
  const mgc = options.model?.generation_config;
  if (mgc) out.push(...eosIdsOf(mgc.eos_token_id, 'model.generation_config.eos_token_id'));
  return out;
}

/** KMP failure function of `p` (bytes). */
function kmpTable(p) {
  const f = new Int32Array(p.length + 1);
  f[0] = -1;
  for (let i = 1, k = -1; i <= p.length; i++) {
    while (k >= 0 && p[k] !== p[i - 1]) k = f[k];
    f[i] = ++k;
  }
  return f;
}

/** KMP step: matched length `j` of `p`, next byte `b`. */
function kmpStep(p, f, j, b) {
  if (j === p.length) j = f[j];
  while (j >= 0 && p[j] !== b) j = f[j];
  return j + 1;
}

function cmpBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// ---- per-vocabulary token data (shared by rows and processors) -----------------

/**
 * The token table of a vocabulary, and what the chat-shaped and completion
 * rules derive from it (lazily, cached per trigger / closing string).
 */
class TokenData {
  constructor(table) {
    this.bytes = table.bytes;
    this.offsets = table.offsets;
    this.special = table.special;
    this.whitespace = table.whitespace;
    this.byteTokens = table.byteTokens;
    this.n = table.offsets.length - 1;
    this.triggers = new Map(); // trigger string -> { p, f, perState: Map }
    this.closings = new Map(); // closing string -> { p, split: entries }
    this.conts = new Map(); // string -> Map(j -> ids continuing it from byte j)
    this.sets = new Map(); // Matcher class -> Map(key -> PrefixSet of that module instance)
  }

  token(id) { return this.bytes.subarray(this.offsets[id], this.offsets[id + 1]); }

  /** The entries as a PrefixSet of the module instance of `Matcher` (cached by key). */
  prefixSet(Matcher, key, entries) {
    let m = this.sets.get(Matcher);
    if (!m) this.sets.set(Matcher, (m = new Map()));
    let set = m.get(key);
    if (!set) {
      set = new Matcher.PrefixSet(entries.map((e) => ({ bytes: e.prefix, id: e.id, accepting: e.accepting })));
      m.set(key, set);
    }
    return set;
  }

  trigger(s) {
    let t = this.triggers.get(s);
    if (!t) {
      const p = enc.encode(s);
      t = { p, f: kmpTable(p), perState: new Map() };
      this.triggers.set(s, t);
    }
    return t;
  }

  /**
   * Tokens that complete the trigger from KMP state `j`: { exact: ids whose
   * last byte completes it, rest: [{ id, prefix: the bytes after it }] sorted }.
   */
  triggerCompletions(t, j) {
    let c = t.perState.get(j);
    if (c) return c;
    const exact = [], rest = [];
    for (let id = 0; id < this.n; id++) {
      if (isSet(this.special, id)) continue;
      const b = this.token(id);
      let k = j;
      for (let i = 0; i < b.length; i++) {
        k = kmpStep(t.p, t.f, k, b[i]);
        if (k === t.p.length) {
          if (i + 1 === b.length) exact.push(id);
          else rest.push({ id, prefix: b.subarray(i + 1), accepting: false });
          break;
        }
      }
    }
    rest.sort((x, y) => cmpBytes(x.prefix, y.prefix));
    c = { exact, rest };
    t.perState.set(j, c);
    return c;
  }

  closing(s) {
    let c = this.closings.get(s);
    if (c) return c;
    const p = enc.encode(s);
    // Tokens u + c where c is a non-empty prefix of the closing or starts with
    // the whole closing (its rest is free text): allowed when the output
    // accepts u and is complete after it. The smallest split per token that
    // matches is not enough (another split may be the valid one): all splits.
    const split = [];
    for (let id = 0; id < this.n; id++) {
      if (isSet(this.special, id)) continue;
      const b = this.token(id);
      for (let k = 0; k < b.length; k++) {
        if (b[k] !== p[0]) continue;
        let ok = true;
        for (let i = k; i < b.length && i - k < p.length; i++) if (b[i] !== p[i - k]) { ok = false; break; }
        if (ok) split.push({ id, prefix: b.subarray(0, k), accepting: true, closes: b.length - k >= p.length });
      }
    }
    split.sort((x, y) => cmpBytes(x.prefix, y.prefix));
    c = { s, p, split };
    this.closings.set(s, c);
    return c;
  }

  /**
   * Tokens continuing string `s` matched up to byte `j`: a prefix of its rest,
   * or the whole rest followed by anything.
   */
  continuations(s, j) {
    let m = this.conts.get(s);
    if (!m) this.conts.set(s, (m = new Map()));
    let ids = m.get(j);
    if (ids) return ids;
    ids = [];
    const rest = enc.encode(s).subarray(j);
    for (let id = 0; id < this.n; id++) {
      if (isSet(this.special, id)) continue;
      const b = this.token(id);
      const m = Math.min(b.length, rest.length);
      let ok = m > 0;
      for (let i = 0; i < m && ok; i++) ok = b[i] === rest[i];
      if (ok) ids.push(id);
    }
    m.set(j, ids);
    return ids;
  }
}

// Per tokenizer fingerprint (tokens and EOS ids): every store and processor
// for one tokenizer shares it, with its trigger and closing tables.
const tokenDataOf = new Map();

function tokenData(source) {
  const isVocab = typeof source.tokenTable === 'function';
  const fp = isVocab ? source.fingerprint : source.tokenizerFingerprint;
  let d = tokenDataOf.get(fp);
  if (!d) {
    if (isVocab) {
      d = new TokenData(source.tokenTable());
    } else {
      const v = source.vocab(); // a MaskStore (of any module instance)
      try { d = new TokenData(v.tokenTable()); } finally { v.free(); }
    }
    tokenDataOf.set(fp, d);
  }
  return d;
}

const checked = new WeakMap(); // MaskStore -> Set of PreparedVocabs it was checked against

function checkStoreOnce(vocab, store) {
  let s = checked.get(store);
  if (s?.has(vocab)) return;
  vocab.checkStore(store);
  if (!s) checked.set(store, (s = new Set()));
  s.add(vocab);
}

/**
 * Which of `entries` ({ id, prefix, accepting }, sorted by prefix) the
 * matcher accepts: their bytes committed one by one (as single-byte tokens)
 * from the matcher's state, and, when `accepting`, the text complete after
 * them; entries whose id is set in the mask `skip` are not tried. Shared
 * prefixes are committed once; a refused byte skips every entry that shares
 * it. The matcher ends where it was. In wasm (Matcher.acceptedPrefixes, one
 * call) when the Matcher class has it; otherwise here. Calls `onHit(id)`;
 * returns the number of commits.
 */
function probe(matcher, data, key, entries, skip, onHit) {
  const M = matcher.constructor;
  if (typeof matcher.acceptedPrefixes === 'function' && typeof M.PrefixSet === 'function') {
    const { ids, commits } = matcher.acceptedPrefixes(data.prefixSet(M, key, entries), data.byteTokens, skip);
    for (const id of ids) onHit(id);
    return commits;
  }
  const path = [];
  let failed = null; // the bytes up to and including a refused one
  let calls = 0;
  for (const e of entries) {
    if (skip.length && isSet(skip, e.id)) continue;
    const pre = e.prefix;
    if (failed && pre.length >= failed.length) {
      let same = true;
      for (let i = 0; i < failed.length; i++) if (pre[i] !== failed[i]) { same = false; break; }
      if (same) continue;
    }
    let l = 0;
    while (l < path.length && l < pre.length && path[l] === pre[l]) l++;
    if (path.length > l) { matcher.rollback(path.length - l); path.length = l; }
    let ok = true;
    for (let i = l; i < pre.length; i++) {
      const t = data.byteTokens[pre[i]];
      calls++;
      if (t < 0 || !matcher.isAllowed(t)) { failed = pre.slice(0, i + 1); ok = false; break; }
      matcher.commitToken(t);
      path.push(pre[i]);
    }
    if (!ok) continue;
    if (e.accepting && !matcher.isAccepting()) continue;
    onHit(e.id);
  }
  if (path.length) matcher.rollback(path.length);
  return calls;
}

const NO_SKIP = new Uint32Array(0);

// ---- the engine ------------------------------------------------------------------

const PHASE_FREE = 0, PHASE_INSIDE = 1, PHASE_AFTER = 2;
const PHASE_NAMES = ['free', 'constrained', 'after'];

/**
 * A transformers.js logits processor constraining every row of a batch to
 * the language of `store`. Callable (transformers.js calls processors as
 * functions), so it works without importing transformers.js itself.
 */
export class GrammarLogitsProcessor {
  /**
   * @param store a MaskStore
   * @param options see transformers.d.ts (GrammarLogitsProcessorOptions)
   */
  constructor(store, options = {}) {
    const closure = function (inputIds, logits) { return closure._call(inputIds, logits); };
    Object.setPrototypeOf(closure, new.target.prototype);
    if (store == null || typeof store.eosTokenIds === 'undefined' || typeof store.vocab !== 'function') {
      throw new TypeError('grammask: GrammarLogitsProcessor expects a MaskStore');
    }
    const o = options ?? {};
    const known = ['eosTokenIds', 'generationConfig', 'model', 'maxRollback', 'onStep', 'Matcher', 'tokenizer', 'trigger', 'closing',
      'triggerRequired', 'maxFreeTokens', 'stopWhenComplete', 'maxTrailingWhitespace', 'maxLogitsPadding', 'refusedTopK'];
    for (const k of Object.keys(o)) if (!known.includes(k)) throw new TypeError(`grammask: unknown option ${k} (known: ${known.join(', ')})`);
    const {
      maxRollback, onStep, Matcher = DefaultMatcher, tokenizer, trigger, closing, triggerRequired = true,
      maxFreeTokens = Infinity, stopWhenComplete = true, maxTrailingWhitespace = 4, maxLogitsPadding = 1024, refusedTopK = 0,
    } = o;
    if (onStep !== undefined && typeof onStep !== 'function') throw new TypeError('grammask: onStep must be a function');
    for (const [k, v] of [['trigger', trigger], ['closing', closing]]) {
      if (v !== undefined && (typeof v !== 'string' || v.length === 0)) throw new TypeError(`grammask: ${k} must be a non-empty string`);
    }
    for (const [k, v] of [['maxFreeTokens', maxFreeTokens], ['maxTrailingWhitespace', maxTrailingWhitespace], ['maxLogitsPadding', maxLogitsPadding], ['refusedTopK', refusedTopK]]) {
      if (typeof v !== 'number' || !(v >= 0)) throw new TypeError(`grammask: ${k} must be a number >= 0`);
    }
    if (typeof stopWhenComplete !== 'boolean' || typeof triggerRequired !== 'boolean') throw new TypeError('grammask: stopWhenComplete and triggerRequired must be booleans');
    // The tokenizer, when given, must be the one the store was built for.
    if (tokenizer !== undefined) checkStoreOnce(vocabFor(tokenizer), store);
    closure.store = store;
    closure.data = tokenData(store);
    const chat = trigger !== undefined || closing !== undefined;
    closure.options = {
      // Probing a closing or a trigger's rest rolls back up to a token's length in bytes.
      maxRollback: maxRollback ?? (chat ? 256 : 8), onStep, Matcher, trigger, closing, triggerRequired, maxFreeTokens,
      stopWhenComplete, maxTrailingWhitespace, maxLogitsPadding, refusedTopK,
    };
    closure.storeEos = Array.from(store.eosTokenIds);
    closure.eos = new Set([...closure.storeEos, ...extraEos(o)]);
    closure.rows = null;
    closure.step = 0;
    return closure;
  }

  /** Forget all rows (the next call starts a new generation). Frees the matchers. */
  reset() {
    if (this.rows) for (const r of this.rows) r.matcher.free();
    this.rows = null;
    this.step = 0;
  }

  /** Free the matchers (the processor can still be used: it starts afresh). */
  free() { this.reset(); }

  /** The row matchers of the current generation (read-only use: isAccepting...). */
  get matchers() { return this.rows ? this.rows.map((r) => r.matcher) : []; }

  /** Per row: 'free' (before the trigger), 'constrained' or 'after' (past the closing). */
  get phases() { return this.rows ? this.rows.map((r) => PHASE_NAMES[r.phase]) : []; }

  // Does `input_ids` extend what the previous call saw (same batch, each row
  // longer by at least one token and ending where it ended before)?
  _isContinuation(inputIds) {
    if (!this.rows || this.rows.length !== inputIds.length) return false;
    for (let i = 0; i < inputIds.length; i++) {
      const r = this.rows[i], ids = inputIds[i];
      if (ids.length <= r.seen || (r.seen > 0 && idOf(ids[r.seen - 1]) !== r.last)) return false;
    }
    return true;
  }

  _newRow(ids, width) {
    const { Matcher, maxRollback, trigger } = this.options;
    const maskWidth = Math.max(width, this.store.vocabSize);
    const matcher = new Matcher(this.store, { maxRollback, maskWidth });
    return {
      matcher, seen: ids.length, last: ids.length ? idOf(ids[ids.length - 1]) : -1, mask: new Uint32Array(matcher.maskWords),
      stopped: false, phase: trigger === undefined ? PHASE_INSIDE : PHASE_FREE, kmp: 0, free: 0,
      alive: true, // the constrained text so far is a valid prefix (false: only the closing can go on)
      close: [], // closing lengths matched at the end of the text (after a complete output)
      wsRun: 0,
    };
  }

  _call(inputIds, logits) {
    const dims = logits.dims;
    if (!Array.isArray(inputIds) || !dims || dims.length !== 2 || dims[0] !== inputIds.length) {
      throw new TypeError('grammask: the processor expects (input_ids: bigint[][], logits: Tensor [batch, vocab])');
    }
    const width = dims[1];
    const V = this.store.vocabSize, pad = this.options.maxLogitsPadding;
    if (width < V || width > V + pad) {
      throw new Error(`grammask: the model's logits are ${width} wide but the store's vocabulary has ${V} tokens`
        + (width < V ? '' : ` (more than maxLogitsPadding = ${pad} ids of padding)`)
        + ': the store was built for another tokenizer than this model\'s');
    }
    if (!this._isContinuation(inputIds)) {
      this.reset();
      this.rows = inputIds.map((ids) => this._newRow(ids, width));
    } else {
      this.step++;
    }
    const data = logits.data;
    const { onStep, refusedTopK } = this.options;
    for (let i = 0; i < this.rows.length; i++) {
      const r = this.rows[i], ids = inputIds[i];
      const c0 = performance.now();
      let token;
      for (let k = r.seen; k < ids.length; k++) {
        token = idOf(ids[k]);
        this._commit(r, token, i, k - r.seen);
      }
      r.seen = ids.length;
      r.last = ids.length ? idOf(ids[ids.length - 1]) : -1;
      const rowLogits = data.subarray(i * width, (i + 1) * width);
      const t0 = performance.now();
      const probes = this._mask(r, width);
      const t1 = performance.now();
      const refused = refusedTopK > 0 ? topRefused(rowLogits, r.mask, refusedTopK) : undefined;
      const t2 = performance.now();
      const allowed = applyMask(rowLogits, r.mask);
      const t3 = performance.now();
      if (allowed === 0) {
        throw new Error(`grammask: no token is allowed for row ${i} (the model's logits are ${width} wide, `
          + `the store's vocabulary ${V}); was the store compiled for this model's tokenizer?`);
      }
      if (onStep) {
        onStep({
          step: this.step, row: i, allowed, maskMs: (t1 - t0) + (t3 - t2), commitMs: t0 - c0, forced: allowed === 1, token,
          phase: PHASE_NAMES[r.phase], probes, refused,
        });
      }
    }
    return logits;
  }

  // ---- commits ----

  _refuse(row, token, k, why, cause) {
    const err = new Error(`grammask: row ${row}: token ${token} (new token #${k} of this step) is not allowed by the grammar${why ? ` (${why})` : ''}; `
      + 'the logits were masked, so a processor or sampler running after the grammask processor changed the choice '
      + `(or the store was compiled for another tokenizer)${cause ? `: ${cause.message}` : ''}`);
    if (cause) err.cause = cause;
    throw err;
  }

  _commit(r, token, row, k) {
    if (r.stopped) {
      if (this.eos.has(token)) return; // a finished row keeps emitting EOS
      throw new Error(`grammask: row ${row} produced token ${token} after its end of sequence; `
        + 'a processor or sampler after the grammask processor changed the choice');
    }
    if (this.eos.has(token)) {
      if (r.phase === PHASE_INSIDE) {
        if (this.options.closing !== undefined) this._refuse(row, token, k, 'EOS before the closing string');
        const commitId = this.storeEos.includes(token) ? token : this.storeEos[0];
        try { r.matcher.commitToken(commitId); } catch (e) { this._refuse(row, token, k, '', e); }
      } else if (r.phase === PHASE_FREE && this.options.triggerRequired) {
        this._refuse(row, token, k, 'EOS before the trigger string');
      }
      r.stopped = true;
      return;
    }
    if (r.phase === PHASE_AFTER) return;
    if (r.phase === PHASE_FREE) {
      r.free++;
      const t = this.data.trigger(this.options.trigger);
      const b = this.data.token(token);
      for (let i = 0; i < b.length; i++) {
        r.kmp = kmpStep(t.p, t.f, r.kmp, b[i]);
        if (r.kmp === t.p.length) {
          r.phase = PHASE_INSIDE;
          this._feedBytes(r, b.subarray(i + 1), token, row, k);
          return;
        }
      }
      return;
    }
    // Inside. Without a closing (or when the token cannot start or continue
    // one), the whole token is committed at once.
    const closing = this.options.closing;
    const b = this.data.token(token);
    if (closing === undefined || (r.close.length === 0 && !b.includes(this.data.closing(closing).p[0]))) {
      if (!r.alive) this._refuse(row, token, k, 'the output is complete: only the closing string may follow');
      const ws = isSet(this.data.whitespace, token);
      const wasAccepting = this.options.stopWhenComplete && r.matcher.isAccepting();
      try { r.matcher.commitToken(token); } catch (e) { this._refuse(row, token, k, '', e); }
      r.wsRun = ws && wasAccepting ? r.wsRun + 1 : 0;
      return;
    }
    this._feedBytes(r, b, token, row, k);
  }

  /** Feed bytes to the constrained part (and the closing, when there is one). */
  _feedBytes(r, bytes, token, row, k) {
    const closing = this.options.closing;
    const c = closing === undefined ? null : this.data.closing(closing);
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (c) {
        const next = [];
        for (const j of r.close) if (c.p[j] === b) next.push(j + 1);
        if (r.alive && c.p[0] === b && r.matcher.isAccepting()) next.push(1);
        if (next.includes(c.p.length)) { // closed: the rest of the token is free text
          r.phase = PHASE_AFTER;
          r.close = [];
          return;
        }
        r.close = [...new Set(next)];
      }
      if (r.alive) {
        const t = this.data.byteTokens[b];
        if (t >= 0 && r.matcher.isAllowed(t)) r.matcher.commitToken(t);
        else r.alive = false;
      }
      if (!r.alive && r.close.length === 0) {
        this._refuse(row, token, k, t2s(bytes.subarray(i, i + 1)) + (this.data.byteTokens[b] < 0 ? ': no single-byte token for it' : ''));
      }
    }
  }

  // ---- masks ----

  /** Fill r.mask; returns the number of probe calls (chat-shaped rules), for onStep. */
  _mask(r, width) {
    const mask = r.mask, V = this.data.n;
    const eosBits = () => { for (const e of this.eos) if (e < width) setBit(mask, e); };
    if (r.stopped) { mask.fill(0); eosBits(); return 0; }
    if (r.phase === PHASE_AFTER) { fillAll(mask, V); eosBits(); return 0; }
    if (r.phase === PHASE_FREE) return this._maskFree(r, eosBits);
    const { closing, stopWhenComplete, maxTrailingWhitespace } = this.options;
    let probes = 0;
    if (r.alive) r.matcher.fillMask(mask);
    else mask.fill(0);
    const storeEosOn = r.alive && this.storeEos.length > 0 && isSet(mask, this.storeEos[0]);
    if (closing === undefined) {
      if (storeEosOn) {
        // Complete: EOS only once nothing but whitespace could follow, or after a run of whitespace.
        let onlyWs = stopWhenComplete;
        if (onlyWs) {
          for (const e of this.storeEos) clearBit(mask, e);
          const ws = this.data.whitespace;
          for (let w = 0; w < ws.length; w++) if (mask[w] & ~ws[w]) { onlyWs = false; break; }
          for (let w = ws.length; w < mask.length && onlyWs; w++) if (mask[w]) onlyWs = false;
        }
        if (onlyWs || (stopWhenComplete && r.wsRun >= maxTrailingWhitespace)) mask.fill(0);
        eosBits();
      }
      return 0;
    }
    // With a closing: no EOS inside; tokens that end the output and start (or
    // are) the closing; tokens that continue a closing in progress.
    for (const e of this.storeEos) clearBit(mask, e);
    const c = this.data.closing(closing);
    if (r.alive) {
      // Tokens the grammar allows already need no check.
      const skip = mask.slice();
      probes = probe(r.matcher, this.data, `closing:${closing}`, c.split, skip, (id) => setBit(mask, id));
    }
    for (const j of r.close) for (const id of this.data.continuations(closing, j)) setBit(mask, id);
    return probes;
  }

  _maskFree(r, eosBits) {
    const mask = r.mask, V = this.data.n;
    const { trigger, triggerRequired, maxFreeTokens } = this.options;
    const t = this.data.trigger(trigger);
    const comp = this.data.triggerCompletions(t, r.kmp);
    if (r.free >= maxFreeTokens) {
      // Out of free tokens: only tokens that continue the trigger.
      mask.fill(0);
      for (const id of comp.exact) setBit(mask, id);
      for (const e of comp.rest) setBit(mask, e.id);
      for (const id of this.data.continuations(trigger, r.kmp)) setBit(mask, id);
    } else {
      fillAll(mask, V);
      if (triggerRequired) for (const e of this.eos) clearBit(mask, e);
      else eosBits();
    }
    // A token that completes the trigger must begin a valid output.
    for (const e of comp.rest) clearBit(mask, e.id);
    return probe(r.matcher, this.data, `trigger:${trigger}:${r.kmp}`, comp.rest, NO_SKIP, (id) => setBit(mask, id));
  }
}

function t2s(b) { return JSON.stringify(new TextDecoder().decode(b)); }

function fillAll(mask, n) {
  const full = n >>> 5;
  mask.fill(0xffffffff, 0, full);
  mask.fill(0, full);
  if (n & 31) mask[full] = (1 << (n & 31)) - 1 >>> 0;
}

/** The `k` highest logits among the ids the mask refuses (before masking). */
function topRefused(logits, mask, k) {
  const top = [];
  for (let i = 0; i < logits.length; i++) {
    if (i >>> 5 < mask.length && isSet(mask, i)) continue;
    const v = logits[i];
    if (top.length < k || v > top[top.length - 1].logit) {
      top.push({ id: i, logit: v });
      top.sort((a, b) => b.logit - a.logit);
      if (top.length > k) top.pop();
    }
  }
  return top;
}

// ---- StructuredOutputProcessor -------------------------------------------------

const vocabCache = new WeakMap(); // transformers.js tokenizer -> PreparedVocab
const storeCache = new WeakMap(); // PreparedVocab -> Map(key -> MaskStore), most recent last
const STORE_CACHE_SIZE = 32;

/** The PreparedVocab of a transformers.js tokenizer, built once per tokenizer. */
function vocabFor(tokenizer) {
  if (tokenizer instanceof PreparedVocab) return tokenizer;
  if (tokenizer === null || (typeof tokenizer !== 'object' && typeof tokenizer !== 'function')) {
    throw new TypeError('grammask: expected a transformers.js tokenizer (AutoTokenizer.from_pretrained) or a PreparedVocab');
  }
  let v = vocabCache.get(tokenizer);
  if (!v) {
    v = PreparedVocab.fromTokenizer(tokenizer);
    vocabCache.set(tokenizer, v);
  }
  return v;
}

function compileCached(vocab, responseFormat, compileOptions, useCache) {
  if (responseFormat?.type === 'store') return compile(vocab, responseFormat);
  if (!useCache) return compile(vocab, responseFormat, compileOptions);
  let m = storeCache.get(vocab);
  if (!m) storeCache.set(vocab, (m = new Map()));
  let key;
  try { key = JSON.stringify([responseFormat, compileOptions]); } catch { return compile(vocab, responseFormat, compileOptions); }
  let s = m.get(key);
  if (s) { m.delete(key); m.set(key, s); return s; }
  s = compile(vocab, responseFormat, compileOptions);
  m.set(key, s);
  if (m.size > STORE_CACHE_SIZE) m.delete(m.keys().next().value);
  return s;
}

/**
 * Constrain transformers.js generation to a response format:
 * `new StructuredOutputProcessor(tokenizer, responseFormat, options?)`, passed
 * as `logits_processor: processor` (or inside a list). A LogitsProcessorList
 * holding one GrammarLogitsProcessor.
 */
export class StructuredOutputProcessor {
  /** Prepare (and cache) the tokenizer's vocabulary now, e.g. right after loading the model. */
  static warmup(tokenizer) {
    const v = vocabFor(tokenizer);
    v.prepare();
    tokenData(v);
  }

  constructor(tokenizer, responseFormat, options = {}) {
    const closure = function (inputIds, logits) { return closure._call(inputIds, logits); };
    Object.setPrototypeOf(closure, new.target.prototype);
    const o = options ?? {};
    const { whitespace, maxWhitespace, lenient, cache = true, ...rest } = o;
    const vocab = vocabFor(tokenizer);
    const compileOptions = {};
    if (whitespace !== undefined) compileOptions.whitespace = whitespace;
    if (maxWhitespace !== undefined) compileOptions.maxWhitespace = maxWhitespace;
    if (lenient !== undefined) compileOptions.lenient = lenient;
    // compile() checked a {type: 'store'} store against the vocabulary; the
    // others were compiled for it.
    const store = compileCached(vocab, responseFormat, compileOptions, cache);
    if ('tokenizer' in rest) throw new TypeError('grammask: the tokenizer is the first argument of StructuredOutputProcessor, not an option');
    const inner = new GrammarLogitsProcessor(store, rest);
    closure.processors = [inner];
    closure.store = store;
    closure.vocab = vocab;
    return closure;
  }

  /** The grammask processor (GrammarLogitsProcessor) inside. */
  get processor() { return this.processors[0]; }
  get matchers() { return this.processor.matchers; }
  get phases() { return this.processor.phases; }
  /** LogitsProcessorList API. */
  push(p) { this.processors.push(p); }
  extend(ps) { this.processors.push(...ps); }
  [Symbol.iterator]() { return this.processors.values(); }
  _call(inputIds, logits) {
    let out = logits;
    for (const p of this.processors) out = p(inputIds, out);
    return out;
  }
  /** Forget the rows (the next call starts a new generation). */
  reset() { this.processor.reset(); }
  /** Free the row matchers (the store stays cached for the next processor). */
  free() { this.processor.free(); }
}
