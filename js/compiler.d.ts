
// ---- Compiler build only (package `grammask-compiler`) --------------------

export interface CompileOptions {
  /** EOS token ids. Default: from `tokenizerConfig` / `generationConfig`; without either, `eos` is required. */
  eos?: number | number[] | Uint32Array;
  /** The start rule (default: `start`, else the grammar's first rule). */
  startRule?: string;
  /** Contents of `tokenizer_config.json` (for its `eos_token`). */
  tokenizerConfig?: string;
  /** Contents of `generation_config.json` (for its `eos_token_id`). */
  generationConfig?: string;
  /** Apply the streamlining steps (default true; false keeps the raw store). */
  streamline?: boolean;
  /**
   * Progress messages, one per compile phase (lexer, LALR tables, token walk,
   * streamlining steps). Called synchronously; exceptions it throws are ignored.
   */
  onProgress?: (message: string) => void;
}

/**
 * Compile a Lark grammar for a Hugging Face `tokenizer.json`, in this thread
 * (it blocks: run it in a Worker in a browser). Limits: grammar text at most
 * `compilerLimits.maxGrammarBytes` (1 MiB), tokenizer at most
 * `compilerLimits.maxTokenizerBytes` (64 MiB); `%import common.NAME` works,
 * other imports do not. Time: JSON × Llama-3 (128,256 tokens) takes a few
 * seconds; a Python-sized grammar about a minute or more (see the README).
 * Errors throw a `GrammaskError` (`GrammarSyntax`, `Grammar`, `Conflict`,
 * `Regex`, `Tokenizer`, `Limit`).
 */
export function compileStore(grammarText: string, tokenizerJson: string, options?: CompileOptions): MaskStore;

/** The `tokenizerFingerprint` a store built for this tokenizer (and EOS ids) carries. */
export function tokenizerFingerprint(
  tokenizerJson: string,
  options?: Pick<CompileOptions, 'eos' | 'tokenizerConfig' | 'generationConfig'>,
): string;

/** Input size limits of `compileStore`, in bytes. */
export const compilerLimits: { readonly maxGrammarBytes: number; readonly maxTokenizerBytes: number };
