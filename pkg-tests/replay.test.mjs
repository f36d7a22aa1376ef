// Experiments 1 and 3 replayed in wasm (the `grammask` package, Node entry):
// real files are tokenized natively (`grammask masks`, Llama-3); the wasm
// Matcher replays them token by token. At every position the wasm mask must
// hash equal to the native CLI's for the same blob, every token must be in
// the mask, and EOS must be allowed at the end exactly when natively.
// Experiment 3: the raw (unstreamlined) and streamlined stores give
// bit-identical masks in wasm too.
// Fast tier: a few thousand tokens per grammar; GRAMMASK_FULL=1: >= 50,000.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { MaskStore, Matcher } from 'grammask';
import path from 'node:path';
import { FULL, ROOT, blobPath, corpus, nativeMasks, maskHash, bit } from './helpers.mjs';

// Python files the grammar is expected to reject (see that file), by path relative to the stdlib.
const REJECTED = fs.readFileSync(path.join(ROOT, 'grammars/cases/stdlib_rejected.txt'), 'utf8')
  .split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => '/' + l.split('\t')[0].trim());

/** Corpus files in order until `bytes` bytes (files of 1..64 KB). */
function pick(kind, bytes) {
  const out = [];
  let total = 0;
  for (const f of corpus(kind)) {
    const n = fs.statSync(f).size;
    if (n < 1024 || n > 65536 || REJECTED.some((r) => f.endsWith(r))) continue;
    out.push(f);
    total += n;
    if (total >= bytes) break;
  }
  return out;
}

function replay(t, grammar, kind, bytes, minTokens) {
  const blob = blobPath(grammar);
  const files = pick(kind, bytes);
  const native = nativeMasks(blob, files);
  assert.equal(native.length, files.length, 'native output has one line per file');
  const store = MaskStore.fromBytes(fs.readFileSync(blob));
  const eos = store.eosTokenIds;
  const m = new Matcher(store);
  // fillMask at an offset inside a bigger buffer (a batch row), computeMask on odd positions.
  const W = m.maskWords;
  const batch = new Uint32Array(3 * W);
  let positions = 0, accepted = 0, acceptedTokens = 0, maskNs = 0n;
  for (const r of native) {
    m.reset();
    let violation = null;
    for (let i = 0; i <= r.ids.length; i++) {
      let mask;
      const t0 = process.hrtime.bigint();
      if (i % 2 === 0) {
        m.fillMask(batch, W);
        mask = batch.subarray(W, 2 * W);
      } else {
        mask = m.computeMask();
      }
      maskNs += process.hrtime.bigint() - t0;
      positions++;
      const h = maskHash(mask);
      if (h !== r.hashes[i]) assert.fail(`${r.file}: mask #${i} differs from the native CLI's (${h} vs ${r.hashes[i]})`);
      if (i === r.ids.length) break;
      const id = r.ids[i];
      if (!bit(mask, id)) { violation = i; break; }
      m.commitToken(id);
    }
    assert.equal(violation, r.violation, `${r.file}: first refused token`);
    if (violation === null) {
      const last = m.computeMask();
      const eosOk = m.isAccepting() && Array.from(eos).every((e) => bit(last, e));
      assert.equal(eosOk, r.eos_ok, `${r.file}: EOS at the end`);
      if (eosOk) { accepted++; acceptedTokens += r.ids.length; }
    }
  }
  const mean = Number(maskNs / BigInt(positions)) / 1000;
  t.diagnostic(`${grammar}: ${files.length} files, ${accepted} accepted, ${acceptedTokens} tokens replayed, ${positions} masks equal to native; wasm mask mean ${mean.toFixed(1)} us`);
  // Experiment 1: the corpus files are in the language, so every token must be allowed.
  assert.equal(accepted, files.length, 'every corpus file is accepted (every token in the mask, EOS at the end)');
  assert.ok(acceptedTokens >= minTokens, `replayed ${acceptedTokens} tokens, want >= ${minTokens}`);
  m.free();
  store.free();
  return native;
}

test('experiment 1 (JSON): wasm masks equal native masks, every token allowed', (t) => {
  replay(t, 'json', 'json', FULL ? 200_000 : 8_000, FULL ? 50_000 : 1_500);
});

test('experiment 1 (Python): wasm masks equal native masks, every token allowed', (t) => {
  replay(t, 'python', 'stdlib', FULL ? 260_000 : 12_000, FULL ? 50_000 : 2_000);
});

function identical(t, grammar, native) {
  const a = MaskStore.fromBytes(fs.readFileSync(blobPath(grammar)));
  const b = MaskStore.fromBytes(fs.readFileSync(blobPath(grammar, { raw: true })));
  assert.notEqual(a.stats().entries, b.stats().entries, 'the raw store differs from the streamlined one');
  const ma = new Matcher(a), mb = new Matcher(b);
  const x = new Uint32Array(ma.maskWords), y = new Uint32Array(mb.maskWords);
  let n = 0;
  for (const r of native) {
    ma.reset(); mb.reset();
    for (let i = 0; i <= r.ids.length; i++) {
      ma.fillMask(x); mb.fillMask(y);
      n++;
      if (!x.every((w, k) => w === y[k])) assert.fail(`${r.file}: raw and streamlined masks differ at #${i}`);
      if (i === r.ids.length || !bit(x, r.ids[i])) break;
      ma.commitToken(r.ids[i]); mb.commitToken(r.ids[i]);
    }
  }
  t.diagnostic(`${grammar}: raw vs streamlined masks identical at ${n} positions`);
  assert.ok(n > 1000);
}

test('experiment 3 (JSON): raw and streamlined stores give identical masks in wasm', (t) => {
  const blob = blobPath('json');
  const files = corpus('json').filter((f) => { const s = fs.statSync(f).size; return s >= 1024 && s <= 65536; }).slice(0, FULL ? 40 : 4);
  identical(t, 'json', nativeMasks(blob, files));
});

test('experiment 3 (Python): raw and streamlined stores give identical masks in wasm', { skip: !FULL && 'GRAMMASK_FULL=1 only (compiles the raw Python store)' }, (t) => {
  const blob = blobPath('python');
  const files = pick('stdlib', 60_000);
  identical(t, 'python', nativeMasks(blob, files));
});
