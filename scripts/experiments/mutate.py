#!/usr/bin/env python3
"""Mutants of corpus files, with the reference parser's verdict on each.

  mutate.py python --n N --out DIR [--seed S] [--max-bytes B]
  mutate.py json   --n N --out DIR [--seed S] [--max-bytes B]

Each mutant applies ONE mutation to one file of the corpus (scripts/experiments/corpus.py:
`stdlib` for python, `json` for json), picked uniformly at random with
random.Random(seed), so the same arguments give the same mutants on the same corpus.

python: tokens from `tokenize` (ENCODING and ENDMARKER skipped; NL and COMMENT too,
  because they carry no syntax; tokens with empty text, i.e. DEDENT and the NEWLINE
  synthesized at EOF, cannot be mutated by their text and are skipped):
    drop  remove the token's text        dup   insert " " + text after it
    swap  exchange the texts of the token and the next mutable token
  NEWLINE and INDENT are mutated by their text ("\\n", the leading whitespace): a
  duplicated NEWLINE/INDENT is inserted without the space.
  Verdict: ast.parse on the mutant's bytes (SyntaxWarnings silenced).
json: tokens are strings, numbers, true/false/null (and any other letter run) and
  the punctuation { } [ ] : , ; mutations drop, dup (text inserted right after the
  token), swap (two adjacent tokens), flip (one byte replaced by another byte).
  Verdict: json.loads on the mutant decoded as UTF-8 (undecodable = error);
  `ok_nonstandard` when json.loads accepts only through NaN/Infinity/-Infinity.

Writes DIR/NNNNNN.py|.json and DIR/manifest.jsonl, one JSON object per mutant:
  {"path", "source", "kind", "detail", "line", "verdict": "ok"|"error"|"ok_nonstandard",
   "message": reference error message or ""}
(`line` is the 1-based line of the mutation in the mutant). Prints a summary to stderr.
"""
import argparse
import ast
import io
import json
import os
import random
import re
import sys
import tokenize
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

SKIP_PY = {tokenize.ENCODING, tokenize.ENDMARKER, tokenize.NL, tokenize.COMMENT}
NO_SPACE_PY = {tokenize.NEWLINE, tokenize.INDENT}


def py_verdict(data):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
        return "ok", ""
    except SyntaxError as e:  # includes IndentationError, TabError
        return "error", f"{type(e).__name__}: {e.msg}"
    except (ValueError, RecursionError, MemoryError) as e:
        return "error", f"{type(e).__name__}: {e}"


def py_tokens(text):
    """(start offset, end offset, type name, text) of the mutable tokens, or None."""
    starts = [0]
    for ln in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    off = lambda pos: starts[pos[0] - 1] + pos[1]  # noqa: E731
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type in SKIP_PY or not t.string:
                continue
            s, e = off(t.start), off(t.end)
            if text[s:e] != t.string:  # e.g. form feeds or odd line ends: offsets unreliable
                return None
            out.append((s, e, t.type, t.string))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out


def py_mutate(rng, text, toks):
    op = rng.choice(["drop", "dup", "swap"])
    i = rng.randrange(len(toks) - (op == "swap"))
    s, e, ty, string = toks[i]
    name = tokenize.tok_name[ty]
    if op == "drop":
        return text[:s] + text[e:], op, f"drop {name} {string!r}", s
    if op == "dup":
        ins = string if ty in NO_SPACE_PY else " " + string
        return text[:e] + ins + text[e:], op, f"dup {name} {string!r}", e
    s2, e2, ty2, string2 = toks[i + 1]
    new = text[:s] + string2 + text[e:s2] + string + text[e2:]
    return new, op, f"swap {name} {string!r} <-> {tokenize.tok_name[ty2]} {string2!r}", s


JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+\-]*|[A-Za-z]+|[{}\[\]:,]')
FLIP_ALPHABET = b' \t\n\r\x00\x1f"\\/{}[],:.-+eE0123456789truefalsnNI\x7f\xc3\xa9\xff'


def _nonstandard(name):
    raise _NonStandard(name)


class _NonStandard(Exception):
    pass


def json_verdict(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return "error", f"not UTF-8: {e.reason}"
    try:
        json.loads(text, parse_constant=_nonstandard)
        return "ok", ""
    except _NonStandard:
        try:
            json.loads(text)
            return "ok_nonstandard", ""
        except (ValueError, RecursionError) as e:
            return "error", str(e)
    except (ValueError, RecursionError) as e:
        return "error", str(e)


def json_mutate(rng, data, toks):
    op = rng.choice(["drop", "dup", "swap", "flip"])
    if op == "flip" or len(toks) < 2:
        op = "flip"
        i = rng.randrange(len(data))
        b = rng.choice([c for c in FLIP_ALPHABET if c != data[i]])
        return data[:i] + bytes([b]) + data[i + 1:], op, f"flip byte {i}: {data[i:i+1]!r} -> {bytes([b])!r}", i
    i = rng.randrange(len(toks) - (op == "swap"))
    m = toks[i]
    s, e, t = m.start(), m.end(), m.group()
    short = t[:20]
    if op == "drop":
        return data[:s] + data[e:], op, f"drop {short!r}", s
    if op == "dup":
        return data[:e] + t + data[e:], op, f"dup {short!r}", e
    m2 = toks[i + 1]
    s2, e2, t2 = m2.start(), m2.end(), m2.group()
    return data[:s] + t2 + data[e:s2] + t + data[e2:], op, f"swap {short!r} <-> {t2[:20]!r}", s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["python", "json"])
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-bytes", type=int, default=1_000_000, help="skip larger source files")
    args = ap.parse_args()
    sys.setrecursionlimit(10000)
    files = corpus.stdlib() if args.mode == "python" else corpus.jsons()
    files = [f for f in files if os.path.getsize(f) <= args.max_bytes]
    if not files:
        sys.exit(f"mutate.py: empty {args.mode} corpus")
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    ext = ".py" if args.mode == "python" else ".json"
    counts = {}
    cache = {}
    with open(os.path.join(args.out, "manifest.jsonl"), "w", encoding="utf-8") as man:
        n = attempts = 0
        while n < args.n:
            attempts += 1
            if attempts > 20 * args.n + 100:
                sys.exit(f"mutate.py: only {n} mutants after {attempts} attempts")
            f = rng.choice(files)
            if f not in cache:
                data = open(f, "rb").read()
                if args.mode == "python":
                    text = data.decode("utf-8")
                    cache[f] = (text, py_tokens(text))
                else:
                    cache[f] = (data, list(JSON_TOKEN.finditer(data)))
            src, toks = cache[f]
            if not src or toks is None or (args.mode == "python" and len(toks) < 2):
                continue
            if args.mode == "python":
                new, kind, detail, at = py_mutate(rng, src, toks)
                line = src.count("\n", 0, at) + 1
                data = new.encode("utf-8")
                verdict, msg = py_verdict(data)
            else:
                data, kind, detail, at = json_mutate(rng, src, toks)
                line = src.count(b"\n", 0, at) + 1
                verdict, msg = json_verdict(data)
            path = os.path.join(args.out, f"{n:06d}{ext}")
            with open(path, "wb") as fh:
                fh.write(data)
            man.write(json.dumps({"path": path, "source": f, "kind": kind, "detail": detail,
                                  "line": line, "verdict": verdict, "message": msg}) + "\n")
            counts[verdict] = counts.get(verdict, 0) + 1
            n += 1
    print(f"mutate.py {args.mode}: {n} mutants in {args.out} (seed {args.seed}): "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
