#!/usr/bin/env python3
"""Writes src/frontend/schema/metaschemas.json: the official JSON Schema metaschemas
(draft-04, -06, -07, 2019-09 and 2020-12 with their vocabulary metaschemas), built into the
schema front end so that `$ref` to them resolves with nothing fetched. One JSON object,
URI (without the empty fragment) -> schema, compact; the annotations that do not change
validity (`title`, `description`, `$comment`) are left out of schema positions only (a
property named `title` stays). Source: the `jsonschema-specifications` package (2025.9.1,
in .venv-schema: scripts/setup/setup.sh).

  .venv-schema/bin/python scripts/gen/metaschemas.py [--out FILE]   (FILE: default OUT below)
"""
import argparse
import json
import os

import jsonschema_specifications

OUT = "src/frontend/schema/metaschemas.json"
DRAFTS = ["draft4", "draft6", "draft7", "draft201909", "draft202012"]
DROP = {"title", "description", "$comment"}
MAPS = {"properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies"}
ONE = {"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
       "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}


def strip(s):
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k in DROP:
            continue
        if k in MAPS and isinstance(v, dict):
            v = {a: strip(b) for a, b in v.items()}
        elif k in ONE or (k in LISTS and isinstance(v, list)):
            v = [strip(x) for x in v] if isinstance(v, list) else strip(v)
        out[k] = v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    root = os.path.join(os.path.dirname(jsonschema_specifications.__file__), "schemas")
    docs = {}
    for d in DRAFTS:
        base = os.path.join(root, d)
        files = [os.path.join(base, "metaschema.json")]
        voc = os.path.join(base, "vocabularies")
        if os.path.isdir(voc):
            files += [os.path.join(voc, f) for f in sorted(os.listdir(voc))]
        for p in files:
            with open(p) as f:
                s = json.load(f)
            uri = (s.get("$id") or s.get("id")).removesuffix("#")
            docs[uri] = strip(s)
    with open(a.out, "w") as f:
        f.write(json.dumps(docs, separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
