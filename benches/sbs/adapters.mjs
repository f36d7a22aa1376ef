// The JS engines of the side-by-side benchmarks, behind one interface
// (used by benches/sbs/engines.mjs and benches/schemas/js.mjs):
//   makeEngine(name, { eos, width, tokenizerDir, layout, prepare }) ->
//     { compile(schema), matcher(c), mask(m) -> (id) => allowed, commit(m, id) -> bool,
//       accepting(m), freeMatcher(m), free(c), async?, and for grammask: vocabSize,
//       memory() (wasm bytes), warnings(c) }
// (`prepare`: grammask prepares its vocabulary now, else at the first compile.)
// name: 'grammask' (this npm package, wasm), 'official'
// (@huggingface/transformers-structured-output: its StructuredOutputProcessor is
// its only API, so a "mask" is one processor call, mask + apply on a float32
// logits row of the vocabulary's width), 'xgrammar' (@mlc-ai/web-xgrammar:
// compileJSONSchema with any_whitespace off, no indent (-1; `undefined` would
// mean an indent of 2, i.e. pretty-printed output only), strictMode off and
// the layout's separators, + getNextTokenBitmask). Module resolution: grammask
// and @huggingface/transformers through benches/node_modules (a link to
// pkg-tests/node_modules), the peers from benches/wasm/node_modules.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { officialPackage } from '../wasm/peers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function loadTf() {
  const T = await import('@huggingface/transformers');
  T.env.allowRemoteModels = false;
  T.env.localModelPath = path.join(ROOT, 'models') + path.sep;
  return T;
}
function loadUmd(p) { // web-xgrammar ships a CommonJS bundle inside a "type": "module" package
  const module = { exports: {} };
  const fn = new Function('exports', 'module', 'require', '__filename', '__dirname', fs.readFileSync(p, 'utf8'));
  fn.call(module.exports, module.exports, module, createRequire(p), p, path.dirname(p));
  return module.exports;
}

export const ENGINE_LABELS = {
  grammask: 'grammask (wasm, Node)',
  official: '@huggingface/transformers-structured-output 4.3.0 (JS, Node)',
  xgrammar: '@mlc-ai/web-xgrammar 0.1.27 (wasm, Node)',
  llguidance: 'llguidance 1.9 (native, Python)',
};

export async function makeEngine(name, { eos, width, tokenizerDir, layout = 'compact', prepare = false }) {
  const job = { eos, width };
  const tokJson = fs.readFileSync(path.join(tokenizerDir, 'tokenizer.json'), 'utf8');
  const TOKENIZER = path.relative(path.join(ROOT, 'models'), tokenizerDir);
  const LAYOUT = layout;
  if (name === 'grammask') {
    const { PreparedVocab, compile, Matcher, wasmMemoryBytes } = await import('grammask');
    const vocab = PreparedVocab.fromTokenizerJson(tokJson, { eosTokenIds: job.eos });
    if (prepare) vocab.prepare(); // else the first compile prepares it
    const buf = new Uint32Array(Math.ceil(vocab.vocabSize / 32));
    return {
      vocabSize: vocab.vocabSize,
      memory: wasmMemoryBytes,
      warnings: (store) => store.warnings, // e.g. formats not enforced (annotations)
      compile: (schema) => compile(vocab, { type: 'json_schema', json_schema: schema }),
      matcher: (store) => new Matcher(store),
      mask: (m) => { m.fillMask(buf, 0); return (id) => ((buf[id >>> 5] >>> (id & 31)) & 1) === 1; },
      commit: (m, id) => { m.commitToken(id); return true; },
      accepting: (m) => m.isAccepting(),
      freeMatcher: (m) => m.free(),
      free: (store) => store.free(),
    };
  }
  if (name === 'official') {
    const T = await loadTf();
    const tok = await T.AutoTokenizer.from_pretrained(TOKENIZER);
    const { StructuredOutputProcessor } = await officialPackage();
    StructuredOutputProcessor.warmup(tok);
    const data = new Float32Array(job.width);
    const eos = job.eos[0];
    return {
      compile: (schema) => ({ schema, first: new StructuredOutputProcessor(tok, { type: 'json_schema', json_schema: schema }) }),
      matcher: (c) => { const p = c.first ?? new StructuredOutputProcessor(tok, { type: 'json_schema', json_schema: c.schema }); c.first = null; return { p, ids: [1n] }; },
      mask: (m) => { data.fill(0); m.p([m.ids], { dims: [1, job.width], data }); return (id) => data[id] !== -Infinity; },
      commit: (m, id) => { m.ids.push(BigInt(id)); return true; },
      accepting: (m) => { data.fill(0); m.p([m.ids], { dims: [1, job.width], data }); return data[eos] !== -Infinity; },
      freeMatcher: () => {},
      free: () => {},
    };
  }
  if (name === 'xgrammar') {
    const require = createRequire(path.join(ROOT, 'benches/wasm/package.json'));
    const xgr = loadUmd(require.resolve('@mlc-ai/web-xgrammar'));
    const tj = JSON.parse(tokJson);
    const enc = new Array(job.width).fill('');
    for (const [s, id] of Object.entries(tj.model.vocab)) enc[id] = s;
    for (const t of tj.added_tokens ?? []) enc[t.id] = t.content;
    const info = await xgr.TokenizerInfo.createTokenizerInfo(enc, 'byte_level', false, job.width, job.eos);
    const compiler = await xgr.GrammarCompiler.createGrammarCompiler(info, false);
    const sep = LAYOUT === 'spaced' ? [', ', ': '] : [',', ':'];
    let bm = null;
    return {
      async: true,
      compile: async (schema) => compiler.compileJSONSchema(JSON.stringify(schema), false, -1, sep, false),
      matcher: async (c) => xgr.GrammarMatcher.createGrammarMatcher(c),
      mask: async (m) => { bm = await m.getNextTokenBitmask(); return (id) => ((bm[id >>> 5] >>> (id & 31)) & 1) === 1; },
      commit: (m, id) => m.acceptToken(id),
      accepting: (m) => job.eos.some((e) => ((bm[e >>> 5] >>> (e & 31)) & 1) === 1),
      freeMatcher: (m) => m.dispose(),
      free: (c) => c.dispose(),
    };
  }
  throw new Error(`unknown engine ${name}`);
}

