// Structural tags as a response format ({ type: 'structural_tag' }), in the
// three shapes xgrammar and web-llm write them, teacher-forced with real
// tokenizers (Qwen3, Llama-3 through transformers.js): texts with tags are
// accepted token by token through the processor to EOS, free text is
// accepted, invalid content inside a tag and a trigger not followed by a tag
// are refused, masks agree with isAllowed at every step; the parts grammask
// does not support are refused by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Matcher } from 'grammask';
import { StructuredOutputProcessor, structuralTagToLark } from 'grammask/transformers';
import { tokenizer, refusedAt } from './helpers.mjs';

const ids = (tok, text) => Array.from(tok.encode(text, { add_special_tokens: false }));

const refused = (store, tokIds) => refusedAt(new Matcher(store), tokIds);

/** Through the processor (as generate() calls it): every token unmasked, then EOS allowed. */
function throughProcessor(proc, tokIds, eos) {
  const V = proc.store.vocabSize;
  const row = [1n];
  for (const id of [...tokIds, eos]) {
    const logits = { dims: [1, V], data: new Float32Array(V) };
    proc([row], logits);
    assert.equal(logits.data[id], 0, `token ${id} masked after ${row.length - 1} tokens`);
    row.push(BigInt(id));
  }
}

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 40 }, unit: { enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city'],
  additionalProperties: false,
};
const TIME = { type: 'object', properties: { timezone: { type: 'string' } }, required: ['timezone'], additionalProperties: false };

// xgrammar's documented example: <function=NAME>{...}</function> inside free text.
const FUNCTION_TAGS = {
  type: 'triggered_tags',
  triggers: ['<function='],
  tags: [
    { type: 'tag', begin: '<function=get_weather>', content: { type: 'json_schema', json_schema: WEATHER }, end: '</function>' },
    { type: 'tag', begin: '<function=get_time>', content: { type: 'json_schema', json_schema: TIME }, end: '</function>' },
  ],
};
const CALL_W = '<function=get_weather>{"city": "Paris", "unit": "celsius", "days": 3}</function>';
const CALL_T = '<function=get_time>{"timezone": "Europe/Paris"}</function>';

for (const model of ['qwen3', 'llama3']) {
  test(`${model}: triggered_tags ({ format }): free text and tags accepted to EOS, invalid content refused`, async () => {
    const tok = await tokenizer(model);
    const p = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: FUNCTION_TAGS });
    const eos = p.store.eosTokenIds[0];
    const good = [
      'Just text, no call: a < b, <func, <function but no equals sign.',
      `I will look it up. ${CALL_W}`,
      `${CALL_W}\n${CALL_T} and some text after.`,
      `x<${CALL_T}`, // a "<" right before the trigger
      'text ending in a prefix of the trigger <functio',
      '',
    ];
    for (const text of good) {
      assert.equal(refused(p.store, ids(tok, text)), null, `${JSON.stringify(text)} refused`);
    }
    throughProcessor(new StructuredOutputProcessor(tok, { type: 'structural_tag', format: FUNCTION_TAGS }), ids(tok, `Sure. ${CALL_W} ${CALL_T}`), eos);
    const bad = {
      'an unknown tag after the trigger': 'call <function=get_date>{"timezone": "UTC"}</function>',
      'a missing required property': '<function=get_weather>{"unit": "celsius"}</function>',
      'an enum violation': '<function=get_weather>{"city": "Paris", "unit": "kelvin"}</function>',
      'a range violation': '<function=get_weather>{"city": "Paris", "days": 9}</function>',
      'an extra property': '<function=get_time>{"timezone": "UTC", "x": 1}</function>',
      'a wrong end string': '<function=get_time>{"timezone": "UTC"}</func>',
      'the trigger spelled inside free text': 'text <function= more text',
    };
    for (const [what, text] of Object.entries(bad)) {
      assert.notEqual(refused(p.store, ids(tok, text)), null, `${what} accepted: ${text}`);
    }
    // An unfinished tag is not complete (EOS refused there).
    assert.equal(refused(p.store, ids(tok, '<function=get_time>{"timezone": "UTC"}')) !== null, true);
  });
}

test('web-llm shape ({ structural_tag }): its tool-use example, at_least_one and stop_after_first', async () => {
  const tok = await tokenizer('qwen3');
  // web-llm's examples/structural-tag-tool-use: tags without "type", begin holding the JSON's start.
  const tag = (name, schema) => ({ begin: `<tool_call>\n{"name": "${name}", "arguments": `, content: { type: 'json_schema', json_schema: schema }, end: '}\n</tool_call>' });
  const st = { type: 'structural_tag', format: { type: 'triggered_tags', triggers: ['<tool_call>'], tags: [tag('get_weather', WEATHER), tag('get_time', TIME)], at_least_one: true, stop_after_first: false } };
  const call = (name, args) => `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;
  for (const structural_tag of [st, JSON.stringify(st), st.format]) {
    const p = new StructuredOutputProcessor(tok, { type: 'structural_tag', structural_tag });
    assert.equal(refused(p.store, ids(tok, call('get_weather', '{"city": "Oslo"}'))), null);
    assert.equal(refused(p.store, ids(tok, `${call('get_weather', '{"city": "Oslo"}')}\n${call('get_time', '{"timezone": "UTC"}')}`)), null);
    assert.notEqual(refused(p.store, ids(tok, 'Let me check. ' + call('get_time', '{"timezone": "UTC"}'))), null, 'at_least_one: no text first');
    assert.notEqual(refused(p.store, ids(tok, call('get_weather', '{"town": "Oslo"}'))), null);
    assert.notEqual(refused(p.store, ids(tok, call('get_news', '{}'))), null);
  }
  // Qwen3's <tool_call> is one added token (151657); the tag's begin is text, and that token spells it.
  assert.deepEqual(ids(tok, '<tool_call>'), [151657]);
  // stop_after_first: one tag, then the output ends.
  const one = new StructuredOutputProcessor(tok, { type: 'structural_tag', structural_tag: { ...st, format: { ...st.format, stop_after_first: true } } });
  throughProcessor(one, ids(tok, call('get_time', '{"timezone": "UTC"}')), one.store.eosTokenIds[0]);
  assert.notEqual(refused(one.store, ids(tok, `${call('get_time', '{"timezone": "UTC"}')}\n${call('get_time', '{"timezone": "UTC"}')}`)), null);
});

test('the older form ({ structures, triggers }), schema as JSON text', async () => {
  const tok = await tokenizer('llama3');
  const rf = { type: 'structural_tag', structures: [{ begin: '<function=get_time>', schema: JSON.stringify(TIME), end: '</function>' }], triggers: ['<function='] };
  const p = new StructuredOutputProcessor(tok, rf);
  assert.equal(refused(p.store, ids(tok, `Checking: ${CALL_T} done`)), null);
  assert.notEqual(refused(p.store, ids(tok, '<function=get_time>{"tz": "UTC"}</function>')), null);
  assert.equal(structuralTagToLark(tok, rf), p.structuralTag.grammar);
});

test('sequence: a <think> region (any_text up to its end), then tags; tags_with_separator; token begin and end', async () => {
  const tok = await tokenizer('qwen3');
  const think = { type: 'tag', begin: '<think>', content: { type: 'any_text' }, end: '</think>' };
  const p = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'sequence', elements: [think, { type: 'const_string', value: '\n\n' }, FUNCTION_TAGS] } });
  throughProcessor(p, ids(tok, `<think>\nThe user wants <b>weather</b>; </thin is not the end.\n</think>\n\n${CALL_W}`), p.store.eosTokenIds[0]);
  assert.notEqual(refused(p.store, ids(tok, 'No thinking first.')), null);
  assert.notEqual(refused(p.store, ids(tok, '<think>a</think>b</think>\n\nx')), null, 'the region ends at the first </think>');
  // tags_with_separator: a pure list of tags, ", " between.
  const list = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'tags_with_separator', separator: ', ', at_least_one: true, tags: FUNCTION_TAGS.tags } });
  assert.equal(refused(list.store, ids(tok, `${CALL_W}, ${CALL_T}`)), null);
  assert.notEqual(refused(list.store, ids(tok, `${CALL_W} ${CALL_T}`)), null);
  assert.notEqual(refused(list.store, ids(tok, '')), null);
  // A tag whose begin and end are tokens (by text and by id): matched as the tokens, never as their text.
  const tokTag = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'tag', begin: { type: 'token', token: '<tool_call>' }, content: { type: 'json_schema', json_schema: TIME }, end: { type: 'token', token: 151658 } } });
  assert.equal(refused(tokTag.store, [151657, ...ids(tok, '{"timezone": "UTC"}'), 151658]), null);
  assert.equal(refused(tokTag.store, ids(tok, '<').concat(ids(tok, 'tool_call>{"timezone": "UTC"}'))), 0, 'the spelled-out text is not the token');
  // or / optional / repeat / regex / const_string.
  const misc = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'sequence', elements: [
    { type: 'or', elements: [{ type: 'const_string', value: 'yes' }, { type: 'const_string', value: 'no' }] },
    { type: 'optional', content: { type: 'const_string', value: '!' } },
    { type: 'const_string', value: ' code ' },
    { type: 'repeat', min: 2, max: 3, content: { type: 'regex', pattern: '[A-Z]{3}-[0-9]{2};' } },
  ] } });
  for (const t of ['yes code ABC-12;DEF-34;', 'no! code ABC-12;DEF-34;GHI-56;']) assert.equal(refused(misc.store, ids(tok, t)), null, t);
  for (const t of ['maybe code ABC-12;DEF-34;', 'yes code ABC-12;', 'yes code ABC-12;DEF-34;GHI-56;JKL-78;', 'yes code AB-12;CD-34;']) assert.notEqual(refused(misc.store, ids(tok, t)), null, t);
});

test('triggers with class punctuation and non-ASCII characters: free text around their prefixes', async () => {
  const tok = await tokenizer('qwen3');
  const J = { type: 'json_schema', json_schema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false } };
  const p = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'triggered_tags', triggers: ['🔧[\\', '§-^]\n'], excludes: ['é'], tags: [
    { begin: '🔧[\\call]', content: J, end: '🔧end' }, { begin: '§-^]\nx', content: J, end: ['\n]', '!!'] }] } });
  const good = ['plain 🔧 text [\\ x - ^ ] § - b', 'a 🔧[\\call]{"a": 1}🔧end b', '§-^]\nx{"a": 2}!! after', '§-^]\nx{"a": 2}\n]', '🔧[ §-^ end'];
  for (const t of good) assert.equal(refused(p.store, ids(tok, t)), null, JSON.stringify(t));
  for (const t of ['café', '🔧[\\x', '§-^]\ny{"a": 1}!!', 'a 🔧[\\call]{"a": 1}🔧en']) assert.notEqual(refused(p.store, ids(tok, t)), null, JSON.stringify(t));
});

test('refused by name, never ignored', async () => {
  const tok = await tokenizer('qwen3');
  const make = (format) => () => new StructuredOutputProcessor(tok, { type: 'structural_tag', format });
  const json = { type: 'json_schema', json_schema: TIME };
  assert.throws(make({ type: 'grammar', grammar: 'root ::= "a"' }), /"grammar" is refused: an EBNF grammar/);
  assert.throws(make({ type: 'dispatch', rules: [] }), /"dispatch" is refused/);
  assert.throws(make({ type: 'token_triggered_tags', trigger_tokens: [1], tags: [] }), /"token_triggered_tags" is refused/);
  assert.throws(make({ ...json, style: 'qwen_xml' }), /style "qwen_xml" is refused/);
  assert.throws(make({ ...json, any_order: true }), /any_order is refused/);
  assert.throws(make({ type: 'any_text', max_tokens: 10 }), /any_text\.max_tokens is refused/);
  assert.throws(make({ type: 'const_string', value: 'a', extra: 1 }), /no field "extra"/);
  assert.throws(make({ type: 'sequence', elements: [{ type: 'any_text' }, json] }), /cannot tell where the text ends/);
  assert.throws(make({ ...FUNCTION_TAGS, triggers: ['<tool_call>'] }), /must start with exactly one trigger/);
  assert.throws(make({ type: 'token', token: '<no such token>' }), /no token of the tokenizer is exactly/);
  assert.throws(make({ type: 'triggered_tags', triggers: ['aa'], tags: [{ begin: 'aab', content: json, end: 'z' }] }), /overlap themselves/);
  assert.throws(() => new StructuredOutputProcessor(tok, { type: 'structural_tag' }), /expected \{ type: 'structural_tag', format/);
});
