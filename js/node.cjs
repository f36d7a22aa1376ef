// grammask for Node (CommonJS): the module is loaded synchronously on require.
'use strict';
const raw = require('./node/grammask.js');
const { makeApi } = require('./core.cjs');

const api = makeApi(raw, () => true);
module.exports = {
  MaskStore: api.MaskStore,
  Matcher: api.Matcher,
  PreparedVocab: api.PreparedVocab,
  compile: api.compile,
  compileStore: api.compileStore,
  tokenizerFingerprint: api.tokenizerFingerprint,
  compilerLimits: api.compilerLimits,
  limits: api.limits,
  hasCompiler: api.hasCompiler,
  wasmMemoryBytes: api.wasmMemoryBytes,
  init: async () => {},
  initSync: () => {},
};
