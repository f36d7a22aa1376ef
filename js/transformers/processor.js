// GrammarLogitsProcessor: the engine of grammask/transformers (semantics in
// ../transformers.js): per row of a batch, commit the new tokens, then mask
// the logits.
import { Matcher as DefaultMatcher } from './grammask.js';
import { clearBit, fillAll, isSet, setBit } from '../mask-bits.js';
import { applyMask, topRefused } from './logits.js';
import { NO_SKIP, PHASE_AFTER, PHASE_FREE, PHASE_INSIDE, PHASE_NAMES, kmpStep, probe } from './trigger.js';
import { checkStoreOnce, tokenData, vocabFor } from './caches.js';

// Per store: the tokens that complete the trigger and whose rest the output
// accepts, per matched length of the trigger. A row in the free phase has
// committed nothing to its matcher (it is at the start), so the probe's
// answer depends only on the store: it is computed once (with the first
// processor for that store and trigger) instead of at the steps that reach
// each length (up to 200 commits, several ms, in the middle of generation).
const FREE_HITS = new WeakMap(); // store -> Map(probe key -> ids)

function idOf(x) {
  const n = typeof x === 'bigint' ? Number(x) : x;
  if (!Number.isInteger(n) || n < 0) throw new TypeError(`grammask: bad token id in input_ids: ${String(x)}`);
  return n;
}

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
      'triggerRequired', 'maxFreeTokens', 'freeTokensWarning', 'stopWhenComplete', 'maxTrailingWhitespace', 'maxLogitsPadding', 'refusedTopK', 'prefetchMs', 'triggerInPrompt'];
    for (const k of Object.keys(o)) if (!known.includes(k)) throw new TypeError(`grammask: unknown option ${k} (known: ${known.join(', ')})`);
    const {
      maxRollback, onStep, Matcher = DefaultMatcher, tokenizer, trigger, closing, triggerRequired = true,
      maxFreeTokens = Infinity, freeTokensWarning = 256, stopWhenComplete = true, maxTrailingWhitespace = 4, maxLogitsPadding = 1024, refusedTopK = 0,
      prefetchMs = 4, triggerInPrompt = false,
    } = o;
    if (onStep !== undefined && typeof onStep !== 'function') throw new TypeError('grammask: onStep must be a function');
    for (const [k, v] of [['trigger', trigger], ['closing', closing]]) {
      if (v !== undefined && (typeof v !== 'string' || v.length === 0)) throw new TypeError(`grammask: ${k} must be a non-empty string`);
    }
    for (const [k, v] of [['maxFreeTokens', maxFreeTokens], ['freeTokensWarning', freeTokensWarning], ['maxTrailingWhitespace', maxTrailingWhitespace], ['maxLogitsPadding', maxLogitsPadding], ['refusedTopK', refusedTopK], ['prefetchMs', prefetchMs]]) {
      if (typeof v !== 'number' || !(v >= 0)) throw new TypeError(`grammask: ${k} must be a number >= 0`);
    }
    if (typeof stopWhenComplete !== 'boolean' || typeof triggerRequired !== 'boolean') throw new TypeError('grammask: stopWhenComplete and triggerRequired must be booleans');
    // The tokenizer, when given, must be the one the store was built for.
    if (tokenizer !== undefined) checkStoreOnce(vocabFor(tokenizer), store);
    closure.store = store;
    closure.data = tokenData(store);
    // The trigger's and the closing's token tables (a scan of the vocabulary
    // per matched length, cached per vocabulary): built with the processor,
    // not at the steps that first reach each length (3-5 ms each).
    if (trigger !== undefined) {
      const t = closure.data.trigger(trigger);
      for (let j = 0; j < t.p.length; j++) {
        closure.data.triggerCompletions(t, j);
        closure.data.continuations(trigger, j);
      }
    }
    if (closing !== undefined) {
      const c = closure.data.closing(closing);
      for (let j = 0; j < c.p.length; j++) closure.data.continuations(closing, j);
    }
    const chat = trigger !== undefined || closing !== undefined;
    closure.options = {
      // Probing a closing or a trigger's rest rolls back up to a token's length in bytes.
      maxRollback: maxRollback ?? (chat ? 256 : 8), onStep, Matcher, trigger, closing, triggerRequired, maxFreeTokens,
      // A trigger still absent after this many free tokens is reported (once per processor).
      // (freeTokensWarning: Infinity never warns, as documented, not even at maxFreeTokens)
      warnAt: maxFreeTokens >= 1 && freeTokensWarning !== Infinity ? Math.min(maxFreeTokens, freeTokensWarning) : freeTokensWarning, stopWhenComplete, maxTrailingWhitespace, maxLogitsPadding, refusedTopK, prefetchMs,
      // A row whose prompt ends with the trigger starts constrained (a closed reasoning region).
      triggerInPrompt: triggerInPrompt === true,
    };
    closure.prefetchTimeMs = 0;
    if (trigger !== undefined && !FREE_HITS.get(store)?.has(`trigger:${trigger}:0`)) {
      // The free phase's probes, from a matcher at the start (see FREE_HITS).
      let m;
      try {
        m = new Matcher(store, { maxRollback: closure.options.maxRollback });
        const t = closure.data.trigger(trigger);
        for (let j = 0; j < t.p.length; j++) closure._freeHits(j, m);
      } finally { m?.free(); }
    }
    closure.warned = false;
    closure.storeEos = Array.from(store.eosTokenIds);
    closure.eos = new Set([...closure.storeEos, ...extraEos(o)]);
    closure.rows = null;
    closure.step = 0;
    // Idle time before the first step (the prompt's forward pass): a matcher
    // computes the initial position's mask (store entries, or a direct mask in
    // its cache) and commits and rolls back one token (a store loaded from a
    // blob decodes its token bytes at the first commit); the first row of the
    // first generation takes that matcher.
    closure.spare = null;
    if (prefetchMs > 0) {
      setTimeout(() => {
        if (closure.rows || closure.spare) return;
        const t0 = performance.now();
        let m;
        try {
          m = new Matcher(store, { maxRollback: closure.options.maxRollback });
          const w = new Uint32Array(m.maskWords);
          m.fillMask(w);
          const id = w.findIndex((x) => x !== 0);
          const t = id < 0 ? -1 : id * 32 + 31 - Math.clz32(w[id] & -w[id]);
          if (t >= 0 && !closure.eos.has(t)) { m.commitToken(t); m.rollback(1); }
          closure.spare = m;
        } catch { m?.free(); /* store freed since */ }
        closure.prefetchTimeMs += performance.now() - t0;
      }, 0);
    }
    return closure;
  }

  /** Forget all rows (the next call starts a new generation). Frees the matchers. */
  reset() {
    this.spare?.free();
    this.spare = null;
    this._clearRows();
  }

  _clearRows() {
    clearTimeout(this._turnTimer);
    this._turns = undefined;
    if (this._prefetchTimer !== undefined) clearTimeout(this._prefetchTimer);
    this._prefetchTimer = undefined;
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

  /** Do the bytes of token ids `ids` end with `text`? */
  _endsWith(ids, text) {
    const t = new TextEncoder().encode(text);
    let need = t.length;
    for (let k = ids.length - 1; k >= 0 && need > 0; k--) {
      const b = this.data.token(idOf(ids[k]));
      for (let j = b.length - 1; j >= 0 && need > 0; j--) if (b[j] !== t[--need]) return false;
    }
    return need === 0;
  }

  _newRow(ids, width) {
    const { Matcher, maxRollback, trigger } = this.options;
    const maskWidth = Math.max(width, this.store.vocabSize);
    let matcher = this.spare;
    this.spare = null;
    if (!matcher || matcher.freed || matcher.maskWidth !== maskWidth) {
      matcher?.free();
      matcher = new Matcher(this.store, { maxRollback, maskWidth });
    }
    return {
      matcher, seen: ids.length, last: ids.length ? idOf(ids[ids.length - 1]) : -1, mask: new Uint32Array(matcher.maskWords),
      stopped: false, phase: trigger === undefined || (this.options.triggerInPrompt && this._endsWith(ids, trigger)) ? PHASE_INSIDE : PHASE_FREE, kmp: 0, free: 0,
      alive: true, // the constrained text so far is a valid prefix (false: only the closing can go on)
      close: [], // closing lengths matched at the end of the text (after a complete output)
      wsRun: 0,
      logits: null, // this step's masked logits, for the idle-time hook
    };
  }

  _call(inputIds, logits) {
    const dims = logits.dims;
    if (!Array.isArray(inputIds) || !dims || dims.length !== 2 || dims[0] !== inputIds.length) {
      throw new TypeError('grammask: the processor expects (input_ids: bigint[][], logits: Tensor [batch, vocab])');
    }
    const width = dims[1];
    this._width = width;
    if (this._turns !== undefined) {
      // Did the event loop turn while the model ran? (The idle-time hook's probe.)
      this.idle = this._turns >= 3;
      clearTimeout(this._turnTimer);
      this._turns = undefined;
    }
    const V = this.store.vocabSize, pad = this.options.maxLogitsPadding;
    if (width < V || width > V + pad) {
      throw new Error(`grammask: the model's logits are ${width} wide but the store's vocabulary has ${V} tokens`
        + (width < V ? '' : ` (more than maxLogitsPadding = ${pad} ids of padding)`)
        + ': the store was built for another tokenizer than this model\'s');
    }
    if (!this._isContinuation(inputIds)) {
      this._clearRows();
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
      // (Not while the text ends with the start of the trigger: the row is writing it.)
      if (r.phase === PHASE_FREE && r.free >= this.options.warnAt && r.kmp === 0 && !this.warned) this._warnTrigger(r, i);
      const rowLogits = data.subarray(i * width, (i + 1) * width);
      const t0 = performance.now();
      const probes = this._mask(r, width);
      const t1 = performance.now();
      const refused = refusedTopK > 0 ? topRefused(rowLogits, r.mask, refusedTopK) : undefined;
      const t2 = performance.now();
      const allowed = applyMask(rowLogits, r.mask);
      const t3 = performance.now();
      r.logits = rowLogits; // read by the idle-time hook (the likeliest next token)
      if (allowed === 0) {
        throw new Error(`grammask: no token is allowed for row ${i} (the model's logits are ${width} wide, `
          + `the store's vocabulary ${V}); was the store compiled for this model's tokenizer?`);
      }
      if (onStep) {
        onStep({
          step: this.step, row: i, allowed, maskMs: (t1 - t0) + (t3 - t2), commitMs: t0 - c0, forced: allowed === 1, token,
          phase: PHASE_NAMES[r.phase], freeTokens: r.free, probes, refused,
        });
      }
    }
    this._schedulePrefetch();
    return logits;
  }

  /** The trigger has not appeared after `warnAt` free tokens: say so, once per processor. */
  _warnTrigger(r, row) {
    this.warned = true;
    const { trigger, maxFreeTokens } = this.options;
    console.warn(`grammask: row ${row} wrote ${r.free} tokens without the trigger ${JSON.stringify(trigger)}, so the constraint does not apply yet; `
      + (r.free >= maxFreeTokens ? `from now on only tokens that continue the trigger are allowed (maxFreeTokens: ${maxFreeTokens})`
        : 'maxFreeTokens forces the trigger after that many tokens (freeTokensWarning: Infinity silences this warning)'));
  }

  /**
   * Idle-time hook: once this step's masks are out, the model runs its next
   * forward pass (asynchronously in transformers.js), and the event loop is
   * free. A timer spends up to `prefetchMs` of it making the next step's
   * masks ready:
   * 1. each unfinished row's likeliest next token (the highest masked
   *    logit: the token greedy decoding picks) is taken as the next step
   *    would take it and the mask after it computed (filling the store, the
   *    matcher's mask cache and the trigger/closing tables for what it leads
   *    to), then the matcher is rolled back: the row is unchanged;
   * 2. then, with several rows, `Matcher.prefetch` computes the store
   *    entries of positions that were computed directly (a per-request store
   *    bounds first visits), so that the other rows read them from the
   *    store (one row has them in its matcher's mask cache already).
   * The first row's speculation always runs; one mask can overrun the budget.
   * Where the forward pass blocks the thread (onnxruntime-node: the event
   * loop does not turn between the hook and the next step), the hook's work
   * would only delay the forward pass: it works only once a step has shown
   * that the loop turns (`idle` true); until then (the first step) and
   * after a step where it did not, it only probes.
   */
  _schedulePrefetch() {
    const ms = this.options.prefetchMs;
    if (!(ms > 0) || this._prefetchTimer !== undefined) return;
    const rows = this.rows.filter((r) => !r.stopped && r.phase !== PHASE_AFTER);
    if (!rows.length) return;
    const gen = this.rows;
    this._prefetchTimer = setTimeout(() => {
      this._prefetchTimer = undefined;
      if (this.rows !== gen) return; // reset or freed since
      // Unless the previous forward pass left the event loop free (it
      // turned between the hook and the next step), work here would only
      // delay the forward pass: the hook stands by and keeps probing.
      if (this.idle === true) {
        const t0 = performance.now();
        try {
          for (const r of rows) {
            if (r !== rows[0] && performance.now() - t0 >= ms) break;
            this._speculate(r);
          }
          // A position computed directly is in its matcher's mask cache, so a
          // single row needs no store entries for it; several rows share them.
          const left = ms - (performance.now() - t0);
          const live = rows.find((r) => r.alive && !r.stopped && typeof r.matcher.prefetch === 'function');
          if (left > 0 && live && this.rows.length > 1) live.matcher.prefetch(left);
        } catch { /* freed since: nothing to prepare */ }
        this.prefetchTimeMs += performance.now() - t0;
      }
      // Probe: count event-loop turns until the next step (at most 3).
      this._turns = 0;
      const turn = () => { if (++this._turns < 3) this._turnTimer = setTimeout(turn, 0); };
      this._turnTimer = setTimeout(turn, 0);
    }, 0);
  }

  /**
   * The row's likeliest next token, as the next step would take it: on a
   * copy of the row's state, `_commit` and `_mask` (so a trigger, a closing
   * and their probes are prepared too), through a view of the matcher that
   * counts commits and rollbacks; then the matcher is rolled back to where
   * it was. A token the row refuses prepares nothing.
   */
  _speculate(r) {
    const x = r.logits;
    r.logits = null;
    if (!(x instanceof Float32Array || x instanceof Float64Array)) return;
    let best = -1, v = -Infinity;
    for (let i = 0; i < x.length; i++) if (x[i] > v) { v = x[i]; best = i; }
    if (best < 0 || this.eos.has(best)) return;
    const m = r.matcher;
    let net = 0;
    const counted = new Proxy(m, {
      get(t, k) {
        if (k === 'commitToken') return (id) => { t.commitToken(id); net++; };
        if (k === 'rollback') return (n = 1) => { t.rollback(n); net -= n; };
        const f = t[k];
        return typeof f === 'function' && k !== 'constructor' ? f.bind(t) : f;
      },
    });
    const mask = this._scratch?.length === r.mask.length ? this._scratch : (this._scratch = new Uint32Array(r.mask.length));
    const s = { ...r, matcher: counted, mask };
    try {
      this._commit(s, best, -1, 0);
      if (!s.stopped) this._mask(s, this._width);
    } catch { /* refused: nothing to prepare */ } finally {
      if (net > 0) m.rollback(net);
    }
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
    // An id that counts as EOS (e.g. gpt-oss's <|call|>, in its generation
    // config) but that the grammar names, where the grammar takes it: that
    // token, committed as such (the row goes on until the store's EOS).
    const named = r.phase === PHASE_INSIDE && r.alive && !this.storeEos.includes(token) && this.eos.has(token) && r.matcher.isAllowed(token);
    if (this.eos.has(token) && !named) {
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
      // Tokens the grammar allows already need no check (a copy of the
      // mask, in a buffer kept for it: no allocation per step).
      const skip = this._skip?.length === mask.length ? this._skip : (this._skip = new Uint32Array(mask.length));
      skip.set(mask);
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
    const { ids, commits } = this._freeHits(r.kmp, r.matcher);
    for (const id of ids) setBit(mask, id);
    return commits;
  }

  /**
   * The tokens that complete the trigger from matched length `j` and whose
   * rest the output accepts from the start (`matcher` is at the start):
   * cached per store (FREE_HITS). `commits`: the probe's commits (0: cached).
   */
  _freeHits(j, matcher) {
    const trigger = this.options.trigger, key = `trigger:${trigger}:${j}`;
    let m = FREE_HITS.get(this.store);
    if (!m) FREE_HITS.set(this.store, (m = new Map()));
    let ids = m.get(key);
    if (ids) return { ids, commits: 0 };
    ids = [];
    const rest = this.data.triggerCompletions(this.data.trigger(trigger), j).rest;
    const commits = probe(matcher, this.data, key, rest, NO_SKIP, (id) => ids.push(id));
    m.set(key, ids);
    return { ids, commits };
  }
}

function t2s(b) { return JSON.stringify(new TextDecoder().decode(b)); }
