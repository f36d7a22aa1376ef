// Masks applied to logits (CPU): the processor's masking step and its
// onStep diagnostics.
import { bitIndex, isSet, popcount } from '../mask-bits.js';

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

/** The `k` highest logits among the ids the mask refuses (before masking). */
export function topRefused(logits, mask, k) {
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
