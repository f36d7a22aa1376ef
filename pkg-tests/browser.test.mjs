// Headless Chromium (playwright-core, Debian's /usr/bin/chromium): a page
// served from 127.0.0.1 imports the package's web entry, streams a real blob
// with MaskStore.fromUrl (progress reported), replays a JSON file and returns
// the mask hashes, which must equal the native CLI's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { blobPath, corpus, nativeMasks, fixture } from './helpers.mjs';

const CHROMIUM = process.env.GRAMMASK_CHROMIUM || '/usr/bin/chromium';
const require = createRequire(import.meta.url);
const PKG = path.dirname(require.resolve('grammask/package.json'));
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.gmask': 'application/octet-stream' };

const PAGE = `<!doctype html><meta charset="utf-8"><title>grammask</title>
<script type="module">
import init, { MaskStore, Matcher } from '/pkg/web.js';
// The mask hash of \`grammask masks\`.
function maskHash(w) {
  let a = 0x811c9dc5 | 0, b = 0x9747b28c | 0;
  for (let i = 0; i < w.length; i++) { a = Math.imul(a ^ w[i], 0x01000193); b = (Math.imul(b ^ w[i], 0x27d4eb2d) + i) | 0; }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
window.run = async (blobUrl, ids) => {
  let before;
  try { MaskStore.fromBytes(new Uint8Array(8)); } catch (e) { before = e.message; }
  await init();
  const progress = [];
  const store = await MaskStore.fromUrl(blobUrl, undefined, (loaded, total) => progress.push([loaded, total]));
  const m = new Matcher(store);
  const hashes = [];
  const buf = new Uint32Array(m.maskWords);
  for (const id of ids) { m.fillMask(buf); hashes.push(maskHash(buf)); m.commitToken(id); }
  hashes.push(maskHash(m.computeMask()));
  let invalid;
  try { m.commitToken(store.vocabSize + 5); } catch (e) { invalid = e.name + ': ' + e.message; }
  let missing;
  try { await MaskStore.fromUrl('/blob/missing.gmask'); } catch (e) { missing = e.message; }
  const out = { before, progress, hashes, accepting: m.isAccepting(), eos: Array.from(store.eosTokenIds), invalid, missing,
    stats: store.stats(), ua: navigator.userAgent };
  m.free();
  store.free();
  return out;
};
window.ready = true;
</script>`;

function serve(blob) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let file = null;
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(PAGE);
    }
    if (url.pathname.startsWith('/pkg/')) file = path.join(PKG, path.normalize(url.pathname.slice(5)).replace(/^(\.\.[/\\])+/, ''));
    if (url.pathname === '/blob/json.gmask') file = blob;
    if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      return res.end('not found');
    }
    const body = fs.readFileSync(file);
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('headless Chromium: web entry, fromUrl with progress, masks equal native', async (t) => {
  fixture(CHROMIUM, 'run scripts/setup/setup.sh (chromium)');
  const { chromium } = await import('playwright-core');
  const blob = blobPath('json');
  const file = corpus('json').find((f) => { const s = fs.statSync(f).size; return s > 2000 && s < 8000; });
  const [native] = nativeMasks(blob, [file]);
  assert.equal(native.violation, null);
  const server = await serve(blob);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const base = `http://127.0.0.1:${server.address().port}`;
    await page.goto(`${base}/`);
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate(([u, ids]) => window.run(u, ids), [`${base}/blob/json.gmask`, native.ids]);
    t.diagnostic(`${r.ua}: ${r.hashes.length} masks for ${path.basename(file)}; ${r.progress.length} progress calls`);
    assert.deepEqual(errors, []);
    assert.match(r.before, /call `await init\(\)` first/);
    assert.deepEqual(r.hashes, native.hashes, 'masks in Chromium equal the native CLI masks');
    assert.equal(r.accepting, true);
    assert.deepEqual(r.eos, [128001]);
    const size = fs.statSync(blob).size;
    assert.ok(r.progress.length >= 1);
    assert.deepEqual(r.progress.at(-1), [size, size], 'progress ends at (size, size)');
    assert.ok(r.progress.every(([l, tot], i) => tot === size && (i === 0 || l > r.progress[i - 1][0])), 'progress increases');
    assert.match(r.invalid, /^GrammaskError: token id \d+ is out of range/);
    assert.match(r.missing, /HTTP 404/);
    assert.equal(r.stats.vocabSize, 128256);
  } finally {
    await ctx.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
