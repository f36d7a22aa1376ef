#!/usr/bin/env python3
"""Print the engine x workload table of benches/native/run.sh from out/bench/*.json.

Reads out/bench/grammask-<workload>-<tok>.json (grammask bench --json) and
out/bench/peers-<workload>-<tok>.jsonl (benches/peers/peers.py --json); every figure
there is already the median over the runs. Standard library only.
"""
import argparse, datetime, json, os, platform, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.path.join(ROOT, "out", "bench")


def load(path):
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def us(x):
    if x is None:
        return "-"
    if x >= 10000:
        return f"{x / 1000:.0f} ms"
    if x >= 1000:
        return f"{x / 1000:.1f} ms"
    return f"{x:.1f} us" if x < 100 else f"{x:.0f} us"


def ms(x):
    return "-" if x is None else (f"{x:.1f} ms" if x < 1000 else f"{x / 1000:.1f} s")


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(open("/proc/meminfo").readline().split()[1])
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    try:
        load = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load = "?"
    return f"{os.cpu_count()} CPUs ({model}), {mem} RAM, {platform.system()} {platform.release()}; load average at the end {load}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmd", default="bash benches/native/run.sh")
    ap.add_argument("--tokenizers", default="llama3 qwen3")
    ap.add_argument("--workloads", default="json python gen-json gen-python")
    a = ap.parse_args()
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rows, notes, versions = [], [], {}
    for tok in a.tokenizers.split():
        for w in a.workloads.split():
            g = "json" if w in ("json", "gen-json") else "python"
            for r in load(os.path.join(B, f"grammask-{w}-{tok}.json")):
                comp = load(os.path.join(ROOT, "out", f"{g}-{tok}.compile.json"))
                csec = comp[0]["seconds"] if comp else None
                m = r["mask_us"]
                rows.append([tok, w, "grammask", f"{r['tokens']}" + ("" if not r["rejected"] else f" ({len(r['rejected'])} rej.)"),
                             ms(csec * 1e3 if csec is not None else None), f"{ms(r['load_us'] / 1e3)} / {ms(r['ttfm_us'] / 1e3)}",
                             us(m["p50"]), us(m["p99"]), us(m["max"]), f"{r['blob_bytes'] / 2**20:.1f} MiB"])
                notes.append(f"grammask {w} x {tok}: parser calls/token {r['parser_calls_per_token']:.1f}, "
                             f"mask mean {us(m['mean'])}, p90 {us(m['p90'])}; commit p50 {us(r['commit_us']['p50'])}, "
                             f"p99 {us(r['commit_us']['p99'])}; {r['streams']} streams, {r['runs']} runs")
                for x in r["rejected"]:
                    notes.append(f"  grammask rejected: {x}")
            for r in load(os.path.join(B, f"peers-{w}-{tok}.jsonl")):
                versions[r["engine"]] = r["version"]
                rows.append([tok, w, r["engine"], f"{r['accepted']}/{r['tokens']}", ms(r["compile_ms"]), f"- / {ms(r['ttfm_ms'])}",
                             us(r["p50"]), us(r["p99"]), us(r["max"]), "-"])
                for x in r["rejected"]:
                    notes.append(f"  {r['engine']} {w} x {tok} rejected {os.path.basename(x['stream'])} token #{x['index']} "
                                 f"id {x['id']} {x['token']!r} (in its mask: {x['in_mask']})")
    head = ["tokenizer", "workload", "engine", "tokens", "compile", "load / 1st mask", "p50", "p99", "max", "blob"]
    w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)) + " |"
    print(f"date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    print(f"machine: {machine()}")
    print(f"command: {a.cmd}")
    print(f"grammask {rev}; " + "; ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    print()
    print(line(head))
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for r in rows:
        print(line(r))
    print()
    print("tokens: replayed tokens (peers: accepted/total; a rejected token ends its stream). compile: grammar (+tokenizer)")
    print("-> store/matcher; load / 1st mask: grammask blob bytes -> store, and blob bytes -> first mask; peers: grammar")
    print("-> first mask. p50/p99/max: per-token mask time over all masks of all streams, median of the runs.")
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
