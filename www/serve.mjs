// Static server for the demo: www/dist/ at /, the repository's models/ at
// /models/ (the "local model" option), on 127.0.0.1. Usage:
//   node www/serve.mjs [port]      (default 8080; Ctrl-C to stop)
// Also imported by pkg-tests/demo.test.mjs (start(port) -> http.Server).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WWW = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.join(WWW, 'dist');
const MODELS = path.join(WWW, '..', 'models');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.lark': 'text/plain; charset=utf-8', '.png': 'image/png' };

function resolve(urlPath) {
  const clean = path.posix.normalize(decodeURIComponent(urlPath));
  if (clean.includes('..')) return null;
  if (clean.startsWith('/models/')) return path.join(MODELS, clean.slice('/models/'.length));
  return path.join(DIST, clean === '/' ? 'index.html' : clean.slice(1));
}

export function start(port = 8080, host = '127.0.0.1') {
  const server = http.createServer((req, res) => {
    const file = resolve(new URL(req.url, 'http://x').pathname);
    if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404); res.end('not found'); return; }
    const size = fs.statSync(file).size;
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': size, 'cache-control': 'no-cache' });
    if (req.method === 'HEAD') { res.end(); return; }
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!fs.existsSync(DIST)) { console.error('www/dist missing: run scripts/build/build-www.sh (or ./run.sh)'); process.exit(1); }
  const s = await start(Number(process.argv[2] ?? 8080));
  console.log(`grammask demo: http://127.0.0.1:${s.address().port}/  (Ctrl-C to stop)`);
}
