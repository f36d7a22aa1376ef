#!/usr/bin/env bash
# llama.cpp's example GBNF grammars (the GBNF front end's real grammars:
# tests/suite/gbnf.rs, pkg-tests/gbnf.test.mjs) into grammars/gbnf/ (gitignored),
# from the registry packages named in grammars/gbnf/MANIFEST.tsv (npm: node-llama-cpp
# ships llama.cpp's grammars/ folder; MIT). Cached in out/gbnf-corpus/; idempotent.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
CACHE=out/gbnf-corpus
mkdir -p "$CACHE"
tail -n +2 grammars/gbnf/MANIFEST.tsv | while IFS=$'\t' read -r file pkg ver _license path _notes; do
  dst="grammars/gbnf/$file"
  [ -f "$dst" ] && continue
  dir="$CACHE/$pkg-$ver"
  if [ ! -d "$dir" ]; then
    tmp="$(mktemp -d "$CACHE/tmp.XXXXXX")"
    (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null)
    mkdir -p "$dir.tmp"
    tar -xzf "$tmp"/*.tgz -C "$dir.tmp"
    mv "$dir.tmp" "$dir"
    rm -rf "$tmp"
  fi
  mkdir -p "$(dirname "$dst")"
  cp "$dir/$path" "$dst"
done
echo "[gbnf] $(tail -n +2 grammars/gbnf/MANIFEST.tsv | wc -l) grammars in grammars/gbnf/"
