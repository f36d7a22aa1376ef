#!/usr/bin/env python3
"""Validate grammask grammars (grammars/*.lark) with the reference `lark` package (1.2.2).

The grammar is loaded as Lark(parser='lalr', lexer='basic', strict=True): strict makes
Lark raise on any shift/reduce conflict, like grammask. grammask's `%indent NL INDENT
DEDENT` directive is removed from the text and replaced by a lark Indenter postlexer
built from it; a final newline is appended to Python sources that lack one (grammask
synthesizes it). `%lexer` and `%reject` lines are removed (Lark has no such directives;
without `%reject`, Lark drops those terminals, so it accepts what they make grammask refuse).

Usage:
  lark_check.py python PATHS...        parse .py files (dirs are walked); reference = ast.parse
  lark_check.py json PATHS...          parse .json files; reference = json.loads (RFC mode)
  lark_check.py mutate-python N PATHS... mutate N random token sequences (drop/dup/swap
                                       one token via `tokenize`), compare with ast.parse
  lark_check.py mutate-json N PATHS... mutate N random files (drop/dup/swap/insert one
                                       char), compare with json.loads
  lark_check.py conflicts python|json  list LALR conflicts (lark's shift-preferring build)
  lark_check.py cases FILES...         run grammars/cases/*.json accept/reject lists (and
                                       check them against ast.parse / json.loads)
Options: --grammar FILE, --seed S, --max-bytes B (skip larger files), --show K,
         --exclude SUBSTR (repeatable; path substrings to skip).
Only files the reference accepts are counted in `python`/`json` mode.
"""
import argparse
import ast
import collections
import io
import json
import os
import random
import re
import sys
import tokenize
import warnings

from lark import Lark
from lark.indenter import Indenter

HERE = os.path.dirname(os.path.abspath(__file__))
GRAMMARS = os.path.join(HERE, "..", "..", "grammars")


def load(grammar_path, start=None, strict=True):
    text = open(grammar_path, encoding="utf-8").read()
    text = re.sub(r"^%(?:lexer|reject)\s+\w+(?:\s+\w+)*\s*$", "", text, flags=re.M)
    m = re.search(r"^%indent\s+(\w+)\s+(\w+)\s+(\w+)\s*$", text, re.M)
    postlex = None
    if m:
        text = text[: m.start()] + text[m.end():]

        class GrammaskIndenter(Indenter):
            NL_type, INDENT_type, DEDENT_type = m.group(1), m.group(2), m.group(3)
            OPEN_PAREN_types, CLOSE_PAREN_types = [], []
            tab_len = 8

        postlex = GrammaskIndenter()
    if not start:  # default: the first rule of the grammar
        start = re.search(r"^[?!]?([a-z_][a-z_0-9]*)\s*:", text, re.M).group(1)
    kw = {"start": start}
    parser = Lark(text, parser="lalr", lexer="basic", strict=strict, postlex=postlex,
                  debug=not strict,
                  maybe_placeholders=False, **kw)
    if postlex is not None:
        by_value = {t.pattern.value: t.name for t in parser.terminals
                    if t.pattern.type == "str"}
        postlex.OPEN_PAREN_types = [by_value[c] for c in "([{" if c in by_value]
        postlex.CLOSE_PAREN_types = [by_value[c] for c in ")]}" if c in by_value]
    return parser, postlex is not None


def ours(parser, text, indent):
    if indent and text and not text.endswith("\n"):
        text += "\n"
    try:
        parser.parse(text)
        return True, ""
    except Exception as e:  # lark raises several exception types
        first = str(e).strip().splitlines()
        return False, f"{type(e).__name__}: {first[0] if first else ''}"


def py_ref(text):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True, ""
    except (SyntaxError, ValueError) as e:
        return False, f"{type(e).__name__}: {getattr(e, 'msg', str(e))}"


def _no_constant(name):
    raise ValueError(f"non-RFC constant {name}")


def json_ref(text):
    try:
        json.loads(text, parse_constant=_no_constant)
        return True, ""
    except (ValueError, RecursionError) as e:
        return False, str(e)


def walk(paths, ext, excludes, max_bytes):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(ext):
                        out.append(os.path.join(root, f))
        else:
            out.append(p)
    res = []
    for f in out:
        if any(x in f for x in excludes):
            continue
        try:
            if os.path.getsize(f) > max_bytes:
                continue
        except OSError:
            continue
        res.append(f)
    return res


def read(f):
    try:
        with open(f, "rb") as fh:
            data = fh.read()
        if f.endswith(".py"):
            enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            return data.decode(enc)
        return data.decode("utf-8")
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return None


def corpus(args, ext, ref):
    parser, indent = load(args.grammar)
    total = ok = skipped = 0
    fails = []
    for f in walk(args.paths, ext, args.exclude, args.max_bytes):
        text = read(f)
        if text is None or not ref(text)[0]:
            skipped += 1
            continue
        total += 1
        good, why = ours(parser, text, indent)
        if good:
            ok += 1
        else:
            fails.append((f, why))
    rate = 100.0 * ok / total if total else 0.0
    print(f"accepted {ok}/{total} ({rate:.2f}%); {skipped} files skipped "
          f"(undecodable or rejected by the reference parser)")
    for f, why in fails[: args.show]:
        print(f"  FAIL {f}: {why}")
    return 0 if ok == total else 1


def py_tokens(text):
    toks = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER,
                          tokenize.INDENT, tokenize.DEDENT):
                continue
            if t.type == tokenize.NEWLINE and not t.string:
                continue
            toks.append(t)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return toks


def mutate_python(args):
    parser, indent = load(args.grammar)
    rng = random.Random(args.seed)
    files = [f for f in walk(args.paths, ".py", args.exclude, args.max_bytes)]
    rng.shuffle(files)
    agree = total = 0
    cats = collections.Counter()
    examples = {}
    fi = 0
    while total < args.n and files:
        f = files[fi % len(files)]
        fi += 1
        text = read(f)
        if text is None or not py_ref(text)[0]:
            continue
        toks = py_tokens(text)
        if not toks or len(toks) < 3:
            continue
        lines = text.splitlines(keepends=True)
        starts = [0]
        for ln in lines:
            starts.append(starts[-1] + len(ln))

        def off(pos):
            return starts[pos[0] - 1] + pos[1]

        op = rng.choice(["drop", "dup", "swap"])
        i = rng.randrange(len(toks) - 1)
        a, b = toks[i], toks[i + 1]
        sa, ea, sb, eb = off(a.start), off(a.end), off(b.start), off(b.end)
        if op == "drop":
            new = text[:sa] + text[ea:]
            desc = f"drop {a.string!r}"
        elif op == "dup":
            new = text[:ea] + " " + a.string + text[ea:] if a.type != tokenize.NEWLINE \
                else text[:ea] + text[sa:]
            desc = f"dup {a.string!r}"
        else:
            if a.type == tokenize.NEWLINE or b.type == tokenize.NEWLINE:
                continue
            new = text[:sa] + b.string + text[ea:sb] + a.string + text[eb:]
            desc = f"swap {a.string!r} {b.string!r}"
        # Parse only the top-level statement around the mutation for speed: the whole
        # file is parsed (sources are modest); the verdicts are whole-file.
        r, rwhy = py_ref(new)
        o, owhy = ours(parser, new, indent)
        total += 1
        if r == o:
            agree += 1
        else:
            kind = "lenient" if o else "strict"
            key = f"{kind}: {op} {tokenize.tok_name[a.type]}" + \
                  (f" [{rwhy.split(':', 1)[-1].strip()[:50]}]" if not r else f" [{owhy[:60]}]")
            cats[key] += 1
            examples.setdefault(key, f"{f}:{a.start[0]} {desc}")
    rate = 100.0 * agree / total if total else 0.0
    print(f"mutation agreement {agree}/{total} ({rate:.2f}%)")
    for k, c in cats.most_common(args.show):
        print(f"  {c:4d} {k}   e.g. {examples[k]}")
    return 0


def mutate_json(args):
    parser, _ = load(args.grammar)
    rng = random.Random(args.seed)
    files = [f for f in walk(args.paths, ".json", args.exclude, args.max_bytes)]
    rng.shuffle(files)
    agree = total = rejected_by_ref = 0
    bad = []
    fi = 0
    alphabet = ' \t\n\r\x00\x1f"\\/{}[],:.-+eE0123456789truefalsn\u00e9'
    while total < args.n and files:
        f = files[fi % len(files)]
        fi += 1
        text = read(f)
        if not text:
            continue
        op = rng.choice(["drop", "dup", "swap", "insert"])
        i = rng.randrange(len(text))
        if op == "drop":
            new = text[:i] + text[i + 1:]
        elif op == "dup":
            new = text[:i] + text[i] + text[i:]
        elif op == "swap":
            if i + 1 >= len(text):
                continue
            new = text[:i] + text[i + 1] + text[i] + text[i + 2:]
        else:
            new = text[:i] + rng.choice(alphabet) + text[i:]
        r, _ = json_ref(new)
        o, owhy = ours(parser, new, False)
        total += 1
        rejected_by_ref += not r
        if r == o:
            agree += 1
        else:
            bad.append((f, op, i, r, owhy))
    print(f"json mutation agreement {agree}/{total}; json.loads rejected {rejected_by_ref}")
    for f, op, i, r, why in bad[: args.show]:
        print(f"  DISAGREE {f} {op}@{i}: json.loads={'ok' if r else 'reject'} ours={why}")
    return 0 if agree == total else 1


def conflicts(args):
    """Build non-strictly and print every conflict lark resolves (rule reduced, terminal)."""
    import logging
    from lark import logger
    logger.setLevel(logging.WARNING)
    load(args.grammar, strict=False)
    return 0


def cases(args):
    failed = 0
    count = 0
    for path in args.paths:
        spec = json.load(open(path, encoding="utf-8"))
        parser, indent = load(os.path.join(os.path.dirname(path), "..", spec["grammar"]),
                              spec.get("start"))
        ref = {"python.lark": py_ref, "json.lark": json_ref}.get(spec["grammar"])
        for want, key in ((True, "accept"), (False, "reject")):
            for s in spec.get(key, []):
                count += 1
                if ref is not None and ref(s)[0] != want:  # the case itself is wrong
                    failed += 1
                    print(f"  {os.path.basename(path)}: reference parser disagrees "
                          f"with {key}: {s!r} {ref(s)[1]}")
                got, why = ours(parser, s, indent)
                if got != want:
                    failed += 1
                    print(f"  {os.path.basename(path)}: expected {key}, got "
                          f"{'accept' if got else why}: {s!r}")
    print(f"cases: {count - failed}/{count} as expected")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["python", "json", "mutate-python", "mutate-json", "cases",
                                       "conflicts"])
    ap.add_argument("rest", nargs="+")
    ap.add_argument("--grammar")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-bytes", type=int, default=10_000_000)
    ap.add_argument("--show", type=int, default=40)
    ap.add_argument("--exclude", action="append", default=[])
    args = ap.parse_args()
    if args.mode.startswith("mutate"):
        args.n, args.paths = int(args.rest[0]), args.rest[1:]
    else:
        args.paths = args.rest
    lang = "json" if "json" in args.mode or args.rest == ["json"] else "python"
    args.grammar = args.grammar or os.path.join(GRAMMARS, f"{lang}.lark")
    sys.setrecursionlimit(10000)
    return {"python": lambda a: corpus(a, ".py", py_ref),
            "json": lambda a: corpus(a, ".json", json_ref),
            "mutate-python": mutate_python, "mutate-json": mutate_json,
            "cases": cases, "conflicts": conflicts}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
