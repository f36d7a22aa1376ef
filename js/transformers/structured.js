// StructuredOutputProcessor: a response format compiled (and cached) for a
// transformers.js tokenizer, as a LogitsProcessorList holding one
// GrammarLogitsProcessor.
import { GrammarLogitsProcessor } from './processor.js';
import { compileCached, tokenData, vocabFor } from './caches.js';

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
    tokenData(v);
  }

  constructor(tokenizer, responseFormat, options = {}) {
    const closure = function (inputIds, logits) { return closure._call(inputIds, logits); };
    Object.setPrototypeOf(closure, new.target.prototype);
    const o = options ?? {};
    const { whitespace, maxWhitespace, lenient, cache = true, ...rest } = o;
    const vocab = vocabFor(tokenizer);
    const compileOptions = {};
    if (whitespace !== undefined) compileOptions.whitespace = whitespace;
    if (maxWhitespace !== undefined) compileOptions.maxWhitespace = maxWhitespace;
    if (lenient !== undefined) compileOptions.lenient = lenient;
    // compile() checked a {type: 'store'} store against the vocabulary; the
    // others were compiled for it.
    const store = compileCached(vocab, responseFormat, compileOptions, cache);
    if ('tokenizer' in rest) throw new TypeError('grammask: the tokenizer is the first argument of StructuredOutputProcessor, not an option');
    const inner = new GrammarLogitsProcessor(store, rest);
    closure.processors = [inner];
    closure.store = store;
    closure.vocab = vocab;
    return closure;
  }

  /** The grammask processor (GrammarLogitsProcessor) inside. */
  get processor() { return this.processors[0]; }
  get matchers() { return this.processor.matchers; }
  get phases() { return this.processor.phases; }
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
