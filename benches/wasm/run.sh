#!/usr/bin/env bash
# Wasm benchmark (issue 8, wasm part): the npm package `grammask` (Node, wasm)
# vs @mlc-ai/web-xgrammar 0.1.27 (builtin JSON grammar) in one Node process, on
# the same token id streams as benches/native/run.sh. Prints one table and
# writes it to out/bench-wasm.txt with the date, the machine and the command.
#
#   bash benches/wasm/run.sh                       # json x llama3, qwen3; python x llama3; 3 runs
#   RUNS=5 CASES="json-llama3 python-llama3" bash benches/wasm/run.sh
#
# Builds what is missing: the native CLI (release), the npm package
# (scripts/build/build-pkg.sh; timed through `import 'grammask'`, the full build;
# rerun build-pkg.sh after changing the Rust code), the stores (out/G-T.gmask,
# shared with benches/native/run.sh; delete them to rebuild), the id streams (`grammask bench
# --dump-ids out/ids/W-T`, regenerated each time), benches/wasm/node_modules
# and the link benches/node_modules (benches/setup.sh). xgrammar runs on JSON
# cases only (it ships no Python grammar).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-3}"
CASES="${CASES:-json-llama3 json-qwen3 python-llama3}"
say() { printf '[bench-wasm] %s\n' "$*" >&2; }
export PATH="$HOME/.cargo/bin:$PATH"

[ -f models/llama3/tokenizer.json ] || bash scripts/setup/setup.sh
say "building grammask (release)"
cargo build --release --quiet --bin grammask
G="${CARGO_TARGET_DIR:-target}/release/grammask"
if [ ! -f pkg-tests/node_modules/grammask/package.json ]; then
  say "building the npm package (scripts/build/build-pkg.sh)"
  bash scripts/build/build-pkg.sh >&2
fi
bash benches/setup.sh
mkdir -p out/ids out/workloads

# Workload files (as benches/native/run.sh): python = stdlib modules copied from this Python.
bash benches/workloads/copy-python.sh

args=()
for c in $CASES; do
  g="${c%-*}" tok="${c#*-}"
  case "$g" in json) files=benches/workloads/json ;; python) files=out/workloads/python ;; *) echo "unknown case $c" >&2; exit 1 ;; esac
  s="out/$g-$tok.gmask"
  if [ ! -f "$s" ]; then
    say "compiling $s"
    "$G" compile --json --grammar "grammars/$g.lark" --tokenizer "models/$tok/tokenizer.json" -o "$s" > "out/$g-$tok.compile.json"
  fi
  ids="out/ids/$g-$tok"
  rm -rf "$ids"
  "$G" bench --store "$s" --tokenizer "models/$tok/tokenizer.json" --runs 1 --dump-ids "$ids" "$files" > /dev/null
  spec="$c:$s:$ids"
  [ "$g" = json ] && spec="$spec:models/$tok/tokenizer.json"
  args+=(--case "$spec")
done

CMD="bash benches/wasm/run.sh (CASES=\"$CASES\" RUNS=$RUNS)"
say "node benches/wasm/bench.mjs --runs $RUNS ${args[*]}"
table="$(node benches/wasm/bench.mjs --runs "$RUNS" --json out/bench-wasm.json "${args[@]}")"
{
  printf 'Run of %s (%s CPUs (%s), load average at the end %s)\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf 'command: %s\n\n%s\n' "$CMD" "$table"
} | tee out/bench-wasm.txt
