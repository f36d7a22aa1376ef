// Per-vocabulary token data (shared by rows and processors): the token table
// and the tables the chat-shaped and completion rules derive from it.
import { isSet } from '../mask-bits.js';
import { cmpBytes, kmpStep, kmpTable } from './trigger.js';

const enc = new TextEncoder();

/**
 * The token table of a vocabulary, and what the chat-shaped and completion
 * rules derive from it (lazily, cached per trigger / closing string).
 */
export class TokenData {
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
   * Built for every state at once, in one pass over the vocabulary: a token
   * that completes `p` (length P) either contains `p` or starts with a
   * suffix of `p` shorter than P (the match began before it); only those
   * candidates run the KMP automaton from each state.
   */
  triggerCompletions(t, j) {
    if (!t.perState.size) {
      const { bytes, offsets, special } = this, { p, f } = t, P = p.length;
      const cands = [];
      for (let id = 0; id < this.n; id++) {
        if (isSet(special, id)) continue;
        const s = offsets[id], L = offsets[id + 1] - s;
        let hit = false;
        for (let e = Math.min(P - 1, L); e >= 1 && !hit; e--) {
          if (bytes[s] !== p[P - e]) continue;
          let i = 1;
          while (i < e && bytes[s + i] === p[P - e + i]) i++;
          hit = i === e;
        }
        for (let k = 0; !hit && k + P <= L; k++) {
          if (bytes[s + k] !== p[0]) continue;
          let i = 1;
          while (i < P && bytes[s + k + i] === p[i]) i++;
          hit = i === P;
        }
        if (hit) cands.push(id);
      }
      for (let j0 = 0; j0 <= P; j0++) {
        const exact = [], rest = [];
        for (const id of cands) {
          const end = offsets[id + 1];
          let k = j0;
          for (let i = offsets[id]; i < end; i++) {
            k = kmpStep(p, f, k, bytes[i]);
            if (k === P) {
              if (i + 1 === end) exact.push(id);
              else rest.push({ id, prefix: bytes.subarray(i + 1, end), accepting: false });
              break;
            }
          }
        }
        rest.sort((x, y) => cmpBytes(x.prefix, y.prefix));
        t.perState.set(j0, { exact, rest });
      }
    }
    return t.perState.get(j);
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
    const { bytes, offsets, special } = this, p0 = p[0];
    for (let id = 0; id < this.n; id++) {
      if (isSet(special, id)) continue;
      const start = offsets[id], end = offsets[id + 1];
      for (let k = start; k < end; k++) {
        if (bytes[k] !== p0) continue;
        let ok = true;
        for (let i = k; i < end && i - k < p.length; i++) if (bytes[i] !== p[i - k]) { ok = false; break; }
        if (ok) split.push({ id, prefix: bytes.subarray(start, k), accepting: true, closes: end - k >= p.length });
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
    const { bytes, offsets, special } = this;
    for (let id = 0; id < this.n; id++) {
      const start = offsets[id];
      const n = Math.min(offsets[id + 1] - start, rest.length);
      if (n === 0 || bytes[start] !== rest[0] || isSet(special, id)) continue;
      let ok = true;
      for (let i = 1; i < n && ok; i++) ok = bytes[start + i] === rest[i];
      if (ok) ids.push(id);
    }
    m.set(j, ids);
    return ids;
  }
}
