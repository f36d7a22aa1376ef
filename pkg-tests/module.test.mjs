// The packages as shipped: exports map, files whitelist, the .wasm modules
// (wasm32, no threads: no shared memory, no atomics), sizes, and the entries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { ROOT } from './helpers.mjs';

const require = createRequire(import.meta.url);
const pkgDir = (name) => path.dirname(require.resolve(`${name}/package.json`));

/** Memory limits flags of a module (defined or imported memories): bit 1 = shared. */
function memoryFlags(bytes) {
  const u = new Uint8Array(bytes);
  let p = 8;
  const leb = () => { let r = 0, s = 0, b; do { b = u[p++]; r |= (b & 0x7f) << s; s += 7; } while (b & 0x80); return r >>> 0; };
  const flags = [];
  while (p < u.length) {
    const id = u[p++];
    const size = leb();
    const end = p + size;
    if (id === 5) { // memory section
      const n = leb();
      for (let i = 0; i < n; i++) { const f = leb(); flags.push(f); leb(); if (f & 1) leb(); }
    } else if (id === 2) { // imports
      const n = leb();
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < 2; k++) { const len = leb(); p += len; } // module, name
        const kind = u[p++];
        if (kind === 0) leb();
        else if (kind === 1) { p++; const f = leb(); leb(); if (f & 1) leb(); }
        else if (kind === 2) { const f = leb(); flags.push(f); leb(); if (f & 1) leb(); }
        else if (kind === 3) { p += 2; }
        else if (kind === 4) { p++; leb(); }
        else throw new Error(`unknown import kind ${kind}`);
      }
    }
    p = end;
  }
  return flags;
}

for (const [name, limit] of [['grammask', 400 * 1024], ['grammask-compiler', 1200 * 1024]]) {
  test(`${name}: wasm32 modules without threads, size within budget`, (t) => {
    const dir = pkgDir(name);
    for (const target of ['web', 'node', 'bundler']) {
      const bytes = fs.readFileSync(path.join(dir, target, 'grammask_bg.wasm'));
      assert.ok(WebAssembly.validate(bytes), `${target}: valid module`);
      const mod = new WebAssembly.Module(bytes);
      const flags = memoryFlags(bytes);
      assert.equal(flags.length, 1, `${target}: one memory`);
      assert.equal(flags[0] & 2, 0, `${target}: memory is not shared`);
      assert.ok(WebAssembly.Module.exports(mod).some((e) => e.kind === 'memory'));
      const gz = zlib.gzipSync(bytes, { level: 9 }).length;
      if (target === 'web') t.diagnostic(`${name}: ${bytes.length} bytes, ${gz} gzip -9 (budget ${limit})`);
      assert.ok(gz <= limit, `${target}: ${gz} bytes gzip > ${limit}`);
    }
    try { // wabt, when present: no atomic instructions at all
      const dis = execFileSync('wasm-objdump', ['-d', path.join(dir, 'web', 'grammask_bg.wasm')], { maxBuffer: 1 << 30, encoding: 'utf8' });
      assert.doesNotMatch(dis, /atomic|memory\.atomic/);
      const hdr = execFileSync('wasm-objdump', ['-x', path.join(dir, 'web', 'grammask_bg.wasm')], { maxBuffer: 1 << 28, encoding: 'utf8' });
      assert.match(hdr, /^ - memory\[0\] pages: initial=\d+/m);
      assert.doesNotMatch(hdr, /^ - memory\[\d+\].*shared/m);
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
      t.diagnostic('wasm-objdump not installed: instruction scan skipped');
    }
  });

  test(`${name}: package.json exports (types first) and files whitelist`, async () => {
    const dir = pkgDir(name);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, name);
    for (const [k, v] of Object.entries(pkg.exports)) {
      if (typeof v === 'object') assert.equal(Object.keys(v)[0], 'types', `exports["${k}"]: types first`);
    }
    // The installed tree is exactly the packed one: every file is whitelisted and present.
    const listed = new Set(['package.json', 'README.md', ...pkg.files]);
    const walk = (d, pre = '') => fs.readdirSync(d, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name), `${pre}${e.name}/`) : [`${pre}${e.name}`]));
    assert.deepEqual(walk(dir).sort(), [...listed].sort());
    // Both Node entries load and agree.
    const esm = await import(name);
    const cjs = require(name);
    for (const api of [esm, cjs]) {
      assert.equal(typeof api.MaskStore.fromBytes, 'function');
      assert.equal(typeof api.Matcher, 'function');
      assert.equal(typeof api.init, 'function');
      assert.equal(typeof api.compileStore, name === 'grammask' ? 'undefined' : 'function');
    }
    const dts = fs.readFileSync(path.join(dir, 'index.d.ts'), 'utf8');
    assert.match(dts, /export class Matcher/);
    assert.equal(/export function compileStore/.test(dts), name === 'grammask-compiler');
  });
}

test('the web entry refuses use before init()', async () => {
  const web = await import('grammask/web');
  assert.throws(() => web.MaskStore.fromBytes(new Uint8Array(8)), /call `await init\(\)` first/);
  // initSync from the module's bytes, then it works.
  web.initSync(fs.readFileSync(path.join(pkgDir('grammask'), 'web', 'grammask_bg.wasm')));
  assert.throws(() => web.MaskStore.fromBytes(new Uint8Array(8)), /label/);
  assert.ok(fs.existsSync(path.join(ROOT, 'pkg', 'web', 'grammask_bg.wasm')));
});
