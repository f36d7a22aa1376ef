#!/usr/bin/env python3
"""Corpus lists for the experiments (printed one path per line).

  corpus.py stdlib [--limit N]   .py files of this Python's standard library that
                                 ast.parse accepts (excluding test/, lib2to3/tests,
                                 idlelib/idle_test, site-packages)
  corpus.py json [--limit N]     *.json files under the npm and Python installs
                                 that json.loads accepts
"""
import ast, json, os, sys, sysconfig

def stdlib():
    root = sysconfig.get_paths()["stdlib"]
    skip = ("/test/", "/lib2to3/tests/", "/idlelib/idle_test/", "/site-packages/", "/__pycache__/")
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            if not f.endswith(".py") or any(s in p + "/" for s in skip) or p.startswith(os.path.join(root, "test") + "/"):
                continue
            try:
                src = open(p, "rb").read()
                src.decode("utf-8")
                ast.parse(src)
            except Exception:
                continue
            out.append(p)
    return out

def jsons():
    roots = ["/usr/lib/node_modules", "/usr/share", sysconfig.get_paths()["stdlib"], os.path.dirname(os.path.dirname(sys.executable))]
    seen, out = set(), []
    for r in roots:
        for d, dirs, files in os.walk(r):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith(".json"):
                    continue
                p = os.path.realpath(os.path.join(d, f))
                if p in seen:
                    continue
                seen.add(p)
                try:
                    b = open(p, "rb").read()
                    if len(b) > 2_000_000:
                        continue
                    json.loads(b.decode("utf-8"))
                except Exception:
                    continue
                out.append(p)
    return out

if __name__ == "__main__":
    kind = sys.argv[1]
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    files = stdlib() if kind == "stdlib" else jsons()
    for p in files[:limit]:
        print(p)
