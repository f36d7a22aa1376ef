// The demo's engine, in a module Web Worker: the model (transformers.js,
// onnxruntime-web), the tokenizer's prepared vocabulary, constraint compiles
// and generation all run here, so the page stays responsive (typing,
// scrolling, the Stop button) during a compile or a generation. The page
// (app.js) sends commands and renders the events this worker posts.
//
// Commands (postMessage {cmd, id, ...}): load {model, dtype, device},
// compile {constraint}, generate {prompt, maxNewTokens, sample, compare, wrap},
// stop. Events: {type: 'progress' | 'loaded' | 'compiled' | 'step' | 'token' |
// 'done' | 'error', id, ...}; errors carry {where, message, kind, line, col,
// pointer}, and a model that could not be downloaded {offline: true}.
// While a generation runs, only 'stop' is served (other commands get a
// 'busy' error).
//
// Stop within one step: model.generate() awaits each forward pass, but
// onnxruntime-web's wasm run settles in microtasks, without a turn of the
// event loop, so a 'stop' message used to wait until generate() returned.
// After every forward pass the worker now yields one macrotask (a message
// on a private MessageChannel): the page's 'stop' runs there and sets the
// flag, and the stopping criterion of that same step ends the generation.
// The token whose forward pass was running is the last one; the result says
// how many tokens came after the stop arrived (stopLag, 0 or 1).
import * as T from './vendor/transformers.js';
import init, { MaskStore, PreparedVocab, compile, compileStore } from './grammask/web.js';
import { StructuredOutputProcessor } from './grammask/transformers.js';

const base = new URL('./', import.meta.url);
T.env.backends.onnx.wasm.wasmPaths = {
  mjs: new URL('vendor/ort-wasm-simd-threaded.asyncify.mjs', base).href,
  wasm: new URL('vendor/ort-wasm-simd-threaded.asyncify.wasm', base).href,
};
T.env.backends.onnx.wasm.numThreads = 1;
T.env.localModelPath = new URL('models/', base).pathname;

const state = { key: null, tok: null, model: null, vocab: null, store: null, constraint: null, tools: null, stop: false, busy: null, sampled: 0, stopAt: -1 };
const post = (m) => self.postMessage(m);
const ready = init();

/** One turn of the event loop (a macrotask: queued messages such as 'stop' run first). */
const loop = new MessageChannel();
const yieldToLoop = () => new Promise((resolve) => { loop.port1.onmessage = () => resolve(); loop.port2.postMessage(0); });

/** The model's forward pass, followed by a turn of the event loop (see the top of this file). */
function yieldAfterForward(model) {
  const forward = model.forward.bind(model);
  model.forward = async (inputs) => {
    const out = await forward(inputs);
    await yieldToLoop();
    return out;
  };
  return model;
}

/** Where in the input an error points: Lark line:col, JSON Schema pointer, regex position. */
function locate(message) {
  const loc = {};
  const lc = /:(\d+):(\d+)/.exec(message) ?? /line (\d+),? col(?:umn)? (\d+)/i.exec(message);
  if (lc) { loc.line = Number(lc[1]); loc.col = Number(lc[2]); }
  const ptr = /(?:^|[\s(`'"])(#?\/[^\s`'",;)]*)/.exec(message);
  if (ptr) loc.pointer = ptr[1];
  return loc;
}

function fail(id, where, e) {
  post({ type: 'error', id, where, message: e.message ?? String(e), kind: e.kind, offline: e.offline, ...locate(e.message ?? '') });
}

async function load({ id, model, dtype, device }) {
  const key = `${model}|${dtype}|${device}`;
  if (state.key === key) { post({ type: 'loaded', id, cached: true, ...state.info }); return; }
  const local = model.startsWith('local:');
  const name = local ? model.slice(6) : model;
  T.env.allowLocalModels = local;
  T.env.allowRemoteModels = !local;
  const progress = (p) => {
    if (p.status === 'progress' && p.total) post({ type: 'progress', id, text: `Loading ${name}: ${p.file} ${(100 * p.loaded / p.total).toFixed(0)}%` });
  };
  post({ type: 'progress', id, text: `Loading ${name} (${dtype}, ${device})…` });
  let tok, lm;
  try {
    tok = await T.AutoTokenizer.from_pretrained(name, { progress_callback: progress });
    lm = yieldAfterForward(await T.AutoModelForCausalLM.from_pretrained(name, { dtype, device, progress_callback: progress }));
  } catch (e) {
    // The model loaded before (if any) stays in use.
    // fetch() rejects with a TypeError ("Failed to fetch") when the host cannot be reached.
    if (!local && (e instanceof TypeError || /fetch|network/i.test(e.message ?? ''))) {
      const err = new Error(`could not download ${name} from the Hugging Face hub (${e.message}): offline, or the hub is unreachable?`);
      err.offline = true;
      throw err;
    }
    throw e;
  }
  await ready;
  if (state.model) await state.model.dispose?.();
  state.tok = tok;
  state.model = lm;
  post({ type: 'progress', id, text: 'Reading the tokenizer vocabulary (grammask)…' });
  const t0 = performance.now();
  state.vocab?.free();
  state.vocab = PreparedVocab.fromTokenizer(state.tok);
  const ms = performance.now() - t0;
  state.key = key;
  state.store = null;
  state.tools = null;
  state.info = { model: name, vocabSize: state.vocab.vocabSize, fingerprint: state.vocab.fingerprint, vocabMs: ms,
    eos: eosIds(), chatTemplate: !!state.tok.chat_template };
  post({ type: 'loaded', id, ...state.info });
}

function eosIds() {
  const e = state.model.generation_config?.eos_token_id ?? state.model.config.eos_token_id;
  return (Array.isArray(e) ? e : [e]).filter((x) => Number.isInteger(x));
}

/**
 * constraint: { kind: 'json_schema' | 'regex' | 'lark' | 'tools', text, blob?: {grammar}, fence?: {trigger, closing}, whitespace,
 *   toolFormat?, toolChoice? } (tools: the text is the tool list, JSON)
 * Lark grammars named in blobs.json are loaded prebuilt when one matches the
 * tokenizer's fingerprint; others compile here (the full store for Lark text:
 * its masks are precomputed; schemas and regexes compile per request).
 */
async function compileConstraint({ id, constraint }) {
  if (!state.vocab) throw new Error('load a model first');
  const c = constraint;
  const t0 = performance.now();
  let store, source, toolsProc = null;
  try {
    if (c.kind === 'json_schema') {
      let schema;
      try { schema = JSON.parse(c.text); } catch (e) {
        const m = /position (\d+)/.exec(e.message);
        const err = new Error(`the schema is not JSON: ${e.message}`);
        if (m) { const p = Number(m[1]); const before = c.text.slice(0, p).split('\n'); err.message += ` (line ${before.length}, column ${before.at(-1).length + 1})`; }
        throw err;
      }
      post({ type: 'progress', id, text: 'Compiling the JSON Schema…' });
      store = compile(state.vocab, { type: 'json_schema', json_schema: schema }, { whitespace: c.whitespace || undefined });
      source = 'JSON Schema compiled in the worker';
    } else if (c.kind === 'tools') {
      let tools;
      try { tools = JSON.parse(c.text); } catch (e) { throw new Error(`the tool list is not JSON: ${e.message}`); }
      post({ type: 'progress', id, text: 'Compiling the tool-call grammar…' });
      // Its own store (cache: false): the worker frees it when the next constraint compiles.
      const proc = new StructuredOutputProcessor(state.vocab, { type: 'tools', tools, tool_choice: c.toolChoice, format: c.toolFormat }, { cache: false });
      store = proc.store;
      toolsProc = { proc, tools };
      source = `tool calls (${c.toolFormat}, ${c.toolChoice}) compiled in the worker`;
    } else if (c.kind === 'regex') {
      post({ type: 'progress', id, text: 'Compiling the regex…' });
      store = compile(state.vocab, { type: 'regex', regex: c.text });
      source = 'regex compiled in the worker';
    } else {
      const list = await (await fetch(new URL('blobs.json', base))).json();
      const hit = c.preset && list.find((b) => b.grammar === c.preset && b.tokenizerFingerprint === state.vocab.fingerprint);
      if (hit && c.text === c.presetText) {
        post({ type: 'progress', id, text: `Loading the prebuilt ${hit.file}…` });
        store = await MaskStore.fromUrl(new URL(hit.file, base), undefined,
          (loaded, total) => post({ type: 'progress', id, text: `Loading ${hit.file}: ${(loaded / 1e6).toFixed(1)}${total ? ` / ${(total / 1e6).toFixed(1)}` : ''} MB` }));
        state.vocab.checkStore(store);
        source = `prebuilt ${hit.file} (${(hit.bytes / 1e6).toFixed(1)} MB)`;
      } else {
        post({ type: 'progress', id, text: 'Compiling the Lark grammar (full store)…' });
        store = compileStore(c.text, state.vocab, { onProgress: (m) => post({ type: 'progress', id, text: `Compiling: ${m}` }) });
        source = 'Lark grammar compiled in the worker';
      }
    }
  } catch (e) {
    fail(id, c.kind, e);
    return;
  }
  state.store?.free?.();
  state.store = store;
  state.constraint = c;
  state.tools = toolsProc;
  const st = store.stats();
  post({ type: 'compiled', id, ms: performance.now() - t0, source, warnings: store.warnings,
    stats: { positions: st.positions, lexerStates: st.lexerStates, lrStates: st.lrStates, terminals: st.terminals } });
}

/**
 * The optional "wrap up" bias (for tiny random models): after N tokens,
 * closers are favoured, a closing fence more, and EOS most (the constraint
 * still decides what is allowed: EOS only once the output is complete).
 */
function wrapUp(after, promptLen, eos) {
  const enc = (s) => state.tok.encode(s, { add_special_tokens: false });
  const closers = [...new Set(['"', '}', ']', ')', '\n', '"}', '"]', '}}', ']]', '))', '0', "'", '```', '\n```'].flatMap(enc))];
  const fences = state.constraint?.fence ? [...new Set(['```', '\n```'].map(enc).filter((t) => t.length === 1).flat())] : [];
  return (ids, logits) => {
    const d = logits.data, w = logits.dims[1];
    for (let r = 0; r < ids.length; r++) {
      const n = ids[r].length - promptLen;
      const b = n > after ? Math.min(2 * (n - after), 24) : 0;
      for (const e of eos) d[r * w + e] += n < 4 ? -10 : 8 + 2 * b;
      for (const x of closers) d[r * w + x] += b;
      for (const x of fences) d[r * w + x] += b / 2;
    }
    return logits;
  };
}

async function generate({ id, prompt, maxNewTokens, sample, compare, wrap }) {
  if (!state.store) throw new Error('compile a constraint first');
  const tok = state.tok;
  const inputs = state.info.chatTemplate
    ? tok.apply_chat_template([{ role: 'user', content: prompt }], { tools: state.tools?.tools, add_generation_prompt: true, return_dict: true })
    : tok(prompt);
  const promptLen = inputs.input_ids.dims[1];
  const eos = eosIds();
  const fence = state.constraint.fence;
  const decoder = new TextDecoder();
  state.stop = false;
  state.sampled = 0;
  state.stopAt = -1;
  let commitMs = 0, maskMs = 0, steps = 0, forced = 0;
  let last = null; // the latest step's report: the mask the next sampled token was drawn under
  const proc = new StructuredOutputProcessor(state.vocab, { type: 'store', store: state.store }, {
    eosTokenIds: eos, refusedTopK: 5, ...(fence ? { trigger: fence.trigger, closing: fence.closing, maxFreeTokens: fence.maxFree || Infinity } : {}),
    onStep: (s) => {
      steps++; maskMs += s.maskMs; commitMs += s.commitMs;
      if (s.forced) forced++;
      last = s;
      post({ type: 'step', id, step: s.step, allowed: s.allowed, maskMs: s.maskMs, phase: s.phase, forced: s.forced,
        refused: (s.refused ?? []).map((r) => ({ id: r.id, logit: r.logit, text: tok.decode([r.id], { skip_special_tokens: false }) })) });
    },
  });
  // Called by generate() once per step, right after a token is sampled: the
  // token goes to the page at once, and the stop flag ends the generation.
  const shown = (ids) => {
    const t = Number(ids[0].at(-1));
    state.sampled++;
    const text = eos.includes(t) ? '' : decoder.decode(state.vocab.tokenBytes(t), { stream: true });
    // at: when it was sampled, on the clock the page shares (to count the tokens after a Stop).
    post({ type: 'token', id, token: t, text, forced: !!last?.forced, phase: last?.phase ?? 'constrained', at: performance.timeOrigin + performance.now() });
    return [state.stop];
  };
  const stopper = () => [state.stop];
  const procs = wrap > 0 ? [wrapUp(wrap, promptLen, eos), ...proc] : proc;
  post({ type: 'progress', id, text: 'Generating (constrained)…' });
  const t0 = performance.now();
  const seq = await state.model.generate({ ...inputs, max_new_tokens: maxNewTokens, do_sample: sample, logits_processor: procs, stopping_criteria: [shown] });
  const ms = performance.now() - t0;
  const gen = seq.tolist()[0].slice(promptLen).map(Number);
  const finished = gen.length > 0 && eos.includes(gen.at(-1));
  const bytes = [];
  for (const t of gen) if (!eos.includes(t)) bytes.push(...state.vocab.tokenBytes(t));
  const stopped = state.stop;
  const result = {
    text: new TextDecoder().decode(new Uint8Array(bytes)), tokens: gen.length, finished, stopped, ms, tps: gen.length / ms * 1000,
    stopLag: stopped ? gen.length - state.stopAt : undefined, stopGotAt: stopped ? state.stopGotAt : undefined,
    maskMsMean: maskMs / Math.max(1, steps), commitMsMean: commitMs / Math.max(1, steps), grammaskShare: (maskMs + commitMs) / ms,
    forced, steps, phases: proc.phases,
  };
  proc.free();
  if (state.tools) {
    // Tool call mode: the calls read back and validated, each answered with a
    // pretend result (the message a tool would send back; no tool runs).
    try {
      result.calls = state.tools.proc.parseToolCalls(result.text);
      result.toolResults = result.calls.map((c) => ({ role: 'tool', name: c.name, content: JSON.stringify({ ok: true, pretend: true, note: `the demo runs no tools: ${c.name} was not called`, arguments: c.arguments }) }));
    } catch (e) { result.callsError = e.message; }
  }
  if (compare && !state.stop && gen.length > 0) {
    post({ type: 'progress', id, text: 'Generating (unconstrained, same length, for tokens/s)…' });
    const f0 = performance.now();
    const s2 = await state.model.generate({ ...inputs, max_new_tokens: gen.length, min_new_tokens: gen.length, do_sample: sample, stopping_criteria: [stopper] });
    const n2 = s2.dims[1] - promptLen;
    result.tpsFree = n2 / (performance.now() - f0) * 1000;
    result.stopped = state.stop;
  }
  post({ type: 'done', id, result });
}

self.onmessage = async (ev) => {
  const m = ev.data;
  if (m.cmd === 'stop') {
    if (state.busy === 'generate' && !state.stop) { state.stop = true; state.stopAt = state.sampled; state.stopGotAt = performance.timeOrigin + performance.now(); }
    return;
  }
  if (state.busy) {
    post({ type: 'error', id: m.id, where: m.cmd, message: `busy: the worker is still running '${state.busy}' (Stop or Esc ends a generation)` });
    return;
  }
  state.busy = m.cmd;
  try {
    if (m.cmd === 'load') await load(m);
    else if (m.cmd === 'compile') await compileConstraint(m);
    else if (m.cmd === 'generate') await generate(m);
  } catch (e) {
    fail(m.id, m.cmd === 'load' ? 'model' : m.cmd, e);
  } finally {
    state.busy = null;
  }
};
post({ type: 'worker-ready' });
