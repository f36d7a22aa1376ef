// The skipped Node tests are declared: pkg-tests/data/skips.json lists, per
// tier, every test that may skip, and the run must skip exactly those.
//
// Two roles in one file:
//  - a node:test reporter (default export) that writes the skipped tests of a
//    run as JSON: node --test --test-reporter=spec --test-reporter-destination=stdout
//      --test-reporter=./pkg-tests/skips.mjs --test-reporter-destination=out/pkg-tests-skips.json
//      pkg-tests/*.test.mjs
//  - a check (node pkg-tests/skips.mjs out/pkg-tests-skips.json): the skipped
//    tests equal the declared ones for this tier (GRAMMASK_FULL=1: "full", else
//    "fast") and environment; exit status 1 with the differences otherwise.
//
// skips.json: "fast" and "full": [{file, test, reason}] skip in that tier (always);
// "environment": [{file, test, env, reason}] skip exactly when the environment
// variable named by `env` is "1" (a fact about the machine that the machine
// declares, e.g. no WebGPU adapter); "declaredInPlace": [{file, pattern, reason}]:
// tests whose skips are declared next to what they test (docs blocks marked
// <!-- docs-test: skip (reason) --> or full-sh), matched by name.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export default async function* skipsReporter(source) {
  const skipped = [];
  for await (const ev of source) {
    if ((ev.type === 'test:pass' || ev.type === 'test:fail') && ev.data.skip !== undefined && ev.data.skip !== false) {
      skipped.push({ file: path.basename(ev.data.file ?? ''), test: ev.data.name, reason: ev.data.skip === true ? '' : String(ev.data.skip) });
    }
  }
  yield `${JSON.stringify(skipped, null, 1)}\n`;
}

/** The differences between a run's skips and the declared ones ([] when equal). */
export function checkSkips(skipped, declared, { full, env }) {
  const key = (x) => `${x.file} :: ${x.test}`;
  const expected = new Map();
  for (const d of declared[full ? 'full' : 'fast']) expected.set(key(d), d.reason);
  for (const d of declared.environment) if (env[d.env] === '1') expected.set(key(d), d.reason);
  const inPlace = (s) => declared.declaredInPlace.some((d) => d.file === s.file && new RegExp(d.pattern).test(s.test));
  const problems = [];
  const seen = new Set();
  for (const s of skipped) {
    const k = key(s);
    if (seen.has(k)) problems.push(`skipped twice: ${k}`);
    seen.add(k);
    if (!expected.has(k) && !inPlace(s)) problems.push(`skipped but not declared for this tier/environment: ${k} (${s.reason})`);
  }
  for (const k of expected.keys()) if (!seen.has(k)) problems.push(`declared skipped but ran (or does not exist): ${k}`);
  return problems;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) { console.error('usage: node pkg-tests/skips.mjs SKIPPED.json'); process.exit(2); }
  const skipped = JSON.parse(fs.readFileSync(file, 'utf8'));
  const declared = JSON.parse(fs.readFileSync(path.join(HERE, 'data/skips.json'), 'utf8'));
  const full = process.env.GRAMMASK_FULL === '1';
  const problems = checkSkips(skipped, declared, { full, env: process.env });
  const inPlace = skipped.filter((s) => declared.declaredInPlace.some((d) => d.file === s.file && new RegExp(d.pattern).test(s.test))).length;
  if (problems.length) {
    console.error(`pkg-tests skips differ from pkg-tests/data/skips.json (${full ? 'full' : 'fast'} tier):\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`pkg-tests skips: ${skipped.length} skipped, as declared (${full ? 'full' : 'fast'} tier; ${inPlace} docs blocks declared in place)`);
}
