// The package's TypeScript declarations, checked by the TypeScript compiler
// (pkg-tests devDependency `typescript`, with `@types/node`) in a temporary
// project (package.json "type": "module"; tsconfig strict, module and
// moduleResolution NodeNext, noEmit) that resolves the installed package
// (pkg-tests/node_modules/grammask) and @huggingface/transformers 4.x:
//  - every ```js block of README.md and docs/js-api.md (read from the files,
//    so the docs and this test cannot drift), as a .ts file: the
//    transformers.js examples (`{ model }`, `logits_processor: processor`)
//    and the Plain JS ones type-check as written;
//  - the .d.ts files themselves (without skipLibCheck), and typed use of
//    grammask/transformers with a LogitsProcessorList;
//  - wrong uses are refused (so a check that passes means something).
// The examples' project has skipLibCheck: transformers.js 4.3.1's own .d.ts
// files do not pass a strict check (its @huggingface/tokenizers types use
// extensionless relative imports; two processors override a method with an
// incompatible signature); grammask's own declarations are checked without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, fixture } from './helpers.mjs';

const NM = path.join(ROOT, 'pkg-tests/node_modules');
const TSC = path.join(NM, 'typescript/bin/tsc');

/**
 * The ```js blocks of a Markdown file that the docs test runs ({ code, line }):
 * not those marked `<!-- docs-test: skip (...) -->` (fragments of a block that runs).
 */
function jsBlocks(file) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```js\s*$/.test(lines[i])) continue;
    const prev = lines.slice(Math.max(0, i - 2), i).reverse().find((l) => l.trim() !== '') ?? '';
    const skip = /^<!-- docs-test: skip\b/.test(prev.trim());
    const line = i + 1, body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (!skip) out.push({ code: body.join('\n') + '\n', line });
  }
  return out;
}

/** A temporary TS project with `files` ({ name: text }); returns tsc's { status, output }. */
function tsc(files, { skipLibCheck }) {
  fixture(TSC, 'cd pkg-tests && npm ci (typescript is a devDependency)');
  fixture(path.join(NM, 'grammask/package.json'), 'bash scripts/build/build-pkg.sh');
  fixture(path.join(NM, '@huggingface/transformers/package.json'), 'run scripts/setup/setup.sh (transformers.js)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-types-'));
  try {
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'types-check', private: true, type: 'module' }));
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'],
        noEmit: true, skipLibCheck, types: ['node'],
      },
      include: ['*.ts'],
    }));
    fs.mkdirSync(path.join(dir, 'node_modules/@huggingface'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'node_modules/@types'), { recursive: true });
    for (const p of ['grammask', '@huggingface/transformers', '@types/node']) {
      fs.symlinkSync(fs.realpathSync(path.join(NM, p)), path.join(dir, 'node_modules', p));
    }
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const r = spawnSync(process.execPath, [TSC, '-p', dir, '--pretty', 'false'], { cwd: dir, encoding: 'utf8' });
    return { status: r.status, output: (r.stdout + r.stderr).split(dir + path.sep).join('') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('types: the README and docs/js-api.md examples type-check under tsc --strict (NodeNext)', { timeout: 300_000 }, () => {
  const files = {};
  for (const f of ['README.md', 'docs/js-api.md']) {
    for (const b of jsBlocks(f)) files[`${path.basename(f, '.md')}-${b.line}.ts`] = b.code;
  }
  const names = Object.keys(files);
  // The README's transformers.js and Plain JS examples are among them.
  assert.ok(Object.values(files).some((c) => c.includes("from 'grammask/transformers'") && c.includes('{ model }')), names.join(' '));
  assert.ok(Object.values(files).some((c) => c.includes("from 'grammask'") && c.includes('computeMask')), names.join(' '));
  const r = tsc(files, { skipLibCheck: true });
  assert.equal(r.status, 0, `tsc --strict on ${names.join(', ')}:\n${r.output}`);
});

const USE = `import { AutoTokenizer, AutoModelForCausalLM, LogitsProcessorList } from '@huggingface/transformers';
import { MaskStore, PreparedVocab, compile } from 'grammask';
import { GrammarLogitsProcessor, StructuredOutputProcessor, applyMask, structuralTagToLark, type StepInfo } from 'grammask/transformers';
import * as runtime from 'grammask/runtime';
import * as webgpu from 'grammask/webgpu';

const tokenizer = await AutoTokenizer.from_pretrained('x');
const model = await AutoModelForCausalLM.from_pretrained('x');
const steps: StepInfo[] = [];
const processor = new StructuredOutputProcessor(tokenizer, { type: 'regex', regex: 'a+' }, { model, onStep: (s) => steps.push(s), trigger: 'x', maxFreeTokens: 8, freeTokensWarning: 64, whitespace: 'flexible', maxWhitespace: 16 });
const freeTokens: number | undefined = steps[0]?.freeTokens;
const list = new LogitsProcessorList();
const vocab = PreparedVocab.fromTokenizer(tokenizer);
const inner = new GrammarLogitsProcessor(compile(vocab, { type: 'json_object' }), { model, tokenizer });
list.push(inner);
await model.generate({ input_ids: [[1n]], logits_processor: list });
await model.generate({ input_ids: [[1n]], logits_processor: processor });
const phase: 'free' | 'constrained' | 'after' | undefined = processor.phases[0];
const first: GrammarLogitsProcessor = processor.processor;
for (const p of processor) p.reset();
const n: number = applyMask(new Float32Array(4), new Uint32Array(1));
const store: MaskStore | runtime.MaskStore = inner.store;
const wgsl: string = webgpu.maskShader('f16');
const tagged = new StructuredOutputProcessor(tokenizer, { type: 'structural_tag', format: { type: 'triggered_tags', triggers: ['<f='], tags: [{ begin: '<f=a>', content: { type: 'json_schema', json_schema: {} }, end: '</f>' }] } });
const lark: string = structuralTagToLark(tokenizer, { type: 'structural_tag', structural_tag: '{"format": {"type": "any_text"}}' }) + (tagged.structuralTag?.grammar ?? '');
const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
const own = new StructuredOutputProcessor(tokenizer, { type: 'tools', tools, tool_choice: 'required', format: { call: '<function={name}>{arguments}</function>', separator: '\\n' } });
const call: string = typeof own.tools?.format === 'object' ? own.tools.format.call : '';
console.log(phase, first, n, store, wgsl, steps.length, freeTokens, lark, call, own.parseToolCalls('')[0]?.name);
`;

test('types: the .d.ts files check without skipLibCheck, and typed use of grammask/transformers compiles', { timeout: 300_000 }, () => {
  const r = tsc({ 'use.ts': USE }, { skipLibCheck: true });
  assert.equal(r.status, 0, `use.ts:\n${r.output}`);
  // grammask's own declarations, checked fully (they import nothing from transformers.js).
  const own = tsc({ 'own.ts': "import 'grammask'; import 'grammask/runtime'; import 'grammask/transformers'; import 'grammask/webgpu'; import 'grammask/web';\n" }, { skipLibCheck: false });
  const mine = own.output.split('\n').filter((l) => /(^|\/)node_modules\/grammask\/|^own\.ts/.test(l));
  assert.deepEqual(mine, [], own.output);
});

test('types: wrong uses are type errors', { timeout: 300_000 }, () => {
  const cases = {
    // A bare schema as the response format.
    'bare.ts': "import { StructuredOutputProcessor } from 'grammask/transformers';\ndeclare const tok: { _tokenizerJSON: any };\nnew StructuredOutputProcessor(tok, { type: 'object', properties: {} });\n",
    // The tokenizer as an option.
    'opt.ts': "import { StructuredOutputProcessor } from 'grammask/transformers';\ndeclare const tok: { _tokenizerJSON: any };\nnew StructuredOutputProcessor(tok, { type: 'json' }, { tokenizer: tok });\n",
    // A model whose EOS ids are not numbers.
    'model.ts': "import { StructuredOutputProcessor } from 'grammask/transformers';\ndeclare const tok: { _tokenizerJSON: any };\nnew StructuredOutputProcessor(tok, { type: 'json' }, { model: { generation_config: { eos_token_id: 'x' } } });\n",
    // A structural-tag field grammask refuses (xgrammar's any_text budget).
    'budget.ts': "import { StructuredOutputProcessor } from 'grammask/transformers';\ndeclare const tok: { _tokenizerJSON: any };\nnew StructuredOutputProcessor(tok, { type: 'structural_tag', format: { type: 'any_text', max_tokens: 4 } });\n",
    // A format of your own without its call.
    'template.ts': "import { StructuredOutputProcessor } from 'grammask/transformers';\ndeclare const tok: { _tokenizerJSON: any };\nnew StructuredOutputProcessor(tok, { type: 'tools', tools: [], format: { begin: '<f>', end: '</f>' } });\n",
    // A phase that does not exist.
    'phase.ts': "import { GrammarLogitsProcessor } from 'grammask/transformers';\ndeclare const p: GrammarLogitsProcessor;\nif (p.phases[0] === 'done') console.log(p);\n",
  };
  for (const [name, text] of Object.entries(cases)) {
    const r = tsc({ [name]: text }, { skipLibCheck: true });
    assert.notEqual(r.status, 0, `${name} should not type-check:\n${text}`);
    assert.match(r.output, new RegExp(`^${name.replace('.', '\\.')}\\(\\d+,\\d+\\): error TS\\d+`, 'm'), r.output);
  }
});
