// StructuredOutputProcessor: a response format compiled (and cached) for a
// transformers.js tokenizer, as a LogitsProcessorList holding one
// GrammarLogitsProcessor.
import { GrammarLogitsProcessor } from './processor.js';
import { Matcher, PreparedVocab, compile } from './grammask.js';
import { compileCached, tokenData, vocabFor } from './caches.js';
import { parseCalls, toolsGrammar } from './tools.js';
import { structuralTagGrammar } from './structural-tag.js';

// The processor's default JSON whitespace: the layout the model prefers
// (indented or not), in runs of at most 16 characters so that it cannot loop
// on whitespace. Chosen from the real-model figures in docs/measurements.md
// ("Whitespace policy"): compact-or-spaced ('default') refused the indented
// JSON SmolLM2 ranks first; 'flexible' with runs of 4 cut its 4-space indent.
const DEFAULT_WHITESPACE = { whitespace: 'flexible', maxWhitespace: 16 };
const JSON_FORMATS = ['json_schema', 'json_object', 'json'];

// Warm-up: a schema and an instance of it, walked once per vocabulary. A
// wasm engine compiles and optimizes each function when it first runs, so
// the first request's first visits (string bodies, numbers, arrays, keys)
// paid several ms each in the middle of generation; this moves that to
// `warmup()` (or the first construction). It also fills the vocabulary's
// cache of lexeme-loop walks for the common bodies.
const WARM_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 40 }, note: { type: 'string' }, n: { type: 'integer', minimum: 0 }, x: { type: 'number' },
    ok: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' }, maxItems: 4 }, o: { type: 'object', properties: { k: { enum: ['a', 'b'] } } },
  },
  required: ['name', 'n'],
};
const WARM_TEXT = '{\n  "name": "Ada Lovelace",\n  "note": "first \\"program\\", 1843",\n  "n": 42,\n  "x": -1.5e3,\n  "ok": true,\n  "tags": ["a", "b c"],\n  "o": {"k": "a"}\n}';
const warmed = new WeakMap(); // vocabulary -> the walk reached the end

// Commit WARM_TEXT through the masks, each step the longest allowed token
// that spells the text on; true if it reached the end. Failures are ignored:
// it only saves time.
function warmCode(vocab, data) {
  let store, m;
  try {
    store = compile(vocab, { type: 'json_schema', json_schema: WARM_SCHEMA }, DEFAULT_WHITESPACE);
    m = new Matcher(store);
    const mask = new Uint32Array(m.maskWords);
    const text = new TextEncoder().encode(WARM_TEXT);
    const { bytes, offsets, n } = data;
    for (let at = 0; at < text.length;) {
      m.fillMask(mask);
      let best = -1, len = 0;
      for (let t = 0; t < n; t++) {
        const s = offsets[t], l = offsets[t + 1] - s;
        if (l <= len || at + l > text.length || !((mask[t >>> 5] >>> (t & 31)) & 1)) continue;
        let k = 0;
        while (k < l && bytes[s + k] === text[at + k]) k++;
        if (k === l) { best = t; len = l; }
      }
      if (best < 0) break;
      m.commitToken(best);
      at += len;
    }
    m.fillMask(mask);
    return m.isAccepting();
  } catch { return false; } finally {
    m?.free();
    store?.free();
  }
}

// The end of a reasoning region and its separator, as Qwen3 and DeepSeek-R1 write it.
const THINK_CLOSE = '</think>\n\n';

const SIGNATURE = 'new StructuredOutputProcessor(tokenizer, responseFormat, options?)';

/** A short description of a wrong argument. */
function describe(x) {
  if (x === null || typeof x !== 'object') return typeof x === 'string' ? 'a string' : String(x);
  if (typeof x.type === 'string') return `a response format ({type: ${JSON.stringify(x.type)}})`;
  const keys = Object.keys(x);
  return keys.length ? `an object with ${keys.slice(0, 4).join(', ')}${keys.length > 4 ? ', ...' : ''}` : 'an empty object';
}

/** The arguments in the right places, or a TypeError that shows the signature. */
function checkArguments(tokenizer, responseFormat, options) {
  const isTokenizer = tokenizer instanceof PreparedVocab
    || (tokenizer !== null && (typeof tokenizer === 'object' || typeof tokenizer === 'function') && tokenizer._tokenizerJSON != null);
  if (!isTokenizer) {
    const asOption = [responseFormat, options].some((o) => o !== null && typeof o === 'object' && 'tokenizer' in o);
    throw new TypeError(`grammask: ${SIGNATURE} takes a transformers.js tokenizer or a PreparedVocab first, `
      + `got ${describe(tokenizer)}${asOption ? '; the tokenizer is not an option' : ''}`);
  }
  if (options !== null && typeof options === 'object' && 'tokenizer' in options) {
    throw new TypeError(`grammask: ${SIGNATURE}: the tokenizer is the first argument, not an option`);
  }
}

/**
 * Constrain transformers.js generation to a response format:
 * `new StructuredOutputProcessor(tokenizer, responseFormat, options?)`, passed
 * as `logits_processor: processor` (or inside a list). A LogitsProcessorList
 * holding one GrammarLogitsProcessor.
 */
export class StructuredOutputProcessor {
  /** Prepare (and cache) the tokenizer's vocabulary now, e.g. right after loading the model. */
  static warmup(tokenizer) {
    const v = vocabFor(tokenizer);
    v.prepare();
    const d = tokenData(v);
    if (!warmed.has(v)) warmed.set(v, warmCode(v, d));
    return warmed.get(v);
  }

  constructor(tokenizer, responseFormat, options = {}) {
    const closure = function (inputIds, logits) { return closure._call(inputIds, logits); };
    Object.setPrototypeOf(closure, new.target.prototype);
    checkArguments(tokenizer, responseFormat, options);
    const o = options ?? {};
    const { whitespace, maxWhitespace, lenient, refs, cache = true, thinking = false, maxThinkingTokens, ...rest } = o;
    const vocab = vocabFor(tokenizer);
    StructuredOutputProcessor.warmup(vocab); // once per vocabulary
    const compileOptions = {};
    if (whitespace !== undefined) compileOptions.whitespace = whitespace;
    else if (JSON_FORMATS.includes(responseFormat?.type)) Object.assign(compileOptions, DEFAULT_WHITESPACE);
    if (maxWhitespace !== undefined) compileOptions.maxWhitespace = maxWhitespace;
    if (lenient !== undefined) compileOptions.lenient = lenient;
    if (refs !== undefined) compileOptions.refs = refs;
    // Tools: a Lark grammar in the model's tool-call format (tools.js).
    let tools = null;
    let format = responseFormat;
    if (responseFormat?.type === 'tools') {
      tools = toolsGrammar(responseFormat, tokenData(vocab), tokenizer);
      format = { type: 'lark', grammar: tools.grammar };
      // A format of the user's own: the grammar says what may follow a
      // complete call (its separator and the next call, or nothing); a
      // whitespace separator ("\n") must not read as trailing whitespace.
      if (tools.template && rest.stopWhenComplete === undefined) rest.stopWhenComplete = false;
      delete compileOptions.whitespace;
      delete compileOptions.maxWhitespace;
    } else if (responseFormat?.type === 'structural_tag') {
      // Structural tags (xgrammar / web-llm): a Lark grammar (structural-tag.js),
      // compiled strict: a conflict is an error, never settled silently.
      closure.structuralTag = structuralTagGrammar(responseFormat, tokenData(vocab), vocab.eosTokenIds);
      format = { type: 'lark', grammar: closure.structuralTag.grammar };
      delete compileOptions.whitespace;
      delete compileOptions.maxWhitespace;
      compileOptions.strict = true;
    }
    // compile() checked a {type: 'store'} store against the vocabulary; the
    // others were compiled for it.
    const store = compileCached(vocab, format, compileOptions, cache);
    // A reasoning region first: free text up to `</think>` and its separator
    // (the trigger), at most maxThinkingTokens; a prompt that closed it
    // already (Qwen3's enable_thinking: false) starts constrained.
    if (thinking !== false) {
      if (thinking !== true && thinking !== 'auto') throw new TypeError("grammask: thinking must be 'auto', true or false");
      if (rest.trigger !== undefined) throw new TypeError('grammask: thinking and trigger cannot be combined (thinking sets the trigger)');
      const template = tokenizer?.chat_template ?? tokenizer?._tokenizerConfig?.chat_template;
      const shows = JSON.stringify(template ?? '').includes('<think>');
      if (thinking === true || shows) {
        Object.assign(rest, { trigger: THINK_CLOSE, triggerInPrompt: true, freeTokensWarning: Infinity });
        if (maxThinkingTokens !== undefined) rest.maxFreeTokens = maxThinkingTokens;
      }
    }
    const inner = new GrammarLogitsProcessor(store, rest);
    closure.processors = [inner];
    closure.store = store;
    closure.vocab = vocab;
    closure.tools = tools;
    return closure;
  }

  /**
   * The tool calls in the generated text (a `{type: 'tools'}` processor):
   * [{ name, arguments }], validated against the tools; [] for a text answer.
   */
  parseToolCalls(text) {
    if (!this.tools) throw new TypeError("grammask: parseToolCalls needs a processor made for { type: 'tools', tools }");
    return parseCalls(text, this.tools, this.vocab, tokenData(this.vocab), compileCached);
  }

  /** The grammask processor (GrammarLogitsProcessor) inside. */
  get processor() { return this.processors[0]; }
  get matchers() { return this.processor.matchers; }
  get phases() { return this.processor.phases; }
  get prefetchTimeMs() { return this.processor.prefetchTimeMs; }
  /** LogitsProcessorList API. */
  push(p) { this.processors.push(p); }
  extend(ps) { this.processors.push(...ps); }
  [Symbol.iterator]() { return this.processors.values(); }
  _call(inputIds, logits) {
    let out = logits;
    for (const p of this.processors) out = p(inputIds, out);
    return out;
  }
  /** Forget the rows (the next call starts a new generation). */
  reset() { this.processor.reset(); }
  /** Free the row matchers (the store stays cached for the next processor). */
  free() { this.processor.free(); }
}

/**
 * The Lark grammar a `{ type: 'structural_tag', ... }` response format
 * becomes for a tokenizer (or PreparedVocab): for `compile(vocab, { type:
 * 'lark', grammar }, { strict: true })` outside transformers.js.
 */
export function structuralTagToLark(tokenizer, responseFormat) {
  const vocab = vocabFor(tokenizer);
  return structuralTagGrammar(responseFormat, tokenData(vocab), vocab.eosTokenIds).grammar;
}
