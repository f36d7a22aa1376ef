// The demo page (www/dist, built by scripts/build-www.sh) end to end in
// headless Chromium: the local tiny random-weight model (models/
// tiny-random-llama3, transformers.js + onnxruntime-web wasm in the page),
// constrained by the prebuilt blobs; the generated text must parse
// (JSON.parse for JSON, native `grammask parse` for Python). The page's
// "wrap up" option favours EOS and closing characters after a few tokens so
// that a random model ends within max_new_tokens; unfinished generations are
// retried (at most 4 attempts), and must still have been accepted token by
// token. A screenshot is kept in out/demo-screenshot.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, cli } from './helpers.mjs';

const CHROMIUM = process.env.GRAMMASK_CHROMIUM || '/usr/bin/chromium';
const DIST = path.join(ROOT, 'www/dist/index.html');
const MODEL = path.join(ROOT, 'models/tiny-random-llama3/onnx/model.onnx');
const skip = !fs.existsSync(CHROMIUM) ? `${CHROMIUM} not installed`
  : !fs.existsSync(DIST) ? 'www/dist missing: run scripts/build-www.sh'
    : !fs.existsSync(MODEL) ? 'run scripts/build-test-models.sh' : false;

test('demo page in headless Chromium: tiny random model constrained to JSON and Python', { skip, timeout: 600_000 }, async (t) => {
  const { chromium } = await import('playwright-core');
  const { start } = await import(path.join(ROOT, 'www/serve.mjs'));
  const server = await start(0);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-demo-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, viewport: { width: 1200, height: 900 },
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  try {
    const page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    // Nothing but 127.0.0.1: the page must not reach a CDN or the hub for the local model.
    const external = [];
    await page.route((url) => !url.href.startsWith(`http://127.0.0.1:${server.address().port}/`), (route) => { external.push(route.request().url()); route.abort(); });
    const url = `http://127.0.0.1:${server.address().port}/?model=local:tiny-random-llama3&dtype=fp32&n=120&sample=1&wrap=12&compare=1`;
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForFunction(() => window.demoReady === true || window.demoResult?.error, null, { timeout: 120_000 });
    assert.equal(await page.evaluate(() => window.demoResult?.error), undefined);
    for (const grammar of ['json', 'python']) {
      let r;
      for (let attempt = 1; attempt <= 4; attempt++) {
        r = await page.evaluate((g) => window.runDemo({ grammar: g, prompt: 'Write it:' }), grammar);
        t.diagnostic(`${grammar} #${attempt}: ${r.tokens} tokens, finished ${r.finished}, ${r.tps.toFixed(1)} tok/s constrained, `
          + `${r.tpsFree?.toFixed(1)} unconstrained, mask ${r.maskMsMean.toFixed(2)} ms/step, blob: ${r.source}: ${JSON.stringify(r.text).slice(0, 100)}`);
        if (r.finished) break;
      }
      assert.ok(r.finished, `${grammar}: a generation ended with EOS within 4 attempts`);
      assert.match(r.source, /^prebuilt /, 'the prebuilt blob matched the model tokenizer fingerprint');
      if (grammar === 'json') {
        assert.doesNotThrow(() => JSON.parse(r.text), `JSON.parse(${JSON.stringify(r.text)})`);
      } else {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-demo-py-'));
        fs.writeFileSync(path.join(dir, 'gen.py'), r.text);
        const [line] = cli(['parse', '--json', '--grammar', path.join(ROOT, 'grammars/python.lark'), dir], { okCodes: [0, 1] })
          .split('\n').filter(Boolean).map((l) => JSON.parse(l));
        fs.rmSync(dir, { recursive: true });
        assert.equal(line.ok, true, `grammask parse: ${JSON.stringify(line)} for ${JSON.stringify(r.text)}`);
      }
      const shown = await page.locator('#out').textContent();
      assert.equal(shown, r.decoded, 'the page shows the generated text');
      const stats = await page.locator('#stats').textContent();
      assert.match(stats, /tokens\/s constrained/);
      assert.ok(await page.locator('#steps tbody tr').count() > 0, 'per-step rows are shown');
    }
    fs.mkdirSync(path.join(ROOT, 'out'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'out/demo-screenshot.png'), fullPage: true });
    t.diagnostic(`page total ${((Date.now() - t0) / 1000).toFixed(1)} s; screenshot out/demo-screenshot.png`);
    assert.deepEqual(external, [], 'no request left 127.0.0.1');
    assert.deepEqual(errors, [], 'no uncaught page errors');
  } finally {
    await ctx.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
