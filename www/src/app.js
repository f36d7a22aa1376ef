// grammask demo: a chat model in the browser (transformers.js, onnxruntime-web)
// constrained to a grammar by grammask's GrammarLogitsProcessor.
// Blobs: prebuilt ones (blobs.json, by tokenizer fingerprint) or, when none
// matches the model's tokenizer, compiled here with grammask-compiler.
// URL parameters (also used by pkg-tests/demo.test.mjs): model=local:NAME |
// HUB_ID, grammar, n, sample=0|1, wrap=N, compare=0|1, dtype, prompt, auto=1.
import * as T from './vendor/transformers.js';
import initRuntime, { MaskStore } from 'grammask';
import { GrammarLogitsProcessor } from 'grammask/transformers';
import initCompiler, * as C from 'grammask-compiler';

const $ = (id) => document.getElementById(id);
const HUB_DEFAULT = 'onnx-community/SmolLM2-135M-Instruct';
const base = new URL('./', location.href);

T.env.backends.onnx.wasm.wasmPaths = {
  mjs: new URL('vendor/ort-wasm-simd-threaded.asyncify.mjs', base).href,
  wasm: new URL('vendor/ort-wasm-simd-threaded.asyncify.wasm', base).href,
};
T.env.backends.onnx.wasm.numThreads = 1;
T.env.localModelPath = new URL('models/', base).pathname;

const state = { key: null, tok: null, model: null, tokJson: null, stores: new Map() };

function status(msg, err = false) { const s = $('status'); s.textContent = msg; s.className = err ? 'err' : ''; }

async function fetchText(url, optional = false) {
  const r = await fetch(url);
  if (!r.ok) { if (optional) return undefined; throw new Error(`GET ${url}: HTTP ${r.status}`); }
  return r.text();
}

function modelFiles(choice) {
  if (choice.startsWith('local:')) return new URL(`models/${choice.slice(6)}/`, base).href;
  return `https://huggingface.co/${choice}/resolve/main/`;
}

async function loadModel(choice, dtype, device) {
  const key = `${choice}|${dtype}|${device}`;
  if (state.key === key) return;
  const local = choice.startsWith('local:');
  const id = local ? choice.slice(6) : choice;
  T.env.allowLocalModels = local;
  T.env.allowRemoteModels = !local;
  status(`Loading ${id} (${dtype}, ${device})…`);
  const progress = (p) => { if (p.status === 'progress' && p.total) status(`Loading ${id}: ${p.file} ${(100 * p.loaded / p.total).toFixed(0)}%`); };
  state.tok = await T.AutoTokenizer.from_pretrained(id, { progress_callback: progress });
  state.model = await T.AutoModelForCausalLM.from_pretrained(id, { dtype, device, progress_callback: progress });
  const dir = modelFiles(choice);
  state.tokJson = {
    tokenizer: await fetchText(dir + 'tokenizer.json'),
    tokenizerConfig: await fetchText(dir + 'tokenizer_config.json', true),
    generationConfig: await fetchText(dir + 'generation_config.json', true),
  };
  state.key = key;
  state.stores.clear();
}

async function storeFor(grammar) {
  const { tokenizer, tokenizerConfig, generationConfig } = state.tokJson;
  const fp = C.tokenizerFingerprint(tokenizer, { tokenizerConfig, generationConfig });
  if (state.stores.has(grammar)) return state.stores.get(grammar);
  const list = await (await fetch(new URL('blobs.json', base))).json();
  const hit = list.find((b) => b.grammar === grammar && b.tokenizerFingerprint === fp);
  let entry;
  if (hit) {
    const t0 = performance.now();
    const store = await MaskStore.fromUrl(new URL(hit.file, base), undefined,
      (loaded, total) => status(`Loading ${hit.file}: ${(loaded / 1e6).toFixed(1)}${total ? ' / ' + (total / 1e6).toFixed(1) : ''} MB`));
    entry = { store, source: `prebuilt ${hit.file} (${(hit.bytes / 1e6).toFixed(1)} MB, ${(performance.now() - t0).toFixed(0)} ms)`, Matcher: undefined };
  } else {
    status(`No prebuilt ${grammar} blob for this tokenizer (${fp}): compiling in the browser…`);
    await new Promise((r) => setTimeout(r, 30));
    const text = await fetchText(new URL(`grammars/${grammar}.lark`, base));
    const t0 = performance.now();
    const store = C.compileStore(text, tokenizer, { tokenizerConfig, generationConfig });
    entry = { store, source: `compiled in the browser in ${((performance.now() - t0) / 1000).toFixed(1)} s`, Matcher: C.Matcher };
  }
  state.stores.set(grammar, entry);
  return entry;
}

/** The optional "wrap up" bias (for tiny/random models): see the checkbox title. */
function wrapUp(after, promptLen, eosIds) {
  const closers = [...new Set(['"', '}', ']', ')', '\n', '"}', '"]', '}}', ']]', '))', '0', "'"]
    .flatMap((s) => state.tok.encode(s, { add_special_tokens: false })))];
  const f = (ids, logits) => {
    const d = logits.data, w = logits.dims[1];
    for (let r = 0; r < ids.length; r++) {
      const n = ids[r].length - promptLen;
      for (const e of eosIds) d[r * w + e] += n < 6 ? -10 : 8;
      if (n > after) for (const id of closers) d[r * w + id] += Math.min(2 * (n - after), 24);
    }
    return logits;
  };
  return f;
}

function encodePrompt(prompt) {
  const tok = state.tok;
  if (tok.chat_template) {
    return tok.apply_chat_template([{ role: 'user', content: prompt }], { add_generation_prompt: true, return_dict: true });
  }
  return tok(prompt);
}

function eosList() {
  const e = state.model.generation_config?.eos_token_id ?? state.model.config.eos_token_id;
  return (Array.isArray(e) ? e : [e]).filter((x) => Number.isInteger(x));
}

function statBox(items) {
  $('stats').innerHTML = Object.entries(items).map(([k, v]) => `<div>${k}: <b>${v}</b></div>`).join('');
}

export async function runDemo(opts) {
  await loadModel(opts.model, opts.dtype, opts.device);
  const { store, source, Matcher } = await storeFor(opts.grammar);
  const inputs = encodePrompt(opts.prompt);
  const promptLen = inputs.input_ids.dims[1];
  const eos = eosList();
  const ids = [];
  const steps = [];
  const out = $('out');
  out.textContent = '';
  const tbody = $('steps').tBodies[0];
  tbody.innerHTML = '';
  let maskMs = 0, forced = 0;
  const render = () => {
    out.textContent = ids.length ? state.tok.decode(ids, { skip_special_tokens: true }) : '';
    const rows = steps.slice(-12).map((s) => `<tr${s.forced ? ' class="forced"' : ''}><td>${s.step}</td><td>${s.allowed}</td>`
      + `<td>${s.maskMs.toFixed(2)}</td><td>${s.forced ? 'yes' : ''}</td><td>${s.token ?? ''}</td></tr>`);
    tbody.innerHTML = rows.join('');
  };
  const proc = new GrammarLogitsProcessor(store, {
    Matcher, eosTokenIds: eos,
    onStep: (s) => {
      if (s.token !== undefined) ids.push(s.token);
      steps.push(s);
      maskMs += s.maskMs;
      if (s.forced) forced++;
      render();
    },
  });
  const procs = opts.wrap > 0 ? [wrapUp(opts.wrap, promptLen, eos), proc] : [proc];
  status(`Generating (${opts.grammar}, constrained)…`);
  const t0 = performance.now();
  const seq = await state.model.generate({ ...inputs, max_new_tokens: opts.n, do_sample: opts.sample, logits_processor: procs });
  const ms = performance.now() - t0;
  const gen = seq.tolist()[0].slice(promptLen).map(Number);
  const finished = gen.length > 0 && eos.includes(gen.at(-1));
  const text = gen.length ? state.tok.decode(gen, { skip_special_tokens: true }) : '';
  const bytes = [];
  for (const id of gen) if (!eos.includes(id)) bytes.push(...store.tokenBytes(id));
  const exact = new TextDecoder().decode(new Uint8Array(bytes));
  out.textContent = text;
  proc.free();
  const result = { text: exact, decoded: text, tokens: gen.length, finished, ms, tps: gen.length / ms * 1000,
    maskMsMean: maskMs / Math.max(1, steps.length), forced, source, steps: steps.length };
  let free = null;
  if (opts.compare) {
    status('Generating (unconstrained, for comparison)…');
    const f0 = performance.now();
    const s2 = await state.model.generate({ ...inputs, max_new_tokens: gen.length || opts.n, min_new_tokens: gen.length || 1, do_sample: opts.sample });
    const n2 = s2.dims[1] - promptLen;
    free = { tokens: n2, tps: n2 / (performance.now() - f0) * 1000 };
    result.tpsFree = free.tps;
  }
  statBox({
    'blob': source,
    'tokens': `${gen.length}${finished ? ' (ended with EOS)' : ' (max_new_tokens reached)'}`,
    'tokens/s constrained': result.tps.toFixed(1),
    'tokens/s unconstrained': free ? free.tps.toFixed(1) : '–',
    'mask ms/step (mean)': result.maskMsMean.toFixed(2),
    'forced steps': forced,
    'vocab': store.vocabSize,
  });
  status(`Done: ${finished ? 'complete' : 'cut off at max_new_tokens'} (${opts.grammar}).`);
  return result;
}

function readForm() {
  return {
    model: $('model').value, dtype: $('dtype').value, device: $('device').value, grammar: $('grammar').value,
    n: Number($('n').value), sample: $('sample').checked, wrap: Number($('wrap').value), compare: $('compare').checked,
    prompt: $('prompt').value,
  };
}

async function main() {
  await initRuntime();
  await initCompiler();
  const locals = await (await fetch(new URL('models.json', base))).json();
  const sel = $('model');
  sel.add(new Option(`${HUB_DEFAULT} (Hugging Face hub)`, HUB_DEFAULT));
  for (const m of locals) sel.add(new Option(`${m} (local: models/${m})`, `local:${m}`));
  if (!navigator.gpu) $('device').options[1].disabled = true;
  const q = new URLSearchParams(location.search);
  if (q.has('model')) { const v = q.get('model'); if (![...sel.options].some((o) => o.value === v)) sel.add(new Option(v, v)); sel.value = v; }
  if (q.has('grammar')) $('grammar').value = q.get('grammar');
  if (q.has('n')) $('n').value = q.get('n');
  if (q.has('sample')) $('sample').checked = q.get('sample') === '1';
  if (q.has('wrap')) $('wrap').value = q.get('wrap');
  if (q.has('compare')) $('compare').checked = q.get('compare') === '1';
  if (q.has('prompt')) $('prompt').value = q.get('prompt');
  $('dtype').value = q.get('dtype') ?? (sel.value.startsWith('local:') ? 'fp32' : 'q4');
  sel.addEventListener('change', () => { $('dtype').value = sel.value.startsWith('local:') ? 'fp32' : 'q4'; });
  $('grammar').addEventListener('change', () => {
    $('prompt').value = $('grammar').value === 'json' ? 'Give me a small JSON object describing a cat.' : 'Write a Python function that reverses a list.';
  });
  const go = async () => {
    $('go').disabled = true;
    try { return await runDemo(readForm()); } catch (e) { status(`Error: ${e.message}`, true); throw e; } finally { $('go').disabled = false; }
  };
  $('go').addEventListener('click', () => { go().catch(() => {}); });
  window.runDemo = (overrides = {}) => {
    const o = { ...readForm(), ...overrides };
    $('grammar').value = o.grammar;
    $('prompt').value = o.prompt;
    return runDemo(o);
  };
  window.demoReady = true;
  status('Ready.');
  if (q.get('auto') === '1') go().then((r) => { window.demoResult = r; }, (e) => { window.demoResult = { error: e.message }; });
}

main().catch((e) => { status(`Error: ${e.message}`, true); window.demoResult = { error: e.message }; });
