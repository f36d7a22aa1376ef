// grammask demo page (UI thread): the form, the constraint editor with
// presets, inline errors, and live rendering of what the engine (worker.js,
// a module Web Worker: model, compiles, generation) reports.
// The model defaults to a local one (models/NAME, served by www/serve.mjs)
// when there is one, a real model before a random-weight test model; else the
// hub's SmolLM2. Stop and Esc end a generation within one step (worker.js says how).
// URL parameters (also used by pkg-tests/demo.test.mjs): model=local:NAME | HUB_ID,
// dtype, kind=json_schema|regex|lark|tools, preset, n, sample=0|1, wrap=N, compare=0|1, fence=0|1, prompt.
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

// Tool call mode: the tool list (the editor holds it as JSON), answered in
// the model's tool-call format; the calls are read back with parseToolCalls
// and answered with a pretend result (the demo runs no tools).
const TOOLSETS = {
  'weather & search': {
    prompt: 'What is the weather in Paris right now? Use a tool.',
    tools: [
      { type: 'function', function: { name: 'get_weather', description: 'The current weather in a city', parameters: {
        type: 'object', properties: { city: { type: 'string', maxLength: 40 }, unit: { enum: ['celsius', 'fahrenheit'] } }, required: ['city'], additionalProperties: false } } },
      { type: 'function', function: { name: 'search_web', description: 'Search the web', parameters: {
        type: 'object', properties: { query: { type: 'string', maxLength: 60 } }, required: ['query'], additionalProperties: false } } },
    ],
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

function status(text, busy = false, err = false, action = null) {
  const s = $('status');
  s.textContent = text;
  s.className = busy ? 'busy' : '';
  s.style.color = err ? 'var(--err)' : '';
  if (action) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'secondary';
    b.id = 'statusAction';
    b.textContent = action.label;
    b.onclick = action.onclick;
    s.append(' ', b);
  }
}

const kind = () => document.querySelector('input[name=kind]:checked').value;
const presets = () => (kind() === 'json_schema' ? SCHEMAS : kind() === 'regex' ? REGEXES : kind() === 'tools' ? TOOLSETS : LARKS);
const unescape = (s) => s.replace(/\\n/g, '\n').replace(/\\t/g, '\t');
const grammarTexts = new Map();

async function applyPreset() {
  const p = presets()[$('preset').value];
  if (!p) return;
  let text;
  if (kind() === 'json_schema') text = JSON.stringify(p.schema, null, 2);
  else if (kind() === 'tools') text = JSON.stringify(p.tools, null, 2);
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
  $('toolsRow').hidden = kind() !== 'tools';
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
// Stop: the tokens shown when it was pressed, the time of the press, and the
// sampling times the worker reports (the same clock): the tokens sampled
// after the press are counted exactly, however late the page renders them.
let shownTokens = 0, shownAtStop = -1, pressedAt = -1;
let sampledAt = [];
let locals = [];

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
  if (o.kind === 'tools') { c.toolFormat = o.toolFormat; c.toolChoice = o.toolChoice; }
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

/** A "nice" upper bound (1, 2 or 5 × 10^k) at or above x. */
function niceCeil(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x * (1 - 1e-9));
}
const fmtCount = (v) => (v >= 1e6 ? `${v / 1e6}M` : v >= 1e3 ? `${v / 1e3}k` : `${v}`);

/**
 * The per-step chart, drawn at the SVG's own pixel size (text is never
 * stretched): allowed tokens on a log scale (left axis, blue), mask time in
 * ms (right axis, orange), step number along the bottom. Labels sit outside
 * the plot area, so no line crosses them.
 */
function renderChart(steps) {
  const svg = $('chart');
  const W = Math.max(200, Math.round(svg.clientWidth || 600)), H = Math.round(svg.clientHeight || 190);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const L = 46, R = 50, T = 12, B = 34; // plot insets: axis labels live in them
  const pw = W - L - R, ph = H - T - B;
  const n = Math.max(steps.length, 2);
  const x = (i) => L + (i / (n - 1)) * pw;
  const maxAllowed = Math.max(1, ...steps.map((s) => s.allowed));
  const decades = Math.max(1, Math.ceil(Math.log10(maxAllowed + 1)));
  const ya = (a) => T + ph - (Math.log10(Math.max(1, a)) / decades) * ph;
  const maxM = niceCeil(Math.max(0.01, ...steps.map((s) => s.maskMs)));
  const ym = (m) => T + ph - (m / maxM) * ph;
  const parts = [`<rect x="${L}" y="${T}" width="${pw}" height="${ph}" fill="none" stroke="#d5d9e0"/>`];
  const text = (tx, ty, str, attrs = '') => `<text x="${tx.toFixed(1)}" y="${ty.toFixed(1)}" font-size="10" ${attrs}>${str}</text>`;
  // Left axis: powers of ten.
  const every = decades > 5 ? 2 : 1;
  for (let d = 0; d <= decades; d += every) {
    const y = ya(10 ** d);
    parts.push(`<line x1="${L - 4}" x2="${L + pw}" y1="${y}" y2="${y}" stroke="#eef0f4"/>`, text(L - 6, y + 3.5, fmtCount(10 ** d), 'fill="#2456c8" text-anchor="end"'));
  }
  // Right axis: 0, half, max ms.
  for (const v of [0, maxM / 2, maxM]) parts.push(text(L + pw + 6, ym(v) + 3.5, `${+v.toPrecision(3)}`, 'fill="#b35f00"'));
  // Bottom axis: steps 1..n.
  const last = steps.length;
  const xt = last <= 1 ? [1] : [...new Set([1, Math.round(last / 2), last])];
  for (const s of xt) parts.push(`<line x1="${x(s - 1)}" x2="${x(s - 1)}" y1="${T + ph}" y2="${T + ph + 4}" stroke="#5b6270"/>`, text(x(s - 1), T + ph + 14, s, 'fill="#5b6270" text-anchor="middle"'));
  // Axis titles, with units.
  parts.push(text(L + pw / 2, H - 4, 'step (generated token)', 'fill="#5b6270" text-anchor="middle"'));
  parts.push(text(12, T + ph / 2, 'allowed tokens (log)', `fill="#2456c8" text-anchor="middle" transform="rotate(-90 12 ${T + ph / 2})"`));
  parts.push(text(W - 16, T + ph / 2, 'mask time (ms)', `fill="#b35f00" text-anchor="middle" transform="rotate(90 ${W - 16} ${T + ph / 2})"`));
  const line = (f, color) => `<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${steps.map((s, i) => `${x(i).toFixed(1)},${f(s).toFixed(1)}`).join(' ')}"/>`;
  if (steps.length) parts.push(line((s) => ya(s.allowed), '#2456c8'), line((s) => ym(s.maskMs), '#e07b00'));
  svg.innerHTML = parts.join('');
  svg.setAttribute('aria-label', steps.length
    ? `Per step: at most ${maxAllowed} allowed tokens, mask time at most ${Math.max(...steps.map((s) => s.maskMs)).toFixed(3)} ms, over ${steps.length} steps`
    : 'Allowed tokens and mask time per step (no generation yet)');
}
let lastSteps = [];

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
  shownAtStop = -1;
  pressedAt = -1;
  sampledAt = [];
  $('go').disabled = true; $('compile').disabled = true; $('stop').disabled = false;
  const out = $('out');
  // A new run: the previous run's text, figures and chart go.
  out.textContent = '';
  shownTokens = 0;
  $('stats').innerHTML = '';
  $('refused').innerHTML = '';
  $('calls').textContent = '';
  $('callsBox').hidden = true;
  lastSteps = [];
  renderChart(lastSteps);
  try {
    await ensureModel(o);
    await ensureCompiled(o);
    if (shownAtStop >= 0) {
      // Stop while the model loaded or the constraint compiled: no generation.
      status('Stopped before the generation began.');
      return { stopped: true, tokens: 0, text: '', shown: '', shownTokens: 0, shownAtStop, source: lastCompile.source, compileMs: lastCompile.ms };
    }
    $('refused').innerHTML = '';
    const steps = [];
    let raf = 0;
    lastSteps = steps;
    const redraw = () => { raf = 0; renderChart(steps); };
    const r = await call('generate', { prompt: o.prompt, maxNewTokens: o.n, sample: o.sample, compare: o.compare, wrap: o.wrap }, (m) => {
      if (m.type === 'token') {
        const span = document.createElement('span');
        span.textContent = m.text;
        if (m.phase !== 'constrained') span.className = 'free';
        else if (m.forced) span.className = 'forced';
        out.append(span);
        shownTokens++;
        sampledAt.push(m.at);
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
    const after = pressedAt >= 0 ? sampledAt.filter((t) => t > pressedAt).length : undefined;
    statBox({
      'constraint': lastCompile.source,
      'tokens': `${res.tokens}${res.finished ? ' (ended with EOS)' : res.stopped ? ` (stopped: ${after} sampled after the press)` : ' (max_new_tokens reached)'}`,
      'tokens/s constrained': res.tps.toFixed(1),
      'tokens/s unconstrained': res.tpsFree ? res.tpsFree.toFixed(1) : '–',
      'mask ms/step (mean)': res.maskMsMean.toFixed(3),
      'share of time in grammask': `${(100 * res.grammaskShare).toFixed(2)}%`,
      'forced steps': res.forced,
    });
    if (res.calls || res.callsError) showCalls(res);
    status(res.finished ? 'Done: the output is complete.' : res.stopped
      ? `Stopped: ${res.tokens} tokens, ${after} of them sampled after Stop was pressed.` : 'Done: cut off at max new tokens.');
    const stopTransitMs = res.stopGotAt !== undefined && pressedAt >= 0 ? res.stopGotAt - pressedAt : undefined;
    return { ...res, shown: out.textContent, shownTokens, shownAtStop, sampledAfterStop: after, stopTransitMs, source: lastCompile.source, compileMs: lastCompile.ms };
  } catch (e) {
    if (e.offline) offerLocal(e);
    else if (!e.where || e.where === 'model' || e.where === 'generate') status(`Error: ${e.message}`, false, true);
    throw e;
  } finally {
    busy = false;
    $('go').disabled = false; $('compile').disabled = false; $('stop').disabled = true;
  }
}

/** Tool call mode: the calls parseToolCalls read, and the pretend result each would get. */
function showCalls(res) {
  $('callsBox').hidden = false;
  $('calls').textContent = res.callsError
    ? `parseToolCalls: ${res.callsError}`
    : res.calls.length === 0 ? 'No tool call: a text answer.'
      : res.calls.map((c, i) => `call ${i + 1}: ${c.name}(${JSON.stringify(c.arguments)})\n  → tool message (pretend): ${JSON.stringify(res.toolResults[i])}`).join('\n');
}

/** Stop (the button, Esc): the worker ends the generation after the token in progress. */
function requestStop(e) {
  if (!busy || shownAtStop >= 0) return;
  shownAtStop = shownTokens;
  pressedAt = performance.timeOrigin + (e?.timeStamp ?? performance.now());
  worker.postMessage({ cmd: 'stop' });
  $('stop').disabled = true;
  status('Stopping…', true);
}

/** A hub model that could not be downloaded: say so, and offer a local model. */
function offerLocal(e) {
  const local = preferredLocal();
  if (!local) {
    status(`Error: ${e.message} No local model is available: scripts/setup/build-test-models.sh builds one under models/.`, false, true);
    return;
  }
  status(`Error: ${e.message} A local model is available: models/${local}.`, false, true, {
    label: `Use ${local}`,
    onclick: () => { $('model').value = `local:${local}`; $('model').dispatchEvent(new Event('change')); status(`Model: models/${local}. Press Generate.`); $('go').focus(); },
  });
}

/** The local model to default to: a real model before a random-weight test model. */
function preferredLocal() {
  return locals.find((m) => !/random/i.test(m)) ?? locals[0];
}

function readForm() {
  return {
    model: $('model').value, dtype: $('dtype').value, device: $('device').value, kind: kind(), preset: $('preset').value,
    text: $('editor').value, whitespace: $('whitespace').value, toolFormat: $('toolFormat').value, toolChoice: $('toolChoice').value, fence: $('fence').checked, trigger: $('trigger').value, closing: $('closing').value, maxFree: $('maxFree').value,
    prompt: $('prompt').value, n: Number($('n').value), sample: $('sample').checked, wrap: Number($('wrap').value), compare: $('compare').checked,
  };
}

async function setKind(k) {
  document.querySelector(`input[name=kind][value=${k}]`).checked = true;
  await fillPresets();
}

async function main() {
  locals = await (await fetch(new URL('models.json', base))).json();
  const sel = $('model');
  const first = preferredLocal();
  for (const m of [first, ...locals.filter((x) => x !== first)].filter(Boolean)) sel.add(new Option(`${m} (local: models/${m})`, `local:${m}`));
  sel.add(new Option(`${HUB_DEFAULT} (Hugging Face hub)`, HUB_DEFAULT));
  sel.selectedIndex = 0;
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
  renderChart([]);
  new ResizeObserver(() => renderChart(lastSteps)).observe($('chart'));
  const guarded = (f) => () => f().catch(() => {});
  $('form').addEventListener('submit', (e) => { e.preventDefault(); guarded(() => run(readForm()))(); });
  $('compile').addEventListener('click', guarded(async () => {
    const o = readForm();
    $('compile').disabled = true;
    try { await ensureModel(o); await ensureCompiled(o); status('Compiled.'); } finally { $('compile').disabled = false; }
  }));
  $('stop').addEventListener('click', requestStop);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); if (!busy) guarded(() => run(readForm()))(); }
    if (e.key === 'Escape' && busy) { e.preventDefault(); requestStop(e); }
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
