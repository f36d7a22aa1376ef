// Error paths of the JS API: every failure is a JS Error whose message names
// the problem (never a wasm trap, "unreachable" or "null pointer passed to
// rust"), and a refused call leaves the matcher unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { MaskStore, Matcher, PreparedVocab, compile, limits } from 'grammask';
import { StructuredOutputProcessor } from 'grammask/transformers';
import { LLAMA3, blobPath, tokenIdOf, maskHash, bit } from './helpers.mjs';

const bytes = fs.readFileSync(blobPath('json'));
const store = MaskStore.fromBytes(bytes);

/** assert.throws with: an Error (not a RuntimeError), the message matching `re`, and optionally the kind. */
function throwsClear(f, re, kind) {
  let err = null;
  try { f(); } catch (e) { err = e; }
  assert.ok(err, `expected an exception matching ${re}`);
  assert.ok(err instanceof Error, 'a JS Error');
  assert.ok(!(err instanceof WebAssembly.RuntimeError), `not a wasm trap: ${err.message}`);
  assert.doesNotMatch(err.message, /unreachable|null pointer|recursive use|borrowed/i);
  assert.match(err.message, re);
  if (kind) {
    assert.equal(err.name, 'GrammaskError');
    assert.equal(err.kind, kind);
  }
  return err;
}

test('bad blobs: truncated, wrong label, flipped byte, other version, empty, not bytes', () => {
  throwsClear(() => MaskStore.fromBytes(bytes.subarray(0, bytes.length >> 1)), /truncated/, 'BlobTruncated');
  throwsClear(() => MaskStore.fromBytes(bytes.subarray(0, 40)), /truncated/, 'BlobTruncated');
  throwsClear(() => MaskStore.fromBytes(new Uint8Array(0)), /truncated|label/);
  const label = Uint8Array.from(bytes);
  label.set(new TextEncoder().encode('GRAMMASX'), 0);
  throwsClear(() => MaskStore.fromBytes(label), /label "GRAMMASK"/, 'BlobCorrupt');
  const flipped = Uint8Array.from(bytes);
  flipped[flipped.length - 100] ^= 0x40;
  throwsClear(() => MaskStore.fromBytes(flipped), /checksum|corrupt/, 'BlobCorrupt');
  const version = Uint8Array.from(bytes);
  new DataView(version.buffer).setUint32(12, 999, true);
  throwsClear(() => MaskStore.fromBytes(version), /format version 999/, 'BlobVersion');
  throwsClear(() => MaskStore.fromBytes('GRAMMASK'), /Uint8Array/);
  throwsClear(() => MaskStore.fromBytes(new Uint8Array(100).fill(7)), /label/, 'BlobCorrupt');
  // An ArrayBuffer works as well as a Uint8Array.
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  assert.equal(MaskStore.fromBytes(ab).vocabSize, store.vocabSize);
});

test('wrong tokenizer: expectTokenizerFingerprint', () => {
  const fp = store.tokenizerFingerprint;
  assert.match(fp, /^[0-9a-f]{16}$/);
  assert.equal(MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: fp }).tokenizerFingerprint, fp);
  const other = (BigInt('0x' + fp) ^ 1n).toString(16).padStart(16, '0');
  throwsClear(() => MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: other }), /another tokenizer/, 'BlobTokenizer');
  throwsClear(() => MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: 'xyz' }), /16 hex digits/, 'BlobTokenizer');
  throwsClear(() => MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: 42 }), /16 hex digits/);
});

test('invalid tokens throw and leave the state unchanged', () => {
  const m = new Matcher(store);
  const open = tokenIdOf(store, '[');
  const close = tokenIdOf(store, '}');
  m.commitToken(open);
  const before = m.computeMask();
  const h = maskHash(before);
  const unchanged = () => {
    assert.equal(maskHash(m.computeMask()), h, 'mask unchanged');
    assert.equal(m.isAccepting(), false);
  };
  assert.equal(bit(before, close), 0);
  assert.equal(m.isAllowed(close), false);
  assert.equal(m.isAllowed(tokenIdOf(store, '1')), true);
  assert.equal(m.isAllowed(store.vocabSize + 3), false);
  throwsClear(() => m.commitToken(close), /not allowed here/, 'InvalidToken');
  unchanged();
  throwsClear(() => m.commitToken(store.vocabSize), /out of range/, 'InvalidToken');
  unchanged();
  throwsClear(() => m.commitToken(store.eosTokenIds[0]), /EOS token .* not allowed/, 'InvalidToken');
  unchanged();
  throwsClear(() => m.commitToken(128000), /special token/, 'InvalidToken'); // <|begin_of_text|>
  unchanged();
  for (const bad of [-1, 1.5, NaN, '3', 2 ** 32, undefined, 3n]) {
    throwsClear(() => m.commitToken(bad), /token id must be an integer/);
    unchanged();
  }
  // commitTokens is all or nothing.
  const one = tokenIdOf(store, '1');
  throwsClear(() => m.commitTokens([one, close]), /token #1 of 2/, 'InvalidToken');
  unchanged();
  throwsClear(() => m.commitTokens([one, -4]), /token id #1/);
  unchanged();
  throwsClear(() => m.commitTokens(5), /Uint32Array or an iterable/);
  // rollback beyond the history
  throwsClear(() => m.rollback(5), /cannot roll back 5 tokens/, 'InvalidState');
  unchanged();
  // fillMask with a short buffer or an offset past the end
  throwsClear(() => m.fillMask(new Uint32Array(10)), /needs 4008/, 'InvalidState');
  throwsClear(() => m.fillMask(new Uint32Array(4008), 1), /offset 1/, 'InvalidState');
  throwsClear(() => m.fillMask([]), /Uint32Array/);
  unchanged();
  // After EOS: stopped, every commit refused.
  m.commitTokens([one, tokenIdOf(store, ']')]);
  assert.ok(m.isAccepting());
  m.commitToken(store.eosTokenIds[0]);
  assert.ok(m.isStopped());
  assert.equal(m.computeMask().every((w) => w === 0), true, 'empty mask once stopped');
  throwsClear(() => m.commitToken(one), /stopped/, 'InvalidState');
  m.rollback(1);
  assert.ok(!m.isStopped() && m.isAccepting());
  m.free();
});

test('matcher options: maskWidth padding, maxRollback', () => {
  throwsClear(() => new Matcher(store, { maskWidth: store.vocabSize - 1 }), /smaller than the vocabulary/, 'InvalidState');
  throwsClear(() => new Matcher(store, { maxRollback: -1 }), /maxRollback/);
  throwsClear(() => new Matcher({}), /expected a MaskStore/);
  const plain = new Matcher(store);
  const padded = new Matcher(store, { maskWidth: 128320 + 7 });
  assert.equal(padded.maskWords, Math.ceil((128320 + 7) / 32));
  const out = new Uint32Array(padded.maskWords + 5).fill(0xffffffff);
  padded.fillMask(out, 5);
  const a = plain.computeMask();
  for (let i = 0; i < padded.maskWords; i++) {
    assert.equal(out[5 + i], i < a.length ? a[i] : 0, `word ${i}`);
  }
  assert.equal(out[4], 0xffffffff, 'words before the offset untouched');
  const m = new Matcher(store, { maxRollback: 2 });
  const one = tokenIdOf(store, '1');
  m.commitTokens([tokenIdOf(store, '['), one, tokenIdOf(store, ','), one]);
  m.rollback(2);
  throwsClear(() => m.rollback(1), /max_rollback = 2/, 'InvalidState');
  m.free(); plain.free(); padded.free();
});

test('use after free() or [Symbol.dispose]() throws a clear error', () => {
  const s = MaskStore.fromBytes(bytes);
  const m = new Matcher(s);
  const keep = new Matcher(s);
  m.free();
  assert.ok(m.freed);
  for (const f of [() => m.computeMask(), () => m.commitToken(1), () => m.fillMask(new Uint32Array(4008)), () => m.rollback(0),
    () => m.forcedTokens(), () => m.isAccepting(), () => m.isStopped(), () => m.reset(), () => m.maskWords]) {
    throwsClear(f, /Matcher was freed/);
  }
  m.free(); // idempotent
  s[Symbol.dispose]();
  assert.ok(s.freed);
  throwsClear(() => s.vocabSize, /MaskStore was freed/);
  throwsClear(() => s.stats(), /MaskStore was freed/);
  throwsClear(() => new Matcher(s), /MaskStore was freed/);
  // A matcher created before keeps the store's data alive.
  assert.equal(keep.computeMask().length, 4008);
  keep.commitToken(tokenIdOf(store, '{'));
  keep[Symbol.dispose]();
  throwsClear(() => keep.computeMask(), /Matcher was freed/);
  throwsClear(() => new MaskStore(), /fromBytes/);
});

test('error kinds tell schema, grammar, regex and response-format errors apart', () => {
  const small = '{"version":"1.0","model":{"type":"WordLevel","vocab":{"a":0,"b":1,"<eos>":2},"unk_token":"a"},"added_tokens":[{"id":2,"content":"<eos>","special":true,"single_word":false,"lstrip":false,"rstrip":false,"normalized":false}]}';
  const v = PreparedVocab.fromTokenizerJson(small, { eosTokenIds: 2 });
  throwsClear(() => compile(v, { type: 'json_schema', json_schema: { type: 'strnig' } }), /invalid `type` at #\/type/, 'Schema');
  throwsClear(() => compile(v, { type: 'json_schema', json_schema: { type: 'array', uniqueItems: true } }), /unsupported keyword `uniqueItems` at #/, 'Schema');
  throwsClear(() => compile(v, { type: 'lark', grammar: 'start: undefined_rule' }), /undefined_rule/, 'Grammar');
  throwsClear(() => compile(v, { type: 'lark', grammar: 'start: "a" (' }), /:1:/, 'GrammarSyntax');
  throwsClear(() => compile(v, { type: 'regex', regex: 'a(' }), /a\(/, 'Regex');
  throwsClear(() => compile(v, { type: 'json_schema', json_schema: { type: 'string', pattern: 'a(' } }), /pattern/, 'Regex');
  // A malformed response format or option: a TypeError (a bad argument) of kind ResponseFormat.
  for (const [rf, o, re] of [[{ type: 'yaml' }, {}, /is not one of/], ['json', {}, /must be an object/], [{ type: 'regex' }, {}, /regex field/],
    [{ type: 'json' }, { whitespace: 'tabs' }, /whitespace must be/], [{ type: 'lark', grammar: 'start: "a"' }, { lexer: 'lalr' }, /lexer must be/]]) {
    const e = throwsClear(() => compile(v, rf, o), re);
    assert.ok(e instanceof TypeError, e.message);
    assert.equal(e.kind, 'ResponseFormat', e.message);
  }
  v.free();
});

test('limits() reports every limit by name', () => {
  const l = limits();
  assert.ok(Object.isFrozen(l));
  assert.equal(l.maxGrammarBytes, 1 << 20);
  assert.equal(l.maxTokenizerBytes, 64 << 20);
  assert.equal(l.maxSchemaDepth, 200);
  assert.equal(l.maxSchemaNodes, 100_000);
  assert.equal(l.maxStringLength, 1024);
  assert.equal(l.maxLalrTableCells, 64 << 20, 'the wasm32 value');
  assert.ok(Object.keys(l).length >= 29 && Object.entries(l).every(([k, n]) => /^max[A-Z]/.test(k) && Number.isSafeInteger(n) && n > 0));
});

test("errors stay short and name the user's input", () => {
  const v = PreparedVocab.fromTokenizerJson(fs.readFileSync(LLAMA3, 'utf8'), { eosTokenIds: [128001] });
  const tok = { _tokenizerJSON: JSON.parse(fs.readFileSync(LLAMA3, 'utf8')), _tokenizerConfig: { eos_token: '<|end_of_text|>' } };
  const short = (e) => { assert.ok(e.message.length < 200, `${e.message.length} characters: ${e.message}`); return e; };
  // A regex with an unclosed group: the user's pattern and the column in it, not `\d` expanded into Unicode ranges.
  let e = short(throwsClear(() => compile(v, { type: 'regex', regex: '(\\d{3}-\\d{4}' }), /unclosed group at column 1/, 'Regex'));
  assert.ok(e.message.includes('"(\\\\d{3}-\\\\d{4}"'), e.message);
  assert.doesNotMatch(e.message, /\\x\{/);
  e = short(throwsClear(() => compile(v, { type: 'json_schema', json_schema: { type: 'string', pattern: '^(\\d{3}-\\d{4}$' } }), /unclosed group at column 2/, 'Regex'));
  assert.match(e.message, /at #\/pattern/);
  assert.doesNotMatch(e.message, /\[0-9\]/, 'not the translation');
  // The tokenizer as an option, or the arguments in the wrong order: the processor's signature, not an internal name.
  const sig = /new StructuredOutputProcessor\(tokenizer, responseFormat, options\?\)/;
  for (const f of [() => new StructuredOutputProcessor({ type: 'json' }, { tokenizer: tok }), () => new StructuredOutputProcessor({ type: 'json' }, tok),
    () => new StructuredOutputProcessor(tok, { type: 'json' }, { tokenizer: tok })]) {
    e = throwsClear(f, sig);
    assert.ok(e instanceof TypeError);
    assert.doesNotMatch(e.message, /fromTokenizer|_tokenizerJSON/);
    assert.ok(e.message.length < 220, e.message);
  }
  e = throwsClear(() => new StructuredOutputProcessor({ type: 'json' }, { tokenizer: tok }), /takes a transformers.js tokenizer or a PreparedVocab first, got a response format \(\{type: "json"\}\); the tokenizer is not an option$/);
  throwsClear(() => new StructuredOutputProcessor({ type: 'json' }, tok), /got a response format/);
  // A bare schema as the response format: a hint to wrap it.
  const wrap = /for a JSON Schema, wrap it: \{ type: 'json_schema', json_schema: <your schema> \}/;
  const schema = { type: 'object', properties: { name: { type: 'string' } } };
  for (const f of [() => new StructuredOutputProcessor(tok, schema), () => compile(v, schema), () => compile(v, { properties: {} })]) {
    e = short(throwsClear(f, wrap));
    assert.equal(e.kind, 'ResponseFormat');
  }
  assert.match(throwsClear(() => compile(v, schema), wrap).message, /responseFormat.type "object" is not one of/);
  v.free();
});
