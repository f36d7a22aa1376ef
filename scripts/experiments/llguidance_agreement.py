#!/usr/bin/env python3
"""Agreement of grammask's JSON Schema front end with llguidance's, on the
official JSON Schema Test Suite.

    python3 scripts/experiments/llguidance_agreement.py [--dump out/schema-suite-verdicts.jsonl] [--tokenizer models/llama3/tokenizer.json]

1. Runs the suite harness with GRAMMASK_SUITE_DUMP (unless --dump exists and
   --reuse is given): one line per schema and serialized instance with
   grammask's verdict (the schema oracle; whole text).
2. Compiles each schema with llguidance (PyPI llguidance 1.9, venv
   .venv-bench, created on first use) twice, with `x-guidance` separators for
   the compact (`,` `:`) and the spaced (`, ` `: `) layout and
   whitespace_flexible off, and runs each instance text through an LLMatcher
   token by token (Llama-3 tokenizer), accepting iff every token is consumed
   and the matcher is accepting at the end.
3. Prints: compile outcome classes (both / grammask only / llguidance only /
   neither), instance verdict classes where both compiled (agree, grammask
   accepts + llguidance refuses, the reverse), each against the suite's
   expected validity, with examples per class.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.join(ROOT, ".venv-bench")
PY = os.path.join(VENV, "bin", "python")


def ensure_venv():
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(PY):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    try:
        subprocess.check_call([PY, "-c", "import llguidance"], stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        subprocess.check_call([PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "llguidance==1.9.*", "numpy"])
    os.execv(PY, [PY] + sys.argv)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", default=os.path.join(ROOT, "out/schema-suite-verdicts.jsonl"))
    ap.add_argument("--reuse", action="store_true", help="reuse an existing dump")
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "models/llama3/tokenizer.json"))
    ap.add_argument("--examples", type=int, default=4)
    a = ap.parse_args()
    ensure_venv()
    import llguidance as llg

    if not (a.reuse and os.path.exists(a.dump)):
        os.makedirs(os.path.dirname(a.dump), exist_ok=True)
        if os.path.exists(a.dump):
            os.remove(a.dump)
        env = dict(os.environ, GRAMMASK_SUITE_DUMP=a.dump)
        subprocess.check_call(["cargo", "test", "--profile", "ci", "--quiet", "--test", "suite", "schema_suite::"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL)
    rows = [json.loads(l) for l in open(a.dump, encoding="utf-8")]
    tok = llg.LLTokenizer(a.tokenizer)

    compiled = {}  # (draft, file, group) -> {layout: grammar or error}

    def grammar(schema, spaced):
        s = dict(schema) if isinstance(schema, dict) else schema
        if isinstance(s, dict):
            s = dict(s)
            s["x-guidance"] = {"whitespace_flexible": False, "item_separator": ", " if spaced else ",",
                               "key_separator": ": " if spaced else ":"}
        else:
            s = {"allOf": [s], "x-guidance": {"whitespace_flexible": False, "item_separator": ", " if spaced else ",",
                                              "key_separator": ": " if spaced else ":"}}
        try:
            g = llg.LLMatcher.grammar_from_json_schema(s)
            m = llg.LLMatcher(tok, g, log_level=0)
            if m.is_error():
                return None, m.get_error()
            return g, None
        except Exception as e:  # noqa: BLE001
            return None, str(e)

    def accepts(g, text):
        m = llg.LLMatcher(tok, g, log_level=0)
        for t in tok.tokenize_str(text):
            if not m.consume_token(t) or m.is_error():
                return False
        return m.is_accepting()

    comp = collections.Counter()
    comp_ex = collections.defaultdict(list)
    inst = collections.Counter()
    inst_ex = collections.defaultdict(list)
    seen_groups = set()
    for r in rows:
        key = (r["draft"], r["file"], r["group"])
        if key not in compiled:
            compiled[key] = {sp: grammar(r["schema"], sp) for sp in (False, True)}
        llg_ok = compiled[key][False][0] is not None
        if key not in seen_groups:
            seen_groups.add(key)
            cls = {(True, True): "both compile", (True, False): "grammask only", (False, True): "llguidance only",
                   (False, False): "neither"}[(r["compiled"], llg_ok)]
            comp[cls] += 1
            why = r.get("error") if not r["compiled"] else compiled[key][False][1]
            comp_ex[cls].append(f'{r["draft"]}/{r["file"]}: {r["group"]}: {(why or "")[:140]}')
        if not r["compiled"] or not llg_ok:
            continue
        g = compiled[key][r["spaced"]][0]
        if g is None:
            continue
        theirs = accepts(g, r["text"])
        ours = r["grammask"]
        exp = "valid" if r["valid"] else "invalid"
        if ours == theirs:
            cls = f"agree ({'accept' if ours else 'refuse'}, {exp})"
        elif ours:
            cls = f"grammask accepts, llguidance refuses ({exp})"
        else:
            cls = f"grammask refuses, llguidance accepts ({exp})"
        inst[cls] += 1
        inst_ex[cls].append(f'{r["draft"]}/{r["file"]}: {r["group"]} / {r["test"]}: {r["text"][:100]}')

    print("Schemas (test groups):")
    for k, n in comp.most_common():
        print(f"  {n:5d}  {k}")
        if k != "both compile":
            for e in comp_ex[k][: a.examples]:
                print(f"           e.g. {e}")
    print("Instances (both compiled; compact and spaced counted separately):")
    for k, n in sorted(inst.items()):
        print(f"  {n:5d}  {k}")
        if not k.startswith("agree"):
            for e in inst_ex[k][: a.examples * 3]:
                print(f"           e.g. {e}")


if __name__ == "__main__":
    main()
