#!/usr/bin/env python3
"""Lark's own python.lark with grammask's `%indent` against Lark with its PythonIndenter.

Lark parses Python with `Lark.open('python.lark', parser='lalr', postlex=PythonIndenter())`;
the postlexer is Python code. grammask's equivalent is two lines appended to the unmodified
grammar: `%indent _NEWLINE _INDENT _DEDENT` and `%lexer basic` (`%indent` needs a global
lexer; Lark is run with `lexer='basic'` too). This script compares the two on CPython stdlib
files (`scripts/experiments/corpus.py stdlib`) and line-level mutations of them, and lists every
disagreement.

  .venv-lark/bin/python scripts/lark/lark_python_indenter.py [--files 60] [--mutants 3] [--seed 1]

Needs target/ci/grammask (`cargo build --profile ci --bin grammask`) or $GRAMMASK_BIN.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import lark
from lark import Lark
from lark.indenter import PythonIndenter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
GRAMMASK = os.environ.get("GRAMMASK_BIN", os.path.join(TARGET, "ci", "grammask"))


def mutate(rng, text):
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    op = rng.choice(["del", "dup", "indent", "dedent", "char"])
    if op == "del":
        del lines[k]
    elif op == "dup":
        lines.insert(k, lines[k])
    elif op == "indent":
        lines[k] = "  " + lines[k]
    elif op == "dedent":
        lines[k] = lines[k].lstrip()
    elif lines[k]:
        j = rng.randrange(len(lines[k]))
        lines[k] = lines[k][:j] + rng.choice("():[]{} ,.=x1\"'\\#") + lines[k][j + 1:]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--mutants", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    src = os.path.join(os.path.dirname(lark.__file__), "grammars", "python.lark")
    parser = Lark.open(src, parser="lalr", lexer="basic", postlex=PythonIndenter(), start="file_input")
    files = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "experiments", "corpus.py"), "stdlib"],
                           capture_output=True, text=True, check=True).stdout.split()
    rng = random.Random(args.seed)
    files = [f for f in files if os.path.getsize(f) < 6000]
    rng.shuffle(files)
    texts = []
    for f in files[: args.files]:
        t = open(f, encoding="utf-8").read()
        texts.append(t)
        texts.extend(mutate(rng, t) for _ in range(args.mutants))
    keep = os.environ.get("KEEP_DIR")
    with tempfile.TemporaryDirectory() as d:
        d = keep or d
        os.makedirs(d, exist_ok=True)
        grammar = os.path.join(d, "python.lark")
        with open(src, encoding="utf-8") as f:
            body = f.read()
        with open(grammar, "w", encoding="utf-8") as f:
            f.write(body + "\n%indent _NEWLINE _INDENT _DEDENT\n%lexer basic\n")
        paths = []
        for i, t in enumerate(texts):
            paths.append(os.path.join(d, f"{i:05}.py"))
            with open(paths[-1], "w", encoding="utf-8") as f:
                f.write(t)
        out = subprocess.run([GRAMMASK, "parse", "--grammar", grammar, "--start", "file_input", "--json", *paths],
                             capture_output=True, text=True).stdout
        ours = {json.loads(l)["file"]: json.loads(l)["ok"] for l in out.splitlines() if l.startswith('{"file"')}
        dis = []
        n_lark = crashes = 0
        for p, t in zip(paths, texts):
            try:
                parser.parse(t)
                theirs = True
            except lark.exceptions.LarkError:
                theirs = False
            except Exception:  # the Indenter itself fails on some texts (IndexError): a refusal
                theirs = False
                crashes += 1
            n_lark += theirs
            if ours.get(p) != theirs:
                tail = t[-40:]
                dis.append((os.path.basename(p), theirs, ours.get(p), tail))
    print(f"{len(texts)} texts, Lark + PythonIndenter accepts {n_lark} (its postlexer crashed on {crashes}); "
          f"disagreements: {len(dis)}")
    for name, theirs, mine, tail in dis:
        print(f"  {name}: Lark {theirs}, grammask {mine}; text ends {tail!r}")


if __name__ == "__main__":
    main()
