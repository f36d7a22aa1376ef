// GBNF / EBNF through the npm package, judged by xgrammar (@mlc-ai/web-xgrammar,
// the EBNF engine of web-llm, from benches/wasm/node_modules: scripts/setup/setup.sh).
// On llama.cpp's example grammars (grammars/gbnf/, fetched by scripts/gbnf/fetch.sh):
// 1. compile({type: 'gbnf'}) compiles or refuses each exactly as
//    grammars/gbnf/expectations.tsv says;
// 2. the judge gives every text of grammars/gbnf/samples.json its label
//    (except the judge errors listed there), and grammask's matcher accepts
//    exactly the texts labelled accept (committed token by token);
// 3. random walks through grammask's masks (uniform draws, steered to the end
//    after a while): every completed generation is accepted by the judge.
//    Fast tier: 4 walks per grammar; GRAMMASK_FULL=1: 40.
// The judge reads llama.cpp's empty alternative `::= | x` as `::= "" | x`
// (xgrammar's EBNF has no empty alternative), and list.gbnf's class without
// its non-ASCII members (JUDGE_REWRITES, below). xgrammar 0.1.27 accepts any
// text for japanese.gbnf, so there the walks' judgement says nothing: the
// samples and the Rust tests (src/frontend/gbnf/tests.rs) cover it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Matcher, PreparedVocab, compile } from 'grammask';
import { FULL, ROOT, LLAMA3, rng, allowedIds } from './helpers.mjs';

function loadJudge() {
  const req = createRequire(path.join(ROOT, 'benches/wasm/package.json'));
  let p;
  try {
    p = req.resolve('@mlc-ai/web-xgrammar');
  } catch (e) {
    throw new Error(`the judge @mlc-ai/web-xgrammar is missing (npm ci in benches/wasm, as scripts/setup/setup.sh does): ${e.message}`);
  }
  // A CommonJS bundle inside a "type": "module" package (as benches/sbs/adapters.mjs loads it).
  const module = { exports: {} };
  new Function('exports', 'module', 'require', '__filename', '__dirname', fs.readFileSync(p, 'utf8'))
    .call(module.exports, module.exports, module, createRequire(p), p, path.dirname(p));
  return module.exports;
}
const xgr = loadJudge();
// xgrammar 0.1.27 mishandles a negated class holding non-ASCII characters (it
// warns that it clamps them to 127, and then refuses ASCII such as `(`): for
// list.gbnf the judge gets the class without its three non-ASCII members, a
// superset of the language (samples.json checks those three with grammask).
const JUDGE_REWRITES = { 'llama.cpp/list.gbnf': ['\\x85\\u2028\\u2029', ''] };
const forJudge = (text, file) => {
  const t = text.replace(/::=(\s*)\|/g, '::=$1"" |');
  const rw = JUDGE_REWRITES[file];
  if (!rw) return t;
  assert.ok(t.includes(rw[0]), `${file}: the judge rewrite no longer applies`);
  return t.replace(rw[0], rw[1]);
};

const tsv = (rel) => {
  const lines = fs.readFileSync(path.join(ROOT, rel), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  const head = lines[0].split('\t');
  return lines.slice(1).map((l) => Object.fromEntries(l.split('\t').map((v, i) => [head[i], v])));
};
const grammarText = (file) => {
  const p = path.join(ROOT, 'grammars/gbnf', file);
  assert.ok(fs.existsSync(p), `${p} is missing: run bash scripts/gbnf/fetch.sh (scripts/setup/setup.sh runs it)`);
  return fs.readFileSync(p, 'utf8');
};

const expectations = tsv('grammars/gbnf/expectations.tsv');
const samples = JSON.parse(fs.readFileSync(path.join(ROOT, 'grammars/gbnf/samples.json'), 'utf8'));
const vocab = PreparedVocab.fromTokenizerJson(fs.readFileSync(LLAMA3, 'utf8'), { eosTokenIds: [128001] });
const EOS = 128001;
const stores = new Map();

test('llama.cpp grammars compile or are refused as grammars/gbnf/expectations.tsv says', () => {
  assert.deepEqual(expectations.map((r) => r.file), tsv('grammars/gbnf/MANIFEST.tsv').map((r) => r.file));
  for (const row of expectations) {
    const text = grammarText(row.file);
    if (row.verdict === 'ok') {
      stores.set(row.file, compile(vocab, { type: 'gbnf', grammar: text }));
    } else {
      assert.throws(() => compile(vocab, { type: 'gbnf', grammar: text }),
        (e) => e.name === 'GrammaskError' && e.kind === row.kind && e.message.includes(row.message), row.file);
    }
  }
  assert.ok(stores.size >= 6, `${stores.size} compiled`);
});

// The token ids of a text (greedy longest match over the vocabulary's bytes:
// any tokenization of the text is a valid path through the masks).
const enc = new TextEncoder();
let trie = null;
function tokenize(text) {
  if (!trie) {
    trie = new Map();
    for (let id = 0; id < vocab.vocabSize; id++) {
      const b = vocab.tokenBytes(id);
      if (b.length === 0 || id === EOS) continue;
      let node = trie;
      for (const x of b) {
        if (!node.has(x)) node.set(x, new Map());
        node = node.get(x);
      }
      if (node.id === undefined) node.id = id;
    }
  }
  const bytes = enc.encode(text);
  const out = [];
  for (let i = 0; i < bytes.length;) {
    let node = trie, best = -1, len = 0;
    for (let j = i; j < bytes.length && node.has(bytes[j]); j++) {
      node = node.get(bytes[j]);
      if (node.id !== undefined) { best = node.id; len = j - i + 1; }
    }
    assert.ok(best >= 0, `no token for byte ${bytes[i]}`);
    out.push(best);
    i += len;
  }
  return out;
}

function grammaskAccepts(store, text) {
  const m = new Matcher(store);
  try {
    for (const id of tokenize(text)) {
      if (!m.isAllowed(id)) return false;
      m.commitToken(id);
    }
    return m.isAccepting();
  } finally {
    m.free();
  }
}

test('the judge labels the samples as samples.json does, and grammask accepts exactly the accepted ones', async () => {
  let n = 0;
  for (const [file, s] of Object.entries(samples).filter(([k]) => !k.startsWith('_'))) {
    const judge = await xgr.Grammar.fromEBNF(forJudge(grammarText(file), file));
    const wrong = new Set(s.judge_wrong ?? []);
    const store = stores.get(file) ?? compile(vocab, { type: 'gbnf', grammar: grammarText(file) });
    for (const [label, want] of [['accept', true], ['reject', false]]) {
      for (const t of s[label]) {
        const j = await xgr.Testings.isGrammarAcceptString(judge, t);
        if (wrong.has(t)) assert.equal(j, !want, `${file}: ${JSON.stringify(t)} is listed as a judge error, but the judge now says ${j}`);
        else assert.equal(j, want, `${file}: the judge says ${j} for ${JSON.stringify(t)}`);
        assert.equal(grammaskAccepts(store, t), want, `${file}: grammask on ${JSON.stringify(t)}`);
        n++;
      }
    }
  }
  assert.ok(n > 40);
});

/** One walk: uniform draws; after `soft` tokens, EOS when allowed, else an
 * allowed single-byte ASCII token after which EOS is allowed, else one (not
 * whitespace, if it can) after which few tokens are allowed. */
function walk(store, r, soft, hard) {
  const m = new Matcher(store, { maxRollback: 2 });
  const mask = new Uint32Array(m.maskWords);
  const ids = [];
  const dec = new TextDecoder();
  const bytes = [];
  try {
    for (let step = 0; step < hard; step++) {
      m.fillMask(mask);
      const allowed = allowedIds(mask, []);
      if (allowed.length === 0) throw new Error('an empty mask before the end');
      let id;
      if (allowed.includes(EOS) && (step >= soft || allowed.length === 1 || r.unit() < 0.05)) {
        return { done: true, text: dec.decode(new Uint8Array(bytes)), ids };
      } else if (step >= soft) {
        // Single-byte ASCII tokens; whitespace only where it ends the text (a run of it never does).
        const small = allowed.filter((a) => a !== EOS && vocab.tokenBytes(a).length === 1 && vocab.tokenBytes(a)[0] < 128);
        const pool = small.length ? small : allowed.filter((a) => a !== EOS);
        // Scores: -1 when EOS follows, else how many tokens follow; a random one
        // of those within twice the best (so that `,` vs `}` cannot cycle forever).
        const scored = [];
        for (const a of pool.slice(0, 200)) {
          m.commitToken(a);
          m.fillMask(mask);
          const k = allowedIds(mask, []);
          scored.push([k.includes(EOS) ? -1 : k.length, a]);
          m.rollback(1);
        }
        const solid = scored.filter((x) => vocab.tokenBytes(x[1])[0] > 32);
        const pick = scored.some((x) => x[0] < 0) || !solid.length ? scored : solid;
        const best = Math.min(...pick.map((x) => x[0]));
        const near = pick.filter((x) => (best < 0 ? x[0] < 0 : x[0] <= 2 * best));
        id = near[r.below(near.length)][1];
      } else {
        const pool = allowed.filter((a) => a !== EOS);
        id = pool[r.below(pool.length)];
      }
      m.commitToken(id);
      ids.push(id);
      bytes.push(...vocab.tokenBytes(id));
    }
    return { done: false };
  } finally {
    m.free();
  }
}

// An EBNF grammar in xgrammar's own syntax (multi-line rules, `_` and `.` in names,
// `""`, escapes only EBNF has), walked and judged like the others.
const EBNF = String.raw`root ::= "{" ws ( pair ( "," ws pair )* )? "}"
pair ::= key ":" ws value ws
key ::= "\"" [a-z_]+ "\"" ws
value ::= str.body | number | "true" | "false" | root | "n" "" "ull"
str.body ::= "\"" ( [^"\\\x00-\x1f] | "\\" [\"\\/bfnrt] )* "\""
number ::= "-"? [0-9]+ (
    "." [0-9]+
  )?
ws ::= [ \t\n]*
`;

test('random walks through the masks: every completed generation is accepted by the judge', async () => {
  const walks = FULL ? 40 : 4;
  let done = 0, judged = 0;
  const all = [...stores].map(([file, store]) => [file, store, grammarText(file)]);
  all.push(['ebnf (inline)', compile(vocab, { type: 'ebnf', grammar: EBNF }), EBNF]);
  for (const [file, store, text] of all) {
    const judge = await xgr.Grammar.fromEBNF(forJudge(text, file));
    const r = rng(file.length * 7919 + 1);
    let mine = 0;
    for (let w = 0; w < walks; w++) {
      const g = walk(store, r, 30 + w * 5, 400);
      if (!g.done) continue;
      done++;
      mine++;
      // The judge reads code points: a text cut inside a character is not a text.
      assert.ok(!g.text.includes('\uFFFD'), `${file}: ${JSON.stringify(g.text)}`);
      assert.ok(await xgr.Testings.isGrammarAcceptString(judge, g.text), `${file}: the judge refuses the generation ${JSON.stringify(g.text)}`);
      judged++;
    }
    assert.ok(mine >= Math.ceil(walks / 2), `${file}: only ${mine}/${walks} walks completed`);
  }
  assert.equal(judged, done);
});

test('gbnf and ebnf response formats: a grammar from JS in a few lines', () => {
  const s = compile(vocab, { type: 'ebnf', grammar: 'root ::= "yes" | "no"' });
  assert.ok(grammaskAccepts(s, 'yes') && !grammaskAccepts(s, 'maybe'));
  assert.throws(() => compile(vocab, { type: 'gbnf', grammar: 'root ::= <[42]>' }), (e) => e.kind === 'Grammar' && /token reference/.test(e.message));
  assert.throws(() => compile(vocab, { type: 'gbnf' }), (e) => e.kind === 'ResponseFormat');
  assert.throws(() => compile(vocab, { type: 'gbnf', grammar: 'root ::= "a"' }, { lexer: 'basic' }), (e) => e.kind === 'ResponseFormat');
});
