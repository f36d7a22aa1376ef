#!/usr/bin/env python3
"""llguidance (native, PyPI llguidance 1.9.1, Python binding) on the corpus of
benches/schemas/ (issue 20): the same procedure as grammask.mjs.

    .venv-bench/bin/python benches/schemas/llguidance_native.py [--corpus out/schemas-corpus]
        [--out out/schemas-bench/llguidance.json] [--cap-s 60] [--only NAME,...]

(Not named llguidance.py: a script of that name would shadow the package.)

 - LLTokenizer(tokenizer.json, eos_token=EOS), once, not timed, then one warm-up
   compile + mask of a tiny schema (not timed);
 - first mask = LLMatcher.grammar_from_json_schema(schema) (llguidance's defaults:
   flexible whitespace, which accepts the compact instances) + LLMatcher(tok, grammar)
   + the first fill_next_token_bitmask; an exception or matcher.is_error() is a
   compile failure (llguidance compiles lazily: some errors only appear at the first mask);
 - per test instance a fresh matcher (deep_copy of the first one, not timed): before
   each token fill_next_token_bitmask into one reused bitmask (timed alone with
   perf_counter_ns, the Python call overhead of ~0.3-1 us included), check the token's
   bit, consume_token; a refused token ends the instance; after the last token one more
   timed mask and is_accepting() (EOS allowed);
 - per-schema cap (--cap-s) checked between masks (a single call is not interrupted;
   llguidance bounds its own work per mask with its lexer/parser limits);
 - memory: RSS (/proc/self/statm) after every schema (max) and ru_maxrss at the end.
Writes the same JSON shape as grammask.mjs.
"""
import argparse
import glob
import json
import os
import platform
import resource
import sys
import time
from datetime import datetime, timezone

import llguidance as llg
import llguidance.numpy as lln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def r2(x):
    return round(x, 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(ROOT, "out", "schemas-corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "schemas-bench", "llguidance.json"))
    ap.add_argument("--cap-s", type=float, default=60)
    ap.add_argument("--only")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    names = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(a.corpus, "*.json")))
    names = [n for n in names if not only or n in only]
    tk = json.load(open(os.path.join(a.corpus, "ids", "_tokenizer.json")))
    pc = time.perf_counter_ns
    wall0 = pc()
    t0 = pc()
    tok = llg.LLTokenizer(tk["tokenizer"], eos_token=tk["eos"][0])
    prep_ms = (pc() - t0) / 1e6
    n = tok.vocab_size
    bitmask = lln.allocate_token_bitmask(1, n)
    m = llg.LLMatcher(tok, llg.LLMatcher.grammar_from_json_schema({"type": "object", "properties": {"a": {"type": "string"}}}), log_level=0)
    lln.fill_next_token_bitmask(m, bitmask)  # warm-up
    out = {
        "engine": "llguidance", "label": f"llguidance {llg.__version__} (native, Python {platform.python_version()})",
        "corpus": "".join(open(os.path.join(a.corpus, "MANIFEST.txt")).readlines()[:3]).rstrip("\n"),
        "capS": a.cap_s, "host": f"{os.cpu_count()} CPUs, load {' '.join('%.2f' % x for x in os.getloadavg())}",
        "started": datetime.now(timezone.utc).isoformat(), "vocab": {"prepMs": r2(prep_ms), "vocabSize": n, "eos": tk["eos"]},
        "workers": 1, "schemas": [],
    }
    peak = rss()
    cap_ns = a.cap_s * 1e9
    for i, name in enumerate(names):
        doc = json.load(open(os.path.join(a.corpus, name + ".json"), encoding="utf-8"))
        tests = json.load(open(os.path.join(a.corpus, "ids", name + ".json"), encoding="utf-8"))["tests"]
        r = {"name": name, "status": "ok", "error": None, "compileUs": None, "firstMaskUs": None, "masksUs": [], "tests": []}
        start = pc()
        m0 = None
        try:
            grm = llg.LLMatcher.grammar_from_json_schema(doc["schema"])
            m0 = llg.LLMatcher(tok, grm, log_level=0)
            r["compileUs"] = r2((pc() - start) / 1e3)
            if m0.is_error():
                raise RuntimeError(m0.get_error())
            lln.fill_next_token_bitmask(m0, bitmask)
            r["firstMaskUs"] = r2((pc() - start) / 1e3)
            if m0.is_error():
                raise RuntimeError(m0.get_error())
        except Exception as e:  # noqa: BLE001 - a compile failure is a result
            r["status"] = "error"
            r["firstMaskUs"] = None
            r["error"] = {"name": type(e).__name__, "kind": None, "message": str(e)[:500]}
            m0 = None
        if m0 is not None:
            masks = r["masksUs"]
            for t in tests:
                if r["status"] == "timeout" or pc() - start > cap_ns:
                    r["status"] = "timeout"
                    r["tests"].append({"valid": t["valid"], "notRun": True})
                    continue
                m = m0.deep_copy()
                ids = t["ids"]
                refused, error = None, None
                for k in range(len(ids) + 1):
                    s = pc()
                    lln.fill_next_token_bitmask(m, bitmask)
                    masks.append(r2((pc() - s) / 1e3))
                    if m.is_error():
                        refused, error = k, m.get_error()[:300]
                        break
                    if k == len(ids):
                        if not m.is_accepting():
                            refused = k
                        break
                    tid = ids[k]
                    if not (int(bitmask[0, tid >> 5]) >> (tid & 31)) & 1:
                        refused = k
                        break
                    if not m.consume_token(tid) or m.is_error():
                        refused, error = k, (m.get_error() or "consume_token refused")[:300]
                        break
                    if pc() - start > cap_ns:
                        r["status"] = "timeout"
                        break
                if r["status"] == "timeout" and refused is None:
                    r["tests"].append({"valid": t["valid"], "notRun": True, "cutAt": len(masks)})
                else:
                    d = {"valid": t["valid"], "accepted": refused is None, "refusedAt": refused, "nTokens": len(ids)}
                    if error:
                        d["error"] = error
                    r["tests"].append(d)
        r["wallMs"] = r2((pc() - start) / 1e6)
        r["rss"] = rss()
        peak = max(peak, r["rss"])
        out["schemas"].append(r)
        fm = f" first {r['firstMaskUs'] / 1000:.1f} ms" if r["firstMaskUs"] is not None else ""
        print(f"[llguidance] {i + 1}/{len(names)} {name}: {r['status']}{fm}, {len(r['masksUs'])} masks, "
              f"{r['wallMs'] / 1000:.1f} s", file=sys.stderr, flush=True)
    out["peakRss"] = peak
    out["maxRssKiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["wallS"] = r2((pc() - wall0) / 1e9)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f)
        f.write("\n")
    print(f"[llguidance] {len(names)} schemas in {out['wallS']} s -> {os.path.relpath(a.out, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
