// Install and use the package as a user does: a new project in a temporary
// folder, `npm install` of the packed tarball (out/npm/grammask-VERSION.tgz,
// made by scripts/build/build-pkg.sh) with --offline (grammask has no
// dependencies, so no registry is needed), then the package README's Plain
// JS example, taken from README.md as installed (so the README and this test
// cannot drift), run with the real Llama-3 tokenizer.json in the project
// folder; its output must be the one the example's last comment states.
// Also: CommonJS require, the runtime entry, and the docs the README links to
// are in the package.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, LLAMA3, fixture } from './helpers.mjs';
import { blocks } from './markdown.mjs';

const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'js/package.json'), 'utf8'));
const TGZ = path.join(ROOT, 'out/npm', `grammask-${PKG.version}.tgz`);
const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'grammask-install-'));
after(() => fs.rmSync(DIR, { recursive: true, force: true }));

function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, { cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  } catch (e) {
    assert.fail(`${cmd} ${args.join(' ')} failed (${e.status}):\n${e.stdout}\n${e.stderr}`);
  }
}

let installed = false;
function install() {
  if (installed) return;
  fixture(TGZ, 'run scripts/build/build-pkg.sh (it packs the package into out/npm/)');
  fs.writeFileSync(path.join(DIR, 'package.json'), JSON.stringify({ name: 'my-app', version: '1.0.0', private: true, type: 'module' }, null, 2));
  // An empty cache and no registry: the install must not need the network.
  const env = { ...process.env, npm_config_cache: path.join(DIR, '.npm-cache'), npm_config_registry: 'http://127.0.0.1:9/' };
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', TGZ], { env });
  installed = true;
}

/** The js block of the installed README under the heading `## Plain JS`. */
function plainJsExample() {
  const text = fs.readFileSync(path.join(DIR, 'node_modules/grammask/README.md'), 'utf8');
  const at = text.indexOf('\n## Plain JS\n');
  assert.ok(at >= 0, 'the package README has a "## Plain JS" section');
  const b = blocks(text.slice(at)).find((x) => x.lang === 'js');
  assert.ok(b, 'the "## Plain JS" section has a js block');
  return b.code;
}

test('install: npm install of the packed tarball into a new project, offline', () => {
  install();
  const manifest = JSON.parse(fs.readFileSync(path.join(DIR, 'package.json'), 'utf8'));
  assert.match(manifest.dependencies.grammask, /grammask-.*\.tgz$/);
  const got = JSON.parse(fs.readFileSync(path.join(DIR, 'node_modules/grammask/package.json'), 'utf8'));
  assert.equal(got.version, PKG.version);
  assert.deepEqual(got.dependencies ?? {}, {}, 'grammask has no dependencies');
  // Only grammask was installed.
  assert.deepEqual(fs.readdirSync(path.join(DIR, 'node_modules')).filter((f) => !f.startsWith('.')), ['grammask']);
});

test('install: the package README\'s Plain JS example runs as written in the new project', () => {
  install();
  fs.copyFileSync(fixture(LLAMA3, 'run scripts/setup/setup.sh (real tokenizers)'), path.join(DIR, 'tokenizer.json'));
  const code = plainJsExample();
  const expected = /\/\/\s*(.+)\s*$/.exec(code.trim().split('\n').at(-1))?.[1];
  assert.ok(expected, 'the example ends with a comment stating its output');
  fs.writeFileSync(path.join(DIR, 'example.mjs'), code);
  const out = run(process.execPath, ['example.mjs']);
  assert.equal(out.trim(), expected.trim());
});

test('install: CommonJS require, the runtime entry, and the docs the README links to', () => {
  install();
  const cjs = run(process.execPath, ['-e', "const g = require('grammask'); console.log(typeof g.compile, g.hasCompiler())"]);
  assert.equal(cjs.trim(), 'function true');
  const rt = run(process.execPath, ['--input-type=module', '-e', "import { hasCompiler, MaskStore } from 'grammask/runtime'; console.log(hasCompiler(), typeof MaskStore.fromBytes)"]);
  assert.equal(rt.trim(), 'false function');
  const root = path.join(DIR, 'node_modules/grammask');
  // Every relative link of the shipped Markdown resolves inside the package.
  for (const f of ['README.md', ...PKG.files.filter((x) => x.endsWith('.md'))]) {
    const text = fs.readFileSync(path.join(root, f), 'utf8');
    for (const [, link] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(link) || link.startsWith('?')) continue;
      assert.ok(fs.existsSync(path.join(root, path.dirname(f), link)), `${f} links ${link}, which the package lacks`);
    }
  }
  assert.ok(PKG.files.includes('docs/js-api.md'));
});
