// The machinery of chat-shaped output (`trigger`, `closing`): byte-string
// matching (KMP) for the trigger and closing strings, the phases of a row,
// and the probe that asks a matcher which byte strings it accepts (tokens
// whose rest after a trigger, or whose part before a closing, must be valid).
// The processor (processor.js) drives a row through the phases; the tables
// per vocabulary are in token-data.js.
import { isSet } from '../mask-bits.js';

export const PHASE_FREE = 0, PHASE_INSIDE = 1, PHASE_AFTER = 2;
export const PHASE_NAMES = ['free', 'constrained', 'after'];

/** KMP failure function of `p` (bytes). */
export function kmpTable(p) {
  const f = new Int32Array(p.length + 1);
  f[0] = -1;
  for (let i = 1, k = -1; i <= p.length; i++) {
    while (k >= 0 && p[k] !== p[i - 1]) k = f[k];
    f[i] = ++k;
  }
  return f;
}

/** KMP step: matched length `j` of `p`, next byte `b`. */
export function kmpStep(p, f, j, b) {
  if (j === p.length) j = f[j];
  while (j >= 0 && p[j] !== b) j = f[j];
  return j + 1;
}

export function cmpBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
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
export function probe(matcher, data, key, entries, skip, onHit) {
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

export const NO_SKIP = new Uint32Array(0);
