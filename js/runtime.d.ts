// grammask/runtime: the lean runtime build (no compiler): blobs made by
// `grammask compile` or store.toBytes(), matchers, vocabularies and
// fingerprints. `compile` and `compileStore` are not available here (import
// 'grammask' for them). On every target but Node, `await init()` first (or
// `initSync(module)`, e.g. in a Cloudflare Worker with an imported .wasm).
export {
  default, init, initSync, MaskStore, Matcher, PreparedVocab, tokenizerFingerprint, wasmMemoryBytes, hasCompiler,
  compilerLimits, limits,
} from './index.js';
export type {
  FromBytesOptions, StoreStats, MatcherOptions, VocabOptions, TokenizerJson, TransformersTokenizer,
  GrammaskError, GrammaskErrorKind, Limits,
} from './index.js';
