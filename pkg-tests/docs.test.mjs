// Every code block of the README and of docs/{js-api,semantics,blob-format,measurements}.md
// is accounted for, and the JavaScript ones run as written:
//  - ```js blocks run as ES modules in Node, from the repository root, with
//    the packed package (`grammask`) and transformers.js; the one line added
//    in front, `import './prelude.mjs'`, points transformers.js at local
//    models (no model hub here): the hub id onnx-community/SmolLM2-135M-Instruct
//    is served from models/smollm2-135m-instruct in the full tier
//    (GRAMMASK_FULL=1), else from the tiny random-weight test model;
//  - ```json blocks must parse;
//  - ```sh blocks carry a marker `<!-- docs-test: ... -->` on the line before:
//    `full-sh` blocks run with bash in the full tier; `skip (reason)` blocks
//    are not run (the reason says what tests them instead);
//  - ```text and unlabeled blocks are output or layouts, not code.
// A block marked `<!-- docs-test: full (reason) -->` runs in the full tier only.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, FULL, grammaskBin, fixture } from './helpers.mjs';

const FILES = ['README.md', 'docs/js-api.md', 'docs/semantics.md', 'docs/blob-format.md', 'docs/measurements.md'];
const TF = path.join(ROOT, 'pkg-tests/node_modules/@huggingface/transformers');
const DIR = path.join(ROOT, 'pkg-tests', '.docs');

/** The fenced blocks of a Markdown file: { lang, code, line, marker }. */
export function blocks(text) {
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^```(\S*)\s*$/.exec(lines[i]);
    if (!m) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const prev = lines.slice(Math.max(0, start - 2), start).reverse().find((l) => l.trim() !== '') ?? '';
    const mk = /^<!-- docs-test: ([a-z-]+)(?: \((.*)\))? -->$/.exec(prev.trim());
    out.push({ lang: m[1], code: body.join('\n') + '\n', line: start + 1, marker: mk ? mk[1] : null, reason: mk?.[2] });
  }
  return out;
}

function prelude() {
  // The full tier needs the real model (a missing one fails); the fast tier uses the tiny one.
  const model = FULL ? 'smollm2-135m-instruct' : 'tiny-random-llama3';
  fixture(`models/${model}/onnx/model.onnx`, FULL ? 'SMOLLM2=1 bash scripts/setup/build-test-models.sh' : 'run scripts/setup/build-test-models.sh');
  return `// docs.test.mjs: transformers.js offline, the hub id served from models/${model}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { env } from '@huggingface/transformers';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-docs-models-'));
const dir = path.join(root, 'onnx-community', 'SmolLM2-135M-Instruct');
const src = ${JSON.stringify(path.join(ROOT, 'models'))} + '/' + ${JSON.stringify(model)};
fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
for (const f of fs.readdirSync(src)) if (f !== 'onnx') fs.symlinkSync(path.join(src, f), path.join(dir, f));
for (const v of ['model', 'model_q4', 'model_fp16', 'model_quantized']) fs.symlinkSync(path.join(src, 'onnx/model.onnx'), path.join(dir, 'onnx', v + '.onnx'));
env.allowRemoteModels = false;
env.localModelPath = root + path.sep;
process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
`;
}

const all = FILES.flatMap((f) => blocks(fs.readFileSync(path.join(ROOT, f), 'utf8')).map((b) => ({ ...b, file: f })));

test('docs: every code block is accounted for', () => {
  const known = ['js', 'json', 'sh', 'text', ''];
  for (const b of all) {
    assert.ok(known.includes(b.lang), `${b.file}:${b.line}: a \`\`\`${b.lang} block (use js, json, sh, text)`);
    if (b.lang === 'sh') assert.ok(['full-sh', 'skip'].includes(b.marker), `${b.file}:${b.line}: a sh block needs <!-- docs-test: full-sh --> or <!-- docs-test: skip (reason) -->`);
    if (b.marker === 'skip') assert.ok(b.reason, `${b.file}:${b.line}: skip needs a reason`);
    if (b.lang === 'json') assert.doesNotThrow(() => JSON.parse(b.code), `${b.file}:${b.line}: JSON`);
  }
  assert.ok(all.filter((b) => b.lang === 'js').length >= 4);
});

for (const b of all.filter((x) => x.lang === 'js' || (x.lang === 'sh' && x.marker === 'full-sh'))) {
  const fullOnly = b.marker === 'full' || b.marker === 'full-sh';
  // Skips are declared next to the block (pkg-tests/data/skips.json: declaredInPlace).
  const skip = b.marker === 'skip' ? b.reason : fullOnly && !FULL ? `GRAMMASK_FULL=1 (${b.reason ?? 'slow'})` : false;
  test(`docs: ${b.file}:${b.line} (${b.lang}) runs as written`, { skip, timeout: 900_000 }, (t) => {
    fixture(TF, 'run scripts/setup/setup.sh (transformers.js)');
    fs.mkdirSync(DIR, { recursive: true });
    const env = { ...process.env, GRAMMASK_BIN: process.env.GRAMMASK_BIN ?? grammaskBin() };
    let out;
    try {
      if (b.lang === 'js') {
        fs.writeFileSync(path.join(DIR, 'prelude.mjs'), prelude());
        const file = path.join(DIR, `${path.basename(b.file, '.md')}-${b.line}.mjs`);
        fs.writeFileSync(file, `import './prelude.mjs';\n${b.code}`);
        out = execFileSync(process.execPath, [file], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
      } else {
        out = execFileSync('bash', ['-euo', 'pipefail', '-c', b.code], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
      }
    } catch (e) {
      assert.fail(`${b.file}:${b.line} failed (${e.status}):\n${e.stdout}\n${e.stderr}`);
    }
    t.diagnostic(out.trim().split('\n').slice(-6).join(' | ').slice(0, 600));
  });
}

test('docs: the README links resolve', () => {
  const text = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  for (const [, link] of text.matchAll(/\]\(((?:docs|grammars|www|scripts)\/[^)#\s]+)/g)) {
    assert.ok(fs.existsSync(path.join(ROOT, link)), `README links ${link}`);
  }
});

after(() => { fs.rmSync(DIR, { recursive: true, force: true }); });
