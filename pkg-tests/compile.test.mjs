// The compiler build (`grammask-compiler`) in Node: compileStore() in wasm
// gives the same blob as the native `grammask compile` (JSON × Llama-3, timed),
// tokenizerFingerprint() detects a wrong tokenizer, and compile errors are
// clear JS Errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { MaskStore, Matcher, compileStore, tokenizerFingerprint, compilerLimits } from 'grammask-compiler';
import * as runtime from 'grammask';
import { ROOT, blobPath, tokenIdOf } from './helpers.mjs';

const read = (p) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined);
const tok = (name) => {
  const d = path.join(ROOT, 'models', name);
  return { json: read(path.join(d, 'tokenizer.json')), tokenizerConfig: read(path.join(d, 'tokenizer_config.json')), generationConfig: read(path.join(d, 'generation_config.json')) };
};
const llama3 = tok('llama3');
const jsonGrammar = fs.readFileSync(path.join(ROOT, 'grammars/json.lark'), 'utf8');

test('compileStore: JSON × Llama-3 in wasm equals the native blob', (t) => {
  const messages = [];
  const t0 = performance.now();
  const store = compileStore(jsonGrammar, llama3.json, {
    tokenizerConfig: llama3.tokenizerConfig, generationConfig: llama3.generationConfig, onProgress: (m) => messages.push(m),
  });
  const ms = performance.now() - t0;
  t.diagnostic(`compileStore(json.lark, Llama-3) in wasm: ${(ms / 1000).toFixed(2)} s; ${messages.length} progress messages`);
  assert.ok(messages.some((m) => m.startsWith('lexer:')) && messages.some((m) => m.startsWith('token walk:')));
  const native = fs.readFileSync(blobPath('json'));
  const mine = store.toBytes();
  assert.equal(Buffer.compare(Buffer.from(mine), native), 0, 'wasm-compiled blob is byte-identical to the native one');
  // It loads in the runtime package too.
  const rs = runtime.MaskStore.fromBytes(mine, { expectTokenizerFingerprint: store.tokenizerFingerprint });
  assert.equal(rs.vocabSize, 128256);
  const m = new Matcher(store);
  m.commitTokens([tokenIdOf(store, '{"'), tokenIdOf(store, 'a'), tokenIdOf(store, '":')]);
  assert.ok(!m.isAccepting());
  rs.free(); m.free(); store.free();
});

test('tokenizerFingerprint: detects a blob built for another tokenizer', () => {
  const bytes = fs.readFileSync(blobPath('json'));
  const fpLlama = tokenizerFingerprint(llama3.json, { tokenizerConfig: llama3.tokenizerConfig, generationConfig: llama3.generationConfig });
  const store = MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: fpLlama });
  assert.equal(store.tokenizerFingerprint, fpLlama);
  const qwen = tok('qwen3');
  const fpQwen = tokenizerFingerprint(qwen.json, { tokenizerConfig: qwen.tokenizerConfig, generationConfig: qwen.generationConfig });
  assert.notEqual(fpQwen, fpLlama);
  assert.throws(() => runtime.MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: fpQwen }),
    (e) => e.name === 'GrammaskError' && e.kind === 'BlobTokenizer' && /another tokenizer/.test(e.message));
  // Other EOS ids: another fingerprint as well.
  assert.notEqual(tokenizerFingerprint(llama3.json, { eos: [128009] }), fpLlama);
  store.free();
});

test('compileStore: errors are clear JS Errors', () => {
  const small = '{"version":"1.0","model":{"type":"WordLevel","vocab":{"a":0,"b":1,"<eos>":2},"unk_token":"a"},"added_tokens":[{"id":2,"content":"<eos>","special":true,"single_word":false,"lstrip":false,"rstrip":false,"normalized":false}]}';
  const ok = compileStore('start: "a"+ "b"', small, { eos: 2 });
  const m = new Matcher(ok);
  assert.deepEqual(Array.from(m.forcedTokens()), [0]);
  m.commitTokens([0, 0, 1]);
  assert.ok(m.isAccepting());
  const expectKind = (f, kind, re) => assert.throws(f, (e) => e instanceof Error && e.name === 'GrammaskError' && e.kind === kind && re.test(e.message));
  expectKind(() => compileStore('start: "a" (', small, { eos: 2 }), 'GrammarSyntax', /grammar\.lark:1/);
  expectKind(() => compileStore('start: undefined_rule', small, { eos: 2 }), 'Grammar', /undefined_rule/);
  expectKind(() => compileStore('start: "a"', '{"not": "a tokenizer"}', { eos: 2 }), 'Tokenizer', /tokenizer/);
  expectKind(() => compileStore('start: "a"', small), 'Tokenizer', /eos/i);
  expectKind(() => compileStore('x'.repeat(compilerLimits.maxGrammarBytes + 1), small, { eos: 2 }), 'Limit', /limit/);
  assert.throws(() => compileStore(42, small), TypeError);
  assert.throws(() => compileStore('start: "a"', small, { eos: -1 }), /eos token id/);
  assert.equal(compilerLimits.maxGrammarBytes, 1 << 20);
});
