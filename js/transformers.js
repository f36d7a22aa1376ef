// grammask × transformers.js (`@huggingface/transformers` 4.x): a logits
// processor that constrains `generate()` / `pipeline(...)` to a grammar.
//
//   import { MaskStore } from 'grammask';
//   import { GrammarLogitsProcessor } from 'grammask/transformers';
//   const out = await generator(prompt, { logits_processor: [new GrammarLogitsProcessor(store)] });
//
// Semantics of one `_call(input_ids, logits)` (transformers.js calls it once
// per generation step with every row's ids so far and the next-token logits,
// a float32 Tensor [batch, width]):
//  - first call (or a new generation, see `_isContinuation`): every row's
//    length is recorded as its prompt length; nothing is committed (the
//    grammar constrains the generated text only);
//  - later calls: the tokens appended to each row since the previous call are
//    committed to that row's Matcher; a token the grammar refuses throws (it
//    means something after this processor changed the choice: the constraint
//    is never silently dropped);
//  - then each row's logits outside its mask become -Infinity. Ids at or past
//    the tokenizer's vocabulary (models whose logits are wider) are masked.
//  - EOS: the store's EOS ids are allowed exactly when the text is complete;
//    `eosTokenIds` (e.g. the model's generation_config list) adds ids that
//    count as EOS too. Once a row committed an EOS its matcher is stopped and
//    only EOS ids are allowed (rows that finished early in a batch keep
//    producing EOS until the whole batch stops).
//
// This file imports the package itself ('grammask'); build-pkg.sh rewrites
// the name for the grammask-compiler package.
import { Matcher as DefaultMatcher } from 'grammask';

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
  for (let w = 0; w < full; w++) {
    const bits = mask[w];
    const base = w << 5;
    if (bits === 0xffffffff) { allowed += 32; continue; }
    if (bits === 0) { logits.fill(neg, base, base + 32); continue; }
    for (let b = 0; b < 32; b++) {
      if ((bits >>> b) & 1) allowed++;
      else logits[base + b] = neg;
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

function rowIds(row) {
  // transformers.js passes bigint[] rows; accept number[] and typed arrays too.
  return row;
}

function idOf(x) {
  const n = typeof x === 'bigint' ? Number(x) : x;
  if (!Number.isInteger(n) || n < 0) throw new TypeError(`grammask: bad token id in input_ids: ${String(x)}`);
  return n;
}

/**
 * A transformers.js logits processor constraining every row of a batch to
 * the grammar of `store`. Callable (transformers.js calls processors as
 * functions), so it works without importing transformers.js itself.
 */
export class GrammarLogitsProcessor {
  /**
   * @param store a MaskStore
   * @param options
   *   eosTokenIds: extra ids that count as EOS (e.g. the model's
   *     generation_config eos_token_id list); the store's own EOS ids always do.
   *   maxRollback: passed to each row's Matcher (default 8).
   *   onStep: ({ step, row, allowed, maskMs, forced, token }) => void, after
   *     each row's mask (allowed: ids left; forced: true if only one was;
   *     token: the id committed just before, or undefined on the first step).
   *   Matcher: the Matcher class to use (when the store comes from another
   *     module instance, e.g. 'grammask/web' or a CommonJS require).
   */
  constructor(store, options = {}) {
    const closure = function (inputIds, logits) { return closure._call(inputIds, logits); };
    Object.setPrototypeOf(closure, new.target.prototype);
    if (store == null || typeof store.eosTokenIds === 'undefined') throw new TypeError('grammask: GrammarLogitsProcessor expects a MaskStore');
    const { eosTokenIds = [], maxRollback = 8, onStep, Matcher = DefaultMatcher } = options ?? {};
    if (onStep !== undefined && typeof onStep !== 'function') throw new TypeError('grammask: onStep must be a function');
    closure.store = store;
    closure.options = { maxRollback, onStep, Matcher };
    closure.storeEos = Array.from(store.eosTokenIds);
    closure.eos = new Set([...closure.storeEos, ...Array.from(eosTokenIds, idOf)]);
    closure.rows = null; // per row: { matcher, seen, last, mask }
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

  /** The row matchers of the current generation (read-only use: texts, isAccepting...). */
  get matchers() { return this.rows ? this.rows.map((r) => r.matcher) : []; }

  // Does `input_ids` extend what the previous call saw (same batch, each row
  // longer by at least one token and ending where it ended before)?
  _isContinuation(inputIds) {
    if (!this.rows || this.rows.length !== inputIds.length) return false;
    for (let i = 0; i < inputIds.length; i++) {
      const r = this.rows[i], ids = rowIds(inputIds[i]);
      if (ids.length <= r.seen || (r.seen > 0 && idOf(ids[r.seen - 1]) !== r.last)) return false;
    }
    return true;
  }

  _call(inputIds, logits) {
    const dims = logits.dims;
    if (!Array.isArray(inputIds) || !dims || dims.length !== 2 || dims[0] !== inputIds.length) {
      throw new TypeError('grammask: GrammarLogitsProcessor expects (input_ids: bigint[][], logits: Tensor [batch, vocab])');
    }
    const width = dims[1];
    if (!this._isContinuation(inputIds)) {
      this.reset();
      const { Matcher, maxRollback } = this.options;
      const maskWidth = Math.max(width, this.store.vocabSize);
      this.rows = inputIds.map((row) => {
        const ids = rowIds(row);
        const matcher = new Matcher(this.store, { maxRollback, maskWidth });
        return { matcher, seen: ids.length, last: ids.length ? idOf(ids[ids.length - 1]) : -1, mask: new Uint32Array(matcher.maskWords) };
      });
    } else {
      this.step++;
    }
    const data = logits.data;
    const onStep = this.options.onStep;
    for (let i = 0; i < this.rows.length; i++) {
      const r = this.rows[i], ids = rowIds(inputIds[i]);
      let token;
      for (let k = r.seen; k < ids.length; k++) {
        token = idOf(ids[k]);
        this._commit(r.matcher, token, i, k - r.seen);
      }
      r.seen = ids.length;
      r.last = ids.length ? idOf(ids[ids.length - 1]) : -1;
      const t0 = performance.now();
      const mask = r.mask;
      if (r.matcher.isStopped()) {
        mask.fill(0);
      } else {
        r.matcher.fillMask(mask);
      }
      // Extra EOS ids are allowed whenever the store's EOS is; after EOS only EOS.
      if (r.matcher.isStopped() || (this.storeEos.length && isSet(mask, this.storeEos[0]))) {
        for (const e of this.eos) if (e < width) mask[e >>> 5] |= 1 << (e & 31);
      }
      const rowLogits = data.subarray(i * width, (i + 1) * width);
      const allowed = applyMask(rowLogits, mask);
      const maskMs = performance.now() - t0;
      if (allowed === 0) {
        throw new Error(`grammask: no token is allowed for row ${i} (the model's logits are ${width} wide, `
          + `the store's vocabulary ${this.store.vocabSize}); was the store compiled for this model's tokenizer?`);
      }
      if (onStep) onStep({ step: this.step, row: i, allowed, maskMs, forced: allowed === 1, token });
    }
    return logits;
  }

  _commit(matcher, token, row, k) {
    if (matcher.isStopped()) {
      if (this.eos.has(token)) return; // a finished row keeps emitting EOS
      throw new Error(`grammask: row ${row} produced token ${token} after its end of sequence; `
        + 'a processor or sampler after GrammarLogitsProcessor changed the choice');
    }
    const commitId = this.eos.has(token) && !this.storeEos.includes(token) ? this.storeEos[0] : token;
    try {
      matcher.commitToken(commitId);
    } catch (e) {
      const err = new Error(`grammask: row ${row}: token ${token} (new token #${k} of this step) is not allowed by the grammar; `
        + 'the logits were masked, so a processor or sampler running after GrammarLogitsProcessor changed the choice '
        + `(or the store was compiled for another tokenizer): ${e.message}`);
      err.cause = e;
      throw err;
    }
  }
}

function isSet(mask, id) { return ((mask[id >>> 5] >>> (id & 31)) & 1) === 1; }
