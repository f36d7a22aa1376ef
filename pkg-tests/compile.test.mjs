// The compiler in wasm (package `grammask`, Node): vocabularies read from
// tokenizer.json equal the native ones (pinned fingerprints, shared with
// tests/suite/vocab.rs), compileStore() gives the same blob as the native
// `grammask compile` (JSON × Llama-3, timed), compile() takes response
// formats, fingerprints detect a wrong tokenizer, and errors are clear JS
// errors that name JS options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MaskStore, Matcher, PreparedVocab, compile, compileStore, tokenizerFingerprint, compilerLimits } from 'grammask';
import * as runtime from 'grammask/runtime';
import { ROOT, LLAMA3, blobPath, tokenIdOf, allowedIds, bit, cli, nativeMasks, maskHash, rng } from './helpers.mjs';

const read = (p) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined);
const tok = (name) => {
  const d = path.join(ROOT, 'models', name);
  return { json: read(path.join(d, 'tokenizer.json')), tokenizerConfig: read(path.join(d, 'tokenizer_config.json')), generationConfig: read(path.join(d, 'generation_config.json')) };
};
const llama3 = tok('llama3');
const jsonGrammar = fs.readFileSync(path.join(ROOT, 'grammars/json.lark'), 'utf8');
const expectKind = (f, kind, re) => assert.throws(f, (e) => e instanceof Error && e.name === 'GrammaskError' && e.kind === kind && re.test(e.message), `${kind} ${re}`);

// The fingerprints of tests/suite/vocab.rs (PINNED), from the tokenizers-crate loader.
const PINNED = { llama3: 'f2da40cfde664f79', qwen3: 'eeba3565f061afda', llama2: '69505a6ca18b6e5f', gpt4o: 'b6e5bbb8781eb8f3' };

test('PreparedVocab: the native fingerprints for every tokenizer, from text or object, in both builds', (t) => {
  for (const [name, fp] of Object.entries(PINNED)) {
    const x = tok(name);
    const t0 = performance.now();
    const v = PreparedVocab.fromTokenizerJson(x.json, { tokenizerConfig: x.tokenizerConfig });
    const ms = performance.now() - t0;
    assert.equal(v.fingerprint, fp, name);
    assert.ok(v.isPrepared);
    const o = PreparedVocab.fromTokenizerJson(JSON.parse(x.json), { tokenizerConfig: JSON.parse(x.tokenizerConfig), prepare: false });
    assert.equal(o.fingerprint, fp, `${name} (object)`);
    assert.equal(o.isPrepared, false);
    assert.equal(runtime.tokenizerFingerprint(x.json, { tokenizerConfig: x.tokenizerConfig }), fp, `${name} (runtime build)`);
    t.diagnostic(`${name}: ${v.vocabSize} tokens, read + trie in ${ms.toFixed(0)} ms (wasm)`);
    v.free(); o.free();
  }
});

test('PreparedVocab: token table, byte tokens, EOS options, fingerprintWithEos', () => {
  const v = PreparedVocab.fromTokenizerJson(llama3.json, { tokenizerConfig: llama3.tokenizerConfig });
  assert.deepEqual(Array.from(v.eosTokenIds), [128001]);
  const tt = v.tokenTable();
  assert.equal(tt.offsets.length, v.vocabSize + 1);
  const id = (s) => { for (let i = 0; i < v.vocabSize; i++) if (Buffer.from(v.tokenBytes(i)).toString() === s) return i; return -1; };
  assert.equal(tt.byteTokens['{'.charCodeAt(0)], id('{'));
  const nl = id('\n'), nn = id('\n\n');
  assert.ok(bit(tt.whitespace, nl) && bit(tt.whitespace, nn));
  assert.ok(bit(tt.special, 128001));
  const w = PreparedVocab.fromTokenizerJson(llama3.json, { tokenizerConfig: llama3.tokenizerConfig, generationConfig: { eos_token_id: [128009, 128001] }, prepare: false });
  assert.deepEqual(Array.from(w.eosTokenIds), [128001, 128009]);
  assert.equal(v.fingerprintWithEos([128001, 128009]), w.fingerprint);
  assert.equal(PreparedVocab.fromTokenizerJson(llama3.json, { eosTokenIds: 128009, prepare: false }).fingerprint, v.fingerprintWithEos(128009));
  // JS wording of errors.
  expectKind(() => PreparedVocab.fromTokenizerJson(llama3.json), 'Tokenizer', /give the EOS ids with the eosTokenIds option$/);
  expectKind(() => PreparedVocab.fromTokenizerJson(llama3.json, { eosTokenIds: [999999] }), 'Tokenizer', /999999/);
  expectKind(() => PreparedVocab.fromTokenizerJson('{"model": 3}', { eosTokenIds: [0] }), 'Tokenizer', /tokenizer\.json/);
  assert.throws(() => PreparedVocab.fromTokenizerJson({ nope: 1 }), /no model\.vocab/);
  assert.throws(() => PreparedVocab.fromTokenizer(JSON.parse(llama3.json)), /transformers\.js tokenizer/);
  assert.throws(() => PreparedVocab.fromTokenizerJson(llama3.json, { eosTokenIds: [-1] }), /eosTokenIds\[0\]/);
  v.free(); w.free();
});

test('compileStore: JSON × Llama-3 in wasm equals the native blob', (t) => {
  const messages = [];
  const vocab = PreparedVocab.fromTokenizerJson(llama3.json, { tokenizerConfig: llama3.tokenizerConfig, generationConfig: llama3.generationConfig });
  const t0 = performance.now();
  const store = compileStore(jsonGrammar, vocab, { onProgress: (m) => messages.push(m) });
  const ms = performance.now() - t0;
  t.diagnostic(`compileStore(json.lark, Llama-3) in wasm: ${(ms / 1000).toFixed(2)} s; ${messages.length} progress messages`);
  assert.ok(messages.some((m) => m.startsWith('lexer')) && messages.some((m) => m.startsWith('token walk:')));
  const native = fs.readFileSync(blobPath('json'));
  const mine = store.toBytes();
  assert.equal(Buffer.compare(Buffer.from(mine), native), 0, 'wasm-compiled blob is byte-identical to the native one');
  // It loads in the runtime build too, and vocab.checkStore accepts it.
  const rs = runtime.MaskStore.fromBytes(mine, { expectTokenizerFingerprint: store.tokenizerFingerprint });
  assert.equal(rs.vocabSize, 128256);
  vocab.checkStore(store);
  const m = new Matcher(store);
  m.commitTokens([tokenIdOf(store, '{"'), tokenIdOf(store, 'a'), tokenIdOf(store, '":')]);
  assert.ok(!m.isAccepting());
  // The tokenizer may also be given as text with VocabOptions.
  const again = compileStore('start: "a"', llama3.json, { tokenizerConfig: llama3.tokenizerConfig });
  assert.equal(again.tokenizerFingerprint, PINNED.llama3);
  rs.free(); m.free(); store.free(); again.free(); vocab.free();
});

test('fingerprints detect a blob built for another tokenizer', () => {
  const bytes = fs.readFileSync(blobPath('json'));
  const fpLlama = tokenizerFingerprint(llama3.json, { tokenizerConfig: llama3.tokenizerConfig, generationConfig: llama3.generationConfig });
  const store = MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: fpLlama });
  assert.equal(store.tokenizerFingerprint, fpLlama);
  const qwen = tok('qwen3');
  const fpQwen = tokenizerFingerprint(qwen.json, { tokenizerConfig: qwen.tokenizerConfig });
  assert.notEqual(fpQwen, fpLlama);
  assert.throws(() => runtime.MaskStore.fromBytes(bytes, { expectTokenizerFingerprint: fpQwen }),
    (e) => e.name === 'GrammaskError' && e.kind === 'BlobTokenizer' && /another tokenizer/.test(e.message));
  // Other EOS ids: another fingerprint, but checkStore only compares the tokens.
  assert.notEqual(tokenizerFingerprint(llama3.json, { eosTokenIds: [128009] }), fpLlama);
  const v9 = PreparedVocab.fromTokenizerJson(llama3.json, { eosTokenIds: [128009], prepare: false });
  v9.checkStore(store);
  const vq = PreparedVocab.fromTokenizerJson(qwen.json, { tokenizerConfig: qwen.tokenizerConfig, prepare: false });
  assert.throws(() => vq.checkStore(store), (e) => e.kind === 'BlobTokenizer' && /store: 128256 tokens.*this tokenizer: 151669 tokens/.test(e.message));
  // A store's own vocabulary.
  const sv = store.vocab();
  assert.equal(sv.fingerprint, fpLlama);
  sv.free(); v9.free(); vq.free(); store.free();
});

test('compile: response formats (lark, store) into stores whose masks equal the precomputed ones', () => {
  const v = PreparedVocab.fromTokenizerJson(llama3.json, { tokenizerConfig: llama3.tokenizerConfig });
  const grammar = 'start: item ("," item)*\nitem: NAME | NUMBER\nNAME: /[a-z]+/\nNUMBER: /[0-9]+/\n%ignore " "\n';
  const lazy = compile(v, { type: 'lark', grammar });
  const full = compileStore(grammar, v, { streamline: true });
  assert.equal(lazy.grammarFingerprint, full.grammarFingerprint);
  assert.deepEqual(lazy.warnings, []);
  const a = new Matcher(lazy), b = new Matcher(full);
  for (const piece of ['abc', ',', ' ', '12', ' ,', 'x']) {
    assert.deepEqual(a.computeMask(), b.computeMask(), `masks before ${JSON.stringify(piece)}`);
    const id = tokenIdOf(lazy, piece);
    a.commitToken(id); b.commitToken(id);
  }
  assert.deepEqual(a.computeMask(), b.computeMask());
  assert.ok(a.isAccepting());
  // The start rule; a prebuilt store is checked and returned.
  const s2 = compile(v, { type: 'lark', grammar: 'a: "x"\nb: "y"\n', start: 'b' });
  assert.deepEqual(allowedIds(new Matcher(s2).computeMask()), [tokenIdOf(s2, 'y')]);
  const blob = MaskStore.fromBytes(fs.readFileSync(blobPath('json')));
  assert.equal(compile(v, { type: 'store', store: blob }), blob);
  assert.equal(compile(v, { type: 'store', store: fs.readFileSync(blobPath('json')) }).grammarFingerprint, blob.grammarFingerprint);
  a.free(); b.free(); lazy.free(); full.free(); v.free();
});

test('compile: the data-driven Lark cases (grammars/cases/frontend_*.json, Lark\'s verdicts) in wasm', () => {
  // The Rust tests (tests/suite/cases.rs) check the same files natively.
  const v = PreparedVocab.fromTokenizerJson(llama3.json, { tokenizerConfig: llama3.tokenizerConfig });
  const byteTokens = v.tokenTable().byteTokens;
  const dir = path.join(ROOT, 'grammars/cases');
  const files = fs.readdirSync(dir).filter((f) => f.startsWith('frontend_') && f.endsWith('.json'));
  assert.ok(files.includes('frontend_lookahead.json') && files.length >= 5, files.join(' '));
  let n = 0;
  for (const f of files) {
    const c = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const store = compile(v, { type: 'lark', grammar: c.grammar_text, ...(c.start ? { start: c.start } : {}) });
    const accepts = (text) => {
      const m = new Matcher(store);
      try {
        for (const b of new TextEncoder().encode(text)) {
          const id = byteTokens[b];
          if (id < 0 || !m.isAllowed(id)) return false;
          m.commitToken(id);
        }
        return m.isAccepting();
      } finally { m.free(); }
    };
    for (const text of c.accept) assert.ok(accepts(text), `${f}: should accept ${JSON.stringify(text)}`);
    for (const text of c.reject) assert.ok(!accepts(text), `${f}: should reject ${JSON.stringify(text)}`);
    n += c.accept.length + c.reject.length;
    store.free();
  }
  assert.ok(n > 400, `${n} strings`);
  v.free();
});

test('compile: JSON Schemas compiled lazily in wasm give the masks of the native CLI (tests/data/schemas × Llama-3)', (t) => {
  const v = PreparedVocab.fromTokenizerJson(llama3.json, { tokenizerConfig: llama3.tokenizerConfig });
  const dir = path.join(ROOT, 'tests/data/schemas');
  const work = fs.mkdtempSync(path.join(ROOT, 'out', 'schema-walks-'));
  const eos = new Set(v.eosTokenIds ?? []);
  const r = rng(12);
  let masks = 0;
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const file = path.join(dir, name);
    const blob = path.join(work, `${name}.gmask`);
    cli(['compile', '--json-schema', file, '--tokenizer', LLAMA3, '-o', blob]);
    const store = compile(v, { type: 'json_schema', json_schema: fs.readFileSync(file, 'utf8') });
    // Random walks through the wasm masks give the texts; the native CLI tokenizes and replays them.
    const texts = [];
    for (let k = 0; k < 2; k++) {
      const m = new Matcher(store);
      const bytes = [];
      for (let n = 0; n < 200; n++) {
        const allowed = allowedIds(m.computeMask());
        const cands = allowed.filter((id) => !eos.has(id) && id < store.vocabSize);
        if (cands.length === 0 || (m.isAccepting() && (n > 80 || r.below(4) === 0))) break;
        const short = cands.filter((id) => store.tokenBytes(id).length === 1);
        const pool = short.length > 0 && (n > 60 || r.below(2) === 0) ? short : cands;
        const id = pool[r.below(pool.length)];
        m.commitToken(id);
        bytes.push(...store.tokenBytes(id));
      }
      m.free();
      const out = path.join(work, `${name}.${k}.txt`);
      fs.writeFileSync(out, Buffer.from(bytes));
      texts.push(out);
    }
    for (const ref of nativeMasks(blob, texts)) {
      const m = new Matcher(store);
      for (let i = 0; i < ref.hashes.length; i++) {
        assert.equal(maskHash(m.computeMask()), ref.hashes[i], `${name}: mask ${i} of ${path.basename(ref.file)} (wasm lazy vs native)`);
        masks++;
        if (i < ref.ids.length) m.commitToken(ref.ids[i]);
      }
      m.free();
    }
    store.free();
  }
  t.diagnostic(`${masks} masks equal`);
  assert.ok(masks > 100);
  fs.rmSync(work, { recursive: true });
  v.free();
});

test('compile: errors are clear JS errors naming JS options', () => {
  const small = '{"version":"1.0","model":{"type":"WordLevel","vocab":{"a":0,"b":1,"<eos>":2},"unk_token":"a"},"added_tokens":[{"id":2,"content":"<eos>","special":true,"single_word":false,"lstrip":false,"rstrip":false,"normalized":false}]}';
  const v = PreparedVocab.fromTokenizerJson(small, { eosTokenIds: 2 });
  const ok = compile(v, { type: 'lark', grammar: 'start: "a"+ "b"' });
  const m = new Matcher(ok);
  assert.deepEqual(Array.from(m.forcedTokens()), [0]);
  m.commitTokens([0, 0, 1]);
  assert.ok(m.isAccepting());
  expectKind(() => compile(v, { type: 'lark', grammar: 'start: "a" (' }), 'GrammarSyntax', /:1:/);
  expectKind(() => compile(v, { type: 'lark', grammar: 'start: undefined_rule' }), 'Grammar', /undefined_rule/);
  expectKind(() => compileStore('start: "a"', v, {}) && compileStore('start: "a"', '{"not": "a tokenizer"}', { eosTokenIds: 2 }), 'Tokenizer', /tokenizer/);
  expectKind(() => compileStore('start: "a"', small), 'Tokenizer', /eosTokenIds option/);
  expectKind(() => compile(v, { type: 'lark', grammar: 'x'.repeat(compilerLimits.maxGrammarBytes + 1) }), 'Limit', /limit/);
  const bigRegex = compilerLimits.maxGrammarBytes;
  assert.equal(bigRegex, 1 << 20);
  assert.throws(() => compile(v, { type: 'yaml' }), /responseFormat.type "yaml" is not one of json_schema, json_object, json, regex, lark, gbnf, ebnf, store/);
  assert.throws(() => compile(v, 'json'), /responseFormat must be an object/);
  assert.throws(() => compile(v, { type: 'regex' }), /needs a string regex field/);
  assert.throws(() => compile(v, { type: 'lark' }), /needs a string grammar field/);
  assert.throws(() => compile(v, { type: 'json_schema' }), /needs a json_schema field/);
  assert.throws(() => compile(v, { type: 'json_schema', json_schema: '{oops' }), /json_schema is a string but not JSON/);
  assert.throws(() => compile(v, { type: 'json' }, { whitespace: 'tabs' }), /whitespace must be 'default', 'compact', 'spaced' or 'flexible'/);
  assert.throws(() => compile(v, { type: 'json' }, { maxWhitespace: -1 }), /maxWhitespace/);
  assert.throws(() => compile(v, { type: 'store', store: 3 }), /needs a store field/);
  assert.throws(() => compile({}, { type: 'json' }), /expected a PreparedVocab/);
  assert.throws(() => compileStore(42, small), TypeError);
  // Lark's conflict rules: shift/reduce settled as shift with a warning; strict refuses it.
  const ambiguous = 'start: e\ne: e "b" e | "a"';
  const settled = compile(v, { type: 'lark', grammar: ambiguous });
  assert.ok(settled.warnings.some((w) => /shift\/reduce/i.test(w)), settled.warnings.join('\n'));
  const sm = new Matcher(settled);
  sm.commitTokens([0, 1, 0, 1, 0]);
  assert.ok(sm.isAccepting());
  expectKind(() => compile(v, { type: 'lark', grammar: ambiguous }, { strict: true }), 'Conflict', /strict mode/);
  const basic = compile(v, { type: 'lark', grammar: 'start: "a"+ "b"' }, { lexer: 'basic' });
  assert.deepEqual(Array.from(new Matcher(basic).forcedTokens()), [0]);
  assert.throws(() => compile(v, { type: 'lark', grammar: 'start: "a"' }, { lexer: 'earley' }), /lexer must be 'contextual', 'basic' or 'longest'/);
  assert.throws(() => compile(v, { type: 'lark', grammar: 'start: "a"' }, { strict: 'yes' }), /strict must be a boolean/);
  sm.free(); settled.free(); basic.free();
  m.free(); ok.free(); v.free();
});

test('compile: refs, the registry for remote $ref (relative to $id), the built-in metaschemas, nothing fetched', () => {
  // One token per character, so that texts are checked character by character.
  const chars = [...'{}[]":,-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ '];
  const vocab = Object.fromEntries([...chars, '<eos>'].map((c, i) => [c, i]));
  const json = JSON.stringify({ version: '1.0', model: { type: 'WordLevel', vocab, unk_token: 'a' },
    added_tokens: [{ id: chars.length, content: '<eos>', special: true, single_word: false, lstrip: false, rstrip: false, normalized: false }] });
  const v = PreparedVocab.fromTokenizerJson(json, { eosTokenIds: chars.length });
  const accepts = (store, text) => {
    const m = new Matcher(store);
    try {
      for (const c of text) {
        if (!bit(m.computeMask(), vocab[c])) return false;
        m.commitToken(vocab[c]);
      }
      return m.isAccepting();
    } finally { m.free(); }
  };
  const schema = { $id: 'https://example.com/schemas/order.json', type: 'object',
    properties: { item: { $ref: 'common.json#/$defs/sku' }, qty: { $ref: 'https://example.com/schemas/common.json#/$defs/count' } },
    required: ['item', 'qty'], additionalProperties: false };
  const common = { $defs: { sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{4}$' }, count: { type: 'integer', minimum: 1 } } };
  const fmt = { type: 'json_schema', json_schema: schema };
  // Not given: a Schema error naming the keyword, its pointer, the URI and the option.
  expectKind(() => compile(v, fmt), 'Schema', /remote `\$ref` at #\/properties\/item\/\$ref: "https:\/\/example\.com\/schemas\/common\.json".*refs/);
  const s = compile(v, fmt, { refs: { 'https://example.com/schemas/common.json': common } });
  assert.ok(accepts(s, '{"item":"ABC-1234","qty":2}'));
  assert.ok(!accepts(s, '{"item":"abc","qty":2}'), 'the pattern of the remote schema holds');
  assert.ok(!accepts(s, '{"item":"ABC-1234","qty":0}'), 'the minimum of the remote schema holds');
  s.free();
  // The JSON Schema metaschemas are built in.
  const meta = compile(v, { type: 'json_schema', json_schema: { $ref: 'http://json-schema.org/draft-07/schema#/definitions/nonNegativeInteger' } });
  assert.ok(accepts(meta, '7') && !accepts(meta, '-7'));
  meta.free();
  const lenient = compile(v, { type: 'json_schema', json_schema: { $ref: 'http://json-schema.org/draft-07/schema#' } }, { lenient: true });
  assert.ok(accepts(lenient, '{"minLength":2,"type":"string"}') && !accepts(lenient, '{"minLength":-1}'));
  assert.ok(lenient.warnings.some((w) => /uniqueItems/.test(w)), lenient.warnings.join('\n'));
  lenient.free();
  // Bad registries.
  assert.throws(() => compile(v, fmt, { refs: [common] }), /refs must be an object/);
  assert.throws(() => compile(v, fmt, { refs: 'common.json' }), /refs must be an object/);
  expectKind(() => compile(v, fmt, { refs: { 'https://example.com/schemas/common.json#x': common } }), 'Schema', /fragment/);
  v.free();
});

test('MaskStore.fromUrl in Node: paths and file: URLs', async () => {
  const file = blobPath('json');
  const progress = [];
  const a = await MaskStore.fromUrl(path.relative(process.cwd(), file), undefined, (l, t) => progress.push([l, t]));
  const b = await MaskStore.fromUrl(pathToFileURL(file));
  const c = await MaskStore.fromUrl(pathToFileURL(file).href);
  assert.equal(a.grammarFingerprint, b.grammarFingerprint);
  assert.equal(c.vocabSize, 128256);
  assert.deepEqual(progress, [[fs.statSync(file).size, fs.statSync(file).size]]);
  await assert.rejects(MaskStore.fromUrl('does/not/exist.gmask'), /reading .*exist\.gmask failed: ENOENT/);
  a.free(); b.free(); c.free();
});
