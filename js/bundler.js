// grammask for bundlers (webpack 5, Vite with a wasm plugin, ...): the bundler
// instantiates the wasm module when this file is imported.
import * as raw from './bundler/grammask.js';
import { makeApi } from './core.mjs';

const api = makeApi(raw, () => true);

/** No-op (the bundler loads the module); kept so code runs on every target. */
export default async function init() {}
export function initSync() {}
export { init };
export const { MaskStore, Matcher, PreparedVocab, compile, compileStore, tokenizerFingerprint, compilerLimits, limits, hasCompiler, wasmMemoryBytes } = api;
