#!/usr/bin/env python3
"""The markdown table of the schema benchmark (issue 20) from the engines' result JSONs.

    python3 benches/schemas/table.py [out/schemas-bench/grammask-wasm.json out/schemas-bench/llguidance.json ...]
        [--corpus out/schemas-corpus] [--examples 10]

Per engine: schemas compiled / compile failures / timeouts (/ crashes), first mask
(compile + first mask) p50 p90 p99 max over the schemas that compiled, mask
p50 p99 p99.9 max over every timed mask, valid instances accepted, invalid
instances accepted (should be 0), peak RSS of the process. Percentiles are
nearest-rank (the value at index floor(p*n) of the sorted times). Then the same
on the schemas every engine compiled, the disagreements on instances, the
exactness findings (valid refused, invalid accepted, with the instance text) and
the compile failures by message. Standard library only.
"""
import argparse
import collections
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = [os.path.join(ROOT, "out", "schemas-bench", f) for f in ("grammask-wasm.json", "llguidance.json")]


def pct(xs, p):
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * len(s)))]


def fmt_us(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.2f} s"
    if x >= 1e4:
        return f"{x / 1e3:.0f} ms"
    if x >= 1e3:
        return f"{x / 1e3:.1f} ms"
    if x >= 10:
        return f"{x:.0f} µs"
    return f"{x:.1f} µs"


def mib(b):
    return f"{b / 2**20:.0f} MiB"


def short(e):
    return e.get("engine", "?")


def stats(res, keep=None):
    """Figures of one engine over the schemas with keep(name) true (all by default)."""
    c = collections.Counter()
    first, masks = [], []
    for s in res["schemas"]:
        if keep and not keep(s["name"]):
            continue
        c["schemas"] += 1
        c[s["status"]] += 1
        if s["firstMaskUs"] is not None:
            first.append(s["firstMaskUs"])
        masks.extend(s["masksUs"])
        for t in s["tests"]:
            kind = "valid" if t["valid"] else "invalid"
            if t.get("notRun"):
                c[kind + "_notrun"] += 1
                continue
            c[kind] += 1
            if t["accepted"]:
                c[kind + "_acc"] += 1
    return c, first, masks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="*", default=None)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "out", "schemas-corpus"))
    ap.add_argument("--examples", type=int, default=10)
    a = ap.parse_args()
    paths = a.results or [p for p in DEFAULT if os.path.exists(p)]
    R = [json.load(open(p)) for p in paths]
    if not R:
        sys.exit("no result files")
    ids = {}

    def inst(name):
        if name not in ids:
            p = os.path.join(a.corpus, "ids", name + ".json")
            ids[name] = json.load(open(p))["tests"] if os.path.exists(p) else []
        return ids[name]

    L = []
    L.append(f"Corpus: {R[0]['corpus'].splitlines()[0]}; {R[0]['corpus'].splitlines()[1]}.")
    L.append(f"{R[0]['corpus'].splitlines()[2]}. Instances: compact JSON (json.dumps separators `,`/`:`), "
             f"Llama-3 tokenizer ({R[0]['vocab']['vocabSize']} ids, EOS {R[0]['vocab']['eos']}), teacher-forced; "
             f"accepted = every token allowed and EOS allowed at the end. Per-schema cap {R[0]['capS']:g} s.")
    L.append("")
    for r in R:
        L.append(f"- {short(r)}: {r['label']}; {r['host']}; started {r['started'][:19]}Z, {r['wallS']:.0f} s wall"
                 f"{'; ' + str(r['workers']) + ' worker processes' if r.get('workers', 1) > 1 else ''}; tokenizer prep. {r['vocab']['prepMs']:.0f} ms (not timed)"
                 + (f"; wasm memory at the end {mib(r['wasmMemory'])}" if r.get("wasmMemory") else "")
                 + (f"; package {r['package']['path']}, web/grammask_bg.wasm {r['package']['wasmBytes']:,} B sha256 {r['package']['wasmSha256']}…, installed {r['package']['installed'][:19]}Z" if r.get("package", {}).get("path") else ""))
    L.append("")
    head = ("| engine | schemas compiled | compile failures | timeouts | first mask p50 | p90 | p99 | max "
            "| mask p50 | p99 | p99.9 | max | masks | valid accepted | invalid accepted | peak RSS |")
    sep = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

    def row(r, keep=None, mem=True):
        c, first, masks = stats(r, keep)
        compiled = len(first)  # first mask reached (a schema cut later by the cap counts)
        tmo = str(c["timeout"]) + (f" (+{c['crash']} crashed)" if c["crash"] else "")
        notrun = lambda k: f" ({c[k + '_notrun']} not run)" if c[k + "_notrun"] else ""
        peak = max(r.get("peakRss", 0), r.get("maxRssKiB", 0) * 1024)
        return (f"| {short(r)} | {compiled} / {c['schemas']} | {c['error']} | {tmo} | "
                + " | ".join(fmt_us(pct(first, p)) for p in (0.5, 0.9, 0.99)) + f" | {fmt_us(max(first) if first else None)} | "
                + " | ".join(fmt_us(pct(masks, p)) for p in (0.5, 0.99, 0.999)) + f" | {fmt_us(max(masks) if masks else None)} | {len(masks):,} | "
                + f"{c['valid_acc']} / {c['valid']}{notrun('valid')} | {c['invalid_acc']} / {c['invalid']}{notrun('invalid')} | "
                + (mib(peak) if mem else "-") + " |")

    L += [head, sep] + [row(r) for r in R]
    if len(R) > 1:
        ok = [{s["name"] for s in r["schemas"] if s["status"] == "ok"} for r in R]
        common = set.intersection(*ok)
        L += ["", f"On the {len(common)} schemas every engine compiled and finished within the cap "
              f"({sum(len(inst(n)) for n in common)} instances):", "", head, sep]
        L += [row(r, lambda n: n in common, mem=False) for r in R]
        # Disagreements on instances.
        by = [{s["name"]: s for s in r["schemas"]} for r in R]
        dis = []
        for n in sorted(common):
            for k, t in enumerate(inst(n)):
                acc = [by[i][n]["tests"][k].get("accepted") for i in range(len(R))]
                if len(set(acc)) > 1:
                    dis.append((n, k, t, acc))
        L += ["", f"Instances on which the engines disagree: {len(dis)}"
              + (" (" + ", ".join(short(r) for r in R) + " accepted?)" if dis else "")]
        for n, k, t, acc in dis[: a.examples * 2]:
            L.append(f"- {n} test {k} ({'valid' if t['valid'] else 'invalid'}): {acc}: `{t['text'][:120]}`")
    for r in R:
        done = [s for s in r["schemas"] if s["firstMaskUs"] is not None]
        slow_first = sorted(done, key=lambda s: -s["firstMaskUs"])[:5]
        slow_mask = sorted((s for s in done if s["masksUs"]), key=lambda s: -max(s["masksUs"]))[:5]
        L += ["", f"{short(r)}: slowest first masks: " + ", ".join(f"{s['name']} {fmt_us(s['firstMaskUs'])} (compile {fmt_us(s['compileUs'])})" for s in slow_first),
              f"{short(r)}: slowest masks (schema: max, median of its masks): "
              + ", ".join(f"{s['name']} {fmt_us(max(s['masksUs']))}, {fmt_us(pct(s['masksUs'], 0.5))}" for s in slow_mask)]
    for r in R:
        by_name = {s["name"]: s for s in r["schemas"]}
        vr, ia = [], []
        for s in r["schemas"]:
            for k, t in enumerate(s["tests"]):
                if t.get("notRun"):
                    continue
                if t["valid"] and not t["accepted"]:
                    vr.append((s["name"], k, t))
                if not t["valid"] and t["accepted"]:
                    ia.append((s["name"], k, t))
        nw = sum(1 for s in r["schemas"] if s.get("warnings"))
        if nw:
            L += ["", f"{short(r)}: {nw} schemas compiled with warnings (keywords or formats not enforced)"]
        L += ["", f"{short(r)}: valid instances refused: {len(vr)}; invalid instances accepted: {len(ia)}"
              + (" (a refused valid instance may be a serialization-policy refusal: both engines want an object's declared keys in the schema's order)" if vr else "")]
        for what, xs in (("valid refused", vr), ("invalid accepted", ia)):
            for n, k, t in xs[: a.examples]:
                text = inst(n)[k]["text"] if k < len(inst(n)) else ""
                at = t.get("refusedAt")
                where = ""
                if at is not None and at >= 0:
                    where = f" at token {at}/{t['nTokens']}"
                warn = by_name[n].get("warnings") if what == "invalid accepted" else None
                L.append(f"- {what}: {n} test {k}{where}{': ' + t['error'][:100] if t.get('error') else ''}: `{text[:160]}`"
                         + (f" (schema compiled with warnings: {'; '.join(warn)[:200]})" if warn else ""))
        errs = collections.Counter()
        for s in r["schemas"]:
            if s["status"] in ("error", "crash") or (s["status"] == "timeout" and s["firstMaskUs"] is None):
                m = s["error"]["message"] if s.get("error") else "timeout"
                m = re.sub(r"\s+", " ", m)
                m = re.sub(r"(at|in|processing) (#|json-schema:|https?:)[^ ,:)]*|#/[^ ,:)]*|_\d+|\d+", lambda x: x.group(1) + " …" if x.group(1) else "…", m)[:130]
                errs[(s["error"] or {}).get("kind") or "", m] += 1
        if errs:
            L.append(f"- {short(r)} compile failures by message (names, pointers, numbers elided):")
            for (kind, m), c in errs.most_common(12):
                L.append(f"  - {c} × {kind + ': ' if kind else ''}{m}")
    text = "\n".join(L) + "\n"
    print(text, end="")


if __name__ == "__main__":
    main()
