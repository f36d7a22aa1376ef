// What grammask/transformers keeps between processors: the PreparedVocab of
// each transformers.js tokenizer, the stores compiled per vocabulary and
// response format, the token data per tokenizer fingerprint, and which
// stores were checked against which vocabularies.
import { PreparedVocab, compile } from './grammask.js';
import { TokenData } from './token-data.js';

// Per tokenizer fingerprint (tokens and EOS ids): every store and processor
// for one tokenizer shares it, with its trigger and closing tables.
const tokenDataOf = new Map();

export function tokenData(source) {
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

export function checkStoreOnce(vocab, store) {
  let s = checked.get(store);
  if (s?.has(vocab)) return;
  vocab.checkStore(store);
  if (!s) checked.set(store, (s = new Set()));
  s.add(vocab);
}

const vocabCache = new WeakMap(); // transformers.js tokenizer -> PreparedVocab
const storeCache = new WeakMap(); // PreparedVocab -> Map(key -> MaskStore), most recent last
const STORE_CACHE_SIZE = 32;

/** The PreparedVocab of a transformers.js tokenizer, built once per tokenizer. */
export function vocabFor(tokenizer) {
  if (tokenizer instanceof PreparedVocab) return tokenizer;
  if (tokenizer === null || (typeof tokenizer !== 'object' && typeof tokenizer !== 'function') || tokenizer._tokenizerJSON == null) {
    throw new TypeError('grammask: expected a transformers.js tokenizer (AutoTokenizer.from_pretrained) or a PreparedVocab');
  }
  let v = vocabCache.get(tokenizer);
  if (!v) {
    v = PreparedVocab.fromTokenizer(tokenizer);
    vocabCache.set(tokenizer, v);
  }
  return v;
}

export function compileCached(vocab, responseFormat, compileOptions, useCache) {
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
