// grammask, web target (browsers without a bundler, Deno, Workers).
// `await init()` (or `initSync({ module })`) before anything else.
import wbgInit, { initSync as wbgInitSync } from './web/grammask.js';
import * as raw from './web/grammask.js';
import { makeApi } from './core.mjs';

let ready = false;

/** Load the wasm module: by default `web/grammask_bg.wasm` next to this file. */
export default async function init(input) {
  if (!ready) {
    await wbgInit(input === undefined ? undefined : { module_or_path: input });
    ready = true;
  }
}

/** Synchronous init from a `WebAssembly.Module` or the module's bytes. */
export function initSync(module) {
  if (!ready) {
    wbgInitSync({ module });
    ready = true;
  }
}

export { init };
const api = makeApi(raw, () => ready);
export const { MaskStore, Matcher, PreparedVocab, compile, compileStore, tokenizerFingerprint, compilerLimits, limits, hasCompiler, wasmMemoryBytes } = api;
