#!/usr/bin/env python3
"""Token ids of the corpus' test instances, once, for every engine (issue 20).

    .venv-bench/bin/python benches/schemas/ids.py [--corpus out/schemas-corpus] [--tokenizer models/llama3/tokenizer.json]

For each OUT/NAME.json of corpus.py and each of its tests, the instance text is
compact JSON in the test's own key order,
`json.dumps(data, separators=(',', ':'), ensure_ascii=False)` (MaskBench
itself uses json.dumps' default `, `/`: ` spacing; both engines accept either),
tokenized by the Hugging Face `tokenizers` package (add_special_tokens=False).
Writes CORPUS/ids/NAME.json: {"schema": NAME, "tests": [{"valid", "text", "ids"}]}
and CORPUS/ids/_tokenizer.json: {"tokenizer", "eos": [id], "vocab_size"} (EOS from
tokenizer_config.json next to tokenizer.json). Needs `tokenizers` (.venv-bench).
"""
import argparse
import glob
import json
import os

from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(ROOT, "out", "schemas-corpus"))
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "models", "llama3", "tokenizer.json"))
    a = ap.parse_args()
    tok = Tokenizer.from_file(a.tokenizer)
    cfg = json.load(open(os.path.join(os.path.dirname(a.tokenizer), "tokenizer_config.json")))
    eos = cfg.get("eos_token")
    eos = eos.get("content") if isinstance(eos, dict) else eos
    eos_id = tok.token_to_id(eos)
    out = os.path.join(a.corpus, "ids")
    os.makedirs(out, exist_ok=True)
    n_files = n_tests = n_tok = 0
    for p in sorted(glob.glob(os.path.join(a.corpus, "*.json"))):
        name = os.path.basename(p)[:-5]
        doc = json.load(open(p, encoding="utf-8"))
        tests = []
        for t in doc.get("tests") or []:
            text = json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False)
            ids = tok.encode(text, add_special_tokens=False).ids
            tests.append({"valid": bool(t["valid"]), "text": text, "ids": ids})
            n_tok += len(ids)
        n_tests += len(tests)
        n_files += 1
        with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump({"schema": name, "tests": tests}, f, ensure_ascii=False)
    with open(os.path.join(out, "_tokenizer.json"), "w") as f:
        json.dump({"tokenizer": os.path.abspath(a.tokenizer), "eos": [eos_id], "eos_token": eos,
                   "vocab_size": tok.get_vocab_size(with_added_tokens=True)}, f)
    print(f"[ids] {n_files} schemas, {n_tests} instances, {n_tok} tokens (EOS {eos} = {eos_id}) -> {out}")


if __name__ == "__main__":
    main()
