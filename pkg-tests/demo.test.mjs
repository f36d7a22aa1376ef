// The demo page (www/dist, built by scripts/build/build-www.sh) end to end in
// headless Chromium, with nothing but 127.0.0.1 reachable:
//  - the page loads; the engine (model, compiles, generation) runs in a Web Worker;
//  - a JSON Schema preset compiles in the worker and the local model generates
//    under it: the output validates (ajv); a Lark grammar (JSON, prebuilt blob
//    matched by the tokenizer fingerprint) gives text JSON.parse accepts; the
//    Python-in-a-fence preset gives a fenced program `grammask parse` accepts;
//    tool call mode: the calls parseToolCalls reads validate (ajv) against
//    their tools, and the page shows them with pretend tool results;
//  - the page stays responsive while a grammar compiles in the worker (the
//    longest gap between main-thread timer ticks is measured and bounded);
//  - a bad grammar and a bad schema are shown inline with their location;
//  - keyboard: Tab reaches the controls in order, Ctrl+Enter generates;
//  - Stop (the button) and Esc end a long generation within one step: the
//    tokens sampled after the press are counted; a later generation works;
//  - the layout at 360, 420 and 1280 px wide, with a long unbroken output: no
//    horizontal overflow; the chart's labels (axes with units) lie outside its
//    plot area, where the lines are, and inside the chart;
//  - a local model is the default; a hub model that cannot be downloaded (the
//    test lets no request leave 127.0.0.1) explains itself and offers it.
// Default tier: the tiny random-weight model (models/tiny-random-llama3) with
// the page's "wrap up" bias so that it ends; GRAMMASK_FULL=1 adds the real
// SmolLM2-135M-Instruct (models/smollm2-135m-instruct) on the schema presets.
// Screenshots: out/demo-screenshots/*.png. They are test artifacts, kept on
// purpose (nothing deletes them; each run overwrites them): look at them after
// a change to the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ROOT, FULL, cli, fixture } from './helpers.mjs';

const CHROMIUM = process.env.GRAMMASK_CHROMIUM || '/usr/bin/chromium';
const DIST = path.join(ROOT, 'www/dist/index.html');
const TINY = path.join(ROOT, 'models/tiny-random-llama3/onnx/model.onnx');
const SMOL = path.join(ROOT, 'models/smollm2-135m-instruct/onnx/model.onnx');
// Missing fixtures fail (scripts/setup/setup.sh, build-www.sh, build-test-models.sh provide them).
function fixtures(model) {
  fixture(CHROMIUM, 'run scripts/setup/setup.sh (chromium)');
  fixture(DIST, 'run scripts/build/build-www.sh');
  fixture(model, model === SMOL ? 'SMOLLM2=1 bash scripts/setup/build-test-models.sh (full tier)' : 'run scripts/setup/build-test-models.sh');
}
const OUT = path.join(ROOT, 'out/demo-screenshots');
fs.mkdirSync(OUT, { recursive: true });

function validator(schema) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

function pythonParses(text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-demo-py-'));
  fs.writeFileSync(path.join(dir, 'gen.py'), text);
  const [line] = cli(['parse', '--json', '--grammar', path.join(ROOT, 'grammars/python.lark'), dir], { okCodes: [0, 1] })
    .split('\n').filter(Boolean).map((l) => JSON.parse(l));
  fs.rmSync(dir, { recursive: true });
  return line;
}

/** `expectExternal`: requests (aborted all the same) that the test provokes on purpose. */
async function withPage(t, fn, { expectExternal } = {}) {
  const { chromium } = await import('playwright-core');
  const { start } = await import(path.join(ROOT, 'www/serve.mjs'));
  const server = await start(0);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-demo-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, viewport: { width: 1280, height: 960 },
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  const external = [];
  try {
    const page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route((url) => !url.href.startsWith(`http://127.0.0.1:${server.address().port}/`), (route) => { external.push(route.request().url()); route.abort(); });
    const origin = `http://127.0.0.1:${server.address().port}/`;
    await fn(page, origin, external);
    assert.deepEqual(external.filter((u) => !expectExternal?.test(u)), [], 'no request left 127.0.0.1');
    assert.deepEqual(errors, [], 'no uncaught page errors');
  } finally {
    await ctx.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

const open = async (page, url) => {
  await page.goto(url);
  await page.waitForFunction(() => window.demo?.ready === true || window.demo?.error, null, { timeout: 120_000 });
  assert.equal(await page.evaluate(() => window.demo.error), undefined);
};

/** Run until a generation ends with EOS (a random model may not), at most `tries` times. */
async function runFinished(page, t, label, over, tries = 4) {
  let r;
  for (let k = 1; k <= tries; k++) {
    r = await page.evaluate((o) => window.demo.run(o).catch((e) => ({ error: e.message })), over);
    assert.equal(r.error, undefined, `${label}: ${r.error}`);
    t.diagnostic(`${label} #${k}: ${r.tokens} tokens, finished ${r.finished}, compile ${r.compileMs.toFixed(0)} ms (${r.source}), `
      + `${r.tps.toFixed(1)} tok/s constrained, ${r.tpsFree?.toFixed(1)} unconstrained, mask ${r.maskMsMean.toFixed(3)} ms/step: ${JSON.stringify(r.text).slice(0, 120)}${r.text.length > 160 ? ` … ${JSON.stringify(r.text.slice(-60))}` : ''}; phases ${JSON.stringify(r.phases)}`);
    if (r.finished) break;
  }
  assert.ok(r.finished, `${label}: a generation ended with EOS within ${tries} attempts`);
  return r;
}

test('demo page in headless Chromium: schema, Lark and fenced Python with the tiny model; errors; keyboard; responsiveness', { timeout: 900_000 }, async (t) => {
  fixtures(TINY);
  await withPage(t, async (page, origin) => {
    const t0 = Date.now();
    const lap = (what) => t.diagnostic(`at ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what} begins`);
    await open(page, `${origin}?model=local:tiny-random-llama3&dtype=fp32&n=100&sample=1&wrap=10&compare=1`);

    // Keyboard: Tab order through the first controls; Ctrl+Enter generates (checked below).
    await page.focus('#model');
    const order = [];
    for (let i = 0; i < 6; i++) { order.push(await page.evaluate(() => document.activeElement.id || document.activeElement.name)); await page.keyboard.press('Tab'); }
    assert.deepEqual(order.slice(0, 4), ['model', 'dtype', 'device', 'kind'], `tab order ${order}`);

    lap('section 1 (A JSON Schema preset, compiled in the worker; the output validates)');
    // 1. A JSON Schema preset, compiled in the worker; the output validates.
    const r1 = await runFinished(page, t, 'schema (tool call)', { kind: 'json_schema', preset: 'tool call' });
    assert.match(r1.source, /JSON Schema compiled in the worker/);
    const schema = JSON.parse(await page.locator('#editor').inputValue());
    const validate = validator(schema);
    assert.ok(validate(JSON.parse(r1.text)), `ajv: ${JSON.stringify(validate.errors)} for ${r1.text}`);
    assert.equal(r1.shown, r1.text, 'the page shows the generated text');
    await page.screenshot({ path: path.join(OUT, 'schema.png'), fullPage: true });

    lap('section 2 (Lark JSON)');
    // 2. Lark JSON (the prebuilt blob for this tokenizer).
    const r2 = await runFinished(page, t, 'lark JSON', { kind: 'lark', preset: 'JSON' });
    assert.match(r2.source, /^prebuilt /);
    assert.doesNotThrow(() => JSON.parse(r2.text), `JSON.parse(${JSON.stringify(r2.text)})`);

    lap('section 3 (Python in a fence)');
    // 3. Python in a fence: free preamble, then a program, then the closing fence.
    const r3 = await runFinished(page, t, 'Python in a fence', { kind: 'lark', preset: 'Python in a fence', n: 160, wrap: 24, maxFree: 4 }, 6);
    const m = /```python\n([\s\S]*?)\n```/.exec(r3.text);
    assert.ok(m, `a complete fence in ${JSON.stringify(r3.text)}`);
    const parsed = pythonParses(m[1]);
    assert.equal(parsed.ok, true, `grammask parse of the fenced program: ${JSON.stringify(parsed)}`);
    assert.ok(await page.locator('#out span.free').count() > 0, 'the unconstrained preamble is told apart');
    await page.screenshot({ path: path.join(OUT, 'python-fence.png'), fullPage: true });

    lap('section 3b (tool call mode)');
    // 3b. Tool call mode: the tool list from the editor, calls in the hermes
    // format (required), read back by parseToolCalls (each validated here with
    // ajv against its tool's parameters) and answered with pretend results.
    const r3b = await runFinished(page, t, 'tool call', { kind: 'tools', preset: 'weather & search', toolFormat: 'hermes', toolChoice: 'required' });
    assert.match(r3b.source, /tool calls \(hermes, required\)/);
    const tools = JSON.parse(await page.locator('#editor').inputValue());
    assert.equal(r3b.callsError, undefined, r3b.callsError);
    assert.ok(r3b.calls.length >= 1, `calls in ${JSON.stringify(r3b.text)}`);
    for (const c of r3b.calls) {
      const tool = tools.find((x) => x.function.name === c.name);
      assert.ok(tool, `${c.name} is one of the tools`);
      const v = validator(tool.function.parameters);
      assert.ok(v(c.arguments), `ajv: ${JSON.stringify(v.errors)} for ${JSON.stringify(c.arguments)}`);
    }
    assert.equal(r3b.toolResults.length, r3b.calls.length);
    const shownCalls = await page.locator('#calls').textContent();
    assert.ok(await page.locator('#callsBox').isVisible(), 'the calls are shown');
    assert.ok(shownCalls.includes(`call 1: ${r3b.calls[0].name}(`) && shownCalls.includes('pretend'), shownCalls);
    await page.screenshot({ path: path.join(OUT, 'tool-call.png'), fullPage: true });

    lap('section 4 (Responsive while a grammar compiles in the worker)');
    // 4. Responsive while a grammar compiles in the worker (a Lark JSON grammar
    //    edited so that no prebuilt blob matches: the full store is compiled).
    await page.evaluate(async () => {
      document.querySelector('input[name=kind][value=lark]').click();
      await new Promise((r) => setTimeout(r, 50));
    });
    await page.selectOption('#preset', 'JSON');
    await page.waitForFunction(() => document.getElementById('editor').value.includes('json_text'));
    await page.evaluate(() => { const e = document.getElementById('editor'); e.value = '// edited\n' + e.value; e.dispatchEvent(new Event('input')); });
    const gaps = await page.evaluate(async () => {
      let last = performance.now(), worst = 0, ticks = 0;
      const timer = setInterval(() => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; ticks++; }, 10);
      const t0 = performance.now();
      document.getElementById('compile').click();
      await new Promise((r) => { const c = setInterval(() => { if (/compiled in the worker/.test(document.getElementById('compileInfo').textContent)) { clearInterval(c); r(); } }, 20); });
      clearInterval(timer);
      return { worst, ticks, ms: performance.now() - t0 };
    });
    t.diagnostic(`compile of an edited json.lark in the worker: ${gaps.ms.toFixed(0)} ms; main thread: ${gaps.ticks} timer ticks, longest gap ${gaps.worst.toFixed(0)} ms`);
    assert.ok(gaps.worst < 250, `the main thread stayed responsive (longest gap ${gaps.worst.toFixed(0)} ms)`);

    lap('section 5 (Errors inline, with their location)');
    // 5. Errors inline, with their location.
    const bad = await page.evaluate(() => window.demo.run({ kind: 'lark', preset: 'your own (arithmetic)', text: 'start: expr\nexpr: "(" expr\n  | NUMBER )\n' }).catch((e) => ({ error: e.message, line: e.line })));
    assert.equal(bad.line, 3, JSON.stringify(bad));
    const errText = await page.locator('#error').textContent();
    assert.match(errText, /GrammarSyntax: .*3:\d+.*line 3, column \d+/s);
    await page.screenshot({ path: path.join(OUT, 'grammar-error.png'), fullPage: true });
    const badSchema = await page.evaluate(() => window.demo.run({ kind: 'json_schema', preset: 'extraction form', text: '{"type": "object", "properties": {"age": {"type": "integer", "minimum": "zero"}}}' }).catch((e) => ({ error: e.message, pointer: e.pointer })));
    assert.ok(badSchema.error, 'a bad schema is refused');
    t.diagnostic(`bad schema: ${badSchema.error}`);
    assert.match(await page.locator('#error').textContent(), /minimum/);
    const badJson = await page.evaluate(() => window.demo.run({ kind: 'json_schema', text: '{"type": "object",\n  "properties": {]}' }).catch((e) => ({ error: e.message })));
    assert.match(badJson.error, /not JSON.*line 2/);

    lap('section 6 (Ctrl+Enter generates)');
    // 6. Ctrl+Enter generates (back to a valid constraint).
    await page.evaluate(async () => { document.querySelector('input[name=kind][value=regex]').click(); });
    await page.waitForFunction(() => document.getElementById('preset').value === 'ISO date');
    await page.evaluate(() => { document.getElementById('n').value = '16'; });
    await page.focus('#prompt');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => /^Done/.test(document.getElementById('status').textContent), null, { timeout: 120_000 });
    const dateText = await page.locator('#out').textContent();
    assert.match(dateText, /^\d{0,4}(-\d{0,2}(-\d{0,2})?)?$/, `a prefix of the ISO date regex: ${dateText}`);
    await page.screenshot({ path: path.join(OUT, 'regex.png'), fullPage: true });
    t.diagnostic(`page total ${((Date.now() - t0) / 1000).toFixed(1)} s; screenshots out/demo-screenshots/*.png`);
  });
});

/** Local models as the page lists them (build-www.sh: models/NAME/onnx/model.onnx), and the one it should default to. */
function localModels() {
  const list = JSON.parse(fs.readFileSync(path.join(ROOT, 'www/dist/models.json'), 'utf8'));
  return { list, preferred: list.find((m) => !/random/i.test(m)) ?? list[0] };
}

/** No horizontal overflow of the page nor of the output box; the chart's labels outside its plot area and inside the chart. */
async function layoutAt(page, width, label) {
  await page.setViewportSize({ width, height: 900 });
  await page.waitForFunction((w) => innerWidth === w, width);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const m = await page.evaluate(() => {
    const out = document.getElementById('out');
    const svg = document.getElementById('chart').getBoundingClientRect();
    const plot = document.querySelector('#chart rect').getBoundingClientRect();
    const texts = [...document.querySelectorAll('#chart text')].map((e) => ({ s: e.textContent, b: e.getBoundingClientRect().toJSON() }));
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth, outScroll: out.scrollWidth, outClient: out.clientWidth,
      svg: svg.toJSON(), plot: plot.toJSON(), texts, lines: document.querySelectorAll('#chart polyline').length };
  });
  assert.ok(m.scrollWidth <= m.innerWidth, `${label} at ${width} px: the page is ${m.scrollWidth} px wide`);
  assert.ok(m.outScroll <= m.outClient, `${label} at ${width} px: the output box scrolls sideways (${m.outScroll} > ${m.outClient})`);
  const inside = (b, r, eps = 0.5) => b.left >= r.left - eps && b.right <= r.right + eps && b.top >= r.top - eps && b.bottom <= r.bottom + eps;
  const overlaps = (b, r) => b.left < r.right - 0.5 && b.right > r.left + 0.5 && b.top < r.bottom - 0.5 && b.bottom > r.top + 0.5;
  for (const { s, b } of m.texts) {
    assert.ok(inside(b, m.svg), `${label} at ${width} px: chart label ${JSON.stringify(s)} is cut off (${JSON.stringify(b)} outside ${JSON.stringify(m.svg)})`);
    assert.ok(!overlaps(b, m.plot), `${label} at ${width} px: chart label ${JSON.stringify(s)} lies in the plot area, under the lines`);
  }
  const all = m.texts.map((x) => x.s).join(' | ');
  for (const title of ['allowed tokens (log)', 'mask time (ms)', 'step (generated token)']) assert.ok(all.includes(title), `axis title ${title} in ${all}`);
  await page.screenshot({ path: path.join(OUT, `${label}-${width}px.png`), fullPage: true });
  return m;
}

test('demo page: Stop and Esc end a generation within one step; 360 to 1280 px wide; the local model by default, a failed download explained', { timeout: 600_000 }, async (t) => {
  fixtures(TINY);
  const { list, preferred } = localModels();
  assert.ok(list.includes('tiny-random-llama3'), `models.json lists the local models: ${list}`);
  await withPage(t, async (page, origin, external) => {
    // A local model is the default (a real one before the random test model).
    await open(page, origin);
    assert.equal(await page.locator('#model').inputValue(), `local:${preferred}`);
    assert.equal(await page.locator('#dtype').inputValue(), 'fp32');

    // A hub model with nothing reachable: the error says what happened and offers the local model.
    await page.selectOption('#model', 'onnx-community/SmolLM2-135M-Instruct');
    const failed = await page.evaluate(() => window.demo.run({ kind: 'regex', preset: 'ISO date', n: 4 }).catch((e) => ({ error: e.message, offline: e.offline })));
    t.diagnostic(`hub model offline: ${failed.error}; requests refused: ${external.length}`);
    assert.equal(failed.offline, true, JSON.stringify(failed));
    assert.ok(external.length > 0 && external.every((u) => /huggingface\.co/.test(u)), `the page asked the hub only: ${external}`);
    const said = await page.locator('#status').textContent();
    assert.match(said, /could not download onnx-community\/SmolLM2-135M-Instruct from the Hugging Face hub .*offline/);
    assert.ok(said.includes(`A local model is available: models/${preferred}.`), said);
    await layoutAt(page, 420, 'offline');
    await page.click('#statusAction');
    assert.equal(await page.locator('#model').inputValue(), `local:${preferred}`);
    assert.equal(await page.locator('#dtype').inputValue(), 'fp32');

    // Stop and Esc during a generation that could run for 1,500 tokens
    // (no EOS before 4,000 letters). The page counts the tokens sampled after
    // the press (the worker stamps each token with the time it was sampled, on
    // the clock the page shares: the page may render them later under load);
    // the worker, those sampled after its 'stop' message arrived.
    await page.selectOption('#model', 'local:tiny-random-llama3');
    await page.evaluate(() => { document.getElementById('compare').checked = false; document.getElementById('sample').checked = true; });
    for (const how of ['Stop button', 'Esc']) {
      const run = page.evaluate(() => window.demo.run({ kind: 'regex', preset: 'ISO date', text: '[a-z]{4000}', n: 1500, wrap: 0 }).catch((e) => ({ error: e.message })));
      await page.waitForFunction(() => document.querySelectorAll('#out span').length >= 20, null, { timeout: 120_000, polling: 5 });
      if (how === 'Esc') await page.keyboard.press('Escape');
      else await page.click('#stop');
      const r = await run;
      assert.equal(r.error, undefined, `${how}: ${r.error}`);
      t.diagnostic(`${how}: ${r.shownAtStop} tokens shown at the press, ${r.tokens} in all; ${r.sampledAfterStop} sampled after the press, ${r.stopLag} after the worker got 'stop' ${r.stopTransitMs.toFixed(0)} ms after the press; ${(r.ms / 1000).toFixed(1)} s`);
      assert.equal(r.stopped, true, `${how}: the result says stopped`);
      assert.equal(r.finished, false);
      assert.ok(r.shownAtStop >= 20, `${how}: pressed during the generation (${r.shownAtStop} tokens shown)`);
      // One step: once the worker has the message, at most the token in progress follows. The
      // message reaches the worker at its next step boundary; on a loaded machine its transit
      // may span a few of the tiny model's millisecond steps, so the press-to-worker time is
      // bounded instead (a worker that never returned to its loop got it only at the end).
      assert.ok(r.stopLag <= 1, `${how}: ${r.stopLag} tokens sampled after the worker got 'stop'`);
      assert.ok(r.stopTransitMs < 1000, `${how}: the worker got 'stop' ${r.stopTransitMs} ms after the press`);
      assert.ok(r.sampledAfterStop <= 2 || r.sampledAfterStop - r.stopLag <= 10, `${how}: ${r.sampledAfterStop} tokens sampled after the press (${r.stopLag} after the worker got 'stop')`);
      assert.equal(r.shownTokens, r.tokens, `${how}: the page shows every generated token`);
      assert.match(await page.locator('#status').textContent(), new RegExp(`^Stopped: ${r.tokens} tokens, ${r.sampledAfterStop} of them sampled after Stop was pressed`));
      assert.equal(await page.locator('#stop').isDisabled(), true);
      assert.equal(await page.locator('#go').isDisabled(), false);
    }
    await page.screenshot({ path: path.join(OUT, 'stopped.png'), fullPage: true });

    // The worker is responsive after a stop: a long unbroken output (letters only, no spaces).
    const long = await page.evaluate(() => window.demo.run({ kind: 'regex', text: '[a-z]{4000}', n: 220 }).catch((e) => ({ error: e.message })));
    assert.equal(long.error, undefined, long.error);
    assert.equal(long.tokens, 220);
    assert.match(long.text, /^[a-z]{400,}$/, `a long unbroken output: ${long.text.length} letters`);
    for (const w of [360, 420, 1280]) {
      const m = await layoutAt(page, w, 'long-output');
      assert.equal(m.lines, 2, 'the chart has its two lines');
    }
    const wrapped = await page.evaluate(() => { const o = document.getElementById('out'); return o.scrollHeight / parseFloat(getComputedStyle(o).lineHeight); });
    assert.ok(wrapped >= 3, `the output wraps at 1280 px (${wrapped.toFixed(1)} lines)`);
  }, { expectExternal: /^https:\/\/huggingface\.co\// });
});

test('demo page with the real SmolLM2-135M-Instruct: schema presets validate (full tier)', { skip: !FULL && 'full tier (GRAMMASK_FULL=1)', timeout: 900_000 }, async (t) => {
  fixtures(SMOL);
  await withPage(t, async (page, origin) => {
    await open(page, `${origin}?model=local:smollm2-135m-instruct&dtype=fp32&n=160&sample=0&compare=1`);
    for (const preset of ['tool call', 'extraction form', 'recursive (tree)']) {
      const r = await runFinished(page, t, `SmolLM2 ${preset}`, { kind: 'json_schema', preset }, 1);
      const validate = validator(JSON.parse(await page.locator('#editor').inputValue()));
      assert.ok(validate(JSON.parse(r.text)), `ajv: ${JSON.stringify(validate.errors)} for ${r.text}`);
      await page.screenshot({ path: path.join(OUT, `smollm2-${preset.split(' ')[0]}.png`), fullPage: true });
    }
  });
});
