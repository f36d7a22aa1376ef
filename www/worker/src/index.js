// grammask in a Cloudflare Worker: token masks and validation over HTTP for
// the tokenizer of the bundled blob (by default JSON × Llama-3), for that
// blob's grammar or for any JSON Schema / regex / Lark grammar sent in the
// request (compiled here and cached per schema hash).
//
//   GET  /          -> { vocabSize, maskWords, eosTokenIds, grammarFingerprint, tokenizerFingerprint, stores }
//   GET  /health    -> { service: "grammask", nonce }: nonce is the GRAMMASK_NONCE var (null when unset),
//                   so that a client that started this Worker can tell it from any other server
//                   (pkg-tests/worker.test.mjs: wrangler dev --var GRAMMASK_NONCE:<per-run token>)
//   POST /mask      { tokens: [ids], store?: id }                       the bundled store ("default") or a cached one
//                   { tokens: [ids], schema: {...} }                    a JSON Schema
//                   { tokens: [ids], responseFormat: {type, ...} }      json_schema, json_object, json, regex or lark
//                   -> { store: id, cached, compileMs, mask (base64 of the little-endian u32 words), maskWords,
//                        allowed (count), forced: [ids], accepting, stopped }
//                   a refused token: 422 { error, errorAt (index into tokens) };
//                   a bad schema: 400 { error, kind }; an unknown store id: 404
//   POST /validate  { tokens: [ids] } or { text: "..." }, with store / schema / responseFormat as above
//                   -> { store, accepted, errorAt }: accepted = every unit allowed AND the text complete;
//                   errorAt: index (token, or UTF-8 byte for text) of the first refused unit, the
//                   input length when all were allowed but the text is incomplete, null when accepted.
// Stores compiled from a request are kept in this isolate (least recently
// used first out, at most STORE_CACHE entries), keyed by the SHA-256 of the
// response format's canonical JSON: the id in the answer ("s-" + 16 hex
// digits) names it in later requests. Another isolate does not have it (404:
// send the schema again).
// Text is validated without a tokenizer: its UTF-8 bytes are committed one by
// one as the single-byte tokens of the vocabulary (byte-level BPE vocabularies
// such as Llama-3's have all 256). Masks are defined on bytes (a token is
// allowed iff text + its bytes is a prefix of the language), so this is exact
// for any tokenization of the same text.
import { initSync, MaskStore, Matcher, compile } from '../vendor/grammask/web.js';
import { countAllowed } from '../vendor/grammask/mask-bits.js';
import wasmModule from '../vendor/grammask/web/grammask_bg.wasm';
import blob from '../vendor/store.gmask';

initSync(wasmModule);
const store = MaskStore.fromBytes(new Uint8Array(blob));
const STORE_CACHE = 64;
const stores = new Map(); // id -> MaskStore, most recently used last
let vocab = null; // the bundled store's vocabulary, prepared on the first compile
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

/** JSON with object keys sorted: equal schemas hash equally whatever their key order. */
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

async function storeId(format) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical(format))));
  return 's-' + Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The store a request names: { store, id, cached, compileMs } or a Response (an error). */
async function storeFor(body) {
  let format = body?.responseFormat;
  if (format === undefined && body?.schema !== undefined) format = { type: 'json_schema', json_schema: body.schema };
  if (format === undefined) {
    const id = body?.store ?? 'default';
    if (id === 'default') return { store, id, cached: true, compileMs: 0 };
    const s = stores.get(id);
    if (!s) return bad(`unknown store id ${JSON.stringify(id)}: compiled stores live in one Worker instance; send the schema again`, 404);
    stores.delete(id); stores.set(id, s);
    return { store: s, id, cached: true, compileMs: 0 };
  }
  if (format === null || typeof format !== 'object') return bad('responseFormat must be an object, e.g. {"type": "json_schema", "json_schema": {...}}');
  const id = await storeId(format);
  const hit = stores.get(id);
  if (hit) { stores.delete(id); stores.set(id, hit); return { store: hit, id, cached: true, compileMs: 0 }; }
  const t0 = performance.now();
  let s;
  try {
    vocab ??= store.vocab();
    s = compile(vocab, format);
  } catch (e) {
    return bad(e.message, 400, { kind: e.kind ?? e.name });
  }
  const compileMs = performance.now() - t0;
  stores.set(id, s);
  if (stores.size > STORE_CACHE) {
    const [oldest, old] = stores.entries().next().value;
    stores.delete(oldest);
    old.free();
  }
  return { store: s, id, cached: false, compileMs };
}

// Commit `ids` one by one; returns the index of the first refused one, or -1.
function commitAll(m, ids) {
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] < 0 || !m.isAllowed(ids[i])) return i;
    m.commitToken(ids[i]);
  }
  return -1;
}

async function handle(request, env) {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/health') {
    return json({ service: 'grammask', nonce: env?.GRAMMASK_NONCE ?? null });
  }
  if (request.method === 'GET' && url.pathname === '/') {
    return json({ vocabSize: store.vocabSize, maskWords: store.maskWords, eosTokenIds: Array.from(store.eosTokenIds),
      grammarFingerprint: store.grammarFingerprint, tokenizerFingerprint: store.tokenizerFingerprint, stores: ['default', ...stores.keys()] });
  }
  if (request.method !== 'POST' || (url.pathname !== '/mask' && url.pathname !== '/validate')) {
    return bad('not found: GET /, GET /health, POST /mask, POST /validate', 404);
  }
  let body;
  try { body = await request.json(); } catch { return bad('the body must be JSON'); }
  const found = await storeFor(body);
  if (found instanceof Response) return found;
  const { store: s, id, cached, compileMs } = found;
  const m = new Matcher(s);
  try {
    if (url.pathname === '/mask') {
      const ids = tokenList(body);
      if (!ids) return bad('expected {"tokens": [token ids]}');
      const at = commitAll(m, ids);
      if (at >= 0) return bad(`token ${ids[at]} at index ${at} is not allowed`, 422, { errorAt: at, store: id });
      const mask = m.computeMask();
      return json({ store: id, cached, compileMs, mask: base64(mask), maskWords: mask.length, allowed: countAllowed(mask),
        forced: Array.from(m.forcedTokens(16)), accepting: m.isAccepting(), stopped: m.isStopped() });
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
    if (at >= 0) return json({ store: id, accepted: false, errorAt: at });
    const done = m.isStopped() || m.isAccepting();
    return json({ store: id, accepted: done, errorAt: done ? null : ids.length });
  } finally {
    m.free();
  }
}

export default {
  async fetch(request, env) {
    try {
      return await handle(request, env);
    } catch (e) {
      return bad(`internal error: ${e?.message ?? e}`, 500);
    }
  },
};
