// Memory: 100,000 commits plus rollbacks (and a mask every 100 steps) on the
// JSON grammar; after a warm-up the wasm linear memory must not grow at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { MaskStore, Matcher, wasmMemoryBytes } from 'grammask';
import { blobPath, tokenIdOf } from './helpers.mjs';

test('100k commits + rollbacks: wasm memory stays flat after warm-up', (t) => {
  const store = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  const [open, one, comma, two] = ['[', '1', ',', '22'].map((s) => tokenIdOf(store, s));
  const m = new Matcher(store, { maxRollback: 16 });
  const mask = new Uint32Array(m.maskWords);
  m.commitToken(open);
  let commits = 0, rollbacks = 0, warm = 0;
  // The text grows as "[1,22,1,22,..." (an unbounded array: the parser stack
  // stays small); every 7th step rolls back 3 tokens and commits them again.
  const seq = [one, comma, two, comma];
  for (let i = 0; commits < 100_000; i++) {
    m.commitToken(seq[i & 3]);
    commits++;
    if (i % 7 === 6) {
      m.rollback(3);
      rollbacks++;
      m.commitTokens([seq[(i - 2) & 3], seq[(i - 1) & 3], seq[i & 3]]);
      commits += 3;
    }
    if (i % 100 === 0) {
      m.fillMask(mask);
      assert.equal(m.forcedTokens(4).length, 0);
    }
    if (commits >= 10_000 && warm === 0) warm = wasmMemoryBytes();
  }
  const end = wasmMemoryBytes();
  t.diagnostic(`${commits} commits, ${rollbacks} rollbacks; wasm memory ${warm} bytes after warm-up, ${end} at the end`);
  assert.ok(m.isAccepting() === false);
  assert.equal(end, warm, 'no memory growth after warm-up');
  m.free();
  store.free();
});

test('fillMask after the wasm memory grew: the same mask as computeMask', () => {
  // fillMask copies from a view of wasm memory kept by the Matcher; a memory
  // growth detaches that view, and the next fillMask must make a new one.
  const bytes = fs.readFileSync(blobPath('json'));
  const store = MaskStore.fromBytes(bytes);
  const m = new Matcher(store);
  const [open, one] = ['[', '1'].map((s) => tokenIdOf(store, s));
  const a = new Uint32Array(m.maskWords);
  m.fillMask(a);
  assert.deepEqual(a, m.computeMask());
  m.commitToken(open);
  const before = wasmMemoryBytes();
  const more = [];
  while (wasmMemoryBytes() === before) more.push(MaskStore.fromBytes(bytes)); // grows the memory
  const b = new Uint32Array(m.maskWords + 3);
  m.fillMask(b, 3);
  assert.deepEqual(b.subarray(3), m.computeMask());
  assert.deepEqual(b.subarray(0, 3), new Uint32Array(3));
  m.commitToken(one);
  m.fillMask(a);
  assert.deepEqual(a, m.computeMask());
  for (const s of more) s.free();
  m.free();
  store.free();
});
