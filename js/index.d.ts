// Type declarations for grammask (hand-written; the JS layer is js/core.js).
//
// Masks: token `id` is allowed iff bit `id & 31` of word `id >> 5` is set.
// Errors: every failure throws a JS `Error`. Errors raised by the engine have
// `name === "GrammaskError"` and a `kind` (see `GrammaskErrorKind`); argument
// errors are `TypeError`s; use after `free()` throws an `Error` whose message
// says the object was freed.

/**
 * The broad class of an engine error (`error.kind`): the names of Rust's
 * `ErrorKind`, in its order (a Rust test checks that this list equals it).
 * `GrammarSyntax`/`Grammar`: a Lark grammar; `Schema`: a JSON Schema (the
 * message names the keyword and its JSON pointer); `Regex`: a regex (a
 * terminal, a schema `pattern`, a regex constraint); `ResponseFormat`: the
 * response format object or its compile options; `Limit`: one of `limits()`.
 */
export type GrammaskErrorKind =
  | 'GrammarSyntax' | 'Grammar' | 'Schema' | 'Conflict' | 'Regex' | 'ResponseFormat'
  | 'Lex' | 'Parse' | 'Tokenizer'
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
   * throws. In Node, a path (`'out/json.gmask'`, relative to the working
   * directory) or a `file:` URL is read from disk instead.
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
  /** What the compile ignored (a `lenient` schema compile lists each keyword); empty for blobs. */
  readonly warnings: string[];
  /** The store's vocabulary (a new handle; free it when done). */
  vocab(): PreparedVocab;
  /** True after `free()`. */
  readonly freed: boolean;
  /** The bytes of token `id` (empty for an id out of range). */
  tokenBytes(id: number): Uint8Array;
  stats(): StoreStats;
  /** Serialize (e.g. to cache a store compiled in the browser). Throws
   * (`InvalidState`) for a grammar that is not LALR(1): blobs hold LALR tables. */
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
  /**
   * Spend up to `budgetMs` (default 2) of idle time, e.g. while the model
   * runs its forward pass, computing the store entries of positions whose
   * first visit was computed directly (a constraint compiled per request
   * bounds each first visit: over the bound, the mask is computed with the
   * parser in the loop over the token trie). Later masks there come from
   * the store. Returns true if such positions remain; cheap when none do.
   * A store loaded from a blob has none. Masks are the same either way.
   */
  prefetch(budgetMs?: number): boolean;
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

// ---- Vocabularies -------------------------------------------------------

/** Where EOS ids come from when a vocabulary is read. */
export interface VocabOptions {
  /** tokenizer_config.json (text or object): its `eos_token` is an EOS id. A transformers.js tokenizer brings its own. */
  tokenizerConfig?: string | object;
  /** generation_config.json (text or object, e.g. `model.generation_config`): its `eos_token_id` (int or list) are EOS ids too. */
  generationConfig?: string | object;
  /** Exactly these EOS ids (replaces the two above). */
  eosTokenIds?: number | Iterable<number>;
  /** Build the token trie now (default true; the runtime-only build has none). */
  prepare?: boolean;
}

/** The parts of tokenizer.json a vocabulary needs (the whole parsed object works). */
export interface TokenizerJson {
  model: { type?: string; vocab: Record<string, number> | [string, number][] };
  added_tokens?: { id: number; content: string; special?: boolean }[];
  decoder?: object | null;
  pre_tokenizer?: object | null;
}

/**
 * A transformers.js tokenizer (`AutoTokenizer.from_pretrained(...)`, 3.x and
 * 4.x): it keeps the parsed tokenizer.json as `_tokenizerJSON` and
 * tokenizer_config.json as `_tokenizerConfig`.
 */
export interface TransformersTokenizer {
  _tokenizerJSON: TokenizerJson;
  _tokenizerConfig?: object;
}

/**
 * A tokenizer's vocabulary as grammask sees it: every token id's bytes, the
 * special flags and the EOS ids, read from tokenizer.json (no tokenizer is
 * built), plus the token trie every compile for this tokenizer reuses. Build
 * it once per tokenizer.
 */
export class PreparedVocab {
  private constructor();
  /** From tokenizer.json, as text or as its parsed object. */
  static fromTokenizerJson(json: string | TokenizerJson, options?: VocabOptions): PreparedVocab;
  /** From a transformers.js tokenizer. */
  static fromTokenizer(tokenizer: TransformersTokenizer, options?: VocabOptions): PreparedVocab;
  readonly vocabSize: number;
  readonly eosTokenIds: Uint32Array;
  /** 16 hex digits: the `tokenizerFingerprint` a store built for this tokenizer (and EOS ids) carries. */
  readonly fingerprint: string;
  /** The same tokens with other EOS ids. */
  fingerprintWithEos(eosTokenIds: number | Iterable<number>): string;
  /** True once the token trie is built. */
  readonly isPrepared: boolean;
  /** Build the token trie now (else the first compile does). Returns false in the runtime-only build. */
  prepare(): boolean;
  /** The bytes of token `id` (empty for an id out of range). */
  tokenBytes(id: number): Uint8Array;
  /**
   * Copies of the token data: token `t` is `bytes[offsets[t] .. offsets[t + 1]]`;
   * `special` and `whitespace` (tokens of ASCII whitespace only) are masks;
   * `byteTokens[b]` is the token of the single byte `b`, or -1.
   */
  tokenTable(): { bytes: Uint8Array; offsets: Uint32Array; special: Uint32Array; whitespace: Uint32Array; byteTokens: Int32Array };
  /**
   * Throw a `GrammaskError` of kind `"BlobTokenizer"` unless `store` was
   * built for these tokens (same bytes and special flags; the store's EOS ids
   * may differ).
   */
  checkStore(store: MaskStore): void;
  readonly freed: boolean;
  free(): void;
  [Symbol.dispose](): void;
}

/**
 * The fingerprint of a tokenizer (tokenizer.json text or object, a
 * transformers.js tokenizer, or a PreparedVocab): compare it with a store's
 * `tokenizerFingerprint`, or pass it as `expectTokenizerFingerprint`.
 */
export function tokenizerFingerprint(
  tokenizer: string | TokenizerJson | TransformersTokenizer | PreparedVocab,
  options?: Omit<VocabOptions, 'prepare'>,
): string;

// ---- Compiling (not in grammask/runtime) -----------------------------------

/** What to constrain the output to (the shape of @huggingface/transformers-structured-output, plus json, lark, gbnf, ebnf and store). */
export type ResponseFormat =
  /** JSON valid under a JSON Schema (2020-12; draft-07/-06/-04 spellings). OpenAI's `{name, schema}` wrapper is unwrapped; a string is parsed. */
  | { type: 'json_schema'; json_schema: object | boolean | string }
  /** Any JSON object. */
  | { type: 'json_object' }
  /** Any JSON value. */
  | { type: 'json' }
  /** Text fully matching a regex (Python `re.fullmatch`). */
  | { type: 'regex'; regex: string }
  /** Text in the language of a Lark grammar (`start`: the start rule). */
  | { type: 'lark'; grammar: string; start?: string }
  /** Text in the language of a GBNF grammar (llama.cpp's format; `start`: the start rule, default `root`). See docs/gbnf.md. */
  | { type: 'gbnf'; grammar: string; start?: string }
  /** Text in the language of an EBNF grammar (xgrammar's GBNF superset, as web-llm takes; `start` default `root`). See docs/gbnf.md. */
  | { type: 'ebnf'; grammar: string; start?: string }
  /** A prebuilt store (a MaskStore or blob bytes), checked against the tokenizer. */
  | { type: 'store'; store: MaskStore | Uint8Array | ArrayBuffer };

export interface ConstraintOptions {
  /**
   * JSON whitespace (json_schema, json_object, json): 'default' accepts both
   * compact `{"a":1}` and Python-`json.dumps` style `{"a": 1}` and nothing
   * else; 'compact'; 'spaced'; 'flexible' (RFC 8259 whitespace, at most
   * `maxWhitespace` characters in a row, default 16). No whitespace before or
   * after the top-level value (except in 'flexible'), so once the value is
   * complete only EOS can follow.
   */
  whitespace?: 'default' | 'compact' | 'spaced' | 'flexible';
  maxWhitespace?: number;
  /** Schemas: ignore known keywords that cannot be enforced (listed in `store.warnings`) instead of refusing the schema. */
  lenient?: boolean;
  /**
   * Schemas: the registry for remote `$ref`, `{uri: schema}` (URI without
   * fragment). A `$ref` resolves against the base URI of the nearest `$id`;
   * the JSON Schema metaschemas (draft-04 to 2020-12) are built in. Nothing
   * is fetched: a remote `$ref` found in neither throws a `Schema` error
   * naming the pointer and the URI.
   */
  refs?: { [uri: string]: object | boolean };
  /** Lark grammars: refuse shift/reduce conflicts (Lark's `strict=True`) instead of settling them as shift with a warning (`store.warnings`). */
  strict?: boolean;
  /** Lark grammars: the lexer mode, overriding the grammar's `%lexer` (default: `contextual`, as Lark's LALR). */
  lexer?: 'contextual' | 'basic' | 'longest';
}

/**
 * Compile a response format for a prepared vocabulary, in this thread.
 * Bad input throws a `GrammaskError` naming the problem (`GrammarSyntax` with
 * line:col, `Grammar`, `Schema` naming the schema keyword and JSON pointer,
 * `Regex`, `ResponseFormat`, `Limit`); a bad argument throws a `TypeError`
 * (a malformed response format, `whitespace` or `lexer`: one whose `kind` is
 * `'ResponseFormat'`). `{type: 'store'}` returns the given store after `vocab.checkStore(store)`.
 */
export function compile(vocab: PreparedVocab, responseFormat: ResponseFormat, options?: ConstraintOptions): MaskStore;

export interface CompileStoreOptions {
  /** The start rule (default: `start`, else the grammar's first rule). */
  startRule?: string;
  /** Apply the streamlining steps (default true; false keeps the raw store). */
  streamline?: boolean;
  /**
   * Progress messages, one per compile phase (lexer, LALR tables, token walk,
   * streamlining steps). Called synchronously; exceptions it throws are ignored.
   */
  onProgress?: (message: string) => void;
}

/**
 * Compile a Lark grammar into a full, precomputed, streamlined store: the
 * blob `grammask compile` makes (`store.toBytes()`), for a tokenizer
 * (PreparedVocab, tokenizer.json text or object, or a transformers.js
 * tokenizer; `options` may carry VocabOptions for the latter). It blocks: run
 * it in a Worker in a browser. JSON × Llama-3 takes a few seconds; a
 * Python-sized grammar a minute or more (use the CLI). Limits:
 * `compilerLimits`.
 */
export function compileStore(
  grammarText: string,
  tokenizer: PreparedVocab | string | TokenizerJson | TransformersTokenizer,
  options?: CompileStoreOptions & Omit<VocabOptions, 'prepare'>,
): MaskStore;

/** Input size limits, in bytes: grammar, schema or regex text (1 MiB); tokenizer.json (64 MiB). */
export const compilerLimits: { readonly maxGrammarBytes: number; readonly maxTokenizerBytes: number };

/**
 * Every limit of the engine, by name (Rust's `grammask::Limits`, the same
 * table in both builds): going past one throws a `GrammaskError` of kind
 * `Limit` (`maxOverlappingAlternatives` and `maxMultipleOfResidues`: kind
 * `Schema`, as unsupported). Sizes are in bytes unless the name says
 * otherwise. A Rust test checks that these names equal `Limits`'s fields.
 */
export interface Limits {
  /** Grammar, schema or regex text (or the response format as JSON) given to `compile`/`compileStore` (1 MiB). */
  readonly maxGrammarBytes: number;
  /** tokenizer.json text (64 MiB). */
  readonly maxTokenizerBytes: number;
  /** A regex constraint, in characters (100,000). */
  readonly maxRegexConstraintChars: number;
  /** JSON Schema nesting depth (200). */
  readonly maxSchemaDepth: number;
  /** Subschemas of one schema (100,000). */
  readonly maxSchemaNodes: number;
  /** Distinct subschema combinations after `allOf`/`$ref` (20,000). */
  readonly maxSchemaConjunctions: number;
  /** Alternatives one `anyOf`/`oneOf` expands into (256). */
  readonly maxAnyOfAlternatives: number;
  /** `anyOf`/`oneOf` nested in one another (64). */
  readonly maxAnyOfDepth: number;
  /** Values of one `enum` (10,000). */
  readonly maxEnumValues: number;
  /** `minLength`/`maxLength` (1,024). */
  readonly maxStringLength: number;
  /** `minItems`/`maxItems`/`prefixItems`, `minProperties`/`maxProperties` (1,024). */
  readonly maxUnroll: number;
  /** Distinct `patternProperties` patterns per object (6). */
  readonly maxPatternProperties: number;
  /** Overlapping `anyOf` alternatives per property or item (6). */
  readonly maxOverlappingAlternatives: number;
  /** Residues a `multipleOf` may need enumerated (400). */
  readonly maxMultipleOfResidues: number;
  /** Nonterminals of the grammar a schema becomes (50,000). */
  readonly maxSchemaNonterminals: number;
  /** Rules of the grammar a schema becomes (400,000). */
  readonly maxSchemaRules: number;
  /** NFA/DFA of one schema or constraint regex (32 MiB). */
  readonly maxRegexDfaBytes: number;
  /** States of the search that decides whether a set of regexes matches a non-empty string (200,000). */
  readonly maxRegexProductStates: number;
  /** Anchored alternatives of a regex with inner `^`/`$` (64). */
  readonly maxAnchoredAlternatives: number;
  /** DFA states of a pattern with lookaround (4096). */
  readonly maxLookaroundStates: number;
  /** Nesting of `(`, `[`, `{` in a Lark grammar (200). */
  readonly maxGrammarNesting: number;
  /** Group nesting of a terminal regex when its width is computed (500). */
  readonly maxRegexWidthNesting: number;
  /** Alternatives one Lark rule may expand to (65,536). */
  readonly maxRuleAlternatives: number;
  /** Template instances of one Lark grammar (10,000). */
  readonly maxTemplateInstances: number;
  /** Chain of terminals referring to terminals (256). */
  readonly maxTerminalDepth: number;
  /** NFA of one terminal regex (64 MiB). */
  readonly maxTerminalNfaBytes: number;
  /** DFA of one terminal regex (256 MiB). */
  readonly maxTerminalDfaBytes: number;
  /** States of a set terminal's product table (65,536). */
  readonly maxSetProductStates: number;
  /** `state × byte class` entries of the lexer automaton (67,108,864). */
  readonly maxLexerTableEntries: number;
  /** Cells of the LALR(1) tables, states × symbols (64 M in wasm). */
  readonly maxLalrTableCells: number;
}

/** Every limit, by name (a new frozen object per call); in both builds. */
export function limits(): Limits;

/** Whether this build has the compiler (false for grammask/runtime). */
export function hasCompiler(): boolean;
