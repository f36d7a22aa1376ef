#!/usr/bin/env python3
"""Which grammars of the third-party Lark corpus does Lark build with which parser?

For every grammar of grammars/thirdparty/MANIFEST.tsv with a start rule: does Lark build it
with parser='lalr', with parser='earley' and lexer='basic', and with parser='earley' (its
default, dynamic lexer)? A grammar that builds with Earley and not with LALR is Earley-only
(docs/lark.md, "Parsing: Earley"). Prints one line per grammar.

Usage: .venv-lark/bin/python scripts/lark/corpus_parsers.py
"""
import csv
import os

from lark import Lark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "grammars/thirdparty")
MODES = [("lalr", dict(parser="lalr")), ("earley-basic", dict(parser="earley", lexer="basic")), ("earley-dynamic", dict(parser="earley"))]

for r in csv.DictReader(open(os.path.join(CORPUS, "MANIFEST.tsv")), delimiter="\t"):
    if not r["start"]:
        continue
    path = os.path.join(CORPUS, r["file"])
    res = {}
    for name, kw in MODES:
        try:
            Lark(open(path).read(), start=r["start"], import_paths=[os.path.dirname(path)], **kw)
            res[name] = "ok"
        except Exception as e:  # noqa: BLE001 (every refusal is reported)
            res[name] = type(e).__name__ + ": " + str(e).split("\n")[0][:80]
    only = " EARLEY-ONLY" if res["lalr"] != "ok" and "ok" in (res["earley-basic"], res["earley-dynamic"]) else ""
    print(f"{r['file']}: {res}{only}")
