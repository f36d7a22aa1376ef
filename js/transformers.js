// grammask × transformers.js (`@huggingface/transformers` 4.x): logits
// processors that constrain `generate()` / `pipeline(...)`.
//
//   import { StructuredOutputProcessor } from 'grammask/transformers';
//   const processor = new StructuredOutputProcessor(tokenizer, { type: 'json_schema', json_schema: schema });
//   await model.generate({ ...inputs, max_new_tokens: 256, logits_processor: processor });
//
// `StructuredOutputProcessor(tokenizer, responseFormat, options?)` has the
// name and argument shape of @huggingface/transformers-structured-output: it
// reads the vocabulary from the transformers.js tokenizer (cached per
// tokenizer), compiles the response format (cached per vocabulary and
// format) and behaves as a `LogitsProcessorList` holding one processor.
// `GrammarLogitsProcessor(store, options?)` is the same engine for a
// MaskStore (e.g. a blob compiled offline).
//
// Semantics of one call `(input_ids, logits)` (transformers.js calls it once
// per generation step with every row's ids so far and the next-token logits,
// a float32 Tensor [batch, width]):
//  - first call (or a new generation, see `_isContinuation`): every row's
//    length is recorded as its prompt length; nothing is committed (the
//    constraint applies to the generated text only);
//  - later calls: the tokens appended to each row since the previous call are
//    committed to that row's state; a token the constraint refuses throws (it
//    means something after this processor changed the choice, or the store
//    was built for another tokenizer: the constraint is never silently dropped);
//  - then each row's logits outside its mask become -Infinity.
//  - EOS: the store's EOS ids are allowed exactly when the text is complete;
//    `eosTokenIds` / `generationConfig` / `model` add ids that count as EOS
//    too. Once a row committed an EOS, only EOS ids are allowed for it (rows
//    that finished early in a batch keep producing EOS until the batch stops).
//    An extra EOS id that the grammar names as a token (gpt-oss's <|call|>)
//    is committed as that token where the grammar takes it.
//  - Stopping as soon as the output is complete (`stopWhenComplete`, default
//    true): once the text is complete and nothing but whitespace could follow
//    (a JSON value after its last `}`), only EOS is allowed; and while it is
//    complete at most `maxTrailingWhitespace` (default 4) whitespace-only
//    tokens may follow each other before only EOS is allowed.
//  - Chat-shaped output (`trigger`, `closing`): the model writes freely until
//    its text contains `trigger` (e.g. "```python\n"), then the constraint
//    applies from the byte after it, and (with `closing`, e.g. "\n```") the
//    constrained part ends where the closing string follows a complete
//    output; the text after it is free again. Masks stay exact: a token that
//    completes the trigger is allowed only if its rest starts a valid output;
//    a token that completes the output and begins the closing is allowed.
//    A trigger still absent after `freeTokensWarning` (256) free tokens is
//    reported once (console.warn); `maxFreeTokens` forces it.
//
// The modules (internal; this file is the public grammask/transformers):
//   transformers/processor.js   GrammarLogitsProcessor (rows, commits, masks)
//   transformers/structured.js  StructuredOutputProcessor
//   transformers/tools.js       { type: 'tools' }: tool-call grammars per format, parseToolCalls
//   transformers/structural-tag.js  { type: 'structural_tag' }: xgrammar's structural tags as Lark
//   transformers/trigger.js     chat-shaped output: KMP, phases, probing
//   transformers/token-data.js  per-vocabulary token tables
//   transformers/caches.js      vocabularies, stores and token data kept between processors
//   transformers/logits.js      applyMask (masks applied to logits)
//   transformers/grammask.js    the one import of the package itself ('grammask')
//   mask-bits.js                the mask bit layout (shared with grammask/webgpu's users)
export { applyMask } from './transformers/logits.js';
export { GrammarLogitsProcessor } from './transformers/processor.js';
export { StructuredOutputProcessor, structuralTagToLark } from './transformers/structured.js';
