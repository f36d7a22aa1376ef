// Per-step cost of the transformers.js processor, replayed without the model
// (issue 20): the real-model test's outputs (out/realmodel.json, written by
// `GRAMMASK_FULL=1 node --test pkg-tests/realmodel.test.mjs`) are fed back
// token by token through a fresh StructuredOutputProcessor per prompt, in
// one fresh Node process, as generate() calls it (logits [1, V] of zeros,
// input_ids growing by the token the model chose). Prints each step whose
// grammask time (the processor's commit + mask, as the test's onStep counts
// it) is over --over ms, with the text before it, and the distribution.
//
//   node benches/wasm/replay-steps.mjs [--over 1] [--runs 3]
//
// Each run is a fresh Node process: the first visits of a process (V8
// compiling the wasm functions' optimized tiers, the vocabulary's caches) are
// what it shows. With several runs each step's figure is its minimum over
// the runs (on a shared machine, preemption only adds time).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { StructuredOutputProcessor } from 'grammask/transformers';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(k) ? Number(args[args.indexOf(k) + 1]) : d);
const over = opt('--over', 1);
const runs = opt('--runs', 3);
const child = args.includes('--child');
const log = child ? () => {} : console.log;
const MODEL = 'smollm2-135m-instruct';
const T = await import(path.join(ROOT, 'www/node_modules/@huggingface/transformers/dist/transformers.node.mjs'));
T.env.allowRemoteModels = false;
T.env.localModelPath = path.join(ROOT, 'models') + path.sep;
const tok = await T.AutoTokenizer.from_pretrained(MODEL);
const DATA = JSON.parse(fs.readFileSync(path.join(ROOT, 'pkg-tests/data/structured.json'), 'utf8'));
const OUT = JSON.parse(fs.readFileSync(path.join(ROOT, 'out/realmodel.json'), 'utf8'));
const w0 = performance.now();
StructuredOutputProcessor.warmup(tok);
log(`warmup ${(performance.now() - w0).toFixed(1)} ms`);
const all = [];
const perPrompt = {};
for (const s of DATA.schemas) {
  const row = OUT.rows.find((r) => r.kind === 'json_schema' && r.name === s.name);
  if (!row) continue;
  const ids = tok.encode(row.text, { add_special_tokens: false });
  const steps = [];
  const c0 = performance.now();
  const proc = new StructuredOutputProcessor(tok, { type: 'json_schema', json_schema: s.schema }, { onStep: (st) => steps.push(st.maskMs + st.commitMs) });
  const construct = performance.now() - c0;
  const V = proc.vocab.vocabSize ?? tok.model.vocab.length;
  const input = [[0n]];
  const logits = new T.Tensor('float32', new Float32Array(V), [1, V]);
  for (let k = 0; k <= ids.length; k++) {
    logits.data.fill(0);
    proc(input, logits);
    if (k < ids.length) input[0].push(BigInt(ids[k]));
  }
  perPrompt[s.name] = { construct, steps, texts: steps.map((_, k) => (k ? tok.decode(ids.slice(0, k)) : '').slice(-40)) };
  proc.free();
}
if (child) {
  process.stdout.write(JSON.stringify(perPrompt));
  process.exit(0);
}
// Each step's minimum over `runs` fresh processes (this one included).
const others = [];
for (let r = 1; r < runs; r++) {
  others.push(JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], { encoding: 'utf8', maxBuffer: 1 << 26 })));
}
for (const [name, p] of Object.entries(perPrompt)) {
  const steps = p.steps.map((ms, k) => Math.min(ms, ...others.map((o) => o[name]?.steps[k] ?? Infinity)));
  const construct = Math.min(p.construct, ...others.map((o) => o[name]?.construct ?? Infinity));
  const text = (k) => p.texts[k];
  const slow = steps.map((ms, k) => [ms, k]).filter(([ms]) => ms > over);
  console.log(`${name}: construct ${construct.toFixed(1)} ms, ${steps.length} steps, max ${Math.max(...steps).toFixed(2)} ms`);
  for (const [ms, k] of slow) console.log(`  step ${k}: ${ms.toFixed(2)} ms after ${JSON.stringify(text(k))}`);
  all.push(...steps);
}
all.sort((a, b) => a - b);
const q = (p) => all[Math.floor(p * (all.length - 1))].toFixed(3);
console.log(`${runs} run(s), each step's minimum; steps ${all.length}: p50 ${q(0.5)} ms, p90 ${q(0.9)}, p99 ${q(0.99)}, max ${q(1)}`);
