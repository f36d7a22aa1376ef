// grammask in a Cloudflare Worker: token masks and validation over HTTP for
// one grammar × tokenizer (the bundled blob; by default JSON × Llama-3).
//
//   GET  /          -> { vocabSize, maskWords, eosTokenIds, grammarFingerprint, tokenizerFingerprint }
//   POST /mask      {"tokens":[ids]} -> { mask (base64 of the little-endian u32 words),
//                   allowed (count), forced: [ids], accepting, stopped }
//                   a refused token: 422 { error, errorAt (index into tokens) }
//   POST /validate  {"tokens":[ids]} or {"text":"..."} -> { accepted, errorAt }
//                   accepted: the whole input is allowed AND the text is complete;
//                   errorAt: index (token, or UTF-8 byte for text) of the first refused
//                   unit, input length when all were allowed but the text is incomplete,
//                   null when accepted.
// Text is validated without a tokenizer: its UTF-8 bytes are committed one by
// one as the single-byte tokens of the vocabulary (byte-level BPE vocabularies
// such as Llama-3's have all 256). Masks are defined on bytes (a token is
// allowed iff text + its bytes is a prefix of the language), so this is exact
// for any tokenization of the same text. A vocabulary without some single-byte
// token answers 422 for texts that need it.
import { initSync, MaskStore, Matcher } from '../vendor/grammask/web.js';
import wasmModule from '../vendor/grammask/web/grammask_bg.wasm';
import blob from '../vendor/store.gmask';

initSync(wasmModule);
const store = MaskStore.fromBytes(new Uint8Array(blob));
let byteToken = null; // byte -> token id (-1: none), built on the first text request

function byteTokens() {
  if (byteToken) return byteToken;
  byteToken = new Int32Array(256).fill(-1);
  for (let id = 0; id < store.vocabSize; id++) {
    const b = store.tokenBytes(id);
    if (b.length === 1 && byteToken[b[0]] < 0) byteToken[b[0]] = id;
  }
  return byteToken;
}

const json = (obj, status = 200) => new Response(JSON.stringify(obj), { status, headers: { 'content-type': 'application/json' } });
const bad = (error, status = 400, extra = {}) => json({ error, ...extra }, status);

function tokenList(body) {
  const t = body?.tokens;
  if (!Array.isArray(t) || t.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffffffff)) return null;
  return t;
}

function base64(words) {
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function popcount(words) {
  let c = 0;
  for (let x of words) { x -= (x >>> 1) & 0x55555555; x = (x & 0x33333333) + ((x >>> 2) & 0x33333333); c += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24; }
  return c;
}

// Commit `ids` one by one; returns the index of the first refused one, or -1.
function commitAll(m, ids) {
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] < 0 || !m.isAllowed(ids[i])) return i;
    m.commitToken(ids[i]);
  }
  return -1;
}

async function handle(request) {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/') {
    return json({ vocabSize: store.vocabSize, maskWords: store.maskWords, eosTokenIds: Array.from(store.eosTokenIds),
      grammarFingerprint: store.grammarFingerprint, tokenizerFingerprint: store.tokenizerFingerprint });
  }
  if (request.method !== 'POST' || (url.pathname !== '/mask' && url.pathname !== '/validate')) {
    return bad('not found: GET /, POST /mask, POST /validate', 404);
  }
  let body;
  try { body = await request.json(); } catch { return bad('the body must be JSON'); }
  const m = new Matcher(store);
  try {
    if (url.pathname === '/mask') {
      const ids = tokenList(body);
      if (!ids) return bad('expected {"tokens": [token ids]}');
      const at = commitAll(m, ids);
      if (at >= 0) return bad(`token ${ids[at]} at index ${at} is not allowed by the grammar`, 422, { errorAt: at });
      const mask = m.computeMask();
      return json({ mask: base64(mask), maskWords: mask.length, allowed: popcount(mask), forced: Array.from(m.forcedTokens(16)),
        accepting: m.isAccepting(), stopped: m.isStopped() });
    }
    let ids;
    if (typeof body?.text === 'string') {
      const map = byteTokens();
      const bytes = new TextEncoder().encode(body.text);
      ids = Array.from(bytes, (b) => map[b]); // -1 where the vocabulary lacks the byte
    } else {
      ids = tokenList(body);
      if (!ids) return bad('expected {"tokens": [token ids]} or {"text": "..."}');
    }
    const at = commitAll(m, ids);
    if (at >= 0 && ids[at] === -1) return bad(`byte ${at} of the text has no single-byte token in this vocabulary`, 422, { errorAt: at });
    if (at >= 0) return json({ accepted: false, errorAt: at });
    const done = m.isStopped() || m.isAccepting();
    return json({ accepted: done, errorAt: done ? null : ids.length });
  } finally {
    m.free();
  }
}

export default {
  async fetch(request) {
    try {
      return await handle(request);
    } catch (e) {
      return bad(`internal error: ${e?.message ?? e}`, 500);
    }
  },
};
