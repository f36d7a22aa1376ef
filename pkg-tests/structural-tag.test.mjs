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

// Token-level formats (xgrammar's "Token-level Delimiters" recipe): a
// thinking region of any tokens between two tokens, then calls that a token
// triggers. Qwen3's <think> </think> <tool_call> </tool_call> are added
// tokens (not flagged special); <|im_start|> is special; <|im_end|> is EOS.
const [THINK, UNTHINK, CALL, UNCALL, IM_START, IM_END] = [151667, 151668, 151657, 151658, 151644, 151645];
const TIME_TAG = { type: 'tag', begin: { type: 'token', token: '<tool_call>' }, content: { type: 'json_schema', json_schema: TIME }, end: { type: 'token', token: UNCALL } };

test('token formats: any_tokens in a token tag, then token_triggered_tags (Qwen3)', async () => {
  const tok = await tokenizer('qwen3');
  const think = { type: 'tag', begin: { type: 'token', token: THINK }, content: { type: 'any_tokens' }, end: { type: 'token', token: '</think>' } };
  const calls = (extra) => ({ type: 'token_triggered_tags', trigger_tokens: ['<tool_call>'], tags: [TIME_TAG], exclude_tokens: [IM_START], ...extra });
  const fmt = (extra) => ({ type: 'structural_tag', format: { type: 'sequence', elements: [think, calls(extra)] } });
  const p = new StructuredOutputProcessor(tok, fmt({}));
  const json = ids(tok, '{"timezone": "UTC"}');
  const good = {
    'thinking, then text': [THINK, ...ids(tok, 'The user wants the time.'), UNTHINK, ...ids(tok, 'It is noon.')],
    'special and named tokens inside the thinking region (any token but its end and EOS)': [THINK, ...ids(tok, 'a'), IM_START, CALL, ...ids(tok, 'b'), UNCALL, UNTHINK],
    'a call between texts, two calls': [THINK, UNTHINK, ...ids(tok, 'Checking. '), CALL, ...json, UNCALL, ...ids(tok, ' and '), CALL, ...json, UNCALL, ...ids(tok, ' done')],
    'the trigger spelled out as text is text': [THINK, UNTHINK, ...ids(tok, '<'), ...ids(tok, 'tool_call> x')],
    'an empty region': [THINK, UNTHINK],
    'tokens the format names, outside their places, are ordinary tokens (not excluded: no enclosing tag)': [THINK, UNTHINK, UNTHINK, UNCALL, THINK],
  };
  for (const [what, t] of Object.entries(good)) assert.equal(refused(p.store, t), null, what);
  throughProcessor(new StructuredOutputProcessor(tok, fmt({})), good['a call between texts, two calls'], IM_END);
  const bad = {
    'no thinking region': [...ids(tok, 'Hi')],
    'EOS inside the thinking region': [THINK, ...ids(tok, 'a'), IM_END],
    'an excluded token': [THINK, UNTHINK, ...ids(tok, 'a'), IM_START],
    'invalid JSON in a call': [THINK, UNTHINK, CALL, ...ids(tok, '{"tz": "UTC"}'), UNCALL],
    'a call not closed by its token': [THINK, UNTHINK, CALL, ...json, ...ids(tok, '</'), ...ids(tok, 'tool_call>')],
  };
  for (const [what, t] of Object.entries(bad)) assert.notEqual(refused(p.store, t), null, what);
  // at_least_one: a call first; stop_after_first: one call, then the end.
  const alo = new StructuredOutputProcessor(tok, fmt({ at_least_one: true }));
  assert.equal(refused(alo.store, [THINK, UNTHINK, CALL, ...json, UNCALL, ...ids(tok, ' ok')]), null);
  assert.equal(refused(alo.store, [THINK, UNTHINK, ...ids(tok, 'a'), CALL]), 2);
  assert.equal(refused(alo.store, [THINK, ...ids(tok, 'a'), UNTHINK, UNTHINK]), 3, 'the thinking region ends at its first end token');
  const saf = new StructuredOutputProcessor(tok, fmt({ stop_after_first: true }));
  assert.equal(refused(saf.store, [THINK, UNTHINK, ...ids(tok, 'a '), CALL, ...json, UNCALL]), null);
  assert.equal(refused(saf.store, [THINK, UNTHINK, CALL, ...json, UNCALL, ...ids(tok, 'a')]), 2 + 1 + json.length + 1);
  const one = new StructuredOutputProcessor(tok, fmt({ at_least_one: true, stop_after_first: true }));
  assert.equal(refused(one.store, [THINK, UNTHINK, CALL, ...json, UNCALL]), null);
  assert.notEqual(refused(one.store, [THINK, UNTHINK]), null);
});

test('token formats with Llama-3: any_tokens takes the special tokens (not EOS), token_dispatch', async () => {
  const tok = await tokenizer('llama3');
  const [SH, EH, EOT, R0, EOS] = [128006, 128007, 128009, 128002, 128001];
  const p = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'tag', begin: { type: 'token', token: '<|start_header_id|>' }, content: { type: 'any_tokens', exclude_tokens: [EOT] }, end: { type: 'token', token: EH } } });
  assert.equal(refused(p.store, [SH, ...ids(tok, 'assistant'), R0, 128255, 128000, EH]), null);
  assert.equal(refused(p.store, [SH, EH]), null);
  assert.equal(refused(p.store, [SH, ...ids(tok, 'a'), EOT, EH]), 2, 'an excluded special token');
  assert.equal(refused(p.store, [SH, ...ids(tok, 'a'), EOS]), 2, 'EOS is never inside');
  assert.equal(refused(p.store, [SH, EH, EH]), 2);
  // token_dispatch: tokens; at <|start_header_id|> the role, then the header's end; loop.
  const role = { type: 'sequence', elements: [{ type: 'or', elements: [{ type: 'const_string', value: 'user' }, { type: 'const_string', value: 'assistant' }] }, { type: 'token', token: EH }] };
  const d = (extra) => new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'token_dispatch', rules: [['<|start_header_id|>', role]], exclude_tokens: [], ...extra } });
  const loop = d({});
  const turn = [SH, ...ids(tok, 'user'), EH, ...ids(tok, '\n\nHi'), EOT];
  assert.equal(refused(loop.store, [...ids(tok, 'x'), ...turn, SH, ...ids(tok, 'assistant'), EH, ...ids(tok, 'Hello')]), null);
  assert.equal(refused(loop.store, [...ids(tok, 'x'), EH, R0]), null, 'the end token is an ordinary token outside a rule (xgrammar excludes only the triggers)');
  assert.equal(refused(loop.store, [SH, ...ids(tok, 'system'), EH]), 1);
  throughProcessor(d({}), turn, EOS);
  const once = d({ loop: false });
  assert.equal(refused(once.store, [...ids(tok, 'x'), SH, ...ids(tok, 'user'), EH]), null);
  assert.equal(refused(once.store, [SH, ...ids(tok, 'user'), EH, R0]), 3, 'loop: false ends after one rule');
  assert.equal(refused(d({ exclude_tokens: [R0] }).store, [...ids(tok, 'x'), R0]), 1);
});

test('dispatch: free text, a trigger string, its format; excludes end it (xgrammar\'s <response> example)', async () => {
  const tok = await tokenizer('qwen3');
  const json = (schema) => ({ type: 'json_schema', json_schema: schema });
  const dispatch = (extra) => ({ type: 'dispatch', rules: [['<function=get_weather>', json(WEATHER)], ['<function=get_time>', json(TIME)]], excludes: ['</response>'], ...extra });
  const make = (extra) => new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'tag', begin: '<response>', content: dispatch(extra), end: '</response>' } });
  const p = make({});
  const good = [
    '<response>Plain text, <function=get_date> is no trigger, <function=get_ time neither.</response>',
    `<response>Call: <function=get_weather>{"city": "Oslo"} and <function=get_time>{"timezone": "UTC"}</response>`,
    '<response><function=get_time>{"timezone": "UTC"}</response>',
    '<response></response>',
  ];
  for (const t of good) assert.equal(refused(p.store, ids(tok, t)), null, t);
  throughProcessor(make({}), ids(tok, good[1]), IM_END);
  const bad = [
    '<response>a</response> b</response>',
    '<response><function=get_weather>{"city": "Oslo", "days": 9}</response>',
    '<response><function=get_time></response>',
    '<response>no end',
  ];
  for (const t of bad) assert.notEqual(refused(p.store, ids(tok, t)), null, t);
  const once = make({ loop: false });
  assert.equal(refused(once.store, ids(tok, '<response>a <function=get_time>{"timezone": "UTC"}</response>')), null);
  assert.notEqual(refused(once.store, ids(tok, '<response>a <function=get_time>{"timezone": "UTC"} b</response>')), null, 'loop: false ends after one rule');
  // At the end of the output, no excludes needed.
  const top = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'dispatch', rules: [['<link>', { type: 'sequence', elements: [{ type: 'regex', pattern: '[a-z]+' }, { type: 'const_string', value: '</link>' }] }]] } });
  assert.equal(refused(top.store, ids(tok, 'see <link>wiki</link> and <link>page</link> <lin </link> done')), null);
  assert.notEqual(refused(top.store, ids(tok, 'see <link>Wiki</link>')), null);
  assert.throws(() => new StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'dispatch', rules: [['[[', { type: 'const_string', value: 'x]]' }]] } }), /overlap themselves/);
});

test('qwen_xml: Qwen3-Coder\'s <parameter=NAME> arguments, as xgrammar\'s builtin Qwen-Coder tags write them', async () => {
  const tok = await tokenizer('qwen3');
  const tag = (name, content) => ({ type: 'tag', begin: `<tool_call>\n<function=${name}>\n`, content, end: '\n</function>\n</tool_call>' });
  const fmt = { type: 'triggered_tags', triggers: ['<tool_call>\n<function='], tags: [
    tag('get_weather', { type: 'json_schema', json_schema: { ...WEATHER, properties: { ...WEATHER.properties, city: { type: 'string' } } }, style: 'qwen_xml' }),
    tag('get_time', { type: 'qwen_xml_parameter', json_schema: { properties: TIME.properties, required: TIME.required } }), // no type: an object, as in xgrammar
  ] };
  const p = new StructuredOutputProcessor(tok, { type: 'structural_tag', format: fmt });
  const call = (name, body) => `<tool_call>\n<function=${name}>\n${body}\n</function>\n</tool_call>`;
  const good = [
    `Let me check.\n${call('get_weather', '<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>')}`,
    call('get_weather', '<parameter=city>New York</parameter><parameter=unit> celsius </parameter>'),
    call('get_weather', '<parameter=city>\na <b> </param x\n</parameter>\n\n'),
    `${call('get_time', '<parameter=timezone>\nEurope/Paris\n</parameter>')} done`,
    call('get_weather', '<parameter=city>x</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n<parameter=days>7</parameter>'),
  ];
  for (const t of good) assert.equal(refused(p.store, ids(tok, t)), null, t);
  throughProcessor(new StructuredOutputProcessor(tok, { type: 'structural_tag', format: fmt }), ids(tok, good[0]), IM_END);
  const bad = {
    'a missing required parameter': call('get_weather', '<parameter=days>\n3\n</parameter>'),
    'a range violation': call('get_weather', '<parameter=city>\nParis\n</parameter>\n<parameter=days>\n9\n</parameter>'),
    'an enum violation': call('get_weather', '<parameter=city>\nParis\n</parameter>\n<parameter=unit>\nkelvin\n</parameter>'),
    'an unknown parameter': call('get_time', '<parameter=timezone>\nUTC\n</parameter>\n<parameter=x>\n1\n</parameter>'),
    'parameters out of their declared order': call('get_weather', '<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>'),
    'a parameter twice': call('get_weather', '<parameter=city>\nParis\n</parameter>\n<parameter=city>\nRome\n</parameter>'),
    'JSON instead of XML': call('get_time', '{"timezone": "UTC"}'),
  };
  for (const [what, t] of Object.entries(bad)) assert.notEqual(refused(p.store, ids(tok, t)), null, what);
  // Refused by name: what the style cannot reproduce exactly.
  const make = (format) => () => new StructuredOutputProcessor(tok, { type: 'structural_tag', format });
  const q = (json_schema, extra) => ({ type: 'json_schema', json_schema, style: 'qwen_xml', ...extra });
  assert.throws(make(q({ type: 'object', properties: { a: { type: 'object' } } })), /property "a": the type "object" is refused/);
  assert.throws(make(q({ type: 'object', properties: { a: { type: 'string', maxLength: 3 } } })), /property "a": the keyword "maxLength" is refused/);
  assert.throws(make(q({ type: 'object', properties: {}, additionalProperties: true })), /additionalProperties is refused unless false/);
  assert.throws(make(q({ type: 'object', properties: { a: { enum: [' x'] } } })), /the value " x" is refused/);
  assert.throws(make({ ...q(TIME), style: 'minimax_xml' }), /style "minimax_xml" is refused/);
  assert.throws(make(q({ required: [] })), /the schema must be an object schema/);
  assert.throws(make(q({ type: 'string' })), /the schema must be an object schema/);
  assert.throws(make({ type: 'sequence', elements: [q(TIME), { type: 'const_string', value: '\nend' }] }), /may be followed by "\\nend", which starts with whitespace/);
});

test('refused by name, never ignored', async () => {
  const tok = await tokenizer('qwen3');
  const make = (format) => () => new StructuredOutputProcessor(tok, { type: 'structural_tag', format });
  const json = { type: 'json_schema', json_schema: TIME };
  assert.throws(make({ type: 'grammar', grammar: 'root ::= "a"' }), /"grammar" is refused: an EBNF grammar/);
  assert.throws(make({ type: 'exclude_token', exclude_tokens: [1] }), /"exclude_token" is refused: exactly one token/);
  assert.throws(make({ ...json, style: 'glm_xml' }), /style "glm_xml" is refused: only "json" and "qwen_xml"/);
  assert.throws(make({ ...json, any_order: true }), /any_order is refused/);
  assert.throws(make({ type: 'any_text', max_tokens: 10 }), /any_text\.max_tokens is refused/);
  assert.throws(make({ type: 'any_tokens', max_tokens: 10 }), /any_tokens\.max_tokens is refused/);
  assert.throws(make({ type: 'const_string', value: 'a', extra: 1 }), /no field "extra"/);
  assert.throws(make({ type: 'sequence', elements: [{ type: 'any_text' }, json] }), /cannot tell where the text ends/);
  assert.throws(make({ ...FUNCTION_TAGS, triggers: ['<tool_call>'] }), /must start with exactly one trigger/);
  assert.throws(make({ type: 'token', token: '<no such token>' }), /no token of the tokenizer is exactly/);
  assert.throws(make({ type: 'triggered_tags', triggers: ['aa'], tags: [{ begin: 'aab', content: json, end: 'z' }] }), /overlap themselves/);
  // Token formats start and end at token boundaries, and stop where xgrammar's do.
  assert.throws(make({ type: 'sequence', elements: [{ type: 'const_string', value: 'x' }, { type: 'any_tokens' }] }), /format\.elements\[1\]: any_tokens may come right after text/);
  assert.throws(make({ type: 'sequence', elements: [{ type: 'any_tokens' }, { type: 'const_string', value: 'x' }] }), /any_tokens may be followed by text/);
  assert.throws(make({ type: 'tag', begin: { type: 'token', token: CALL }, content: { type: 'token_dispatch', rules: [[THINK, { type: 'token', token: UNTHINK }]] }, end: { type: 'token', token: UNCALL } }), /token_dispatch may be followed by token 151658, which it does not exclude/);
  assert.throws(make({ type: 'any_tokens', exclude_tokens: ['hello'] }), /token \d+ \(excluded or a trigger\) is text \(not a special token\) that the format names nowhere else/);
  assert.throws(make({ type: 'token_triggered_tags', trigger_tokens: [CALL], tags: [{ ...TIME_TAG, end: '</call>' }] }), /token_triggered_tags \(after a tag whose end is text\) may come right after text/);
  assert.throws(make({ type: 'token_triggered_tags', trigger_tokens: [THINK], tags: [TIME_TAG] }), /must be exactly one of trigger_tokens, it is 0/);
  assert.throws(make({ type: 'tag', begin: '<r>', content: { type: 'dispatch', rules: [['<f>', json]] }, end: '</r>' }), /dispatch may be followed by "<\/r>", which holds none of its triggers and excludes/);
  assert.throws(make({ type: 'dispatch', rules: [['<f', json], ['<f>', json]] }), /the trigger "<f" is inside the trigger "<f>"/);
  assert.throws(make({ type: 'dispatch', rules: [] }), /dispatch\.rules must be a non-empty array/);
  assert.throws(() => new StructuredOutputProcessor(tok, { type: 'structural_tag' }), /expected \{ type: 'structural_tag', format/);
});
