#!/usr/bin/env python3
"""Which refused valid instances are key-order refusals? (issue 20, exactness triage)

    .venv-bench/bin/python benches/schemas/recheck.py [RESULT.json ...] [--corpus out/schemas-corpus]
        [--out out/schemas-recheck]

Both engines write an object's declared properties in the schema's order
(docs/structured-output.md, "Serialization policy"), while the corpus' test
instances keep the key order their author gave them. For every valid instance
some engine refused, this re-serializes the instance with its keys in the
schema's order (keys ranked by their first declaration in the schema, the
heuristic of benches/sbs/engines.mjs; undeclared keys after, in their order),
checks it is still valid (python-jsonschema, with format checks), and replays it
through the engines of the result files (grammask.mjs, llguidance_native.py) as a
small corpus in OUT/. Prints one line per instance: accepted once reordered =
a policy refusal; still refused = look closer (an exactness finding, or an order
the heuristic does not reproduce, e.g. under allOf). Needs .venv-bench with
`tokenizers` and `jsonschema` (pip install jsonschema).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = [os.path.join(ROOT, "out", "schemas-bench", f) for f in ("grammask-wasm.json", "llguidance.json")]


def key_rank(schema):
    rank = {}

    def add(k):
        rank.setdefault(k, len(rank))

    def walk_const(v, d):
        if d > 200:
            return
        if isinstance(v, list):
            for c in v:
                walk_const(c, d + 1)
        elif isinstance(v, dict):
            for k, c in v.items():
                add(k)
                walk_const(c, d + 1)

    def walk(v, d):
        if d > 200:
            return
        if isinstance(v, list):
            for c in v:
                walk(c, d + 1)
            return
        if not isinstance(v, dict):
            return
        if isinstance(v.get("properties"), dict):
            for k in v["properties"]:
                add(k)
        if isinstance(v.get("required"), list):
            for k in v["required"]:
                if isinstance(k, str):
                    add(k)
        for k, c in v.items():
            if k not in ("enum", "const"):
                walk(c, d + 1)
        if "const" in v:
            walk_const(v["const"], d + 1)
        if isinstance(v.get("enum"), list):
            for c in v["enum"]:
                walk_const(c, d + 1)

    walk(schema, 0)
    return rank


def reorder(v, rank):
    if isinstance(v, list):
        return [reorder(x, rank) for x in v]
    if isinstance(v, dict):
        keys = sorted(enumerate(v), key=lambda ik: (rank.get(ik[1], float("inf")), ik[0]))
        return {k: reorder(v[k], rank) for _, k in keys}
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="*")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "out", "schemas-corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "schemas-recheck"))
    a = ap.parse_args()
    paths = a.results or [p for p in DEFAULT if os.path.exists(p)]
    R = [json.load(open(p)) for p in paths]
    todo = {}  # name -> {test index: {engine: refusedAt}}
    for r in R:
        for s in r["schemas"]:
            for k, t in enumerate(s["tests"]):
                if t["valid"] and not t.get("notRun") and not t["accepted"]:
                    todo.setdefault(s["name"], {}).setdefault(k, {})[r["engine"]] = t["refusedAt"]
    if not todo:
        print("no refused valid instances")
        return
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    rows = []
    for name, tests in sorted(todo.items()):
        doc = json.load(open(os.path.join(a.corpus, name + ".json"), encoding="utf-8"))
        rank = key_rank(doc["schema"])
        cls = jsonschema.validators.validator_for(doc["schema"])
        v = cls(doc["schema"], format_checker=cls.FORMAT_CHECKER)
        new = []
        for k in sorted(tests):
            data = doc["tests"][k]["data"]
            re_data = reorder(data, rank)
            errs = [e.message[:100] for e in v.iter_errors(data)]
            changed = json.dumps(re_data) != json.dumps(data)
            new.append({"description": f"test {k} reordered", "valid": True, "data": re_data})
            rows.append((name, k, tests[k], errs, changed))
        with open(os.path.join(a.out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump({"description": doc.get("description"), "meta": doc.get("meta"), "schema": doc["schema"], "tests": new}, f, ensure_ascii=False)
    with open(os.path.join(a.out, "MANIFEST.txt"), "w") as f:
        f.write(f"recheck of refused valid instances, keys in schema order ({', '.join(paths)})\n"
                f"selection: the refused valid instances of {os.path.abspath(a.corpus)}\n"
                f"schemas: {len(todo)}; tests: {len(rows)}\n")
    subprocess.run([sys.executable, os.path.join(HERE, "ids.py"), "--corpus", a.out], check=True, stdout=subprocess.DEVNULL)
    after = {}
    for r in R:
        out = os.path.join(a.out, "results", f"{r['engine']}.json")  # not in OUT itself: that is the corpus
        if r["engine"] == "grammask":
            cmd = ["node", os.path.join(HERE, "grammask.mjs"), "--corpus", a.out, "--out", out]
        elif r["engine"] == "llguidance":
            cmd = [sys.executable, os.path.join(HERE, "llguidance_native.py"), "--corpus", a.out, "--out", out]
        else:
            continue
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        after[r["engine"]] = {s["name"]: s for s in json.load(open(out))["schemas"]}
    # Map each reordered test back to its original index.
    print(f"{len(rows)} refused valid instances in {len(todo)} schemas; re-serialized with keys in schema order:")
    idx = {}
    for name, k, *_ in rows:
        idx.setdefault(name, []).append(k)
    for name, k, refused_by, errs, changed in rows:
        j = idx[name].index(k)
        verdict = []
        for e, by in after.items():
            s = by.get(name)
            if e not in refused_by:
                continue
            if s is None or s["status"] != "ok":
                verdict.append(f"{e}: {s['status'] if s else 'not run'}")
                continue
            t = s["tests"][j]
            verdict.append(f"{e}: {'accepted (key order)' if t['accepted'] else 'still refused at token ' + str(t['refusedAt'])}")
        print(f"- {name} test {k}: refused by {', '.join(f'{e} at token {at}' for e, at in refused_by.items())}; "
              f"python-jsonschema: {'valid' if not errs else 'INVALID: ' + '; '.join(errs)}; "
              f"{'reordered' if changed else 'already in schema order'}: {'; '.join(verdict)}")


if __name__ == "__main__":
    main()
