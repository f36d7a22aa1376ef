#!/usr/bin/env python3
"""python.lark fidelity: random generations through the masks (experiment-2 settings) must
pass CPython's compile(). Prints the pass rate and the failures by class.

  python3 scripts/experiments/python_fidelity.py STORE TOKENIZER [--count 400] [--seed 1] [--show 3]

STORE is a compiled store (.gmask) or a grammar (.lark), compiled per request (lazy store:
the same masks as the full store, computed on first visit).
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile
import warnings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GRAMMASK = os.environ.get("GRAMMASK_BIN", os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "ci", "grammask"))


def classify(msg, text):
    m = msg.lower()
    if "bytes can only contain ascii" in m:
        return "non-ASCII character in a bytes literal"
    if "unexpected eof" in m:
        return "unexpected EOF (e.g. trailing line continuation)"
    if "cannot assign" in m or "cannot delete" in m or "assignment" in m and "expression" in m:
        return "assignment/del target is not assignable"
    if "invalid character" in m or "non-printable" in m:
        return "invalid character in identifier / non-printable"
    if "literal" in m and "invalid" in m:
        return "invalid numeric literal (number followed by a name)"
    if "cannot mix bytes and nonbytes" in m:
        return "bytes and str literals concatenated"
    if "f-string" in m:
        return "f-string replacement field"
    if "codec can't decode" in m or "unicode error" in m:
        return "escape in a string literal (unknown \\N{name}, or in a triple-quoted literal)"
    if "outside function" in m or "outside loop" in m:
        return "return/yield/await/break/continue outside its function or loop"
    return re.sub(r"\(.*?\)|'.*?'|\".*?\"|\d+", "…", msg)[:70]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("tokenizer")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=2)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="pyfid-")
    src = ["--grammar", a.store] if a.store.endswith(".lark") else ["--store", a.store]
    subprocess.run([GRAMMASK, "generate", *src, "--tokenizer", a.tokenizer, "--count", str(a.count), "--seed", str(a.seed),
                    "--max-tokens", "1000", "--eos-bias", "0.002", "--short-bias", "0.9", "--finish-after", "200", "--finish-by", "eos-lookahead", "--out-dir", d],
                   check=True, stdout=subprocess.DEVNULL)
    files = sorted(glob.glob(os.path.join(d, "*")))
    ok = 0
    classes = collections.Counter()
    examples = collections.defaultdict(list)
    for f in files:
        data = open(f, "rb").read()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(data, f, "exec")
            ok += 1
        except (SyntaxError, ValueError) as e:
            c = classify(getattr(e, "msg", str(e)), data)
            classes[c] += 1
            if len(examples[c]) < a.show:
                line = (getattr(e, "text", None) or "").strip()
                examples[c].append(f"{os.path.basename(f)}:{getattr(e, 'lineno', '?')}: {line[:80]!r}")
    print(f"{ok}/{len(files)} generations pass compile() ({100.0 * ok / max(1, len(files)):.1f}%)")
    for c, n in classes.most_common():
        print(f"  {n:4d} {c}")
        for ex in examples[c]:
            print(f"         {ex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
