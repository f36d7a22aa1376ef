// grammask/webgpu: the WGSL mask kernel (js/mask.wgsl).
//  1. CPU: the kernel's JS reference (maskKernelReference, invocation by
//     invocation) equals applyMask, for f32 and f16 bits, batches, logits
//     wider than the vocabulary; real masks from a JSON matcher.
//  2. GPU: headless Chromium with WebGPU on SwiftShader (a software Vulkan
//     device: --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader) runs
//     applyMaskGPU (f32; mask from a filler callback into a buffer mapped at
//     creation, and from a Uint32Array) on a 2-row batch of 128,326 logits,
//     and the read-back logits must equal the reference. SwiftShader has no "shader-f16",
//     so the f16 variant is validated by naga only (tests/suite/wgsl.rs) plus the
//     CPU reference here. No adapter fails the test unless the machine
//     declares it (GRAMMASK_NO_WEBGPU=1; pkg-tests/data/skips.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { MaskStore, Matcher } from 'grammask';
import { applyMask } from 'grammask/transformers';
import { maskKernelReference, maskShader, MASK_WGSL } from 'grammask/webgpu';
import { blobPath, rng, tokenIdOf, fixture } from './helpers.mjs';

const CHROMIUM = process.env.GRAMMASK_CHROMIUM || '/usr/bin/chromium';
const require = createRequire(import.meta.url);
const PKG = path.dirname(require.resolve('grammask/package.json'));

/** Two real rows of masks (JSON: at the start and after '{'), width V + 70. */
function realMasks() {
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const vocab = store.vocabSize, width = vocab + 70;
  const m = new Matcher(store, { maskWidth: width });
  const words = m.maskWords;
  const masks = new Uint32Array(2 * words);
  m.fillMask(masks, 0);
  m.commitToken(tokenIdOf(store, '{'));
  m.fillMask(masks, words);
  // Make the padding words non-zero: the kernel must mask ids >= vocab anyway.
  masks[words - 1] = 0xffffffff; masks[2 * words - 1] = 0xffffffff;
  m.free(); store.free();
  return { vocab, width, words, masks };
}

function applyMaskRows(logits, masks, { vocab, width, rows, words }) {
  for (let r = 0; r < rows; r++) {
    const mask = masks.slice(r * words, (r + 1) * words);
    // ids >= vocab are masked by the kernel: clear them in the copy.
    for (let i = vocab; i < words * 32; i++) mask[i >>> 5] &= ~(1 << (i & 31));
    applyMask(logits.subarray(r * width, (r + 1) * width), mask);
  }
  return logits;
}

test('WGSL source: f32 as shipped, f16 variant derived', () => {
  assert.match(MASK_WGSL, /@compute @workgroup_size\(256\)/);
  const f16 = maskShader('f16');
  assert.ok(f16.startsWith('enable f16;\n'));
  assert.match(f16, /^alias Logit = f16;$/m);
  assert.doesNotMatch(f16, /alias Logit = f32/);
  assert.throws(() => maskShader('f64'), TypeError);
  assert.equal(fs.readFileSync(path.join(PKG, 'mask.wgsl'), 'utf8'), MASK_WGSL, 'the shipped mask.wgsl is the inlined source');
});

test('kernel reference (CPU) equals applyMask: f32, f16 bits, batches, wide logits', () => {
  const dims = realMasks();
  const { width, words } = dims;
  const rows = 2;
  const f32 = new Float32Array(rows * width).map((_, i) => (i % 977) * 0.25 - 100);
  const a = maskKernelReference(f32.slice(), dims.masks, { vocab: dims.vocab, width, rows, maskWords: words });
  const b = applyMaskRows(f32.slice(), dims.masks, { ...dims, rows });
  assert.deepEqual(a, b);
  const f16 = new Uint16Array(rows * width).map((_, i) => i & 0x3bff);
  assert.deepEqual(maskKernelReference(f16.slice(), dims.masks, { vocab: dims.vocab, width, rows, maskWords: words }),
    applyMaskRows(f16.slice(), dims.masks, { ...dims, rows }));
  // Random masks, odd widths.
  const r = rng(3);
  for (const width2 of [1, 255, 256, 257, 1000]) {
    const vocab = Math.max(1, width2 - r.below(40));
    const w = Math.ceil(width2 / 32);
    const masks = new Uint32Array(3 * w).map(() => r.below(2 ** 32));
    const x = new Float32Array(3 * width2).fill(1);
    assert.deepEqual(maskKernelReference(x.slice(), masks, { vocab, width: width2, rows: 3, maskWords: w }),
      applyMaskRows(x.slice(), masks, { vocab, width: width2, rows: 3, words: w }));
  }
});

const PAGE = `<!doctype html><meta charset="utf-8"><title>grammask webgpu</title>
<script type="module">
import { applyMaskGPU } from '/pkg/webgpu.js';
window.probe = async () => {
  if (!navigator.gpu) return { error: 'navigator.gpu is undefined' };
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return { error: 'requestAdapter() returned null' };
  return { info: { vendor: adapter.info?.vendor, architecture: adapter.info?.architecture }, f16: adapter.features.has('shader-f16') };
};
window.run = async ({ vocab, width, rows, words, masks }) => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const logits = new Float32Array(rows * width).map((_, i) => (i % 977) * 0.25 - 100);
  const out = [];
  for (const how of ['filler', 'array']) {
    const buf = device.createBuffer({ size: logits.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buf, 0, logits);
    const m = Uint32Array.from(masks);
    const t0 = performance.now();
    applyMaskGPU(device, buf, how === 'filler' ? (w) => w.set(m) : m, { dtype: 'f32', vocab, width, rows, maskWords: words });
    const read = device.createBuffer({ size: logits.byteLength, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buf, 0, read, 0, logits.byteLength);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const ms = performance.now() - t0;
    const res = new Float32Array(read.getMappedRange().slice(0));
    read.unmap();
    // Compact: the masked ids and a checksum of the rest.
    const masked = [];
    let sum = 0;
    for (let i = 0; i < res.length; i++) { if (res[i] === -Infinity) masked.push(i); else sum += res[i]; }
    out.push({ how, masked, sum, ms });
  }
  return out;
};
window.ready = true;
</script>`;

function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/') { res.writeHead(200, { 'content-type': 'text/html' }); return res.end(PAGE); }
    const file = url.pathname.startsWith('/pkg/') ? path.join(PKG, path.normalize(url.pathname.slice(5)).replace(/^(\.\.[/\\])+/, '')) : null;
    if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404); return res.end(); }
    res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'application/octet-stream' });
    res.end(fs.readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('WebGPU in headless Chromium (SwiftShader): applyMaskGPU equals the reference', async (t) => {
  fixture(CHROMIUM, 'run scripts/setup/setup.sh (chromium)');
  const { chromium } = await import('playwright-core');
  const server = await serve();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-webgpu-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader', '--enable-features=Vulkan'],
  });
  try {
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => window.ready === true);
    const probe = await page.evaluate(() => window.probe());
    // No adapter: a skip only where the machine declares it (GRAMMASK_NO_WEBGPU=1, pkg-tests/data/skips.json).
    if (probe.error && process.env.GRAMMASK_NO_WEBGPU === '1') { t.skip(`no WebGPU adapter (GRAMMASK_NO_WEBGPU=1): ${probe.error}`); return; }
    assert.ok(!probe.error, `no WebGPU adapter: ${probe.error} (on a machine without one, declare it: GRAMMASK_NO_WEBGPU=1)`);
    assert.notEqual(process.env.GRAMMASK_NO_WEBGPU, '1', 'GRAMMASK_NO_WEBGPU=1 is declared but an adapter was found: drop the declaration');
    t.diagnostic(`adapter ${JSON.stringify(probe.info)}, shader-f16: ${probe.f16}`);
    const dims = realMasks();
    const rows = 2;
    const got = await page.evaluate((d) => window.run(d), { ...dims, rows, masks: Array.from(dims.masks) });
    const ref = maskKernelReference(new Float32Array(rows * dims.width).map((_, i) => (i % 977) * 0.25 - 100), dims.masks,
      { vocab: dims.vocab, width: dims.width, rows, maskWords: dims.words });
    const masked = [];
    let sum = 0;
    for (let i = 0; i < ref.length; i++) { if (ref[i] === -Infinity) masked.push(i); else sum += ref[i]; }
    for (const g of got) {
      t.diagnostic(`${g.how}: ${g.masked.length} masked of ${ref.length}, ${g.ms.toFixed(1)} ms incl. read-back (SwiftShader)`);
      assert.equal(g.masked.length, masked.length, `${g.how}: masked count`);
      assert.deepEqual(g.masked, masked, `${g.how}: masked ids`);
      assert.equal(g.sum, sum, `${g.how}: the other logits are unchanged`);
    }
  } finally {
    await ctx.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
