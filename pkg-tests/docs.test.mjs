// Every code block of README.md, of every Markdown file in docs/ and of the
// package README (js/README.md, shipped as the npm page) is accounted for,
// and the code runs as written:
//  - ```js blocks run as ES modules in Node, with the packed package
//    (`grammask`) and transformers.js; the one line added in front,
//    `import './prelude.mjs'`, points transformers.js at local models (no
//    model hub here): the hub id onnx-community/SmolLM2-135M-Instruct is
//    served from models/smollm2-135m-instruct in the full tier
//    (GRAMMASK_FULL=1), else from the tiny random-weight test model. They run
//    from the repository root; the package README's run in a user's project
//    folder (pkg-tests/.docs/project/: tokenizer.json = Llama-3's, models/my-model
//    = the prelude's model), as it tells users to set one up;
//  - ```json blocks must parse;
//  - ```sh blocks carry a marker `<!-- docs-test: ... -->` on the line before:
//    `run` blocks run with bash (-euo pipefail) from the repository root in
//    every tier, `full-sh` blocks in the full tier only; `skip (reason)`
//    blocks are not run (the reason names what runs them instead: another
//    test, or the benchmark whose output the tables are); `pending (reason)`
//    blocks wait for a feature another branch brings (they are skipped, and
//    the marker becomes `run` when it lands);
//    `bench (reason)` blocks are benchmark runs (minutes to hours, the
//    npm registry and PyPI for the peers): they run, as written, only with
//    GRAMMASK_DOCS_BENCH=1 (node --test pkg-tests/docs.test.mjs), each with
//    a 3-hour limit; their outputs are the tables after them;
//  - ```text and unlabeled blocks are output or layouts, not code.
// A js block marked `<!-- docs-test: full (reason) -->` runs in the full tier only.
// A js block whose last line is a console.log with a comment states its
// output (`// 4008 false`, alternatives with ` or `): it must print that.
// Figures: every table of measured figures in docs/ and README.md carries a
// `<!-- figures: DATE, COMMAND -->` line before it (the date of the run and
// the command that gives the figures; a script path in it must exist); a
// table with units that is not a measurement says so with
// `<!-- docs-test: not-figures (what it is) -->`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, FULL, LLAMA3, grammaskBin, fixture } from './helpers.mjs';
import { blocks, tables } from './markdown.mjs';

const DOCS = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
const FILES = ['README.md', ...DOCS, 'js/README.md'];
const PACKAGE_README = 'js/README.md';
const TF = path.join(ROOT, 'pkg-tests/node_modules/@huggingface/transformers');
const DIR = path.join(ROOT, 'pkg-tests', '.docs');
const PROJECT = path.join(DIR, 'project');
const MODEL = FULL ? 'smollm2-135m-instruct' : 'tiny-random-llama3';

function prelude() {
  // The full tier needs the real model (a missing one fails); the fast tier uses the tiny one.
  fixture(`models/${MODEL}/onnx/model.onnx`, FULL ? 'SMOLLM2=1 bash scripts/setup/build-test-models.sh' : 'run scripts/setup/build-test-models.sh');
  return `// docs.test.mjs: transformers.js offline, the hub id served from models/${MODEL}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { env } from '@huggingface/transformers';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-docs-models-'));
const dir = path.join(root, 'onnx-community', 'SmolLM2-135M-Instruct');
const src = ${JSON.stringify(path.join(ROOT, 'models'))} + '/' + ${JSON.stringify(MODEL)};
fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
for (const f of fs.readdirSync(src)) if (f !== 'onnx') fs.symlinkSync(path.join(src, f), path.join(dir, f));
for (const v of ['model', 'model_q4', 'model_fp16', 'model_quantized']) fs.symlinkSync(path.join(src, 'onnx/model.onnx'), path.join(dir, 'onnx', v + '.onnx'));
env.allowRemoteModels = false;
env.localModelPath = root + path.sep;
process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
`;
}

/** The package README's project folder: what its examples tell a user to have in the current folder. */
function project() {
  fs.mkdirSync(path.join(PROJECT, 'models'), { recursive: true });
  fs.copyFileSync(fixture(LLAMA3, 'run scripts/setup/setup.sh (real tokenizers)'), path.join(PROJECT, 'tokenizer.json'));
  const model = path.join(PROJECT, 'models', 'my-model');
  if (!fs.existsSync(model)) fs.symlinkSync(path.join(ROOT, 'models', MODEL), model);
  return PROJECT;
}

const all = FILES.flatMap((f) => blocks(fs.readFileSync(path.join(ROOT, f), 'utf8')).map((b) => ({ ...b, file: f })));
const BENCH = process.env.GRAMMASK_DOCS_BENCH === '1';
const MARKERS = { sh: ['run', 'full-sh', 'bench', 'skip', 'pending'], js: [null, 'full', 'skip', 'pending'] };

test('docs: every code block is accounted for', () => {
  const known = ['js', 'json', 'sh', 'text', ''];
  for (const b of all) {
    assert.ok(known.includes(b.lang), `${b.file}:${b.line}: a \`\`\`${b.lang} block (use js, json, sh, text)`);
    if (b.lang === 'sh') assert.ok(MARKERS.sh.includes(b.marker), `${b.file}:${b.line}: a sh block needs <!-- docs-test: run -->, <!-- docs-test: full-sh --> or <!-- docs-test: skip (reason) -->`);
    if (b.lang === 'js') assert.ok(MARKERS.js.includes(b.marker), `${b.file}:${b.line}: a js block runs unmarked; markers: full (reason), skip (reason), pending (reason)`);
    if (['skip', 'pending', 'full', 'bench'].includes(b.marker)) assert.ok(b.reason, `${b.file}:${b.line}: ${b.marker} needs a reason`);
    if (b.lang === 'json') assert.doesNotThrow(() => JSON.parse(b.code), `${b.file}:${b.line}: JSON`);
    // The CLI as built (a user has no `grammask` on PATH): target/release/grammask.
    if (b.lang === 'sh') assert.doesNotMatch(b.code, /^\s*grammask\s/m, `${b.file}:${b.line}: write target/release/grammask, not grammask`);
  }
  assert.ok(all.filter((b) => b.lang === 'js').length >= 4);
  assert.ok(all.filter((b) => b.marker === 'run').length >= 2);
});

for (const b of all.filter((x) => x.lang === 'js' || x.lang === 'sh')) {
  const fullOnly = b.marker === 'full' || b.marker === 'full-sh';
  // Skips are declared next to the block (pkg-tests/data/skips.json: declaredInPlace).
  const skip = ['skip', 'pending'].includes(b.marker) ? `${b.marker}: ${b.reason}`
    : b.marker === 'bench' ? (BENCH ? false : `GRAMMASK_DOCS_BENCH=1 (${b.reason})`)
    : fullOnly && !FULL ? `GRAMMASK_FULL=1 (${b.reason ?? 'slow'})` : false;
  test(`docs: ${b.file}:${b.line} (${b.lang}) runs as written`, { skip, timeout: b.marker === 'bench' ? 3 * 3600_000 : 900_000 }, (t) => {
    fs.mkdirSync(DIR, { recursive: true });
    const env = { ...process.env, GRAMMASK_BIN: process.env.GRAMMASK_BIN ?? grammaskBin() };
    const cwd = b.file === PACKAGE_README ? project() : ROOT;
    let out;
    try {
      if (b.lang === 'js') {
        fixture(TF, 'run scripts/setup/setup.sh (transformers.js)');
        fs.writeFileSync(path.join(DIR, 'prelude.mjs'), prelude());
        const file = path.join(DIR, `${b.file.replace(/[/.]/g, '-')}-${b.line}.mjs`);
        fs.writeFileSync(file, `import './prelude.mjs';\n${b.code}`);
        out = execFileSync(process.execPath, [file], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
      } else {
        out = execFileSync('bash', ['-euo', 'pipefail', '-c', b.code], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
      }
    } catch (e) {
      assert.fail(`${b.file}:${b.line} failed (${e.status}):\n${e.stdout}\n${e.stderr}`);
    }
    // An example that states its output in a last-line comment (`// 4008 false`) must print it.
    const last = b.code.trim().split('\n').at(-1);
    const stated = b.lang === 'js' && /^console\.log\(/.test(last) ? /\/\/\s*(.+)$/.exec(last)?.[1] : null;
    if (stated && !/\.\.\.|…/.test(stated)) {
      const got = out.trim().split('\n').at(-1).trim();
      assert.ok(stated.split(' or ').map((x) => x.trim()).includes(got), `${b.file}:${b.line}: printed ${JSON.stringify(got)}, the block says ${JSON.stringify(stated)}`);
    }
    t.diagnostic(out.trim().split('\n').slice(-6).join(' | ').slice(0, 600));
  });
}

test('docs: relative links resolve', () => {
  for (const f of FILES.filter((x) => x !== PACKAGE_README)) {   // the package README's links: install.test.mjs, in the package
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    for (const [, link] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(link) || link.startsWith('?')) continue;
      assert.ok(fs.existsSync(path.join(ROOT, path.dirname(f), link)), `${f} links ${link}`);
    }
  }
});

// A table is one of measured figures when a body cell holds a number with a
// unit of time or size, a percentage, or a count out of a total.
const FIGURE = /\d\s*(µs|us|ms|s|min|KB|MB|GB|KiB|MiB|GiB|B|%)(?![\w])|\d[\d,]*\s*\/\s*\d[\d,]*|\|\s*(\*\*)?[\d,.]+(\*\*)?\s*(?=\|)/;
const SCRIPT = /(?:^|[\s`(=])((?:scripts|benches|pkg-tests|tests|src|www|tools)\/[\w./-]+\.(?:sh|py|mjs|js|rs))/g;

test('docs: every table of figures is dated and names the command that gives it', () => {
  const problems = [];
  for (const f of FILES.filter((x) => x !== PACKAGE_README)) {
    for (const tb of tables(fs.readFileSync(path.join(ROOT, f), 'utf8'))) {
      const marks = tb.before.map((l) => l.trim()).filter((l) => l.startsWith('<!-- '));
      if (marks.some((l) => /^<!-- docs-test: not-figures \(.+\) -->$/.test(l))) continue;
      const fig = marks.map((l) => /^<!-- figures: (\d{4}-\d{2}-\d{2}[^,]*), (.+) -->$/.exec(l)).find(Boolean);
      if (!fig) {
        if (tb.rows.some((r) => FIGURE.test(r))) problems.push(`${f}:${tb.line}: figures without <!-- figures: DATE, COMMAND --> (or <!-- docs-test: not-figures (what) -->): ${tb.header.slice(0, 80)}`);
        continue;
      }
      for (const [, p] of fig[2].matchAll(SCRIPT)) if (!fs.existsSync(path.join(ROOT, p))) problems.push(`${f}:${tb.line}: the figures' command names ${p}, which does not exist`);
    }
  }
  assert.deepEqual(problems, []);
});

after(() => { fs.rmSync(DIR, { recursive: true, force: true }); });
