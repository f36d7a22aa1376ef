#!/usr/bin/env python3
"""Writes grammars/cases/oracle/lark_order.json: terminal definitions and the lexer order Lark 1.2.2
gives each (pattern type, len(pattern.value), max_width, min_width, flags, priority), for
tests/suite/lark_order.rs. Run with the Lark venv: .venv-lark/bin/python scripts/gen/lark_order_cases.py [--out FILE]
(FILE: default OUT below).
"""
import argparse
import json
import os

# The checked-in output (scripts/gen/check.sh reruns this script and compares).
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "grammars", "cases", "oracle", "lark_order.json")

GRAMMAR = r'''
start: A | B | C | D | E | F | G | H | I | J | K | L | M | N | O | P | Q | R | S | T | U | V | W | X | Y | Z
     | AA | AB | AC | AD | AE | AF | AG | AH | AI | AJ | AK | AL | AM | AN | AO | AP | AQ | AR | AS | AT
     | ESCAPED_STRING | SIGNED_NUMBER | CNAME | WS | C_COMMENT | CPP_COMMENT | NEWLINE | HEXDIGIT | DECIMAL
     | "if" | "(" | "+=" | /[0-9]+/ | "élan" | "x"i | /ab|c/
A: "abc"
B: "abc"i
C: /ab+c/
D: /[a-z]+/i
E: "a".."z"
F: "\x00".."\x1f"
G: A "-" C
H: "a" | "bb" | "ccc"
I: /x/ | /yy*/ | "zzz"
J: "q" ~ 3
K: "q" ~ 2..5
L: ("a" | "b")+
M: ["x"] "y"
N: /a\/b\n\t\\"/
O: "tab\there\"\\"
P: /a b # comment
    c/x
Q: /(?i)abc/
R: /\d{2,}/
S: /[^\n]*?/
T: /a{,3}/
U: /(?:ab){3}(?:c|de)?/
V.2: /[+-]?\d+/
W.-1: "w"
X: /\p{L}+/
Y: /\x41\u00e9/
Z: /a|b/ "c"
AA: /\b\w+\b/
AB: /a{}/
AC: /a{x}/
AD: /./s
AE: /^a$/m
AF: /a/ims
AG: "x"i "y"
AH: /q/i+
AI: (AG | "zz")~2
AJ: /[\]\\]+/
AK: "\\\""
AL: /"\\"/
AM: /(?x) a  b /
AN: /(?P<n>a)(?:b)/
AO: /(?#c)a/
AP: /\Z/ "a"
AQ: "a" /(?!b)/
AR: /[a-c]{2}/ ~ 2..3
AS: /\pL/
AT: /(a|)+b/
%import common (ESCAPED_STRING, SIGNED_NUMBER, CNAME, WS, C_COMMENT, CPP_COMMENT, NEWLINE, HEXDIGIT, DECIMAL)
'''

from lark.load_grammar import load_grammar
grammar, _ = load_grammar(GRAMMAR, "<lark_order>", [], False)
terminals, _rules, _ignore = grammar.compile(["start"], set())
out = []
for t in terminals:
    p = t.pattern
    out.append({"name": t.name, "type": p.type, "value": p.value, "pattern_len": len(p.value),
                "min_width": str(p.min_width), "max_width": str(p.max_width),
                "flags": "".join(sorted(p.flags)), "priority": t.priority})
ap = argparse.ArgumentParser()
ap.add_argument("--out", default=OUT)
path = ap.parse_args().out
with open(path, "w", encoding="utf-8") as f:
    json.dump({"lark": "1.2.2", "python": "3.11.7", "grammar": GRAMMAR, "terminals": out}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(f"{len(out)} terminals -> {os.path.relpath(path)}")
