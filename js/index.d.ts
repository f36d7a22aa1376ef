// Type declarations for grammask (hand-written; the JS layer is js/core.js).
//
// Masks: token `id` is allowed iff bit `id & 31` of word `id >> 5` is set.
// Errors: every failure throws a JS `Error`. Errors raised by the engine have
// `name === "GrammaskError"` and a `kind` (see `GrammaskErrorKind`); argument
// errors are `TypeError`s; use after `free()` throws an `Error` whose message
// says the object was freed.

/** The broad class of an engine error (`error.kind`). */
export type GrammaskErrorKind =
  | 'GrammarSyntax' | 'Grammar' | 'Conflict' | 'Regex' | 'Lex' | 'Parse' | 'Tokenizer'
  | 'BlobTruncated' | 'BlobCorrupt' | 'BlobVersion' | 'BlobTokenizer'
  | 'InvalidToken' | 'InvalidState' | 'Limit' | 'Io';

/** An error thrown by the engine. */
export interface GrammaskError extends Error {
  name: 'GrammaskError';
  kind: GrammaskErrorKind;
}

/**
 * Load the wasm module. Required once on the `web` entry (by default it
 * fetches `web/grammask_bg.wasm` next to the JS file; pass a URL, a
 * `Response`, bytes or a `WebAssembly.Module` to load it from elsewhere).
 * A no-op on the Node and bundler entries, so portable code can always call it.
 */
declare function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;
export default init;
export { init };
/** Synchronous `init` from a compiled module or its bytes (web entry; a no-op elsewhere). */
export function initSync(module: BufferSource | WebAssembly.Module): void;

export interface FromBytesOptions {
  /**
   * Refuse a blob built for another tokenizer: the expected
   * `tokenizerFingerprint` (16 hex digits; it covers every token's bytes, the
   * special-token flags and the EOS ids). Throws a `GrammaskError` of kind
   * `"BlobTokenizer"` on mismatch.
   */
  expectTokenizerFingerprint?: string;
}

/** Figures of a store (`store.stats()`). */
export interface StoreStats {
  vocabSize: number;
  maskWords: number;
  eosTokenIds: number[];
  specialTokens: number;
  terminals: number;
  lexerStates: number;
  lrStates: number;
  /** Lexer positions `(L, X)` of the store. */
  positions: number;
  /** Checked entries (parser checks at mask time), summed over positions. */
  entries: number;
  /** Checked entries actually stored (positions with equal lists share them). */
  storedEntries: number;
  alwaysSets: number;
  tokenSets: number;
  setPoolWords: number;
  /** Entry counts after each compile step ("raw" first). */
  streamlineSteps: { step: string; entries: number }[];
  tokenizerFingerprint: string;
  grammarFingerprint: string;
}

/**
 * A compiled grammar × tokenizer (read-only, shared by any number of
 * matchers). Create it with `MaskStore.fromBytes`, `MaskStore.fromUrl` or
 * `compileStore` (compiler build). A Matcher keeps its store's data alive, so
 * freeing the store while matchers use it is safe.
 */
export class MaskStore {
  private constructor();
  /**
   * Load a blob made by `grammask compile` (or `store.toBytes()`). The blob is
   * fully checked (label, format version, checksums, every index); a bad blob
   * throws a `GrammaskError` (`BlobTruncated`, `BlobCorrupt`, `BlobVersion`,
   * `BlobTokenizer`).
   */
  static fromBytes(bytes: Uint8Array | ArrayBuffer, options?: FromBytesOptions): MaskStore;
  /**
   * Fetch a blob (streaming) and load it. `init` is passed to `fetch`.
   * `onProgress(loaded, total)` is called after every chunk; `total` is the
   * Content-Length, or `undefined` when unknown (or when the body is
   * content-encoded, where it would be the compressed size). A non-2xx status
   * throws.
   */
  static fromUrl(
    url: string | URL,
    init?: RequestInit,
    onProgress?: (loaded: number, total: number | undefined) => void,
    options?: FromBytesOptions,
  ): Promise<MaskStore>;
  /** Number of tokens of the tokenizer (ids `0 .. vocabSize-1`). */
  readonly vocabSize: number;
  /** `ceil(vocabSize / 32)`: mask length in words without padding. */
  readonly maskWords: number;
  /** The EOS token ids (allowed exactly when the text can end). */
  readonly eosTokenIds: Uint32Array;
  /** Fingerprint of the tokenizer (and EOS ids) the store was built for: 16 hex digits. */
  readonly tokenizerFingerprint: string;
  /** Fingerprint of the normalized grammar: 16 hex digits. */
  readonly grammarFingerprint: string;
  /** True after `free()`. */
  readonly freed: boolean;
  /** The bytes of token `id` (empty for an id out of range). */
  tokenBytes(id: number): Uint8Array;
  stats(): StoreStats;
  /** Serialize (e.g. to cache a store compiled in the browser). */
  toBytes(): Uint8Array;
  /** Release this handle now (idempotent). Later calls throw. */
  free(): void;
  [Symbol.dispose](): void;
}

export interface MatcherOptions {
  /** How many committed tokens `rollback` can undo (default 64). */
  maxRollback?: number;
  /**
   * Mask width in tokens, e.g. the model's logits width when it exceeds the
   * tokenizer's vocabulary (default: `store.vocabSize`; smaller values throw).
   * Masks then have `ceil(maskWidth / 32)` words; tokens `>= vocabSize` are
   * always 0.
   */
  maskWidth?: number;
}

/** The per-sequence state: which tokens may come next. */
export class Matcher {
  /** Throws if `store` was freed or an option is invalid. */
  constructor(store: MaskStore, options?: MatcherOptions);
  readonly store: MaskStore;
  /** Mask length in 32-bit words: `ceil(maskWidth / 32)`. */
  readonly maskWords: number;
  readonly maskWidth: number;
  /** True after `free()`. */
  readonly freed: boolean;
  /** The allowed-token mask, as a new array of `maskWords` words. */
  computeMask(): Uint32Array;
  /**
   * Write the mask into `out[offset .. offset + maskWords]` (no allocation;
   * e.g. one row of a batch buffer). Throws if `out` is too short. Returns `out`.
   */
  fillMask(out: Uint32Array, offset?: number): Uint32Array;
  /** Is token `id` allowed now? (Same answer as the mask.) */
  isAllowed(id: number): boolean;
  /**
   * Commit one token. A token outside the mask throws a `GrammaskError` of
   * kind `"InvalidToken"` (`"InvalidState"` once stopped) and changes nothing.
   * Committing an EOS id stops the matcher (`isStopped()`).
   */
  commitToken(id: number): void;
  /** Commit several tokens; if one is refused, none is committed. */
  commitTokens(ids: Uint32Array | Iterable<number>): void;
  /** Undo the last `n` (default 1) commits; throws if fewer than `n` are kept (see `maxRollback`). */
  rollback(n?: number): void;
  /**
   * The tokens that are the only possibility from here, in order (at most
   * `limit`, default 64). Does not change the matcher.
   */
  forcedTokens(limit?: number): Uint32Array;
  /** Can the text end here (is EOS allowed)? */
  isAccepting(): boolean;
  /** True once an EOS token was committed. */
  isStopped(): boolean;
  /** Back to the start; clears the rollback history. */
  reset(): void;
  /** Release the matcher now (idempotent). Later calls throw. */
  free(): void;
  [Symbol.dispose](): void;
}

/** Current size of the wasm linear memory in bytes (grows on demand, never shrinks). */
export function wasmMemoryBytes(): number;
