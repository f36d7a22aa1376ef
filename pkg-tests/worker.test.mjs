// The Cloudflare Worker (www/worker) under `wrangler dev` (workerd, local):
// GET /, POST /mask and POST /validate answers against the Node package and
// the native CLI. Cold start (process start to first answer) and per-request
// times are reported, not asserted. Needs www/node_modules (wrangler 4.86.0,
// scripts/setup/setup.sh) and www/worker/vendor (scripts/build/build-www.sh): missing, the
// test fails. wrangler dev listens on a free port (and a free inspector port),
// and the server that answers must prove it is the Worker this test started:
// GET /health returns the per-run nonce passed in as the GRAMMASK_NONCE var.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MaskStore, Matcher, compile } from 'grammask';
import { ROOT, cli, corpus, tokenIdOf } from './helpers.mjs';

const WORKER = path.join(ROOT, 'www/worker');
const WRANGLER = path.join(ROOT, 'www/node_modules/.bin/wrangler');

/** A port free right now on 127.0.0.1 (bound to port 0, then released). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

async function waitUp(url, ms) {
  const t0 = Date.now();
  for (;;) {
    try { const r = await fetch(url); if (r.ok) return r; } catch { /* not yet */ }
    if (Date.now() - t0 > ms) throw new Error(`${url} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// wrangler dev itself (not the Worker, whose answers are all JSON) sometimes
// answers 503 "Your worker restarted mid-request", or closes the connection,
// while it reloads right after starting, on a loaded machine: such a request
// is sent again.
const post = async (base, p, body, tries = 3) => {
  let r;
  try {
    r = await fetch(base + p, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  } catch (e) {
    if (tries > 1 && e?.cause?.code === 'UND_ERR_SOCKET') { await new Promise((x) => setTimeout(x, 500)); return post(base, p, body, tries - 1); }
    throw e;
  }
  const text = await r.text();
  try { return { status: r.status, body: JSON.parse(text) }; } catch {
    if (r.status === 503 && tries > 1) { await new Promise((x) => setTimeout(x, 500)); return post(base, p, body, tries - 1); }
    throw new Error(`POST ${p}: ${r.status} ${text.slice(0, 300)}`);
  }
};

test('Cloudflare Worker under wrangler dev: /mask and /validate equal the package and the CLI', { timeout: 300_000 }, async (t) => {
  assert.ok(fs.existsSync(WRANGLER), 'wrangler missing: run scripts/setup/setup.sh');
  assert.ok(fs.existsSync(path.join(WORKER, 'vendor/store.gmask')), 'www/worker/vendor missing: run scripts/build/build-www.sh');
  const PORT = await freePort();
  const INSPECTOR = await freePort();
  const nonce = crypto.randomBytes(16).toString('hex');
  const store = MaskStore.fromBytes(fs.readFileSync(path.join(WORKER, 'vendor/store.gmask')));
  const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-wrangler-'));
  const t0 = Date.now();
  const child = spawn(WRANGLER, ['dev', '--ip', '127.0.0.1', '--port', String(PORT), '--inspector-port', String(INSPECTOR), '--var', `GRAMMASK_NONCE:${nonce}`], {
    cwd: WORKER, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', XDG_CONFIG_HOME: xdg, NO_COLOR: '1' },
  });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const base = `http://127.0.0.1:${PORT}`;
  try {
    let health;
    try {
      health = await (await waitUp(base + '/health', 120_000)).json();
    } catch (e) {
      throw new Error(`${e.message}\n--- wrangler output ---\n${log}`);
    }
    assert.deepEqual(health, { service: 'grammask', nonce }, `the server on port ${PORT} is not the Worker this test started`);
    const info = await (await fetch(base + '/')).json();
    const cold = Date.now() - t0;
    t.diagnostic(`cold start (wrangler dev spawn to first answer): ${cold} ms`);
    assert.equal(info.vocabSize, store.vocabSize);
    assert.equal(info.grammarFingerprint, store.grammarFingerprint);
    assert.deepEqual(info.eosTokenIds, Array.from(store.eosTokenIds));

    // /mask on every prefix of a real JSON file's tokens (native tokenization).
    const file = corpus('json').find((f) => { const s = fs.statSync(f).size; return s > 200 && s < 1500; });
    const blob = path.join(WORKER, 'vendor/store.gmask');
    const [native] = cli(['masks', '--store', blob, '--tokenizer', path.join(ROOT, 'models/llama3/tokenizer.json'), file])
      .split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const ids = native.ids.slice(0, 40);
    const m = new Matcher(store);
    const times = [];
    for (let k = 0; k <= ids.length; k += 4) {
      m.reset();
      m.commitTokens(ids.slice(0, k));
      const q0 = performance.now();
      const r = await post(base, '/mask', { tokens: ids.slice(0, k) });
      times.push(performance.now() - q0);
      assert.equal(r.status, 200);
      const words = new Uint32Array(Uint8Array.from(Buffer.from(r.body.mask, 'base64')).buffer);
      assert.deepEqual(words, m.computeMask(), `mask after ${k} tokens`);
      assert.deepEqual(r.body.forced, Array.from(m.forcedTokens(16)));
      assert.equal(r.body.accepting, m.isAccepting());
    }
    m.free();
    times.sort((a, b) => a - b);
    t.diagnostic(`/mask: ${times.length} requests, median ${times[times.length >> 1].toFixed(1)} ms, max ${times.at(-1).toFixed(1)} ms (JSON × Llama-3, 16 KB mask, localhost)`);
    // A refused token.
    const bad = await post(base, '/mask', { tokens: [tokenIdOf(store, '}')] });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.errorAt, 0);
    assert.equal((await post(base, '/mask', { tokens: 'x' })).status, 400);

    // /validate: tokens (the whole file + EOS) and texts, against the CLI's parse.
    let r = await post(base, '/validate', { tokens: [...native.ids, store.eosTokenIds[0]] });
    assert.deepEqual(r.body, { store: 'default', accepted: true, errorAt: null });
    r = await post(base, '/validate', { tokens: native.ids.slice(0, 3) });
    assert.deepEqual(r.body, { store: 'default', accepted: false, errorAt: 3 }, 'an incomplete text: errorAt = input length');
    const texts = [fs.readFileSync(file, 'utf8'), '{"a": [1, 2, {"b": null}]}', '{"a": [1, 2,]}', '[1, 2', ' "caf\u00e9 \u2603" ', '{"x": tru}', ''];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-worker-'));
    texts.forEach((s, i) => fs.writeFileSync(path.join(dir, `t${i}.json`), s));
    const lines = cli(['parse', '--json', '--grammar', path.join(ROOT, 'grammars/json.lark'), dir], { okCodes: [0, 1] })
      .split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.file)
      .sort((a, b) => a.file.localeCompare(b.file, 'en', { numeric: true }));
    fs.rmSync(dir, { recursive: true });
    for (let i = 0; i < texts.length; i++) {
      r = await post(base, '/validate', { text: texts[i] });
      assert.equal(r.status, 200);
      assert.equal(r.body.accepted, lines[i].ok, `text ${i} ${JSON.stringify(texts[i]).slice(0, 60)}: worker vs grammask parse`);
      let ok = true;
      try { JSON.parse(texts[i]); } catch { ok = false; }
      assert.equal(r.body.accepted, ok, `text ${i}: worker vs JSON.parse`);
      if (!r.body.accepted) assert.ok(Number.isInteger(r.body.errorAt));
    }
    // errorAt is the UTF-8 byte offset of the first refused byte.
    r = await post(base, '/validate', { text: '{"a": [1, 2,]}' });
    assert.deepEqual(r.body, { store: 'default', accepted: false, errorAt: 12 });
    assert.equal((await fetch(base + '/nope')).status, 404);

    // Constraints sent with the request: compiled in the Worker, cached per hash.
    const vocab = store.vocab();
    const formats = [
      { responseFormat: { type: 'lark', grammar: 'start: ("yes" | "no") "!"\n' }, text: 'yes!', prefix: 'ye' },
      { responseFormat: { type: 'regex', regex: '[0-9]{3}-[0-9]{4}' }, text: '555-0199', prefix: '555-' },
      { schema: { type: 'object', properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 0 } }, required: ['ok', 'n'], additionalProperties: false },
        text: '{"ok": true, "n": 7}', prefix: '{"ok"' },
    ];
    for (const f of formats) {
      const fmt = f.responseFormat ?? { type: 'json_schema', json_schema: f.schema };
      const local = compile(vocab, fmt);
      const lm = new Matcher(local);
      const first = await post(base, '/mask', { ...f, tokens: [] });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.match(first.body.store, /^s-[0-9a-f]{16}$/);
      assert.equal(first.body.cached, false);
      const words = new Uint32Array(Uint8Array.from(Buffer.from(first.body.mask, 'base64')).buffer);
      assert.deepEqual(words, lm.computeMask(), `${JSON.stringify(fmt)}: first mask equals the package's`);
      const again = await post(base, '/mask', { ...f, tokens: [] });
      assert.equal(again.body.cached, true, 'the second request hits the cache');
      assert.equal(again.body.store, first.body.store);
      // The store id alone, with tokens (the text's bytes as single-byte tokens).
      const byteIds = Array.from(new TextEncoder().encode(f.prefix), (b) => tokenIdOf(store, String.fromCharCode(b)));
      lm.commitTokens(byteIds);
      const byId = await post(base, '/mask', { store: first.body.store, tokens: byteIds });
      assert.equal(byId.status, 200, JSON.stringify(byId.body));
      assert.deepEqual(new Uint32Array(Uint8Array.from(Buffer.from(byId.body.mask, 'base64')).buffer), lm.computeMask());
      const v = await post(base, '/validate', { store: first.body.store, text: f.text });
      assert.deepEqual(v.body, { store: first.body.store, accepted: true, errorAt: null }, f.text);
      t.diagnostic(`${fmt.type}: compiled in the Worker in ${first.body.compileMs.toFixed(1)} ms; store ${first.body.store}`);
      lm.free(); local.free();
    }
    // Same schema, other key order: the same store.
    const a = await post(base, '/mask', { tokens: [], schema: { required: ['ok', 'n'], additionalProperties: false, type: 'object', properties: { n: { minimum: 0, type: 'integer' }, ok: { type: 'boolean' } } } });
    assert.equal(a.body.cached, true);
    assert.equal((await post(base, '/mask', { tokens: [], store: 's-0000000000000000' })).status, 404);
    const badGrammar = await post(base, '/mask', { tokens: [], responseFormat: { type: 'lark', grammar: 'start: (' } });
    assert.equal(badGrammar.status, 400);
    assert.equal(badGrammar.body.kind, 'GrammarSyntax');
    const info2 = await (await fetch(base + '/')).json();
    assert.ok(info2.stores.length >= 4, JSON.stringify(info2.stores));
    vocab.free();
  } catch (e) {
    e.message += `\n--- wrangler output (tail) ---\n${log.slice(-4000)}`;
    throw e;
  } finally {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    await new Promise((r) => setTimeout(r, 300));
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    fs.rmSync(xdg, { recursive: true, force: true });
    store.free();
  }
});
