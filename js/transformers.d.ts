// grammask/transformers: logits processors for @huggingface/transformers 4.x.
import type { MaskStore, Matcher, PreparedVocab, ResponseFormat, ConstraintOptions, TransformersTokenizer } from './index.js';

/**
 * Set every logit whose bit is clear in `mask` to -Infinity, in place (ids
 * past the mask are masked too). A Uint16Array is taken as float16 bits
 * (-Infinity = 0xfc00). Returns the number of allowed ids.
 */
export function applyMask(logits: Float32Array | Float64Array | Uint16Array, mask: Uint32Array): number;

/** The logits as transformers.js passes them: a float32 Tensor [batch, vocab] (structurally). */
export interface LogitsTensor {
  dims: readonly number[];
  data: unknown;
}

/** A processor in a LogitsProcessorList: called with the ids so far and the logits. */
export type LogitsProcessorFn = (inputIds: bigint[][], logits: any) => any;

export interface StepInfo {
  /** 0 on the first call of a generation, then 1, 2, ... */
  step: number;
  row: number;
  /** Number of allowed ids in this row's logits. */
  allowed: number;
  /** Time to compute and apply the mask (ms). */
  maskMs: number;
  /** Time to commit the tokens of this step (ms). */
  commitMs: number;
  /** Exactly one id was allowed. */
  forced: boolean;
  /** The id committed just before this mask (undefined on step 0). */
  token: number | undefined;
  /** 'free' (before the trigger), 'constrained', or 'after' (past the closing). */
  phase: 'free' | 'constrained' | 'after';
  /** With `trigger`: the tokens this row wrote before the trigger (so far, while `phase` is 'free'). */
  freeTokens: number;
  /** Matcher calls made by the trigger/closing rules for this mask. */
  probes: number;
  /** With `refusedTopK`: the highest logits the mask refused, best first. */
  refused?: { id: number; logit: number }[];
}

export interface GrammarLogitsProcessorOptions {
  /** Extra ids that count as EOS; the store's EOS ids always do. */
  eosTokenIds?: number | Iterable<number>;
  /** The model's generation config (object or JSON text): its `eos_token_id` (int or list) count as EOS. */
  generationConfig?: object | string;
  /** The model (a transformers.js PreTrainedModel): `model.generation_config.eos_token_id` count as EOS. */
  model?: { generation_config?: { eos_token_id?: number | number[] | null } | null };
  /**
   * The model's tokenizer (transformers.js) or its PreparedVocab: the store
   * must have been built for it (same token bytes and flags), else the
   * constructor throws a GrammaskError of kind "BlobTokenizer".
   */
  tokenizer?: TransformersTokenizer | PreparedVocab;
  /**
   * The logits may be wider than the store's vocabulary by at most this many
   * ids (model padding; default 1024). Narrower or wider logits throw: the
   * store was built for another tokenizer.
   */
  maxLogitsPadding?: number;
  /**
   * Once the output is complete and nothing but whitespace could follow (a
   * JSON value after its closing brace), allow only EOS (default true). With
   * `maxTrailingWhitespace`: while the output is complete, at most that many
   * whitespace-only tokens in a row (default 4), then only EOS.
   */
  stopWhenComplete?: boolean;
  maxTrailingWhitespace?: number;
  /**
   * Chat-shaped output: generate freely until the text contains `trigger`
   * (e.g. "```python\n"); the constraint applies from the byte after it.
   */
  trigger?: string;
  /**
   * With or without `trigger`: the constrained part ends where this string
   * (e.g. "\n```") follows a complete output; the text after it is free
   * (EOS allowed). Without a closing the constrained part ends with EOS.
   */
  closing?: string;
  /** With `trigger`: a row whose prompt already ends with the trigger starts constrained (default false). */
  triggerInPrompt?: boolean;
  /** With `trigger`: EOS is refused until the trigger appeared (default true). */
  triggerRequired?: boolean;
  /** With `trigger`: after this many free tokens, only tokens that continue the trigger (default Infinity). */
  maxFreeTokens?: number;
  /**
   * With `trigger`: a row that has written this many tokens (or
   * `maxFreeTokens`, when smaller) without the trigger is reported once per
   * processor with `console.warn`, as the constraint does not apply yet
   * (default 256; Infinity: never). `onStep` reports `phase` and `freeTokens`.
   */
  freeTokensWarning?: number;
  /** Rollback depth of each row's Matcher (default 8; 256 with trigger/closing, whose checks roll back a token's bytes). */
  maxRollback?: number;
  /** With > 0, `onStep` reports the top refused ids (costs a scan of the logits). */
  refusedTopK?: number;
  onStep?: (info: StepInfo) => void;
  /**
   * Idle-time budget per step in ms (default 4; 0: off). A timer spends up to
   * this much of the model's forward pass making the next masks ready: the
   * initial mask (before the first step), then after each step the mask after
   * each constrained row's likeliest token (committed and rolled back: the
   * matchers are unchanged), then `Matcher.prefetch` with several rows; it
   * works only after a step that showed the forward pass leaves the thread
   * free (docs/js-api.md).
   */
  prefetchMs?: number;
  /** The Matcher class to use when the store comes from another module instance (e.g. 'grammask/web'). */
  Matcher?: typeof Matcher;
}

/**
 * A logits processor for a MaskStore. Pass it as `logits_processor: [processor]`
 * to `model.generate()` or a `text-generation` pipeline call (TypeScript:
 * transformers.js declares `logits_processor` a LogitsProcessorList, so
 * `push` it into a `new LogitsProcessorList()`, or use StructuredOutputProcessor). Every call
 * commits the tokens appended to each row since the previous call (the first
 * call of a generation records the prompt) and masks the logits; a token the
 * constraint refuses throws. One Matcher per batch row; rows that ended allow
 * only EOS ids. Use a new processor per `generate` call (or `reset()`).
 */
export class GrammarLogitsProcessor {
  constructor(store: MaskStore, options?: GrammarLogitsProcessorOptions);
  /** Masks `logits` (a Tensor [batch, vocab]) in place and returns it. */
  _call(inputIds: bigint[][], logits: LogitsTensor): any;
  readonly store: MaskStore;
  /** The current generation's row matchers. */
  readonly matchers: Matcher[];
  /** Per row: 'free', 'constrained' or 'after'. */
  readonly phases: ('free' | 'constrained' | 'after')[];
  /** Milliseconds spent in the idle-time hook so far, its warm-up included (see `prefetchMs`). */
  readonly prefetchTimeMs: number;
  /** Forget the rows (and free their matchers); the next call starts a new generation. */
  reset(): void;
  free(): void;
}

/** A tool as in the OpenAI API and transformers.js `apply_chat_template({ tools })`. */
export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description?: string;
    /** A JSON Schema (an object schema); absent: no arguments (`{}`). */
    parameters?: object;
  };
}

/** The tool-call formats (docs/js-api.md, "Tools"). */
export type ToolFormat = 'hermes' | 'llama3' | 'mistral' | 'phi4' | 'harmony';

/**
 * A tool-call format of your own (docs/js-api.md, "A format of your own"):
 * `call` is one call as the model writes it, `{name}` where the tool's name
 * goes and, after it, `{arguments}` where its arguments go (JSON, exact under
 * the tool's `parameters`). Each string is split at the tokenizer's added
 * tokens (matched as those tokens, never as their spelled-out text); the rest
 * is text, exactly.
 */
export interface ToolCallTemplate {
  /** One call, e.g. `'<function={name}>{arguments}</function>'` or `'<tool_call>{"name": "{name}", "arguments": {arguments}}</tool_call>'`. */
  call: string;
  /** Between parallel calls (default ''). */
  separator?: string;
  /** Once, before the first call (default ''), e.g. `'[TOOL_CALLS] ['`. */
  begin?: string;
  /** Once, after the last call (default ''), e.g. `']'`. */
  end?: string;
}

/**
 * Tool calls in the model's own format. Each call's arguments are exact
 * under its tool's `parameters`; after the last call only EOS.
 */
export interface ToolsResponseFormat {
  type: 'tools';
  tools: ToolDefinition[];
  /**
   * 'auto' (default: text, or calls), 'required' (one or more calls and
   * nothing else), 'none' (text only; the call opener is refused), or one
   * tool by name.
   */
  tool_choice?: 'auto' | 'required' | 'none' | { type: 'function'; function: { name: string } };
  /** Several calls in one answer (default true). */
  parallel_tool_calls?: boolean;
  /** A format name, or a format of your own; default: the one the tokenizer's chat template shows (a TypeError when it shows none). */
  format?: ToolFormat | ToolCallTemplate;
}

/**
 * One format of a structural tag (xgrammar's structural-tag JSON; docs/js-api.md,
 * "Structural tags"). Supported: const_string, json_schema (style 'json', or
 * 'qwen_xml' for the schemas it reproduces exactly), qwen_xml_parameter,
 * regex, any_text (excludes), sequence, or, optional, plus, star, repeat, tag,
 * token, triggered_tags, tags_with_separator, dispatch, any_tokens
 * (exclude_tokens), token_triggered_tags, token_dispatch. Refused by name:
 * grammar, exclude_token, the other styles, any_order, max_tokens,
 * max_chars, max_whitespace_cnt.
 */
export type StructuralTagFormat =
  | { type: 'const_string'; value: string }
  | { type: 'json_schema'; json_schema: object | true; style?: 'json' | 'qwen_xml' }
  | { type: 'qwen_xml_parameter'; json_schema: object }
  | { type: 'regex'; pattern: string }
  | { type: 'any_text'; excludes?: string[] }
  | { type: 'sequence' | 'or'; elements: StructuralTagFormat[] }
  | { type: 'optional' | 'plus' | 'star'; content: StructuralTagFormat }
  | { type: 'repeat'; min: number; max: number; content: StructuralTagFormat }
  | StructuralTagTag
  | { type: 'token'; token: number | string }
  | { type: 'triggered_tags'; triggers: string[]; tags: StructuralTagTag[]; at_least_one?: boolean; stop_after_first?: boolean; excludes?: string[] }
  | { type: 'tags_with_separator'; tags: StructuralTagTag[]; separator: string; at_least_one?: boolean; stop_after_first?: boolean }
  | { type: 'dispatch'; rules: [string, StructuralTagFormat][]; loop?: boolean; excludes?: string[] }
  | { type: 'any_tokens'; exclude_tokens?: (number | string)[] }
  | { type: 'token_triggered_tags'; trigger_tokens: (number | string)[]; tags: StructuralTagTag[]; exclude_tokens?: (number | string)[]; at_least_one?: boolean; stop_after_first?: boolean }
  | { type: 'token_dispatch'; rules: [number | string, StructuralTagFormat][]; loop?: boolean; exclude_tokens?: (number | string)[] };

/** `begin content end`; a begin or end is text, or a token (`{ type: 'token', token }`). */
export interface StructuralTagTag {
  type?: 'tag';
  begin: string | { type: 'token'; token: number | string };
  content: StructuralTagFormat;
  end: string | string[] | { type: 'token'; token: number | string };
}

/**
 * A structural tag, in the shapes xgrammar and web-llm take: `{ type:
 * 'structural_tag', format }` (xgrammar), `{ type: 'structural_tag',
 * structural_tag }` (web-llm's ResponseFormat: an object with `format`, a
 * bare format, or its JSON text), or the older `{ type: 'structural_tag',
 * structures: [{ begin, schema, end }], triggers }`.
 */
export type StructuralTagResponseFormat =
  | { type: 'structural_tag'; format: StructuralTagFormat }
  | { type: 'structural_tag'; structural_tag: { type?: 'structural_tag'; format: StructuralTagFormat } | StructuralTagFormat | string }
  | { type: 'structural_tag'; structures: { begin: string; schema: object | string; end: string }[]; triggers: string[] };

/**
 * The Lark grammar a structural tag becomes for a tokenizer (or
 * PreparedVocab), for `compile(vocab, { type: 'lark', grammar }, { strict: true })`.
 */
export function structuralTagToLark(tokenizer: TransformersTokenizer | PreparedVocab, responseFormat: StructuralTagResponseFormat): string;

/** One call read back by `parseToolCalls`. */
export interface ToolCall {
  name: string;
  arguments: any;
}

export interface StructuredOutputOptions
  extends ConstraintOptions, Omit<GrammarLogitsProcessorOptions, 'tokenizer' | 'Matcher'> {
  /**
   * JSON formats: the whitespace policy, as `compile`'s, but the processor's
   * default is 'flexible' with `maxWhitespace` 16: the model writes the
   * layout it prefers (indented or not), in runs of at most 16 characters,
   * so that it cannot loop on whitespace ('default': compact or spaced only).
   */
  whitespace?: ConstraintOptions['whitespace'];
  maxWhitespace?: number;
  /** Reuse a store compiled earlier for the same tokenizer, format and options (default true). */
  cache?: boolean;
  /**
   * A reasoning region before the constrained output (default false): the
   * model writes freely until `</think>\n\n`, and the constraint applies from
   * the byte after it; a row whose prompt ends with it (Qwen3's
   * `enable_thinking: false`) starts constrained. 'auto': only when the chat
   * template shows `<think>`. Sets `trigger` (the two cannot be combined).
   */
  thinking?: 'auto' | boolean;
  /** With `thinking`: after this many free tokens, only tokens that close the region (default Infinity). */
  maxThinkingTokens?: number;
}

/**
 * `new StructuredOutputProcessor(tokenizer, responseFormat, options?)`: the
 * name and arguments of @huggingface/transformers-structured-output, so that
 * switching is a change of the import. `tokenizer` is the transformers.js
 * tokenizer (its vocabulary is read once and cached) or a PreparedVocab;
 * `responseFormat` as in `compile` (json_schema, json_object, json, regex,
 * lark, gbnf, ebnf, store), tools (`ToolsResponseFormat`) or a structural
 * tag (`StructuralTagResponseFormat`). A LogitsProcessorList with one processor: pass it as
 * `logits_processor: processor`. Batches of any size (one matcher per row).
 */
export class StructuredOutputProcessor {
  /**
   * Read and cache the tokenizer's vocabulary now, and walk a small schema's
   * instance through the masks once, so that the wasm code and the common
   * string and number walks are ready before the first request (the first
   * constructor otherwise pays for it). Returns true when that walk reached
   * the instance's end (once per vocabulary).
   */
  static warmup(tokenizer: TransformersTokenizer | PreparedVocab): boolean;
  constructor(tokenizer: TransformersTokenizer | PreparedVocab, responseFormat: ResponseFormat | ToolsResponseFormat | StructuralTagResponseFormat, options?: StructuredOutputOptions);
  /**
   * A `{ type: 'tools' }` processor: the calls in the generated text (decoded
   * with the control tokens, e.g. `skip_special_tokens: false`), each
   * validated against its tool ([] for a text answer); throws on an invalid one.
   */
  parseToolCalls(text: string): ToolCall[];
  /** A `{ type: 'tools' }` processor: its format, tool choice and grammar (null otherwise). */
  readonly tools: { format: ToolFormat | Required<ToolCallTemplate>; grammar: string; parallel: boolean; choice: 'auto' | 'required' | 'none' | { name: string } } | null;
  /** A `{ type: 'structural_tag' }` processor: the Lark grammar it compiled (strict) and the format read (undefined otherwise). */
  readonly structuralTag?: { grammar: string; format: StructuralTagFormat };
  /** Runs the processors in order on `logits` (a Tensor [batch, vocab]), in place; returns it. */
  _call(inputIds: bigint[][], logits: LogitsTensor): any;
  readonly processors: GrammarLogitsProcessor[];
  readonly processor: GrammarLogitsProcessor;
  readonly store: MaskStore;
  readonly vocab: PreparedVocab;
  readonly matchers: Matcher[];
  readonly phases: ('free' | 'constrained' | 'after')[];
  /** Milliseconds spent in the idle-time hook so far, its warm-up included (see `prefetchMs`). */
  readonly prefetchTimeMs: number;
  push(p: LogitsProcessorFn): void;
  extend(ps: Iterable<LogitsProcessorFn>): void;
  /** The processors (an array iterator, as transformers.js' LogitsProcessorList). */
  [Symbol.iterator](): ReturnType<GrammarLogitsProcessor[]['values']>;
  reset(): void;
  free(): void;
}

// The instances are functions (transformers.js calls processors as
// functions): a call signature, merged into the classes.
export interface GrammarLogitsProcessor { (inputIds: bigint[][], logits: LogitsTensor): any }
export interface StructuredOutputProcessor { (inputIds: bigint[][], logits: LogitsTensor): any }
