// Tools as a response format: `{ type: 'tools', tools, tool_choice,
// parallel_tool_calls }` becomes a Lark grammar in the model's own tool-call
// format, each call's arguments embedded as JSON Schema (`%json`), the
// format's control tokens named by id (`<[151657]>`: matched as that token,
// never as text). parseToolCalls reads the calls back, validated.
import { Matcher, compile } from './grammask.js';
import { isSet } from '../mask-bits.js';

// Per format: the text before and after a call or a list of calls, the key
// of the arguments, the separator of parallel calls, whether the calls are
// one JSON array, and how a chat template shows it.
export const TOOL_FORMATS = {
  // Qwen2.5, Qwen3, Hermes 2/3: <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>, one per call.
  hermes: { open: '<tool_call>', pre: '\n', post: '\n', close: '</tool_call>', args: 'arguments', sep: '\n', optionalSep: true, detect: /<tool_call>/ },
  // Llama 3.1-3.3 (JSON tool calling): {"name": ..., "parameters": ...}; parallel calls joined by "; " (vLLM's llama3_json).
  llama3: { open: '', pre: '', post: '', close: '', args: 'parameters', sep: '; ', detect: /<\|python_tag\|>|"parameters": dictionary/ },
  // Mistral (v3 tokenizers): [TOOL_CALLS] [{"name": ..., "arguments": ...}, ...]
  mistral: { open: '[TOOL_CALLS]', pre: ' ', optionalPre: true, post: '', close: '', args: 'arguments', list: true, detect: /\[TOOL_CALLS\]/ },
  // Phi-4-mini: functools[{"name": ..., "arguments": ...}, ...] (vLLM's phi4_mini_json).
  phi4: { open: 'functools', pre: '', post: '', close: '', args: 'arguments', list: true, detect: /<\|tool\|>|functools\[/ },
  // gpt-oss (harmony): <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>, one call per answer.
  harmony: { harmony: true, args: 'arguments', detect: /<\|channel\|>/ },
};
// The control tokens of harmony (gpt-oss's o200k_harmony vocabulary).
const HARMONY_TOKENS = ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|constrain|>', '<|call|>'];
const FORMAT_NAMES = Object.keys(TOOL_FORMATS);

const te = new TextEncoder();

/** The chat template text of a transformers.js tokenizer (the default one, or 'tool_use'). */
function chatTemplate(tokenizer) {
  let t = tokenizer?.chat_template ?? tokenizer?._tokenizerConfig?.chat_template;
  if (Array.isArray(t)) t = (t.find((x) => x.name === 'tool_use') ?? t.find((x) => x.name === 'default') ?? t[0])?.template;
  return typeof t === 'string' ? t : null;
}

/** The tool-call format the tokenizer's chat template implies (see TOOL_FORMATS.detect), or a TypeError. */
export function detectToolFormat(tokenizer) {
  const t = chatTemplate(tokenizer);
  const hit = t && FORMAT_NAMES.find((f) => TOOL_FORMATS[f].detect.test(t));
  if (hit) return hit;
  // Without a template: gpt-oss's vocabulary has harmony's control tokens (no other has <|channel|> and <|call|>).
  const added = tokenizer?._tokenizerJSON?.added_tokens;
  if (!t && Array.isArray(added) && ['<|channel|>', '<|call|>', '<|constrain|>'].every((s) => added.some((a) => a.content === s))) return 'harmony';
  throw Object.assign(new TypeError(`grammask: cannot tell the tool-call format from ${t ? 'the tokenizer\'s chat template (it shows none of <tool_call>, <|python_tag|>, [TOOL_CALLS], <|tool|>, <|channel|>)' : 'the tokenizer (it has no chat template)'}; `
    + `pass it: new StructuredOutputProcessor(tokenizer, { type: 'tools', tools, format: '${FORMAT_NAMES.join("' | '")}' }), `
    + 'or describe the model\'s own: format: { call: \'<tool_call>{"name": "{name}", "arguments": {arguments}}</tool_call>\', separator, begin, end } (docs/js-api.md, "A format of your own")'), { kind: 'ResponseFormat' });
}

/** The id of the token whose bytes are exactly `s` (a special one first), or -1. */
export function tokenOf(data, s) {
  const b = te.encode(s);
  let found = -1;
  for (let t = 0; t < data.n; t++) {
    if (data.offsets[t + 1] - data.offsets[t] !== b.length) continue;
    const o = data.offsets[t];
    let k = 0;
    while (k < b.length && data.bytes[o + k] === b[k]) k++;
    if (k < b.length) continue;
    if (isSet(data.special, t)) return t;
    if (found < 0) found = t;
  }
  return found;
}

const rxEscape = (s) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&').replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** A Lark regex for the non-empty texts that do not start with `s`. */
function notStarting(s) {
  const cs = [...s];
  let r = '';
  for (let i = cs.length - 1; i >= 1; i--) r = `(?:[^${rxEscape(cs[i])}][\\s\\S]*${r ? `|${rxEscape(cs[i])}${r}` : ''})?`;
  return `/[^${rxEscape(cs[0])}][\\s\\S]*${cs.length > 1 ? `|${rxEscape(cs[0])}${r}` : ''}/`;
}

/** `$ref`s of a tool's parameters, re-rooted at `#/$defs/<key>`. */
function reroot(schema, key) {
  if (Array.isArray(schema)) return schema.map((x) => reroot(x, key));
  if (schema === null || typeof schema !== 'object') return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    // JSON pointers from the parameters' root (`#`, `#/...`); anchors (`#name`) stay.
    out[k] = k === '$ref' && typeof v === 'string' && (v === '#' || v.startsWith('#/')) ? `#/$defs/${key}${v.slice(1)}` : reroot(v, key);
  }
  return out;
}

function fail(msg) { return Object.assign(new TypeError(`grammask: tools: ${msg}`), { kind: 'ResponseFormat' }); }

/** The tools of a response format, checked: [{ name, parameters }]. */
export function toolList(rf) {
  const tools = rf.tools;
  if (!Array.isArray(tools) || tools.length === 0) throw fail('`tools` must be a non-empty array of { type: \'function\', function: { name, parameters } }');
  const seen = new Set();
  return tools.map((t, i) => {
    const f = t?.type === 'function' ? t.function : t?.function ?? (typeof t?.name === 'string' ? t : undefined);
    if (!f || typeof f.name !== 'string' || !f.name) throw fail(`tools[${i}] is not { type: 'function', function: { name, parameters } }`);
    if (seen.has(f.name)) throw fail(`two tools are named ${JSON.stringify(f.name)}`);
    seen.add(f.name);
    const p = f.parameters ?? { type: 'object', properties: {}, additionalProperties: false };
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw fail(`tools[${i}].function.parameters must be a JSON Schema object`);
    return { name: f.name, parameters: p };
  });
}

/** 'auto' | 'required' | 'none' | a tool name. */
function choiceOf(rf, tools) {
  const c = rf.tool_choice ?? 'auto';
  if (c === 'auto' || c === 'required' || c === 'none') return c;
  const name = c?.type === 'function' ? c.function?.name : undefined;
  if (typeof name !== 'string') throw fail(`tool_choice must be 'auto', 'required', 'none' or { type: 'function', function: { name } }, got ${JSON.stringify(c)}`);
  if (!tools.some((t) => t.name === name)) throw fail(`tool_choice names ${JSON.stringify(name)}, which is not among the tools (${tools.map((t) => t.name).join(', ')})`);
  return { name };
}

/**
 * The Lark grammar of a tools response format for a vocabulary's token data:
 * { grammar, format, choice, tools, parallel, open } (open: the opener's token id, or -1 when it is text).
 */
export function toolsGrammar(rf, data, tokenizer) {
  const tools = toolList(rf);
  const choice = choiceOf(rf, tools);
  const format = rf.format ?? detectToolFormat(tokenizer);
  // A format of the user's own (an object), or one of TOOL_FORMATS (a name).
  const t = format !== null && typeof format === 'object' ? userTemplate(format) : null;
  const f = t ? null : TOOL_FORMATS[format];
  if (!t && !f) throw fail(`unknown format ${JSON.stringify(format)} (known: ${FORMAT_NAMES.join(', ')}; or a format of your own: { call: '...{name}...{arguments}...', separator, begin, end })`);
  const parallel = rf.parallel_tool_calls ?? true;
  if (typeof parallel !== 'boolean') throw fail('parallel_tool_calls must be a boolean');
  const chosen = typeof choice === 'object' ? tools.filter((t) => t.name === choice.name) : tools;
  if (t) return { grammar: templateGrammar(t, chosen, choice, parallel, data, tokenizer), format: t.format, template: t, choice, tools, parallel, open: -1 };
  if (f.harmony) return { grammar: harmonyGrammar(chosen, choice, data), format, choice, tools, parallel, open: -1 };
  // One call: { "name": <const>, <args>: <the tool's parameters> }; the parameters under $defs.
  const $defs = {};
  const calls = chosen.map((t, i) => {
    const key = `tool${i}`;
    const p = { ...reroot(t.parameters, key) };
    delete p.$id;
    delete p.$schema;
    $defs[key] = p;
    return { type: 'object', properties: { name: { const: t.name }, [f.args]: { $ref: `#/$defs/${key}` } }, required: ['name', f.args], additionalProperties: false };
  });
  const call = calls.length === 1 ? calls[0] : { anyOf: calls };
  const schema = f.list
    ? { type: 'array', items: call, minItems: 1, ...(parallel ? {} : { maxItems: 1 }), $defs }
    : { ...call, $defs };
  // A control string: the token (by id) when the vocabulary has one spelled so, else the text.
  const lit = (s) => JSON.stringify(s);
  const tok = (s) => {
    if (!s) return { text: '', id: -1 };
    const id = /^(<[^<>\s]+>|\[[A-Z_]+\])$/.test(s) ? tokenOf(data, s) : -1;
    return { text: id >= 0 ? `<[${id}]>` : lit(s), id };
  };
  const open = tok(f.open), close = tok(f.close);
  const lines = [];
  const body = `${f.pre ? `${lit(f.pre)}${f.optionalPre ? '?' : ''} ` : ''}%json ${JSON.stringify(schema)}${f.post ? ` ${lit(f.post)}` : ''}`;
  const openSym = open.id >= 0 ? open.text : f.open ? 'OPEN' : '';
  if (open.id < 0 && f.open) lines.push(`OPEN.2: ${open.text}`); // before free text that could spell it
  lines.push(`call: ${openSym} ${body} ${close.text}`);
  const sep = f.sep ? `${lit(f.sep)}${f.optionalSep ? '?' : ''} ` : '';
  lines.push(parallel && !f.list ? `calls: call | calls ${sep}call` : 'calls: call');
  const tail = f.optionalSep ? ` ${lit(f.sep)}?` : '';
  lines.push(...startRules(choice, open.id >= 0 ? open.text : null, f.open || '{', `calls${tail}`));
  return { grammar: lines.join('\n') + '\n', format, choice, tools, parallel, open: open.id };
}

/**
 * The start rules of a tools grammar: `calls` (the calls, a Lark expression)
 * or free text, as `choice` says. Free text is anything when the calls open
 * with a token (`openToken`, `<[id]>`: the token itself is never text); else
 * text that does not start with `lead` (the calls' fixed opening text).
 */
function startRules(choice, openToken, lead, calls) {
  if (choice !== 'none' && choice !== 'auto') return [`start: ${calls}`];
  const freeText = openToken ? '/[\\s\\S]+/' : notStarting(lead);
  if (choice === 'none') return ['start: TEXT?', `TEXT: ${freeText}`, ...(openToken ? [`%reject ${openToken}`] : [])];
  return [openToken ? `start: TEXT | TEXT? ${calls}` : `start: TEXT | ${calls}`, `TEXT: ${freeText}`];
}

// ---- a format of the user's own ---------------------------------------------
//
// { call, separator, begin, end }: `call` is one call as the model writes it,
// `{name}` where the tool's name goes and `{arguments}` where its arguments
// go (JSON, exact under the tool's parameters); `separator` between parallel
// calls; `begin` and `end` once, before the first call and after the last.
// Each string is split at the tokenizer's added tokens as the tokenizer
// splits text (leftmost, longest first): those parts are matched as the
// token (by id, never as its spelled-out text), the rest as text.

const TEMPLATE_FIELDS = ['call', 'separator', 'begin', 'end'];
const HOLES = /\{(name|arguments)\}/;
const td = new TextDecoder();

/** A user's format, checked: { format (with its defaults), parts: [text, hole, text, hole, text], separator, begin, end }. */
function userTemplate(format) {
  if (Array.isArray(format)) throw fail('format must be a format name or an object { call, separator, begin, end }, got an array');
  for (const k of Object.keys(format)) {
    if (!TEMPLATE_FIELDS.includes(k)) throw fail(`format has no field ${JSON.stringify(k)} (a format of your own has: ${TEMPLATE_FIELDS.join(', ')})`);
  }
  const ex = '\'<tool_call>{"name": "{name}", "arguments": {arguments}}</tool_call>\'';
  if (format.call === undefined) throw fail(`format.call is missing: one call as the model writes it, with {name} and {arguments}, e.g. ${ex}`);
  for (const k of TEMPLATE_FIELDS) {
    const v = format[k];
    if (v !== undefined && typeof v !== 'string') throw fail(`format.${k} must be a string, got ${JSON.stringify(v)}`);
    if (k !== 'call' && typeof v === 'string' && /\{(name|arguments)\}/.test(v)) throw fail(`format.${k} may not hold {name} or {arguments} (they belong in format.call): ${JSON.stringify(v)}`);
  }
  const parts = format.call.split(HOLES); // text, {name}, text, {arguments}, text
  for (const h of ['name', 'arguments']) {
    const n = parts.filter((x, i) => i % 2 === 1 && x === h).length;
    if (n !== 1) throw fail(`format.call must hold {${h}} exactly once, it holds it ${n} times: ${JSON.stringify(format.call)} (e.g. ${ex})`);
  }
  // The name decides the schema of the arguments, so it comes first (one
  // JSON lexeme cannot stand for several tools' schemas and say which matched).
  if (parts[1] !== 'name') throw fail(`format.call must hold {name} before {arguments}: ${JSON.stringify(format.call)}`);
  const { separator = '', begin = '', end = '' } = format;
  return { format: { call: format.call, separator, begin, end }, parts, separator, begin, end };
}

/** The tokenizer's added tokens (what it splits out of text first) as [{ text, id }], longest first; for a PreparedVocab, its special tokens. */
function addedTokens(data, tokenizer) {
  const out = [];
  const added = tokenizer?._tokenizerJSON?.added_tokens;
  if (Array.isArray(added)) {
    for (const a of added) {
      if (typeof a?.content !== 'string' || !a.content || !Number.isInteger(a.id) || a.id < 0 || a.id >= data.n) continue;
      if (td.decode(data.token(a.id)) === a.content) out.push({ text: a.content, id: a.id });
    }
  } else {
    for (let t = 0; t < data.n; t++) {
      if (isSet(data.special, t) && data.offsets[t + 1] > data.offsets[t]) out.push({ text: td.decode(data.token(t)), id: t });
    }
  }
  return out.sort((a, b) => b.text.length - a.text.length);
}

/** `s` split at the added tokens: [{ text } | { text, id }]. */
function splitAtTokens(s, added) {
  const out = [];
  let run = '';
  for (let i = 0; i < s.length;) {
    const a = added.find((x) => s.startsWith(x.text, i));
    if (!a) { run += s[i++]; continue; }
    if (run) out.push({ text: run });
    run = '';
    out.push(a);
    i += a.text.length;
  }
  if (run) out.push({ text: run });
  return out;
}

/** The Lark grammar of the tools in a user's format. */
function templateGrammar(t, tools, choice, parallel, data, tokenizer) {
  const added = addedTokens(data, tokenizer);
  const [t0, , t1, , t2] = t.parts;
  // What the calls open with: begin, or the call's text before {name} (a token, or text).
  const opening = t.begin || t0;
  const first = opening ? splitAtTokens(opening, added)[0] : null;
  if (!first && choice !== 'required' && typeof choice !== 'object') {
    throw fail(`format.call starts with {name}: under tool_choice '${choice}' an answer in text and a call must be told apart; put fixed text or a token before {name} (or set format.begin)`);
  }
  const token = first?.id !== undefined ? `<[${first.id}]>` : null;
  const lines = [];
  // Opening text is a terminal of its own, ahead of free text that could spell it (as OPEN of the built-in formats).
  const open = first && !token ? first.text : null;
  if (open) lines.push(`OPEN.2: ${JSON.stringify(open)}`);
  const lark = (s, opens) => {
    const head = opens && open && s.startsWith(open) ? ['OPEN'] : [];
    const rest = splitAtTokens(head.length ? s.slice(open.length) : s, added);
    return [...head, ...rest.map((x) => (x.id !== undefined ? `<[${x.id}]>` : JSON.stringify(x.text)))].join(' ');
  };
  // One rule per tool: the call's text with its name filled in (split at the
  // tokens), its arguments as %json of its parameters.
  const calls = tools.map((tool, i) => {
    lines.push(`call${i}: ${[lark(t0 + tool.name + t1, !t.begin), `%json ${JSON.stringify({ ...tool.parameters })}`, lark(t2)].filter(Boolean).join(' ')}`);
    return `call${i}`;
  });
  lines.push(`call: ${calls.join(' | ')}`);
  const sep = lark(t.separator);
  lines.push(parallel ? `calls: call | calls ${sep ? `${sep} ` : ''}call` : 'calls: call');
  const body = [lark(t.begin, true), 'calls', lark(t.end)].filter(Boolean).join(' ');
  lines.push(...startRules(choice, token, first?.text ?? '', body));
  return lines.join('\n') + '\n';
}

/**
 * gpt-oss's harmony format, from the byte after the prompt's
 * `<|start|>assistant`: messages on the analysis channel (reasoning) and
 * commentary preambles, each `<|end|><|start|>assistant`, then the answer:
 * one call, `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>`
 * (the recipient may come before the channel, and `json` without
 * `<|constrain|>`, as gpt-oss's chat template writes past calls), or a final
 * message `<|channel|>final<|message|>...` (then EOS, gpt-oss's `<|return|>`).
 * The control tokens are named by id: never text.
 */
function harmonyGrammar(tools, choice, data) {
  const id = {};
  for (const s of HARMONY_TOKENS) {
    const t = tokenOf(data, s);
    if (t < 0 || !isSet(data.special, t)) throw fail(`the harmony format needs gpt-oss's control tokens; this vocabulary has no special token ${s}`);
    id[s] = `<[${t}]>`;
  }
  const [S, E, M, C, K, CALL] = HARMONY_TOKENS.map((s) => id[s]);
  const lit = (s) => JSON.stringify(s);
  const lines = [
    `message: ${C} "analysis" ${M} TEXT? ${E} ${S} "assistant" | ${C} "commentary" ${M} TEXT? ${E} ${S} "assistant"`,
    `json: " "? ${K} "json" | " json"`,
    `final: ${C} "final" ${M} TEXT?`,
    'TEXT: /[\\s\\S]+/',
  ];
  const calls = tools.map((t, i) => {
    const p = { ...t.parameters };
    lines.push(`call${i}: ${C} ${lit(`commentary to=functions.${t.name}`)} json ${M} %json ${JSON.stringify(p)} ${CALL}`
      + ` | ${lit(` to=functions.${t.name}`)} ${C} "commentary" json ${M} %json ${JSON.stringify(p)} ${CALL}`);
    return `call${i}`;
  });
  const answer = choice === 'none' ? ['final'] : choice === 'auto' ? [...calls, 'final'] : calls;
  lines.unshift(`start: message* answer`, `answer: ${answer.join(' | ')}`);
  return lines.join('\n') + '\n';
}

// ---- parsing ----------------------------------------------------------------

/** The end of the JSON value starting at s[i] (strings and brackets balanced), or -1. */
function jsonEnd(s, i) {
  let depth = 0, inStr = false;
  for (let k = i; k < s.length; k++) {
    const c = s[k];
    if (inStr) {
      if (c === '\\') k++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') { if (--depth === 0) return k + 1; }
  }
  return -1;
}

/** The JSON texts of the calls in `text` (format `format`), in order. */
function callTexts(text, format) {
  const f = TOOL_FORMATS[format];
  const out = [];
  if (f.harmony) {
    // Messages split at <|start|>; a call is one whose header (before
    // <|message|>) names `to=functions.NAME`, its body the JSON.
    for (const msg of text.split('<|start|>')) {
      const at = msg.indexOf('<|message|>');
      if (at < 0) continue;
      const m = /to=functions\.([^\s<]+)/.exec(msg.slice(0, at));
      if (!m) continue;
      const start = msg.indexOf('{', at);
      const end = start < 0 ? -1 : jsonEnd(msg, start);
      if (end < 0) throw new Error(`grammask: parseToolCalls: unterminated call to ${m[1]}`);
      out.push({ name: m[1], arguments: JSON.parse(msg.slice(start, end)) });
    }
    return out;
  }
  const readList = (at) => {
    const end = jsonEnd(text, at);
    if (end < 0) throw new Error(`grammask: parseToolCalls: unterminated call list at offset ${at}`);
    const arr = JSON.parse(text.slice(at, end));
    if (!Array.isArray(arr)) throw new Error('grammask: parseToolCalls: the calls are not a JSON array');
    return arr;
  };
  if (f.list) {
    const i = text.indexOf(f.open);
    if (i < 0) return [];
    const at = text.indexOf('[', i + f.open.length);
    return at < 0 ? [] : readList(at);
  }
  if (f.open) {
    for (let i = text.indexOf(f.open); i >= 0; i = text.indexOf(f.open, i + 1)) {
      const at = text.indexOf('{', i + f.open.length);
      const end = at < 0 ? -1 : jsonEnd(text, at);
      if (end < 0) throw new Error(`grammask: parseToolCalls: unterminated call at offset ${i}`);
      out.push(JSON.parse(text.slice(at, end)));
    }
    return out;
  }
  // llama3: the text is the calls, "; "-joined, or free text.
  let at = text.search(/\S/);
  if (at < 0 || text[at] !== '{') return [];
  for (;;) {
    const end = jsonEnd(text, at);
    if (end < 0) throw new Error(`grammask: parseToolCalls: unterminated call at offset ${at}`);
    out.push(JSON.parse(text.slice(at, end)));
    const m = /^\s*;\s*/.exec(text.slice(end));
    if (!m || text[end + m[0].length] !== '{') return out;
    at = end + m[0].length;
  }
}

/**
 * The calls in `text` in a user's format, [{ name, arguments }] (names not
 * checked yet): from where the calls open (the first `begin`, or the call's
 * text before its first hole), one call after another, `separator` between.
 */
function templateCalls(text, t, names) {
  const t0 = t.parts[0];
  const err = (msg) => new Error(`grammask: parseToolCalls: ${msg}`);
  const opening = t.begin || t0;
  let p = opening ? text.indexOf(opening) : text.search(/\S/);
  if (p < 0) return [];
  p += t.begin.length;
  // Longest names first: a name that is a prefix of another does not cut it.
  const byLength = [...names].sort((a, b) => b.length - a.length);
  const out = [];
  for (;;) {
    const call = {};
    for (let k = 0; k < t.parts.length; k++) {
      const part = t.parts[k];
      if (k % 2 === 0) {
        if (!text.startsWith(part, p)) throw err(`call #${out.length}: expected ${JSON.stringify(part)} at offset ${p}, found ${JSON.stringify(text.slice(p, p + part.length + 8))}`);
        p += part.length;
      } else if (part === 'name') {
        const next = t.parts[k + 1];
        const hit = byLength.find((n) => text.startsWith(n, p) && text.startsWith(next, p + n.length));
        if (hit === undefined) {
          const stop = next ? text.indexOf(next, p) : -1;
          const said = stop >= 0 ? text.slice(p, stop) : /^[^\s{"<]*/.exec(text.slice(p))[0];
          throw err(`call #${out.length} names ${JSON.stringify(said)}, which is not a tool (${names.join(', ')})`);
        }
        call.name = hit;
        p += hit.length;
      } else {
        const end = text[p] === '{' || text[p] === '[' ? jsonEnd(text, p) : -1;
        if (end < 0) throw err(`call #${out.length}: no JSON arguments (or unterminated ones) at offset ${p}`);
        try { call.arguments = JSON.parse(text.slice(p, end)); } catch (e) { throw err(`call #${out.length}: its arguments are not JSON (${e.message})`); }
        p = end;
      }
    }
    out.push(call);
    // Another call follows the separator, or the calls end.
    const q = p + t.separator.length;
    const more = text.startsWith(t.separator, p) && (t0 ? text.startsWith(t0, q) : q < text.length && text.slice(q).trim() !== '' && !(t.end && text.startsWith(t.end, q)));
    if (!more) break;
    p = q;
  }
  if (t.end && !text.startsWith(t.end, p)) throw err(`the calls do not end with ${JSON.stringify(t.end)} at offset ${p}`);
  return out;
}

/** Does `json` (text) match the store's language, fed as single-byte tokens? */
function matches(store, data, json) {
  const m = new Matcher(store);
  try {
    for (const b of te.encode(json)) {
      const t = data.byteTokens[b];
      if (t < 0 || !m.isAllowed(t)) return false;
      m.commitToken(t);
    }
    return m.isAccepting();
  } finally { m.free(); }
}

/**
 * The calls in a model's output: [{ name, arguments }], each name one of the
 * tools and its arguments valid under the tool's parameters (checked with
 * grammask, compact JSON); [] for a text answer. Throws on a call that is
 * not valid.
 */
export function parseCalls(text, spec, vocab, data, compileCached) {
  if (typeof text !== 'string') throw new TypeError('grammask: parseToolCalls(text) takes the generated text (a string)');
  const f = spec.template ? { args: 'arguments' } : TOOL_FORMATS[spec.format];
  const calls = spec.template ? templateCalls(text, spec.template, spec.tools.map((x) => x.name)) : callTexts(text, spec.format);
  return calls.map((c, i) => {
    const t = spec.tools.find((x) => x.name === c?.name);
    if (!t) throw new Error(`grammask: parseToolCalls: call #${i} names ${JSON.stringify(c?.name)}, which is not a tool (${spec.tools.map((x) => x.name).join(', ')})`);
    const args = c[f.args] ?? c.arguments ?? c.parameters;
    const store = compileCached(vocab, { type: 'json_schema', json_schema: t.parameters }, { whitespace: 'compact' }, true);
    if (!matches(store, data, JSON.stringify(args))) {
      throw new Error(`grammask: parseToolCalls: the arguments of call #${i} (${t.name}) do not match its parameters: ${JSON.stringify(args)}`);
    }
    return { name: t.name, arguments: args };
  });
}
