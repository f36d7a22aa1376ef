// grammask for Node (ESM): the module is loaded synchronously on import.
import { createRequire } from 'node:module';
import { makeApi } from './core.mjs';

const raw = createRequire(import.meta.url)('./node/grammask.js');
const api = makeApi(raw, () => true);

/** No-op (the module is ready on import); kept so code runs on every target. */
export default async function init() {}
export function initSync() {}
export { init };
export const { MaskStore, Matcher, PreparedVocab, compile, compileStore, tokenizerFingerprint, compilerLimits, limits, hasCompiler, wasmMemoryBytes } = api;
