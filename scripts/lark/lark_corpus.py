#!/usr/bin/env python3
"""The Lark corpus (grammars/thirdparty/) with Lark 1.2.2 as the oracle.

  lark_corpus.py setup            fetch the packages named in grammars/thirdparty/MANIFEST.tsv
                                  from PyPI (pip download, cached in out/lark-corpus/) and extract
                                  the grammars into grammars/thirdparty/ (gitignored); idempotent
  lark_corpus.py check [NAME...]  per grammar: does Lark's LALR accept it? does grammask load it?
                                  are grammask's LALR tables Lark's (state by state, same actions)?
                                  is every terminal's LarkOrder (max_width, len(pattern), flags) Lark's?
  lark_corpus.py agree [--texts N] [--gen G] [--gen-timeout S] [--tokenizer T] [NAME...]
                                  agreement on complete texts between Lark's parser (same lexer mode)
                                  and grammask's recognizer (`parse`) and matcher (`check`): random
                                  strings, mutations, grammask generations (`generate`; a grammar whose
                                  G generations take over S seconds, default 600, gets no matcher figure)
  lark_corpus.py table [...]      check + agree, printed as the markdown table of docs/lark.md

Run with the Lark venv: `.venv-lark/bin/python scripts/lark/lark_corpus.py ...` (scripts/setup/setup.sh makes it).
grammask binaries: target/ci/grammask and target/ci/examples/lark_tables (`cargo build --profile ci
--bin grammask --example lark_tables`), or $GRAMMASK_BIN / $LARK_TABLES_BIN.
"""
import argparse
import csv
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TP = os.path.join(ROOT, "grammars", "thirdparty")
CACHE = os.path.join(ROOT, "out", "lark-corpus")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
GRAMMASK = os.environ.get("GRAMMASK_BIN", os.path.join(TARGET, "ci", "grammask"))
TABLES = os.environ.get("LARK_TABLES_BIN", os.path.join(TARGET, "ci", "examples", "lark_tables"))
MAXWIDTH = 1 << 64


def manifest():
    with open(os.path.join(TP, "MANIFEST.tsv"), encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# ---------------------------------------------------------------- setup

def setup(args):
    os.makedirs(CACHE, exist_ok=True)
    rows = manifest()
    for pkg, ver in sorted({(r["package"], r["version"]) for r in rows}):
        d = os.path.join(CACHE, f"{pkg}-{ver}")
        if not os.path.isdir(d):
            tmp = tempfile.mkdtemp(dir=CACHE)
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"{pkg}=={ver}", "-d", tmp]
            if pkg == "lark":  # the tests/ grammars are in the sdist only
                cmd[5:5] = ["--no-binary", ":all:"]
            subprocess.run(cmd, check=True)
            (archive,) = glob.glob(os.path.join(tmp, "*"))
            os.makedirs(d + ".tmp", exist_ok=True)
            if archive.endswith(".whl"):
                zipfile.ZipFile(archive).extractall(d + ".tmp")
            else:
                with tarfile.open(archive) as t:
                    t.extractall(d + ".tmp")
                (inner,) = os.listdir(d + ".tmp")
                os.rename(os.path.join(d + ".tmp", inner), d + ".tmp2")
                shutil.rmtree(d + ".tmp")
                os.rename(d + ".tmp2", d + ".tmp")
            os.rename(d + ".tmp", d)
            shutil.rmtree(tmp)
        for r in rows:
            if (r["package"], r["version"]) != (pkg, ver):
                continue
            dst = os.path.join(TP, r["file"])
            if not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(os.path.join(d, r["path_in_package"]), dst)
    print(f"[lark-corpus] {len(rows)} grammars in {os.path.relpath(TP, ROOT)}")


# ---------------------------------------------------------------- Lark side

def lark_load(path, start, lexer="contextual"):
    """Lark(parser='lalr') on the grammar file (a grammask `%lexer` line removed); (parser, error)."""
    from lark import Lark
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^%lexer\s+\w+\s*$", "", text, flags=re.M)
    try:
        return Lark(text, parser="lalr", lexer=lexer, start=start, source_path=path), None
    except Exception as e:  # GrammarError, LexError, ConfigurationError, ImportError ...
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"


def lark_order(t):
    p = t.pattern
    return [str(p.max_width), len(p.value), "".join(sorted(p.flags))]


def grammask_tables(path, start):
    p = subprocess.run([TABLES, path, start], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": f"lark_tables exited {p.returncode}: {p.stderr.strip()[-300:]}"}
    return json.loads(p.stdout)


def compare_tables(lk, ours):
    """Walks both LALR automata from their start states in step; returns a list of differences."""
    from lark.parsers.lalr_analysis import Shift
    table = lk.parser.parser._parse_table
    start = table.start_states[lk.options.start[0]]
    end = table.end_states[lk.options.start[0]]
    terms = {t.name for t in lk.terminals} | {"$END"}
    diffs = []
    seen = {}
    work = [(start, ours["start"])]
    while work and len(diffs) < 10:
        a, b = work.pop()
        if a in seen:
            if seen[a] != b:
                diffs.append(f"Lark state {a} pairs with grammask states {seen[a]} and {b}")
            continue
        seen[a] = b
        la = table.states[a]
        ob = ours["states"][b]
        oa = dict(ob["actions"])
        og = ob["goto"]
        for sym, (act, arg) in la.items():
            # %declare'd terminals (a postlexer's) are not in lk.terminals: Lark's is_terminal.
            if sym in terms or sym.isupper():
                mine = oa.pop(sym, None)
                if act is Shift:
                    if not mine or mine[0] != "shift":
                        diffs.append(f"state {a}: {sym}: Lark shifts, grammask {mine}")
                    else:
                        work.append((arg, mine[1]))
                else:
                    want = f"{arg.origin.name} : {' '.join(x.name for x in arg.expansion)}".rstrip()
                    if a == end and sym == "$END":
                        if mine != ["accept"]:
                            diffs.append(f"end state {a}: $END: grammask {mine}")
                    elif not mine or mine[0] != "reduce" or mine[1].rstrip() != want:
                        diffs.append(f"state {a}: {sym}: Lark reduces <{want}>, grammask {mine}")
            else:
                if sym not in og:
                    diffs.append(f"state {a}: no grammask goto on {sym}")
                else:
                    work.append((arg, og[sym]))
        oa.pop("$END", None) if a == end and oa.get("$END") == ["accept"] else None
        for sym, mine in oa.items():
            diffs.append(f"state {a}: grammask has {sym}: {mine}, Lark nothing")
    return diffs


def check_one(row):
    path = os.path.join(TP, row["file"])
    start = row["start"]
    res = {"file": row["file"], "notes": row["notes"]}
    lk, err = lark_load(path, start)
    res["lark"] = err is None
    res["lark_error"] = err
    ours = grammask_tables(path, start)
    res["grammask"] = "error" not in ours
    res["grammask_error"] = ours.get("error")
    if lk is None or "error" in ours:
        return res
    res["table_diffs"] = compare_tables(lk, ours)
    lt = {t.name: lark_order(t) for t in lk.terminals}
    od = []
    for t in ours["terminals"]:
        if t["lark"] is None:
            continue
        want = lt.get(t["name"])
        got = list(t["lark"])
        got[0] = str(MAXWIDTH) if got[0] == str(2**64 - 1) else got[0]
        if want is None:
            od.append(f"{t['name']}: not a Lark terminal")
        elif want != got:
            od.append(f"{t['name']}: Lark {want}, grammask {got}")
        pr = {x.name: x.priority for x in lk.terminals}.get(t["name"])
        if pr is not None and pr != t["priority"]:
            od.append(f"{t['name']}: priority Lark {pr}, grammask {t['priority']}")
    res["order_diffs"] = od
    res["terminals"] = len(ours["terminals"])
    res["states"] = len(ours["states"])
    return res


def selected(names):
    rows = [r for r in manifest() if r["start"]]
    if names:
        unknown = [n for n in names if not any(n in r["file"] for r in rows)]
        if unknown:
            sys.exit(f"no grammar in grammars/thirdparty/MANIFEST.tsv matches {', '.join(unknown)} "
                     f"(names are parts of its file column, e.g. {rows[0]['file'] if rows else 'json.lark'})")
        rows = [r for r in rows if any(n in r["file"] for n in names)]
    return rows


def check(args):
    bad = 0
    for row in selected(args.names):
        r = check_one(row)
        status = "ok"
        if not r["lark"]:
            status = f"Lark refuses: {r['lark_error']}"
        elif not r["grammask"]:
            status = f"grammask refuses: {r['grammask_error'][:300]}"
        elif r["table_diffs"] or r["order_diffs"]:
            status = "DIFFERENT"
            bad += 1
        print(f"{r['file']}: {status}")
        for d in (r.get("table_diffs") or [])[:6] + (r.get("order_diffs") or [])[:10]:
            print(f"    {d}")
    return 1 if bad else 0


# ---------------------------------------------------------------- agreement

def literals(lk):
    out = []
    for t in lk.terminals:
        if t.pattern.type == "str":
            out.append(t.pattern.value)
    return out or ["a"]


def random_text(rng, pool, chars):
    parts = []
    for _ in range(rng.randrange(1, 12)):
        x = rng.random()
        if x < 0.6:
            parts.append(rng.choice(pool))
        elif x < 0.8:
            parts.append(rng.choice(" \n\t"))
        else:
            parts.append("".join(rng.choice(chars) for _ in range(rng.randrange(1, 5))))
    return "".join(parts)


def mutate(rng, text, pool):
    if not text:
        return rng.choice(pool)
    i = rng.randrange(len(text))
    op = rng.choice(["drop", "dup", "swap", "insert", "insert_lit"])
    if op == "drop":
        return text[:i] + text[i + 1:]
    if op == "dup":
        return text[:i] + text[i] + text[i:]
    if op == "swap" and i + 1 < len(text):
        return text[:i] + text[i + 1] + text[i] + text[i + 2:]
    if op == "insert_lit":
        return text[:i] + rng.choice(pool) + text[i:]
    return text[:i] + rng.choice("() []{},.;:+-*/\"'\\ \n\t0123456789abcdefxyz_=<>!") + text[i:]


def sample_regex(rng, pattern, flags=0):
    """A random string matched by a Python regex (sre_parse tree; lookarounds ignored, repeats bounded)."""
    import re._parser as sp
    import re._constants as sc
    out = []

    def gen(items, depth=0):
        for op, av in items:
            if op is sc.LITERAL:
                out.append(chr(av))
            elif op is sc.NOT_LITERAL:
                out.append(rng.choice([c for c in "abcXYZ019 _-" if ord(c) != av]))
            elif op is sc.ANY:
                out.append(rng.choice("abcxyz019 _-+*"))
            elif op is sc.IN:
                out.append(pick_in(av))
            elif op is sc.BRANCH:
                gen(rng.choice(av[1]), depth + 1)
            elif op is sc.SUBPATTERN:
                gen(av[-1], depth + 1)
            elif op in (sc.MAX_REPEAT, sc.MIN_REPEAT, sc.POSSESSIVE_REPEAT):
                lo, hi, sub = av
                hi = min(hi, lo + (3 if depth < 6 else 0))
                for _ in range(rng.randint(lo, max(lo, hi))):
                    gen(sub, depth + 1)
            elif op is sc.ATOMIC_GROUP:
                gen(av, depth + 1)
            # AT, ASSERT, ASSERT_NOT, GROUPREF: nothing

    def pick_in(av):
        neg = any(o is sc.NEGATE for o, _ in av)
        cands = []
        for o, a in av:
            if o is sc.LITERAL:
                cands.append(chr(a))
            elif o is sc.RANGE:
                lo, hi = a
                cands.extend(chr(c) for c in (lo, hi, rng.randint(lo, hi)))
            elif o is sc.CATEGORY:
                cands.extend({sc.CATEGORY_DIGIT: "0729", sc.CATEGORY_SPACE: " \t", sc.CATEGORY_WORD: "aZ_9"}.get(a, "a"))
        if neg:
            pool = [c for c in "abcxyzABC0129 _-+.,;:()[]{}" if c not in cands]
            return rng.choice(pool or ["a"])
        return rng.choice(cands or ["a"])

    try:
        gen(sp.parse(pattern, flags))
    except Exception:
        return None
    return "".join(out)


def sample_sentence(rng, lk, budget=60):
    """A random derivation of Lark's start rule (shortest expansions once the budget is spent)."""
    from lark.grammar import NonTerminal
    by_origin = {}
    for r in lk.rules:
        by_origin.setdefault(r.origin.name, []).append(r)
    # Shortest derivation length (in symbols) of each nonterminal, by fixpoint.
    INF = 10 ** 9
    short = {n: INF for n in by_origin}
    changed = True
    while changed:
        changed = False
        for n, rules in by_origin.items():
            for r in rules:
                v = sum(short.get(x.name, INF) if isinstance(x, NonTerminal) else 1 for x in r.expansion)
                if v < short[n]:
                    short[n] = v
                    changed = True
    terms = {t.name: t for t in lk.terminals}
    ignore = [terms[n] for n in lk.ignore_tokens if n in terms]
    out = []
    steps = [0]

    def expand(name, depth):
        rules = by_origin[name]
        steps[0] += 1
        if steps[0] > budget or depth > 40:
            rules = [min(rules, key=lambda r: sum(short.get(x.name, INF) if isinstance(x, NonTerminal) else 1 for x in r.expansion))]
        r = rng.choice(rules)
        for x in r.expansion:
            if isinstance(x, NonTerminal):
                expand(x.name, depth + 1)
            else:
                t = terms.get(x.name)
                if t is None:  # %declare'd (a postlexer's)
                    raise ValueError(x.name)
                text = t.pattern.value if t.pattern.type == "str" else sample_regex(rng, t.pattern.to_regexp())
                if text is None:
                    raise ValueError(t.name)
                out.append(text)

    def full(t, x):
        return re.fullmatch(t.pattern.to_regexp(), x, sum(getattr(re, f.upper()) for f in t.pattern.flags)) is not None

    # Separators: an ignored whitespace run between two tokens whose letters would run together
    # (always) or at random (half the time); now and then an ignored comment ended by a newline.
    space = next((w for w in (" ", "\t", "\n") if any(full(t, w) for t in ignore)), None)
    newline = next((w for w in ("\n", "\r\n") if any(full(t, w) for t in ignore)), None)
    comments = [t for t in ignore if not any(full(t, w) for w in (" ", "\n", "\t"))]

    def separator(prev, nxt):
        x = rng.random()
        if comments and newline and x < 0.1:
            c = sample_regex(rng, rng.choice(comments).pattern.to_regexp())
            if c is not None and "\n" not in c:
                return c + newline
        if space and (x < 0.5 or (prev[-1:].isalnum() or prev[-1:] == "_") and (nxt[:1].isalnum() or nxt[:1] == "_")):
            ws = [t for t in ignore if full(t, space)]
            w = sample_regex(rng, rng.choice(ws).pattern.to_regexp()) if x < 0.3 else None
            return w if w and full_any(w) else space
        return ""

    def full_any(w):
        return any(full(t, w) for t in ignore)

    try:
        expand(lk.options.start[0], 0)
    except (ValueError, RecursionError):
        return None
    text = out[0] if out else ""
    for prev, nxt in zip(out, out[1:]):
        text += separator(prev, nxt) + nxt
    return text


def lark_accepts(lk, text):
    """The judge: does Lark's parser (as loaded by lark_load) accept the whole text? Bytes that
    are not UTF-8 are no text Lark can be given: rejected. Every verdict of this script comes from here."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return False
    try:
        lk.parse(text)
        return True
    except Exception:
        return False


def grammask_parse(path, start, files, lexer):
    cmd = [GRAMMASK, "parse", "--grammar", path, "--start", start, "--json", "--files-from", files]
    if lexer:
        cmd += ["--lexer", lexer]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return p.stderr.strip().splitlines()[0][:300] if p.stderr.strip() else f"exit {p.returncode}"
    return {os.path.basename(j["file"]): j["ok"] for j in map(json.loads, p.stdout.splitlines()) if "file" in j}


def agree_one(row, args):
    path = os.path.join(TP, row["file"])
    start = row["start"]
    lk, err = lark_load(path, start, args.lark_lexer)
    if lk is None:
        return {"file": row["file"], "skipped": f"Lark refuses: {err}"}
    work = tempfile.mkdtemp(prefix="lark-agree-")
    rng = random.Random(args.seed)
    pool = literals(lk)
    chars = sorted(set("".join(pool)) | set("az09_ \n\"'"))
    texts = {}
    gens = []
    # grammask's own generations (a store per grammar and tokenizer, cached under out/lark-corpus/).
    # Without --lexer, the grammar is compiled per request (lazy store, the same masks as a full one).
    source = ["--grammar", path, "--start", start]
    if args.gen and args.lexer:
        store = os.path.join(CACHE, "stores", row["file"].replace("/", "__") + f".{os.path.basename(os.path.dirname(args.tokenizer))}.gmask")
        os.makedirs(os.path.dirname(store), exist_ok=True)
        if not os.path.exists(store) or os.path.getmtime(store) < os.path.getmtime(GRAMMASK):
            cmd = [GRAMMASK, "compile", "--grammar", path, "--start", start, "--tokenizer", args.tokenizer, "-o", store, "--json"]
            cmd += ["--lexer", args.lexer]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                return {"file": row["file"], "skipped": f"grammask compile failed: {p.stderr.strip()[-300:]}"}
        source = ["--store", store]
    gen_timeout = False
    if args.gen:
        gdir = os.path.join(work, "gen")
        try:
            subprocess.run([GRAMMASK, "generate", *source, "--tokenizer", args.tokenizer, "--count", str(args.gen),
                            "--seed", str(args.seed), "--max-tokens", "300", "--finish-after", "never", "--out-dir", gdir, "--json"],
                           capture_output=True, text=True, timeout=args.gen_timeout)
        except subprocess.TimeoutExpired:
            # Over the time box: no generations, so the matcher column is not measured for this grammar.
            gen_timeout = True
            shutil.rmtree(gdir, ignore_errors=True)
        for f in sorted(glob.glob(os.path.join(gdir, "*"))):
            try:
                gens.append(open(f, encoding="utf-8").read())
            except UnicodeDecodeError:
                pass
    for k, g in enumerate(gens):
        texts[f"gen{k:05d}"] = g
    sents = [x for x in (sample_sentence(rng, lk) for _ in range(args.texts)) if x is not None]
    for k, x in enumerate(sents):
        texts[f"snt{k:05d}"] = x
    seeds = gens + sents or [random_text(rng, pool, chars) for _ in range(20)]
    for k in range(args.texts):
        texts[f"rnd{k:05d}"] = random_text(rng, pool, chars)
        texts[f"mut{k:05d}"] = mutate(rng, rng.choice(seeds), pool)
    tdir = os.path.join(work, "texts")
    os.makedirs(tdir)
    for name, t in texts.items():
        with open(os.path.join(tdir, name), "w", encoding="utf-8", newline="") as f:
            f.write(t)
    lst = os.path.join(work, "list")
    with open(lst, "w") as f:
        f.write("\n".join(os.path.join(tdir, n) for n in texts) + "\n")
    ours = grammask_parse(path, start, lst, args.lexer)
    if isinstance(ours, str):
        shutil.rmtree(work)
        return {"file": row["file"], "skipped": f"grammask refuses: {ours}"}
    res = {"file": row["file"], "texts": len(texts), "generated": len(gens), "sentences": len(sents), "lark_accepted": 0, "parse_agree": 0, "disagree": []}
    if gen_timeout:
        res["gen_timeout"] = args.gen_timeout
    for name, t in texts.items():
        want = lark_accepts(lk, t)
        res["lark_accepted"] += want
        got = ours.get(name)
        if got == want:
            res["parse_agree"] += 1
        elif len(res["disagree"]) < 8:
            res["disagree"].append({"text": t[:120], "lark": want, "grammask": got})
    # The matcher: `check` on the generated texts' store (every token in the mask, EOS at the end).
    if args.gen and gens:
        p = subprocess.run([GRAMMASK, "check", *source, "--tokenizer", args.tokenizer, "--json", "--files-from", lst],
                           capture_output=True, text=True)
        chk = {}
        for j in map(json.loads, [l for l in p.stdout.splitlines() if l.startswith("{")]):
            if "file" in j:
                chk[os.path.basename(j["file"])] = j["ok"]
        res["check_agree"] = sum(1 for n, t in texts.items() if chk.get(n) == lark_accepts(lk, t))
    shutil.rmtree(work)
    return res


def agree(args):
    rc = 0
    out = []
    for row in selected(args.names):
        r = agree_one(row, args)
        out.append(r)
        if "skipped" in r:
            print(f"{r['file']}: skipped ({r['skipped']})")
            continue
        chk = f", check {r['check_agree']}/{r['texts']}" if "check_agree" in r else ""
        print(f"{r['file']}: parse {r['parse_agree']}/{r['texts']}{chk} agree with Lark "
              f"({r['lark_accepted']} accepted by Lark; {r['sentences']} sampled sentences, {r['generated']} generations)")
        for d in r["disagree"]:
            print(f"    lark={d['lark']} grammask={d['grammask']}: {d['text']!r}")
        if r["parse_agree"] != r["texts"] or r.get("check_agree", r["texts"]) != r["texts"]:
            rc = 1
    if args.json_out:
        json.dump(out, open(args.json_out, "w"), indent=1)
    return rc


def table(args):
    """check + agree for every grammar, printed as the markdown table of docs/lark.md."""
    print("| grammar | source | Lark LALR accepts | grammask compiles | tables & order = Lark | parse agrees with Lark (texts) |"
          + (" matcher agrees (texts) |" if args.gen else ""))
    print("|---|---|---|---|---|---|" + ("---|" if args.gen else ""))
    bad = 0
    for row in selected(args.names):
        c = check_one(row)
        src = f"{row['package']} {row['version']} ({row['license']})"
        if not c["lark"]:
            cells = [f"no ({c['lark_error'][:60]})", "–", "–", "–"]
        elif not c["grammask"]:
            err = c["grammask_error"]
            terms = re.findall(r":\d+:\d+: (\w+) uses (lookahead|lookbehind|backreference)", err)
            why = "lookaround/backreference in " + ", ".join(sorted({t for t, _ in terms})) if terms else err.splitlines()[0][:80]
            cells = ["yes", f"no: {why}", "–", "–"]
        else:
            same = not c["table_diffs"] and not c["order_diffs"]
            a = agree_one(row, args)
            if "skipped" in a:
                agree_cell = a["skipped"][:80]
            else:
                agree_cell = f"{a['parse_agree']}/{a['texts']} ({a['lark_accepted']} accepted)"
                bad += a["parse_agree"] != a["texts"] or a.get("check_agree", a["texts"]) != a["texts"]
            cells = ["yes", "yes", "yes" if same else "NO", agree_cell]
            if args.gen:
                cells.append(f"{a['check_agree']}/{a['texts']}" if "check_agree" in a
                             else f"not measured (generation over {a['gen_timeout']} s)" if "gen_timeout" in a else "–")
            bad += not same
        if args.gen and len(cells) == 4:
            cells.append("–")
        print(f"| {row['file']} | {src} | " + " | ".join(cells) + " |")
    return 1 if bad else 0

# ---------------------------------------------------------------- adversarial texts

# Characters the adversarial mutations insert: control characters, non-ASCII text whose Python `re`
# classes are traps (`\d` matches Arabic-Indic digits, `\s` NEL and U+2028, `(?i)` folds the Kelvin
# sign and long s), zero-width and combining marks, a BOM, astral-plane emoji, and whitespace runs.
ADV_CTRL = [chr(c) for c in range(0x20)] + ["\x7f"]
ADV_NONASCII = ["é", "ß", "ı", "İ", "ſ", "\u212a", "中", "😀", "\u00a0", "\u0085", "\u2028", "\u200b", "\u0301",
                "\ufeff", "٣", "²", "ａ", "Ω", "\u00ad"]
ADV_SPACE = [" ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\\\n", "  ", "\n\n"]


def adv_mutate(rng, text, pool):
    """One to three edits of `text`: a control, non-ASCII, whitespace or literal inserted, a slice
    deleted, a slice or one character repeated into a run (up to 8), two characters swapped."""
    for _ in range(rng.randint(1, 3)):
        n = len(text)
        i = rng.randrange(n + 1)
        op = rng.choice(["ctrl", "nonascii", "space", "lit", "delete", "run", "swap"])
        if op == "ctrl":
            text = text[:i] + rng.choice(ADV_CTRL) + text[i:]
        elif op == "nonascii":
            text = text[:i] + rng.choice(ADV_NONASCII) + text[i:]
        elif op == "space":
            text = text[:i] + rng.choice(ADV_SPACE) + text[i:]
        elif op == "lit":
            text = text[:i] + rng.choice(pool) + text[i:]
        elif op == "delete" and n:
            j = min(n, i + rng.randint(1, 3))
            text = text[:i] + text[j:]
        elif op == "run" and n:
            i = min(i, n - 1)
            j = min(n, i + rng.choice([1, 1, 2, 3]))
            # Runs stay short: longer runs of some tokens make the matcher exponential (docs/lark.md).
            text = text[:i] + text[i:j] * rng.randint(2, 8) + text[j:]
        elif op == "swap" and n > 1:
            i = min(i, n - 2)
            text = text[:i] + text[i + 1] + text[i] + text[i + 2:]
    return text


def write_texts(work, texts, tag):
    """Writes texts (str or bytes) as files under work/tag/; returns (list file, file names)."""
    d = os.path.join(work, tag)
    os.makedirs(d)
    names = []
    for k, t in enumerate(texts):
        name = f"{tag}{k:05d}"
        with open(os.path.join(d, name), "wb") as f:
            f.write(t if isinstance(t, bytes) else t.encode("utf-8", "surrogatepass"))
        names.append(name)
    lst = os.path.join(work, tag + ".list")
    with open(lst, "w") as f:
        f.write("".join(os.path.join(d, n) + "\n" for n in names))
    return lst, names


def grammask_verdicts(path, start, tokenizer, texts, work, tag, timeout=None):
    """grammask on each text: (check, parse) verdicts. check: the matcher (`grammask check
    --grammar`, a per-request store): every token of the tokenizer's encoding in the mask and EOS
    allowed at the end, the text as written (check's forgiven trailing newline counts as a refusal).
    parse: the recognizer. A text that is not UTF-8 is refused by both. Raises on a grammask error."""
    lst, names = write_texts(work, texts, tag)
    p = subprocess.run([GRAMMASK, "check", "--grammar", path, "--start", start, "--tokenizer", tokenizer,
                        "--json", "--files-from", lst], capture_output=True, text=True, timeout=timeout)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"grammask check exited {p.returncode}: {p.stderr.strip()[-400:]}")
    chk = {}
    for j in map(json.loads, [l for l in p.stdout.splitlines() if l.startswith("{")]):
        if "file" in j:
            chk[os.path.basename(j["file"])] = (j["ok"] and not j["trailing_newline_ignored"], j["error"])
    prs = grammask_parse(path, start, lst, None)
    if isinstance(prs, str):
        raise RuntimeError(f"grammask parse: {prs}")
    return [(chk.get(n, (False, "not UTF-8")), prs.get(n, False)) for n in names]


def minimize(text, still, rounds=40, cap=1500):
    """A shorter text on which the disagreement `still` (a batch predicate) holds: chunk deletions
    (halves, quarters, ..., single characters), the shortest surviving candidate each round."""
    cur = text
    for _ in range(rounds):
        n = len(cur)
        cands = []
        seen = set()
        k = max(1, n // 2)
        while True:
            for i in range(0, n, k):
                c = cur[:i] + cur[i + k:]
                if c not in seen:
                    seen.add(c)
                    cands.append(c)
            if k == 1:
                break
            k //= 2
        cands = cands[:cap]
        ok = [c for c, v in zip(cands, still(cands)) if v]
        if not ok:
            break
        cur = min(ok, key=len)
    return cur


def load_cases(path):
    cases = []
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for k, line in enumerate(f, 1):
                if line.strip() and not line.startswith("#"):
                    try:
                        cases.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        sys.exit(f"{path}:{k}: {e}")
    return cases


def adversarial_one(row, args, cases):
    path = os.path.join(TP, row["file"])
    start = row["start"]
    lk, err = lark_load(path, start, args.lark_lexer)
    if lk is None:
        return {"file": row["file"], "skipped": f"Lark refuses: {err}"}
    p = subprocess.run([GRAMMASK, "parse", "--grammar", path, "--start", start, os.devnull], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[0]
        return {"file": row["file"], "skipped": "grammask refuses: " + why[:200]}
    work = tempfile.mkdtemp(prefix="lark-adv-")
    rng = random.Random(f"{args.seed}:{row['file']}")
    pool = literals(lk)
    res = {"file": row["file"], "walks": args.walks, "completed": 0, "replayed": 0, "lark_accepted": 0, "check_agree": 0, "parse_agree": 0,
           "cases": 0, "disagree": []}
    try:
        # 1. Walks through the masks, biased to adversarial tokens; every completed text must parse.
        walks = []
        if args.walks:
            gdir = os.path.join(work, "gen")
            # Samples are written as they complete: over --walk-timeout, the ones written count.
            p = subprocess.Popen([GRAMMASK, "generate", "--grammar", path, "--start", start, "--tokenizer", args.tokenizer,
                                  "--count", str(args.walks), "--seed", str(rng.randrange(1 << 32)),
                                  "--max-tokens", str(args.max_tokens), "--finish-after", str(args.max_tokens * 2 // 3),
                                  "--finish-by", "eos-lookahead", "--adversarial", str(args.adversarial), "--out-dir", gdir],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                _, err = p.communicate(timeout=args.walk_timeout)
                if p.returncode not in (0, 1):
                    raise RuntimeError(f"grammask generate exited {p.returncode}: {err.strip()[-400:]}")
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                res["walk_timeout"] = True
            for f in sorted(glob.glob(os.path.join(gdir, "*"))):
                walks.append(open(f, "rb").read())
        res["completed"] = len(walks)
        for w in walks:
            if not lark_accepts(lk, w):
                res["disagree"].append({"kind": "walk", "text": w.decode("utf-8", "backslashreplace"), "lark": False, "grammask": True})
        # 2. Replays: sentences sampled from Lark's rules, the completed walks (so a walk that Lark
        # parses but whose own tokenization grammask refuses is caught), adversarial mutations of
        # both, and the regression cases of --cases; Lark labels each, grammask must agree.
        sents = [x for x in (sample_sentence(rng, lk) for _ in range(args.sentences)) if x is not None]
        seeds = sents + [w.decode("utf-8") for w in walks if lark_accepts(lk, w)]
        texts = list(seeds)
        if seeds:
            texts += [adv_mutate(rng, rng.choice(seeds), pool) for _ in range(args.mutants)]
        mine = [c for c in cases if c["grammar"] == row["file"]]
        for c in mine:
            if lark_accepts(lk, c["text"]) != c["lark"]:
                res["disagree"].append({"kind": "stale case", "text": c["text"], "lark": not c["lark"], "grammask": None,
                                        "detail": f"--cases says Lark {'accepts' if c['lark'] else 'rejects'} it"})
        texts += [c["text"] for c in mine]
        res["cases"] = len(mine)
        want = [lark_accepts(lk, t) for t in texts]
        try:
            got = grammask_verdicts(path, start, args.tokenizer, texts, work, "rep", args.replay_timeout)
        except subprocess.TimeoutExpired:
            res["disagree"].append({"kind": "replay over time box", "text": "", "lark": None, "grammask": None,
                                    "detail": f"grammask check took over {args.replay_timeout:g} s on {len(texts)} texts"})
            return res
        res["replayed"] = len(texts)
        res["lark_accepted"] = sum(want)
        res["check_agree"] = sum(w == g[0][0] for w, g in zip(want, got))
        res["parse_agree"] = sum(w == g[1] for w, g in zip(want, got))
        rounds = [0]

        def still(kind, lark):
            def pred(cands):
                rounds[0] += 1
                g = grammask_verdicts(path, start, args.tokenizer, cands, work, f"min{rounds[0]}")
                return [lark_accepts(lk, c) == lark and (v[0][0] if kind == "check" else v[1]) != lark for c, v in zip(cands, g)]
            return pred

        for t, w, (c, prs) in zip(texts, want, got):
            for kind, verdict, detail in (("check", c[0], c[1]), ("parse", prs, None)):
                if verdict != w and len([d for d in res["disagree"] if d["kind"] == kind]) < args.show:
                    small = minimize(t, still(kind, w)) if args.minimize else t
                    res["disagree"].append({"kind": kind, "text": t, "minimal": small, "lark": w, "grammask": verdict, "detail": detail})
                elif verdict != w:
                    res.setdefault("more", 0)
                    res["more"] += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def adversarial(args):
    """Adversarial agreement with Lark (docs/lark.md, "Adversarial texts")."""
    cases = load_cases(args.cases)
    known = {r["file"] for r in manifest()}
    for c in cases:
        if c.get("grammar") not in known or not isinstance(c.get("text"), str) or not isinstance(c.get("lark"), bool):
            sys.exit(f"{args.cases}: a case needs grammar (a manifest file), text and lark (bool): {c}")
    rc = 0
    out = []
    tot = {"walks": 0, "completed": 0, "replayed": 0, "lark_accepted": 0, "disagree": 0, "grammars": 0}
    for row in selected(args.names):
        r = adversarial_one(row, args, cases)
        out.append(r)
        if "skipped" in r:
            print(f"{r['file']}: skipped ({r['skipped']})", flush=True)
            continue
        n = len(r["disagree"]) + r.get("more", 0)
        tot["grammars"] += 1
        for k in ("walks", "completed", "replayed", "lark_accepted"):
            tot[k] += r[k]
        tot["disagree"] += n
        tb = f" (time box {args.walk_timeout:g} s)" if r.get("walk_timeout") else ""
        print(f"{r['file']}: {r['completed']}/{r['walks']} walks completed{tb}, all parsed by Lark: "
              f"{'yes' if not any(d['kind'] == 'walk' for d in r['disagree']) else 'NO'}; "
              f"{r['replayed']} replayed ({r['lark_accepted']} Lark-accepted, {r['cases']} cases): "
              f"check {r['check_agree']}/{r['replayed']}, parse {r['parse_agree']}/{r['replayed']} agree", flush=True)
        for d in r["disagree"]:
            rc = 1
            print(f"    {d['kind']}: lark={d['lark']} grammask={d['grammask']}: {d['text'][:200]!r}")
            if d.get("minimal") is not None and d["minimal"] != d["text"]:
                print(f"        minimal: {d['minimal']!r}")
            if d.get("detail"):
                print(f"        {d['detail'][:300]}")
            if d["kind"] in ("walk", "check", "parse"):
                print("        case: " + json.dumps({"grammar": r["file"], "text": d.get("minimal") or d["text"], "lark": d["lark"]}, ensure_ascii=False))
        if r.get("more"):
            rc = 1
            print(f"    ... {r['more']} more disagreements")
    print(f"[adversarial] {tot['grammars']} grammars: {tot['completed']}/{tot['walks']} walks completed, "
          f"{tot['replayed']} texts replayed ({tot['lark_accepted']} Lark-accepted), {tot['disagree']} disagreements")
    if args.json_out:
        json.dump(out, open(args.json_out, "w"), indent=1)
    return rc



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["setup", "check", "agree", "table", "adversarial"])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--texts", type=int, default=100, help="random strings and mutations each, per grammar")
    ap.add_argument("--gen", type=int, default=0, help="grammask generations per grammar (needs --tokenizer)")
    ap.add_argument("--gen-timeout", type=float, default=600,
                    help="seconds for a grammar's generations; over it the grammar's matcher column is not measured")
    ap.add_argument("--tokenizer", default=None,
                    help="a byte-level tokenizer (Llama-2 prepends a space when encoding, so `check` would replay another text); default: SmolLM2's, Llama-3's for adversarial")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lexer", default=None, help="grammask --lexer (default: the grammar's own mode)")
    ap.add_argument("--lark-lexer", default="contextual")
    ap.add_argument("--json-out")
    adv = ap.add_argument_group("adversarial")
    adv.add_argument("--walks", type=int, default=10, help="walks through the masks per grammar (completed ones are judged)")
    adv.add_argument("--max-tokens", type=int, default=150,
                     help="tokens per walk before it is given up (it steers toward the end after two thirds)")
    adv.add_argument("--adversarial", type=float, default=0.4, help="grammask generate --adversarial: the share of adversarial draws")
    adv.add_argument("--walk-timeout", type=float, default=60,
                     help="seconds for a grammar's walks; the walks completed by then are judged")
    adv.add_argument("--replay-timeout", type=float, default=600,
                     help="seconds for a grammar's replay (`grammask check`); over it counts as a failure")
    adv.add_argument("--sentences", type=int, default=20, help="sentences sampled from Lark's rules per grammar (replay seeds)")
    adv.add_argument("--mutants", type=int, default=100, help="adversarial mutations of the seeds per grammar, labelled by Lark")
    adv.add_argument("--cases", default=os.path.join(ROOT, "tests", "data", "lark_adversarial.jsonl"),
                     help="regression cases (JSON lines: grammar, text, lark), replayed with the grammar's texts")
    adv.add_argument("--show", type=int, default=3, help="disagreements shown (and minimized) per grammar and kind")
    adv.add_argument("--no-minimize", dest="minimize", action="store_false")
    # Names may follow the options (`table --texts 100 json`, as the docstring writes it)
    # or come before them: intermixed parsing takes both.
    args = ap.parse_intermixed_args()
    if args.tokenizer is None:  # adversarial: Llama-3's (byte-level, no space prepended; in every setup)
        args.tokenizer = os.path.join(ROOT, "models", "llama3" if args.mode == "adversarial" else "smollm2-135m-instruct", "tokenizer.json")
    return {"setup": setup, "check": check, "agree": agree, "table": table, "adversarial": adversarial}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
