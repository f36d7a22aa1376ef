// grammask/transformers: a logits processor for @huggingface/transformers 4.x.
import type { MaskStore, Matcher } from './index.js';

/**
 * Set every logit whose bit is clear in `mask` to -Infinity, in place (ids
 * past the mask are masked too). A Uint16Array is taken as float16 bits
 * (-Infinity = 0xfc00). Returns the number of allowed ids.
 */
export function applyMask(logits: Float32Array | Float64Array | Uint16Array, mask: Uint32Array): number;

export interface StepInfo {
  /** 0 on the first call of a generation, then 1, 2, ... */
  step: number;
  row: number;
  /** Number of allowed ids in this row's logits. */
  allowed: number;
  /** Time to compute and apply the mask (ms). */
  maskMs: number;
  /** Exactly one id was allowed. */
  forced: boolean;
  /** The id committed just before this mask (undefined on step 0). */
  token: number | undefined;
}

export interface GrammarLogitsProcessorOptions {
  /** Extra ids that count as EOS (e.g. the model's `eos_token_id` list); the store's EOS ids always do. */
  eosTokenIds?: Iterable<number>;
  /** Rollback depth of each row's Matcher (default 8). */
  maxRollback?: number;
  onStep?: (info: StepInfo) => void;
  /** The Matcher class to use when the store comes from another module instance (e.g. 'grammask/web'). */
  Matcher?: typeof Matcher;
}

/**
 * Pass it as `logits_processor: [processor]` to `model.generate()` or a
 * `text-generation` pipeline call. Every call commits the tokens appended to
 * each row since the previous call (the first call of a generation records the
 * prompt) and masks the logits; a token the grammar refuses throws. One
 * Matcher per batch row; rows that ended allow only EOS ids.
 */
export class GrammarLogitsProcessor {
  constructor(store: MaskStore, options?: GrammarLogitsProcessorOptions);
  (inputIds: bigint[][], logits: unknown): unknown;
  _call(inputIds: bigint[][], logits: { dims: number[]; data: Float32Array }): unknown;
  /** The current generation's row matchers. */
  readonly matchers: Matcher[];
  /** Forget the rows (and free their matchers); the next call starts a new generation. */
  reset(): void;
  free(): void;
}
