#!/usr/bin/env python3
"""Validate constrained generations with a real JSON Schema validator
(python `jsonschema`, with its format checker).

    python3 scripts/experiments/validate_generations.py SCHEMA_DIR GEN_DIR

GEN_DIR holds either `<schema>.json` (one instance per schema, as written by
`grammask bench --json-schema-dir DIR --out-dir GEN_DIR`) or `<schema>/sample_NNNN.txt`
(as written by `grammask generate --json-schema SCHEMA --out-dir GEN_DIR/<schema>`).
Every instance must parse as JSON and validate; prints the counts and every
failure; exit status 1 on any failure. Every `format` a schema names must have
a checker (jsonschema's `format` extra: rfc3987, rfc3339-validator, ...;
scripts/setup/setup.sh installs it in .venv-schema): a format that would go
unchecked is an error, not a pass.
"""
import glob
import json
import os
import sys

import jsonschema


def formats(node):
    """Every value of a `format` keyword in a schema."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "format" and isinstance(v, str):
                yield v
            else:
                yield from formats(v)
    elif isinstance(node, list):
        for v in node:
            yield from formats(v)


def main():
    schema_dir, gen_dir = sys.argv[1], sys.argv[2]
    total = fails = 0
    for sp in sorted(glob.glob(os.path.join(schema_dir, "*.json"))):
        name = os.path.splitext(os.path.basename(sp))[0]
        files = sorted(glob.glob(os.path.join(gen_dir, name, "*.txt")))
        single = os.path.join(gen_dir, name + ".json")
        if os.path.exists(single):
            files.append(single)
        if not files:
            continue
        schema = json.load(open(sp, encoding="utf-8"))
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        missing = sorted(set(formats(schema)) - set(cls.FORMAT_CHECKER.checkers))
        if missing:
            print(f"ERROR {sp}: no format checker for {missing}: install jsonschema[format] (scripts/setup/setup.sh: .venv-schema)")
            sys.exit(1)
        v = cls(schema, format_checker=cls.FORMAT_CHECKER)
        for f in files:
            total += 1
            text = open(f, encoding="utf-8").read()
            try:
                inst = json.loads(text)
            except ValueError as e:
                fails += 1
                print(f"FAIL {f}: not JSON ({e}): {text[:200]!r}")
                continue
            errs = list(v.iter_errors(inst))
            if errs:
                fails += 1
                print(f"FAIL {f}: {errs[0].message[:200]}: {text[:200]!r}")
    print(f"{total} instances, {fails} failures")
    sys.exit(1 if fails or not total else 0)


if __name__ == "__main__":
    main()
