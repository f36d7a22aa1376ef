// grammask demo page (UI thread): the form, the constraint editor with
// presets, inline errors, and live rendering of what the engine (worker.js,
// a module Web Worker: model, compiles, generation) reports.
// URL parameters (also used by pkg-tests/demo.test.mjs): model=local:NAME | HUB_ID,
// dtype, kind=json_schema|regex|lark, preset, n, sample=0|1, wrap=N, compare=0|1, fence=0|1, prompt.
// window.demo = { ready, run(overrides) -> Promise<result> } drives the page from tests.
const $ = (id) => document.getElementById(id);
const HUB_DEFAULT = 'onnx-community/SmolLM2-135M-Instruct';
const base = new URL('./', location.href);

const SCHEMAS = {
  'tool call': {
    prompt: 'What is the weather in Paris right now? Call the right tool.',
    schema: {
      type: 'object',
      properties: {
        name: { enum: ['get_weather', 'search_web', 'send_email'] },
        arguments: {
          type: 'object',
          properties: { city: { type: 'string', maxLength: 40 }, unit: { enum: ['celsius', 'fahrenheit'] } },
          required: ['city'], additionalProperties: false,
        },
      },
      required: ['name', 'arguments'], additionalProperties: false,
    },
  },
  'extraction form': {
    prompt: 'Extract the contact: "Jane Doe is 34, reach her at jane@example.com; she wants the newsletter."',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 40 },
        email: { type: 'string', format: 'email' },
        age: { type: 'integer', minimum: 0, maximum: 130 },
        newsletter: { type: 'boolean' },
      },
      required: ['name', 'age', 'newsletter'], additionalProperties: false,
    },
  },
  'recursive (tree)': {
    prompt: 'Describe a small family tree as nested nodes with names.',
    schema: {
      $defs: {
        node: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 20 }, children: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 3 } },
          required: ['name'], additionalProperties: false,
        },
      },
      $ref: '#/$defs/node',
    },
  },
};
const REGEXES = {
  // [0-9], not \d: the regex has Python semantics, where \d is any Unicode decimal digit (２, ٣).
  'ISO date': { prompt: 'When did the Apollo 11 landing happen? Answer with the date only.', regex: '[0-9]{4}-[0-9]{2}-[0-9]{2}' },
  'yes/no + reason': { prompt: 'Is the sky blue? Answer yes or no, then give a short reason.', regex: '(Yes|No), because [a-z ,]{1,80}\\.' },
};
const LARKS = {
  JSON: { prompt: 'Give me a small JSON object describing a cat.', file: 'grammars/json.lark', preset: 'json' },
  'Python in a fence': { prompt: 'Write a Python function that reverses a list.', file: 'grammars/python.lark', preset: 'python', fence: ['```python\\n', '\\n```'] },
  'your own (arithmetic)': {
    prompt: 'Write an arithmetic expression that equals 42.',
    text: 'start: expr\n?expr: expr ("+" | "-") term | term\n?term: term ("*" | "/") atom | atom\n?atom: NUMBER | "(" expr ")"\nNUMBER: /[0-9]{1,4}/\n%ignore " "\n',
  },
};

const worker = new Worker(new URL('./worker.js', base), { type: 'module' });
let nextId = 1;
const pending = new Map(); // id -> { resolve, reject, on }
worker.onmessage = (ev) => {
  const m = ev.data;
  if (m.type === 'worker-ready') return;
  const p = pending.get(m.id);
  if (!p) return;
  if (m.type === 'progress') status(m.text, true);
  else if (m.type === 'error') { pending.delete(m.id); p.reject(Object.assign(new Error(m.message), m)); }
  else if (m.type === 'loaded' || m.type === 'compiled' || m.type === 'done') { pending.delete(m.id); p.resolve(m); }
  else p.on?.(m);
};
worker.onerror = (e) => status(`Worker error: ${e.message}`, false, true);
function call(cmd, args = {}, on) {
  const id = nextId++;
  return new Promise((resolve, reject) => { pending.set(id, { resolve, reject, on }); worker.postMessage({ cmd, id, ...args }); });
}

function status(text, busy = false, err = false) {
  const s = $('status');
  s.textContent = text;
  s.className = busy ? 'busy' : '';
  s.style.color = err ? 'var(--err)' : '';
}

const kind = () => document.querySelector('input[name=kind]:checked').value;
const presets = () => (kind() === 'json_schema' ? SCHEMAS : kind() === 'regex' ? REGEXES : LARKS);
const unescape = (s) => s.replace(/\\n/g, '\n').replace(/\\t/g, '\t');
const grammarTexts = new Map();

async function applyPreset() {
  const p = presets()[$('preset').value];
  if (!p) return;
  let text;
  if (kind() === 'json_schema') text = JSON.stringify(p.schema, null, 2);
  else if (kind() === 'regex') text = p.regex;
  else if (p.text) text = p.text;
  else {
    if (!grammarTexts.has(p.file)) grammarTexts.set(p.file, await (await fetch(new URL(p.file, base))).text());
    text = grammarTexts.get(p.file);
  }
  $('editor').value = text;
  $('editor').rows = kind() === 'regex' ? 2 : 14;
  $('prompt').value = p.prompt;
  $('fence').checked = !!p.fence;
  if (p.fence) { $('trigger').value = p.fence[0]; $('closing').value = p.fence[1]; }
  else if (kind() === 'json_schema') { $('trigger').value = '```json\\n'; $('closing').value = '\\n```'; }
  $('wsLabel').hidden = kind() !== 'json_schema';
  clearError();
  compiledKey = null;
}

function fillPresets() {
  const sel = $('preset');
  sel.innerHTML = '';
  for (const name of Object.keys(presets())) sel.add(new Option(name, name));
  return applyPreset();
}

// ---- errors with their location -------------------------------------------------

function clearError() { $('error').textContent = ''; }

function lineColOfPointer(text, pointer) {
  // The last key of the JSON pointer, found in the schema text (best effort).
  const parts = pointer.replace(/^#/, '').split('/').filter(Boolean);
  for (let i = parts.length - 1; i >= 0; i--) {
    const key = parts[i].replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(key)) continue;
    const at = text.indexOf(JSON.stringify(key));
    if (at >= 0) { const before = text.slice(0, at).split('\n'); return { line: before.length, col: before.at(-1).length + 1 }; }
  }
  return null;
}

function showError(e) {
  const box = $('error');
  box.textContent = `${e.kind ? e.kind + ': ' : ''}${e.message}`;
  let loc = e.line ? { line: e.line, col: e.col } : null;
  if (!loc && e.pointer && kind() === 'json_schema') loc = lineColOfPointer($('editor').value, e.pointer);
  if (loc) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = ` → line ${loc.line}, column ${loc.col}`;
    b.onclick = () => selectAt(loc.line, loc.col);
    box.append(b);
    selectAt(loc.line, loc.col, false);
  }
}

function selectAt(line, col, focus = true) {
  const ed = $('editor');
  const lines = ed.value.split('\n');
  let pos = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
  pos += Math.max(0, col - 1);
  const end = Math.min(ed.value.length, pos + Math.max(1, (lines[line - 1] ?? '').length - col + 1));
  if (focus) ed.focus();
  ed.setSelectionRange(pos, end);
  const lh = parseFloat(getComputedStyle(ed).lineHeight) || 17;
  ed.scrollTop = Math.max(0, (line - 3) * lh);
}

// ---- model and constraint --------------------------------------------------------

let loadedKey = null, compiledKey = null, busy = false;

async function ensureModel(o) {
  const key = `${o.model}|${o.dtype}|${o.device}`;
  if (loadedKey === key) return;
  const info = await call('load', { model: o.model, dtype: o.dtype, device: o.device });
  loadedKey = key;
  compiledKey = null;
  status(`${info.model}: vocabulary of ${info.vocabSize} tokens read in ${info.vocabMs.toFixed(0)} ms (fingerprint ${info.fingerprint})`);
}

function constraintOf(o) {
  const c = { kind: o.kind, text: o.text, whitespace: o.whitespace };
  if (o.kind === 'lark') {
    const p = LARKS[o.preset];
    if (p?.preset) { c.preset = p.preset; c.presetText = grammarTexts.get(p.file); }
  }
  if (o.fence) c.fence = { trigger: unescape(o.trigger), closing: unescape(o.closing), maxFree: Number(o.maxFree) || 0 };
  return c;
}

async function ensureCompiled(o) {
  const c = constraintOf(o);
  const key = JSON.stringify(c);
  if (compiledKey === key) return lastCompile;
  clearError();
  $('compileInfo').textContent = '';
  let r;
  try {
    r = await call('compile', { constraint: c });
  } catch (e) {
    showError(e);
    status('The constraint did not compile: see the message under the editor.', false, true);
    throw e;
  }
  compiledKey = key;
  lastCompile = r;
  $('compileInfo').textContent = `${r.source} in ${r.ms.toFixed(1)} ms: ${r.stats.lexerStates} lexer states, ${r.stats.lrStates} LR states`
    + (r.warnings.length ? `; ignored: ${r.warnings.join('; ')}` : '');
  return r;
}
let lastCompile = null;

// ---- live rendering ----------------------------------------------------------------

function renderChart(steps) {
  const svg = $('chart');
  const W = 600, H = 130, n = Math.max(steps.length, 2);
  const x = (i) => (i / (n - 1)) * (W - 8) + 4;
  const maxA = Math.log10(Math.max(10, ...steps.map((s) => s.allowed)));
  const ya = (a) => H - 6 - (Math.log10(Math.max(1, a)) / maxA) * (H - 16);
  const maxM = Math.max(0.05, ...steps.map((s) => s.maskMs));
  const ym = (m) => H - 6 - (m / maxM) * (H - 16);
  const line = (f, color) => `<polyline fill="none" stroke="${color}" stroke-width="1.6" vector-effect="non-scaling-stroke" points="${steps.map((s, i) => `${x(i).toFixed(1)},${f(s).toFixed(1)}`).join(' ')}"/>`;
  svg.innerHTML = line((s) => ya(s.allowed), '#2456c8') + line((s) => ym(s.maskMs), '#e07b00')
    + `<text x="6" y="12" font-size="10" fill="#2456c8">max ${Math.max(0, ...steps.map((s) => s.allowed))} allowed</text>`
    + `<text x="${W - 6}" y="12" font-size="10" fill="#e07b00" text-anchor="end">max ${maxM.toFixed(3)} ms</text>`;
}

function statBox(items) {
  $('stats').innerHTML = '';
  for (const [k, v] of Object.entries(items)) {
    const d = document.createElement('div');
    d.append(`${k}: `);
    const b = document.createElement('b');
    b.textContent = v;
    d.append(b);
    $('stats').append(d);
  }
}

async function run(o) {
  if (busy) throw new Error('busy');
  busy = true;
  $('go').disabled = true; $('compile').disabled = true; $('stop').disabled = false;
  const out = $('out');
  try {
    await ensureModel(o);
    await ensureCompiled(o);
    out.textContent = '';
    $('refused').innerHTML = '';
    const steps = [];
    let raf = 0;
    const redraw = () => { raf = 0; renderChart(steps); };
    const r = await call('generate', { prompt: o.prompt, maxNewTokens: o.n, sample: o.sample, compare: o.compare, wrap: o.wrap }, (m) => {
      if (m.type === 'token') {
        const span = document.createElement('span');
        span.textContent = m.text;
        if (m.phase !== 'constrained') span.className = 'free';
        else if (m.forced) span.className = 'forced';
        out.append(span);
        out.scrollTop = out.scrollHeight;
      } else if (m.type === 'step') {
        steps.push(m);
        $('refused').innerHTML = '';
        for (const x of m.refused) {
          const li = document.createElement('li');
          li.textContent = `${JSON.stringify(x.text)} (${x.logit.toFixed(1)})`;
          $('refused').append(li);
        }
        if (!raf) raf = requestAnimationFrame(redraw);
      }
    });
    renderChart(steps);
    const res = r.result;
    statBox({
      'constraint': lastCompile.source,
      'tokens': `${res.tokens}${res.finished ? ' (ended with EOS)' : res.stopped ? ' (stopped)' : ' (max_new_tokens reached)'}`,
      'tokens/s constrained': res.tps.toFixed(1),
      'tokens/s unconstrained': res.tpsFree ? res.tpsFree.toFixed(1) : '–',
      'mask ms/step (mean)': res.maskMsMean.toFixed(3),
      'share of time in grammask': `${(100 * res.grammaskShare).toFixed(2)}%`,
      'forced steps': res.forced,
    });
    status(res.finished ? 'Done: the output is complete.' : res.stopped ? 'Stopped.' : 'Done: cut off at max new tokens.');
    return { ...res, shown: out.textContent, source: lastCompile.source, compileMs: lastCompile.ms };
  } catch (e) {
    if (!e.where || e.where === 'model' || e.where === 'generate') status(`Error: ${e.message}`, false, true);
    throw e;
  } finally {
    busy = false;
    $('go').disabled = false; $('compile').disabled = false; $('stop').disabled = true;
  }
}

function readForm() {
  return {
    model: $('model').value, dtype: $('dtype').value, device: $('device').value, kind: kind(), preset: $('preset').value,
    text: $('editor').value, whitespace: $('whitespace').value, fence: $('fence').checked, trigger: $('trigger').value, closing: $('closing').value, maxFree: $('maxFree').value,
    prompt: $('prompt').value, n: Number($('n').value), sample: $('sample').checked, wrap: Number($('wrap').value), compare: $('compare').checked,
  };
}

async function setKind(k) {
  document.querySelector(`input[name=kind][value=${k}]`).checked = true;
  await fillPresets();
}

async function main() {
  const locals = await (await fetch(new URL('models.json', base))).json();
  const sel = $('model');
  sel.add(new Option(`${HUB_DEFAULT} (Hugging Face hub)`, HUB_DEFAULT));
  for (const m of locals) sel.add(new Option(`${m} (local: models/${m})`, `local:${m}`));
  if (!navigator.gpu) $('device').options[1].disabled = true;
  const q = new URLSearchParams(location.search);
  if (q.has('model')) { const v = q.get('model'); if (![...sel.options].some((o) => o.value === v)) sel.add(new Option(v, v)); sel.value = v; }
  $('dtype').value = q.get('dtype') ?? (sel.value.startsWith('local:') ? 'fp32' : 'q4');
  sel.addEventListener('change', () => { $('dtype').value = sel.value.startsWith('local:') ? 'fp32' : 'q4'; });
  for (const r of document.querySelectorAll('input[name=kind]')) r.addEventListener('change', () => { fillPresets(); });
  $('preset').addEventListener('change', () => { applyPreset(); });
  await setKind(q.get('kind') ?? 'json_schema');
  if (q.has('preset')) { $('preset').value = q.get('preset'); await applyPreset(); }
  for (const [k, id] of [['n', 'n'], ['wrap', 'wrap'], ['prompt', 'prompt']]) if (q.has(k)) $(id).value = q.get(k);
  for (const k of ['sample', 'compare', 'fence']) if (q.has(k)) $(k).checked = q.get(k) === '1';
  $('editor').addEventListener('input', () => { compiledKey = null; });
  const guarded = (f) => () => f().catch(() => {});
  $('form').addEventListener('submit', (e) => { e.preventDefault(); guarded(() => run(readForm()))(); });
  $('compile').addEventListener('click', guarded(async () => {
    const o = readForm();
    $('compile').disabled = true;
    try { await ensureModel(o); await ensureCompiled(o); status('Compiled.'); } finally { $('compile').disabled = false; }
  }));
  $('stop').addEventListener('click', () => worker.postMessage({ cmd: 'stop' }));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); if (!busy) guarded(() => run(readForm()))(); }
    if (e.key === 'Escape' && busy) worker.postMessage({ cmd: 'stop' });
  });
  window.demo = {
    ready: true,
    /** Set form fields (kind and preset first), then generate; resolves with the result. */
    async run(over = {}) {
      if (over.kind) await setKind(over.kind);
      if (over.preset) { $('preset').value = over.preset; await applyPreset(); }
      if (over.text !== undefined) $('editor').value = over.text;
      if (over.prompt !== undefined) $('prompt').value = over.prompt;
      if (over.fence !== undefined) $('fence').checked = over.fence;
      if (over.maxFree !== undefined) $('maxFree').value = over.maxFree;
      return run({ ...readForm(), ...over, text: $('editor').value, prompt: $('prompt').value, fence: $('fence').checked });
    },
  };
  status('Ready: press Generate (Ctrl+Enter).');
}

main().catch((e) => { status(`Error: ${e.message}`, false, true); window.demo = { error: e.message }; });
