// Lookaround in patterns through the npm package (Llama-3, real vocabulary):
// a real-world schema `pattern` with a negative lookahead
// (`^(?!org\.bukkit\.)[a-zA-Z0-9_.]+$`, a plugin's `main` class), a
// tempered token and a lookbehind, teacher-forced: each text is split into
// real Llama-3 tokens (longest token first, fixed before the replay) and
// replayed; a valid text has every token in the mask and ends accepting, an
// invalid one does not. A regex constraint with lookaround likewise, and a
// backreference is refused with the keyword and pointer named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Matcher, PreparedVocab, compile } from 'grammask';
import { ROOT, fixture, refusedAt } from './helpers.mjs';

const dir = path.join(ROOT, 'models/llama3');
fixture(path.join(dir, 'tokenizer.json'), 'run scripts/setup/setup.sh (tokenizers)');
const vocab = PreparedVocab.fromTokenizerJson(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'), {
  tokenizerConfig: fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'),
});

// Token ids by their bytes (latin1 string), non-special tokens only.
const byText = new Map();
let longest = 0;
{
  const tt = vocab.tokenTable();
  for (let i = 0; i < vocab.vocabSize; i++) {
    if ((tt.special[i >>> 5] >>> (i & 31)) & 1) continue;
    const s = Buffer.from(tt.bytes.subarray(tt.offsets[i], tt.offsets[i + 1])).toString('latin1');
    if (s && !byText.has(s)) byText.set(s, i);
    longest = Math.max(longest, s.length);
  }
}

/** Real tokens of `text`, longest first (a fixed split, made before any mask is seen). */
function tokens(text) {
  const s = Buffer.from(text, 'utf8').toString('latin1');
  const ids = [];
  for (let i = 0; i < s.length;) {
    let n = Math.min(longest, s.length - i);
    while (n > 0 && !byText.has(s.slice(i, i + n))) n--;
    assert.ok(n > 0, `no token for ${JSON.stringify(s.slice(i))}`);
    ids.push(byText.get(s.slice(i, i + n)));
    i += n;
  }
  return ids;
}

const accepts = (store, text) => refusedAt(new Matcher(store), [...tokens(text)]) === null;

test('lookaround: a schema pattern with a negative lookahead (plugin.yml main class), teacher-forced', () => {
  const schema = {
    type: 'object',
    properties: {
      main: { type: 'string', pattern: '^(?!org\\.bukkit\\.)[a-zA-Z0-9_.]+$' },
      note: { type: 'string', pattern: '^(?:(?!--).)*$' },
      ext: { type: 'string', pattern: '(?<!\\.tmp)$' },
    },
    required: ['main'],
  };
  const store = compile(vocab, { type: 'json_schema', json_schema: schema });
  const valid = [
    '{"main": "com.example.Plugin"}',
    '{"main": "org.bukkitx.Main"}',
    '{"main": "org.bukkit"}',
    '{"main": "a.b", "note": "one - two", "ext": "x.tmpl"}',
  ];
  const invalid = [
    '{"main": "org.bukkit.Main"}',
    '{"main": "org.bukkit.plugin.java.JavaPlugin"}',
    '{"main": "com.example-plugin"}',
    '{"main": ""}',
    '{"main": "a", "note": "one -- two"}',
    '{"main": "a", "ext": "x.tmp"}',
  ];
  for (const t of valid) assert.ok(accepts(store, t), `valid, refused: ${t}`);
  for (const t of invalid) assert.ok(!accepts(store, t), `invalid, accepted: ${t}`);
  store.free();
});

test('lookaround: a regex constraint with lookahead, lookbehind and \\b (Python re.fullmatch)', () => {
  const store = compile(vocab, { type: 'regex', regex: '(?!test_)\\w+(?<!_)\\b' });
  for (const t of ['main', 'tests', 'a_b']) assert.ok(accepts(store, t), t);
  for (const t of ['test_main', 'main_', '']) assert.ok(!accepts(store, t), t);
  store.free();
});

test('lookaround: a backreference is refused, naming the keyword and pointer', () => {
  assert.throws(
    () => compile(vocab, { type: 'json_schema', json_schema: { properties: { k: { pattern: '(a)\\1' } } } }),
    (e) => e.name === 'GrammaskError' && /backreference/.test(e.message) && /#\/properties\/k/.test(e.message),
  );
});
