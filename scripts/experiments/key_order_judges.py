#!/usr/bin/env python3
"""The two judges of tests/data/key_order.json (key order under propertyOrder
'schema'): every instance's `valid` must be python jsonschema's verdict, and
its `schema` verdict llguidance's (or, where the instance records
`llguidance` and `why`, llguidance's verdict must be that one). grammask's
side is tests/suite/key_order.rs.

    python3 scripts/experiments/key_order_judges.py [--tokenizer models/llama3/tokenizer.json]

Runs under .venv-bench (llguidance 1.9, as scripts/experiments/llguidance_agreement.py
creates it); jsonschema is imported from .venv-schema (scripts/setup/setup.sh).
llguidance compiles each schema with `x-guidance` compact separators and
whitespace_flexible off, and takes the text token by token (Llama-3
tokenizer): accepted iff every token is consumed and the matcher accepts at
the end. Exit status 1 on any disagreement.
"""
import argparse
import glob
import importlib.metadata
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llguidance_agreement import ROOT, ensure_venv  # noqa: E402  (one venv recipe for both judges)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "tests/data/key_order.json"))
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "models/llama3/tokenizer.json"))
    a = ap.parse_args()
    ensure_venv()
    site = glob.glob(os.path.join(ROOT, ".venv-schema/lib/python*/site-packages"))
    if not site:
        sys.exit(".venv-schema is missing (scripts/setup/setup.sh)")
    sys.path.append(site[0])
    import jsonschema
    import llguidance as llg

    tok = llg.LLTokenizer(open(a.tokenizer, encoding="utf-8").read())
    data = json.load(open(a.data, encoding="utf-8"))
    bad = 0
    n = 0
    for case in data["cases"]:
        schema = case["schema"]
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
        s = dict(schema, **{"x-guidance": {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}})
        g = llg.LLMatcher.grammar_from_json_schema(s)
        for inst in case["instances"]:
            n += 1
            text = inst["text"]
            valid = validator.is_valid(json.loads(text))
            m = llg.LLMatcher(tok, g, log_level=0)
            if m.is_error():
                print(f"{case['name']}: llguidance: {m.get_error()}")
                bad += 1
                continue
            ok = all(m.consume_token(t) and not m.is_error() for t in tok.tokenize_str(text)) and m.is_accepting()
            want_llg = inst.get("llguidance", inst["schema"])
            if "llguidance" in inst and not inst.get("why"):
                print(f"{case['name']}: {text}: `llguidance` without `why`")
                bad += 1
            if valid != inst["valid"]:
                print(f"{case['name']}: {text}: jsonschema says valid={valid}, the file says {inst['valid']}")
                bad += 1
            if ok != want_llg:
                print(f"{case['name']}: {text}: llguidance {'accepts' if ok else 'refuses'}, the file says {want_llg}")
                bad += 1
            if inst["schema"] and not inst["valid"]:
                print(f"{case['name']}: {text}: accepted under 'schema' order but invalid")
                bad += 1
    print(f"{len(data['cases'])} schemas, {n} instances, llguidance {llg.__version__}, jsonschema {importlib.metadata.version('jsonschema')}: {bad} disagreements")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
