#!/usr/bin/env python3
"""Judge grammask's `%parser earley` Lark grammars with Lark 1.2.2's Earley parser.

For every grammars/cases/lark_earley_*.json (or the files given):
1. Lark's LALR parser refuses the grammar (it is Earley-only), and
   Lark(grammar, parser='earley', lexer='basic') builds;
2. every `accept` text parses with Lark's Earley parser and every `reject` text does not;
3. `grammask generate` (per-request store, Llama-3 tokenizer) writes --count samples, each
   of which Lark's Earley parser accepts.
grammask's `%parser` / `%lexer` directives are removed from the text given to Lark.

Usage: .venv-lark/bin/python scripts/lark/earley_judge.py [--count N] [--bin target/release/grammask] [FILES...]
Exit status 1 on any disagreement.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from lark import Lark
from lark.exceptions import GrammarError, LarkError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def for_lark(text):
    return re.sub(r"^%(parser|lexer) .*$", "", text, flags=re.M)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/grammask"))
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "models/llama3/tokenizer.json"))
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(ROOT, "grammars/cases/lark_earley_*.json")))
    bad = 0
    for f in files:
        case = json.load(open(f))
        g = case["grammar_text"]
        lg = for_lark(g)
        try:
            Lark(lg, parser="lalr", lexer="basic")
            print(f"{f}: Lark's LALR accepts this grammar (not Earley-only)")
            bad += 1
        except GrammarError:
            pass
        p = Lark(lg, parser="earley", lexer="basic")
        for label, want in (("accept", True), ("reject", False)):
            for t in case[label]:
                try:
                    p.parse(t)
                    got = True
                except LarkError:
                    got = False
                if got != want:
                    print(f"{f}: Lark says {t!r} is {'accepted' if got else 'refused'}, the case says {label}")
                    bad += 1
        with tempfile.TemporaryDirectory() as d:
            gf = os.path.join(d, "g.lark")
            open(gf, "w").write(g)
            out = os.path.join(d, "out")
            r = subprocess.run([a.bin, "generate", "--grammar", gf, "--tokenizer", a.tokenizer, "--count", str(a.count),
                                "--max-tokens", "60", "--out-dir", out], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{f}: grammask generate failed: {r.stderr.strip()}")
                bad += 1
                continue
            samples = sorted(glob.glob(os.path.join(out, "sample_*.txt")))
            ok = 0
            for s in samples:
                t = open(s, encoding="utf-8").read()
                try:
                    p.parse(t)
                    ok += 1
                except LarkError as e:
                    print(f"{f}: Lark's Earley parser refuses generation {t!r}: {type(e).__name__}")
                    bad += 1
            print(f"{os.path.relpath(f, ROOT)}: labels agree with Lark's Earley; {ok}/{len(samples)} generations accepted")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
