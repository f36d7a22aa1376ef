// Markdown helpers of the docs tests (docs.test.mjs, install.test.mjs).

/**
 * The fenced blocks of a Markdown text: { lang, code, line, marker, reason }.
 * `marker`/`reason`: a `<!-- docs-test: MARKER (REASON) -->` line just before
 * the fence (blank lines between allowed).
 */
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

/**
 * The tables of a Markdown text (outside fenced blocks): { line, header,
 * rows (the body lines), before (the lines between the previous heading,
 * table or fence and the table) }.
 */
export function tables(text) {
  const lines = text.split('\n');
  const out = [];
  let fence = false;
  let since = 0;
  for (let i = 0; i < lines.length; i++) {
    if (/^```/.test(lines[i])) { fence = !fence; since = i + 1; continue; }
    if (fence) continue;
    if (/^#/.test(lines[i])) { since = i + 1; continue; }
    if (/^\|/.test(lines[i]) && i + 1 < lines.length && /^\|[\s:|-]+\|\s*$/.test(lines[i + 1])) {
      const start = i;
      const rows = [];
      for (i += 2; i < lines.length && /^\|/.test(lines[i]); i++) rows.push(lines[i]);
      out.push({ line: start + 1, header: lines[start], rows, before: lines.slice(since, start) });
      since = i;
      i--;
    }
  }
  return out;
}
