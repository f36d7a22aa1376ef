#!/usr/bin/env python3
"""Native peers on the same token id streams as `grammask bench` (issue 8).

    python3 benches/peers/peers.py --tokenizer models/llama3/tokenizer.json \
        --grammar json --ids out/ids/json-llama3 [--engines llguidance,xgrammar] [--runs 3] [--json]

Reads the id streams written by `grammask bench --dump-ids DIR` (one JSON file
per document, `{"file": ..., "ids": [...]}`, replayed in name order) and, for
each engine, replays every stream token by token: time the mask
(`fill bitmask`), then consume the token. Reported (µs unless said otherwise;
each figure is the median over --runs runs):

  compile_ms   grammar + tokenizer -> ready matcher factory (llguidance: LLMatcher
               construction of the first matcher, which builds the lexer and parser
               lazily; xgrammar: GrammarCompiler.compile_*; tokenizer loading excluded)
  ttfm_ms      grammar text -> first mask (compile + new matcher + first mask)
  mask p50/p99/max/mean over all masks of all streams (one per token + the final one)
  accepted     tokens the engine consumed / tokens in the streams; a rejected token
               ends its stream and is listed (stream, index, id, token text)

Engines and grammars:
  llguidance 1.9.x  json:   grammars/json.lark (RFC 8259) as a llguidance Lark grammar
                    python: grammars/python.lark WITHOUT indentation (see python_no_indent)
  xgrammar 0.2.x    json:   builtin JSON grammar (compile_builtin_json_grammar)
                    python: not measured (no Python grammar is shipped with xgrammar)

Timing runs in this Python process: each mask call carries ~0.3-1 µs of Python
call overhead that the Rust `grammask bench` figures do not have.

The script installs its own virtual environment in .venv-bench/ (pip, PyPI:
llguidance, xgrammar with --no-deps, numpy, tokenizers, pydantic, apache-tvm-ffi)
and re-runs itself there. PyTorch and transformers are NOT installed: xgrammar
imports them at module level only for annotations/helpers, so benches/peers/stubs/
provides stand-ins (see the module docstrings there). Tokenizers are built from
models/<name>/tokenizer.json directly. Not part of the test suite.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.join(ROOT, ".venv-bench")
PY = os.path.join(VENV, "bin", "python")
REQS = ["llguidance==1.9.*", "numpy", "tokenizers", "pydantic", "typing-extensions>=4.9", "apache-tvm-ffi>=0.1.11"]
NO_DEPS = ["xgrammar==0.2.*"]  # its torch/transformers/triton requirements are not wanted


def ensure_venv():
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(PY):
        print(f"[peers] creating {VENV}", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        pip = [PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.check_call(pip + REQS)
        subprocess.check_call(pip + ["--no-deps"] + NO_DEPS)
    os.execv(PY, [PY] + sys.argv)


def import_peers():
    import tvm_ffi  # noqa: F401  (import before the torch stub: it probes for real torch)
    sys.path.insert(0, os.path.join(ROOT, "benches", "peers", "stubs"))
    import llguidance
    import llguidance.numpy
    import xgrammar
    return llguidance, xgrammar


# ---------------------------------------------------------------- grammars

def json_lark():
    """grammars/json.lark for llguidance, plus `start: _LEADING_WS? json_text _TRAILING_WS?`.

    llguidance applies %ignore only between two lexemes, not before the first
    or after the last one, so whitespace around the top-level value (allowed by
    RFC 8259; every pretty-printed file ends with a newline, generated samples
    often start with whitespace) needs these terminals.
    """
    text = open(os.path.join(ROOT, "grammars", "json.lark")).read()
    # grammask directives (`%lexer`) are not Lark's.
    text = "\n".join(l for l in text.splitlines() if not l.startswith("%lexer"))
    return ("start: _LEADING_WS? json_text _TRAILING_WS?\n_LEADING_WS: /[ \\t\\n\\r]+/\n"
            "_TRAILING_WS: /[ \\t\\n\\r]+/\n" + text)


# Newlines inside brackets: grammask's %indent lexer drops them; llguidance has
# no such mode, and %ignore-ing newlines makes its lexer swallow statement-ending
# _NEWLINEs (tried: the stdlib files are rejected at the first line after a
# bracketed statement). Instead, where valid Python has a newline inside brackets,
# the grammar gets an alternative terminal that carries it:
#   TRAIL: these literals may be followed directly by newline(s) (`foo(\n`, `a,\n`)
#   LEAD:  these literals may be preceded by newline(s) (`\n)`), and so may a STRING
#          without prefix (`'a'\n 'b'`)
# llguidance's lexer does not go back past the last accepting state, so a
# leading-newline variant must not share a prefix with a statement start that
# follows a _NEWLINE: no `\n and` (vs `\nassert`), no `\n r'..'` (vs `\nreturn`).
TRAIL = ["(", "[", "{", ",", "+", "-", "*", "/", "//", "**", "%", "@", "<<", ">>", "&", "|", "^", "~",
         "<", ">", "<=", ">=", "==", "!=", "=", ":=", "->", "and", "or", "not", "in", "is", "if", "else", "for"]
LEAD = [")", "]", "}"]
NL_AFTER = r"\r?\n(?:[\t \f]*(?:#[^\r\n]*)?\r?\n)*[\t \f]*"
NL_BEFORE = r"(?:\r?\n[\t \f]*(?:#[^\r\n]*)?)+"
PLAIN_STRING = r"""(?:"(?:[^"\\\r\n\x00]|\\(?:\r\n|[^\x00]))*"|'(?:[^'\\\r\n\x00]|\\(?:\r\n|[^\x00]))*')"""


# Flat blocks: without indentation, `suite: _NEWLINE stmt+` (block end unknown)
# makes the Earley parser's item sets explode ("Too many items (limit 50000)" on
# the first lines of stdlib files). So a block header's suite is just _NEWLINE
# (its body lines are ordinary statements of the file) and the continuation
# clauses elif/else/except/finally/case are statements of their own.
FLAT = [
    ('if_stmt: "if" namedexpr_test ":" suite ("elif" namedexpr_test ":" suite)* ["else" ":" suite]',
     'if_stmt: "if" namedexpr_test ":" suite\nelif_clause: "elif" namedexpr_test ":" suite\n'
     'else_clause: "else" ":" suite\nfinally_clause: "finally" ":" suite'),
    ('while_stmt: "while" namedexpr_test ":" suite ["else" ":" suite]', 'while_stmt: "while" namedexpr_test ":" suite'),
    ('for_stmt: "for" exprlist "in" testlist_star_expr ":" suite ["else" ":" suite]',
     'for_stmt: "for" exprlist "in" testlist_star_expr ":" suite'),
    ('try_stmt: "try" ":" suite except_clause+ ["else" ":" suite] ["finally" ":" suite]\n'
     '        | "try" ":" suite except_star_clause+ ["else" ":" suite] ["finally" ":" suite]\n'
     '        | "try" ":" suite "finally" ":" suite', 'try_stmt: "try" ":" suite'),
    ('compound_stmt: if_stmt | while_stmt | for_stmt | try_stmt | with_stmt | funcdef\n'
     '              | classdef | decorated | async_stmt | match_stmt',
     'compound_stmt: if_stmt | while_stmt | for_stmt | try_stmt | with_stmt | funcdef\n'
     '              | classdef | decorated | async_stmt | match_stmt\n'
     '              | elif_clause | else_clause | except_clause | except_star_clause | finally_clause | case_block'),
    ("suite: simple_stmt | _NEWLINE _INDENT stmt+ _DEDENT", "suite: simple_stmt | _NEWLINE"),
    ('match_stmt: "match" subject ":" _NEWLINE _INDENT case_block+ _DEDENT', 'match_stmt: "match" subject ":" _NEWLINE'),
    ("%ignore COMMENT", "%ignore /#[^\\r\\n]*/"),
]


def python_no_indent():
    """grammars/python.lark for llguidance, which has no indentation support.

    Changes, everything else is the grammar as is:
    - `%indent` / `%declare _INDENT _DEDENT` are dropped, and so are the
      _INDENT / _DEDENT symbols (in `suite` and `match_stmt`): a block is
      `_NEWLINE stmt+`, so block structure is not checked (where a block ends is
      ambiguous, which llguidance's Earley parser accepts).
    - Newlines inside brackets: every literal of TRAIL in a rule becomes
      `("x" | X_NL)` with X_NL = x followed by newline(s) (and blank/comment lines
      and the next line's indentation); every literal of LEAD becomes
      `("x" | NL_X)` with NL_X = newline(s) then x; STRING likewise (unprefixed
      strings only). Other newline positions inside brackets (before `and`, after
      `( # comment`, ...) are not covered: such tokens show up as rejections.
    - `start: _HEAD? file_input` is added: llguidance applies %ignore only
      between lexemes, so a comment or indentation (grammask, like lark, does
      not check the first line's indentation) at the very start needs a terminal.
    """
    text = open(os.path.join(ROOT, "grammars", "python.lark")).read()
    for a, b in FLAT:
        if a not in text:
            raise SystemExit(f"grammars/python.lark changed; update FLAT in benches/peers/peers.py: {a!r}")
        text = text.replace(a, b)
    out, terms = [], []
    names = {}

    def term(kind, lit):
        key = (kind, lit)
        if key not in names:
            names[key] = f"{kind}_{len(names)}"
            body = re.escape(lit)
            rx = body + NL_AFTER if kind == "NLA" else NL_BEFORE + body
            terms.append(f"{names[key]}: /{rx}/")
        return names[key]

    rejected = [n for l in text.splitlines() if l.startswith("%reject") for n in l.split()[1:]] or ["$^"]
    in_rules = True
    for line in text.splitlines():
        if line.startswith(("%indent", "%declare", "%lexer", "%reject")):
            continue
        if re.match(r"(%s)\s*:" % "|".join(rejected), line):
            continue  # a `%reject`ed terminal (grammask only): refused text, not a token
        line = re.sub(r"\s_(?:INDENT|DEDENT)\b", "", line)
        code = line.split("//")[0] if not line.lstrip().startswith("//") else ""
        if re.match(r"\s*[A-Z_][A-Z0-9_]*\s*(\.\d+)?\s*:", code) or code.lstrip().startswith("%"):
            in_rules = False  # a terminal definition or directive
        elif re.match(r"\s*[a-z?!]", code):
            in_rules = True
        if in_rules and code.strip() and not code.startswith("import_targets:"):  # `import *\n` ends a statement
            def rep(m):
                lit = m.group(1)
                alts = ['"' + lit + '"']
                if lit in TRAIL:
                    alts.append(term("NLA", lit))
                if lit in LEAD:
                    alts.append(term("NLB", lit))
                return "(" + " | ".join(alts) + ")" if len(alts) > 1 else m.group(0)
            line = re.sub(r'"((?:[^"\\]|\\.)+)"', rep, line)
            line = re.sub(r"\bSTRING\b", "(STRING | NLB_STRING)", line)
        out.append(line)
    # NLB_STRING: newline(s) then a string without prefix (a prefix letter
    # after a newline would compete with NAME, which llguidance's lexer cannot
    # undo; an approximation, like the whole no-indent translation).
    terms.append(f"NLB_STRING: /{NL_BEFORE}{PLAIN_STRING}/")
    return "start: _HEAD? file_input\n_HEAD: /[\\t \\f]*#[^\\r\\n]*|[\\t \\f]+/\n" + "\n".join(out) + "\n" + "\n".join(terms) + "\n"


# ---------------------------------------------------------------- tokenizers

def eos_ids(tok_path):
    """EOS ids as grammask picks them: tokenizer_config.json's eos_token."""
    cfg = os.path.join(os.path.dirname(tok_path), "tokenizer_config.json")
    tj = json.load(open(tok_path, encoding="utf-8"))
    ids = {t["content"]: t["id"] for t in tj.get("added_tokens", [])}
    eos = None
    if os.path.exists(cfg):
        e = json.load(open(cfg, encoding="utf-8")).get("eos_token")
        if isinstance(e, dict):
            e = e.get("content")
        eos = ids.get(e)
    return [eos] if eos is not None else []


def xgr_tokenizer_info(xgr, tok_path):
    """TokenizerInfo from tokenizer.json (byte-level BPE: Llama-3, Qwen3)."""
    tj = json.load(open(tok_path, encoding="utf-8"))
    vocab = dict(tj["model"]["vocab"])
    for t in tj.get("added_tokens", []):
        vocab[t["content"]] = t["id"]
    n = max(vocab.values()) + 1
    enc = [""] * n
    for s, i in vocab.items():
        enc[i] = s
    return xgr.TokenizerInfo(enc, xgr.VocabType.BYTE_LEVEL, vocab_size=n, stop_token_ids=eos_ids(tok_path))


# ---------------------------------------------------------------- engines

class Llg:
    name = "llguidance"

    def __init__(self, llg, tok_path, grammar):
        self.llg = llg
        self.tok = llg.LLTokenizer(tok_path, eos_token=eos_ids(tok_path) or None)
        self.n_vocab = self.tok.vocab_size
        lark = json_lark() if grammar == "json" else python_no_indent()
        self.grm = llg.LLMatcher.grammar_from_lark(lark)
        # Python: with the default limits (step_max_items 50_000 ~ 2.5 ms a mask)
        # llguidance gives up ("Too many items") within the first ~50 tokens of
        # every stdlib file, so they are raised 100-fold for the Python grammar.
        self.limits = llg.LLParserLimits(step_max_items=5_000_000, step_lexer_fuel=20_000_000) if grammar == "python" else None
        self.grammar_desc = "grammars/json.lark" if grammar == "json" else "grammars/python.lark without %indent"

    def compile(self):
        m = self.matcher()
        if m.is_error():
            raise RuntimeError(f"llguidance: {m.get_error()}")
        self._first = m
        return m

    def matcher(self):
        return self.llg.LLMatcher(self.tok, self.grm, log_level=0, limits=self.limits)

    def fill(self, m, bitmask):
        self.llg.numpy.fill_next_token_bitmask(m, bitmask)

    def consume(self, m, tid):
        return m.consume_token(tid) and not m.is_error()

    def error(self, m):
        return m.get_error() if m.is_error() else ""


class Xgr:
    name = "xgrammar"

    def __init__(self, xgr, tok_path, grammar):
        if grammar != "json":
            raise NotImplementedError("xgrammar: only the builtin JSON grammar is measured")
        self.xgr = xgr
        self.info = xgr_tokenizer_info(xgr, tok_path)
        self.n_vocab = self.info.vocab_size
        self.grammar_desc = "builtin JSON"

    def compile(self):
        # A new compiler each time, so that its cache does not hide the compile time.
        comp = self.xgr.GrammarCompiler(self.info, max_threads=os.cpu_count() or 1, cache_enabled=False)
        self.compiled = comp.compile_builtin_json_grammar()
        return self.matcher()

    def matcher(self):
        return self.xgr.GrammarMatcher(self.compiled)

    def fill(self, m, bitmask):
        m.fill_next_token_bitmask(bitmask)

    def consume(self, m, tid):
        return m.accept_token(tid)

    def error(self, m):
        return ""


# ---------------------------------------------------------------- measurement

def pct(sorted_v, p):
    if not sorted_v:
        return 0.0
    return sorted_v[int(round((len(sorted_v) - 1) * p))]


def median(v):
    v = sorted(v)
    n = len(v)
    return 0.0 if n == 0 else (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def one_run(eng, streams, np, decode):
    bitmask = np.full((1, (eng.n_vocab + 31) // 32), -1, dtype=np.int32)
    t0 = time.perf_counter()
    m = eng.compile()
    compile_s = time.perf_counter() - t0
    eng.fill(m, bitmask)
    ttfm_s = time.perf_counter() - t0
    times, rejected, accepted, total = [], [], 0, 0
    pc = time.perf_counter
    for name, ids in streams:
        m = eng.matcher()
        total += len(ids)
        row = bitmask[0]
        for i, tid in enumerate(ids):
            t = pc()
            eng.fill(m, bitmask)
            times.append(pc() - t)
            in_mask = bool((int(row[tid >> 5]) >> (tid & 31)) & 1)
            if not eng.consume(m, tid):
                rejected.append({"stream": name, "index": i, "id": tid, "token": decode(tid),
                                 "in_mask": in_mask, "error": eng.error(m)[:300]})
                break
            accepted += 1
        else:
            t = pc()
            eng.fill(m, bitmask)
            times.append(pc() - t)
    times = sorted(x * 1e6 for x in times)
    return {
        "compile_ms": compile_s * 1e3, "ttfm_ms": ttfm_s * 1e3,
        "p50": pct(times, 0.5), "p90": pct(times, 0.9), "p99": pct(times, 0.99), "max": pct(times, 1.0),
        "mean": sum(times) / max(len(times), 1), "masks": len(times),
        "accepted": accepted, "tokens": total, "rejected": rejected,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--grammar", choices=["json", "python"], required=True)
    ap.add_argument("--ids", required=True, help="directory written by grammask bench --dump-ids")
    ap.add_argument("--engines", default="llguidance,xgrammar")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one JSON object per engine")
    ap.add_argument("--print-grammar", action="store_true", help="print the llguidance grammar text and exit")
    a = ap.parse_args()
    if a.print_grammar:
        print(json_lark() if a.grammar == "json" else python_no_indent())
        return 0
    ensure_venv()
    llg, xgr = import_peers()
    import numpy as np
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(a.tokenizer)
    decode = lambda t: hf.decode([t], skip_special_tokens=False)
    streams = []
    for f in sorted(glob.glob(os.path.join(a.ids, "*.json"))):
        d = json.load(open(f))
        streams.append((d.get("file", f) if isinstance(d, dict) else f, d["ids"] if isinstance(d, dict) else d))
    if not streams:
        print(f"no id streams in {a.ids}", file=sys.stderr)
        return 2
    ok = True
    for name in a.engines.split(","):
        try:
            eng = Llg(llg, a.tokenizer, a.grammar) if name == "llguidance" else Xgr(xgr, a.tokenizer, a.grammar)
        except NotImplementedError as e:
            print(f"[peers] skip: {e}", file=sys.stderr)
            continue
        runs = [one_run(eng, streams, np, decode) for _ in range(max(a.runs, 1))]
        keys = ["compile_ms", "ttfm_ms", "p50", "p90", "p99", "max", "mean"]
        res = {k: median([r[k] for r in runs]) for k in keys}
        last = runs[-1]
        from importlib.metadata import version
        res.update(engine=name, version=version(name),
                   grammar=eng.grammar_desc, tokenizer=a.tokenizer, ids=a.ids, streams=len(streams),
                   runs=len(runs), masks=last["masks"], accepted=last["accepted"], tokens=last["tokens"],
                   rejected=last["rejected"])
        ok &= not last["rejected"]
        if a.json:
            print(json.dumps(res))
        else:
            print(f"{name} ({eng.grammar_desc}): compile {res['compile_ms']:.1f} ms, first mask {res['ttfm_ms']:.1f} ms, "
                  f"mask p50 {res['p50']:.1f} us, p90 {res['p90']:.1f}, p99 {res['p99']:.1f}, max {res['max']:.1f}, "
                  f"mean {res['mean']:.1f}; accepted {res['accepted']}/{res['tokens']} tokens")
            for r in last["rejected"]:
                print(f"  rejected: {r['stream']} token #{r['index']} id {r['id']} {r['token']!r} "
                      f"(in mask: {r['in_mask']}) {r['error']}")
        sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
