#!/usr/bin/env python3
"""The chart of the schema benchmark (issue 20): distributions of first-mask and mask times.

    python3 benches/schemas/chart.py [RESULT.json ...] [--out out/schemas-bench/chart.svg]

Two panels, one line per engine: left, the first mask (compile + first mask) of
every schema the engine compiled; right, every timed mask. x: time, log scale
(µs, ms, s); y: percentile on a tail scale (-log10(1 - q): p0, p50, p90, p99,
p99.9, p99.99 evenly spaced), so the tails are visible. Hand-written SVG,
standard library only.
"""
import argparse
import json
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = [os.path.join(ROOT, "out", "schemas-bench", f) for f in ("grammask-wasm.json", "llguidance.json")]
COLORS = {"grammask": "#d95f02", "llguidance": "#1b73b3"}
OTHER = ["#7570b3", "#e7298a", "#66a61e"]
W = 980
PANEL_W, PANEL_H = 400, 300
MARGIN_L, MARGIN_T = 70, 60


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unit(us):
    if us >= 1e6:
        return f"{us / 1e6:g} s"
    if us >= 1e3:
        return f"{us / 1e3:g} ms"
    return f"{us:g} µs"


def curve(xs, max_points=1500):
    """(value, tail) pairs of the sorted values: tail = -log10(1 - i/n) for the i-th (0-based)."""
    s = sorted(xs)
    n = len(s)
    ymax = math.log10(n)
    pts, last_y = [], -1.0
    for i, v in enumerate(s):
        y = -math.log10(1 - i / n)
        if y - last_y >= ymax / max_points or i == n - 1 or i == 0:
            pts.append((v, y))
            last_y = y
    return pts


def panel(ox, oy, title, series, lo, hi, ymax):
    out = [f'<g transform="translate({ox},{oy})">']
    out.append(f'<text x="{PANEL_W / 2}" y="-14" text-anchor="middle" font-size="14" font-weight="bold">{esc(title)}</text>')
    X = lambda v: (math.log10(max(v, 10**lo)) - lo) / (hi - lo) * PANEL_W
    Y = lambda y: PANEL_H - y / ymax * PANEL_H
    out.append(f'<rect x="0" y="0" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#444"/>')
    for d in range(lo, hi + 1):
        x = X(10**d)
        out.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{PANEL_H}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{PANEL_H + 16}" text-anchor="middle" font-size="11">{unit(10.0**d)}</text>')
        if d < hi:
            for k in range(2, 10):
                xm = X(k * 10**d)
                out.append(f'<line x1="{xm:.1f}" y1="{PANEL_H}" x2="{xm:.1f}" y2="{PANEL_H - 4}" stroke="#888"/>')
    for y, lab in ((0, "p0"), (math.log10(2), "p50"), (1, "p90"), (2, "p99"), (3, "p99.9"), (4, "p99.99"), (5, "p99.999")):
        if y > ymax + 1e-9:
            break
        yy = Y(y)
        out.append(f'<line x1="0" y1="{yy:.1f}" x2="{PANEL_W}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="-6" y="{yy + 4:.1f}" text-anchor="end" font-size="11">{lab}</text>')
    for color, pts in series:
        d = " ".join(f"{X(v):.1f},{Y(y):.1f}" for v, y in pts)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{d}"/>')
        v, y = pts[-1]
        out.append(f'<circle cx="{X(v):.1f}" cy="{Y(y):.1f}" r="3" fill="{color}"/>')
    out.append(f'<text x="{PANEL_W / 2}" y="{PANEL_H + 34}" text-anchor="middle" font-size="12">time (log scale)</text>')
    out.append(f'<text transform="translate(-52,{PANEL_H / 2}) rotate(-90)" text-anchor="middle" font-size="12">percentile (tail scale)</text>')
    out.append("</g>")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="*")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "schemas-bench", "chart.svg"))
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    R = [json.load(open(p)) for p in (a.results or [p for p in DEFAULT if os.path.exists(p)])]
    first = [[s["firstMaskUs"] for s in r["schemas"] if s["firstMaskUs"] is not None] for r in R]
    masks = [[x for s in r["schemas"] for x in s["masksUs"]] for r in R]
    allv = [max(x, 0.1) for xs in first + masks for x in xs]
    lo, hi = math.floor(math.log10(min(allv))), math.ceil(math.log10(max(allv)))
    n_schemas = len(R[0]["schemas"])
    color = [COLORS.get(r["engine"]) or OTHER[i % len(OTHER)] for i, r in enumerate(R)]
    H = MARGIN_T + PANEL_H + 52 + 16 * len(R) + 4
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="Helvetica, Arial, sans-serif">', f'<rect width="{W}" height="{H}" fill="white"/>']
    title = a.title or (f"JSON Schema per request: {n_schemas} JSONSchemaBench schemas, Llama-3 tokenizer, teacher-forced test instances")
    svg.append(f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{esc(title)}</text>')
    fy = max(math.log10(len(x)) for x in first if x)
    my = max(math.log10(len(x)) for x in masks if x)
    svg += panel(MARGIN_L, MARGIN_T, "first mask (compile + first mask) per schema",
                 [(color[i], curve(x)) for i, x in enumerate(first) if x], lo, hi, fy)
    svg += panel(MARGIN_L + PANEL_W + 90, MARGIN_T, "mask, per token",
                 [(color[i], curve(x)) for i, x in enumerate(masks) if x], lo, hi, my)
    # Legend, under the panels.
    ly = MARGIN_T + PANEL_H + 52
    x = MARGIN_L
    for i, r in enumerate(R):
        lab = f"{r['label']}: {len(first[i])} schemas compiled, {len(masks[i]):,} masks"
        svg.append(f'<line x1="{x}" y1="{ly}" x2="{x + 24}" y2="{ly}" stroke="{color[i]}" stroke-width="3"/>')
        svg.append(f'<text x="{x + 30}" y="{ly + 4}" font-size="12">{esc(lab)}</text>')
        ly += 16
    svg.append("</svg>")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"[chart] {a.out}")


if __name__ == "__main__":
    main()
