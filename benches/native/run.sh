#!/usr/bin/env bash
# Native benchmark (issue 8): grammask vs llguidance and xgrammar on the same
# token id streams. Prints one table (engine x workload) and writes it to
# out/bench-native.txt with the date, the machine and the command.
#
#   bash benches/native/run.sh            # all: json, python, gen-json, gen-python x llama3, qwen3
#   TOKENIZERS=llama3 WORKLOADS="json python" RUNS=3 bash benches/native/run.sh
#   PEERS=0 bash benches/native/run.sh    # grammask only (no Python venv)
#
# Workloads (benches/workloads/): json = 16 real documents copied into git
# (json-sources.txt says where from); python = the stdlib modules listed in
# python-stdlib.txt, copied from this Python's stdlib at run time; gen-json /
# gen-python = `grammask generate` samples (seeded) from the Llama-3 store
# (the same texts are replayed under both tokenizers).
# Stores are compiled once into out/ and reused (delete out/*.gmask to rebuild).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
TOKENIZERS="${TOKENIZERS:-llama3 qwen3}"
WORKLOADS="${WORKLOADS:-json python gen-json gen-python}"
RUNS="${RUNS:-3}"
PEERS="${PEERS:-1}"
say() { printf '[bench] %s\n' "$*" >&2; }

[ -f models/llama3/tokenizer.json ] || bash scripts/setup/setup.sh
say "building grammask (release)"
cargo build --release --quiet --bin grammask
G="${CARGO_TARGET_DIR:-target}/release/grammask"
mkdir -p out/bench out/workloads out/ids

grammar_of() { case "$1" in json|gen-json) echo json ;; *) echo python ;; esac; }

# Stores, with their compile time.
for tok in $TOKENIZERS; do
  for g in json python; do
    s="out/$g-$tok.gmask"
    if [ ! -f "$s" ] || [ ! -f "out/$g-$tok.compile.json" ]; then
      say "compiling $s"
      "$G" compile --json --grammar "grammars/$g.lark" --tokenizer "models/$tok/tokenizer.json" -o "$s" > "out/$g-$tok.compile.json"
    fi
  done
done

# Workload files.
bash benches/workloads/copy-python.sh
for g in json python; do
  d="out/workloads/gen-$g"
  if [ ! -d "$d" ]; then
    say "generating $d (seed 8)"
    "$G" generate --store "out/$g-llama3.gmask" --tokenizer models/llama3/tokenizer.json \
      --count 100 --seed 8 --max-tokens 400 --eos-bias 0.01 --finish-after never --out-dir "$d" >&2 || true  # fails when some samples do not complete
  fi
done
files_of() {
  case "$1" in
    json) echo benches/workloads/json ;;
    python) echo out/workloads/python ;;
    *) echo "out/workloads/$1" ;;
  esac
}

for tok in $TOKENIZERS; do
  for w in $WORKLOADS; do
    g="$(grammar_of "$w")"
    ids="out/ids/$w-$tok"
    rm -rf "$ids"
    say "grammask bench: $w x $tok ($RUNS runs)"
    "$G" bench --store "out/$g-$tok.gmask" --tokenizer "models/$tok/tokenizer.json" --runs "$RUNS" \
      --dump-ids "$ids" --json "$(files_of "$w")" > "out/bench/grammask-$w-$tok.json" || true
    if [ "$PEERS" = 1 ]; then
      engines=llguidance,xgrammar
      [ "$g" = json ] || engines=llguidance
      say "peers ($engines): $w x $tok ($RUNS runs)"
      python3 benches/peers/peers.py --tokenizer "models/$tok/tokenizer.json" --grammar "$g" --ids "$ids" \
        --engines "$engines" --runs "$RUNS" --json > "out/bench/peers-$w-$tok.jsonl" || true
    fi
  done
done

CMD="bash benches/native/run.sh (TOKENIZERS=\"$TOKENIZERS\" WORKLOADS=\"$WORKLOADS\" RUNS=$RUNS PEERS=$PEERS)"
python3 benches/native/table.py --cmd "$CMD" --tokenizers "$TOKENIZERS" --workloads "$WORKLOADS" | tee out/bench-native.txt
