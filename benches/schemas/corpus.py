#!/usr/bin/env python3
"""The real-world corpus of the per-request JSON Schema benchmark (issue 20).

    python3 benches/schemas/corpus.py [--repo PATH] [--n 400] [--seed 20] [--out out/schemas-corpus]

Source: JSONSchemaBench's MaskBench data (github.com/guidance-ai/jsonschemabench,
folder maskbench/data: ~11k real-world schemas from GitHub, Kubernetes, Snowplow,
WashingtonPost, Glaive function calls, JSON-mode-eval, BFCL, ..., each file
`{description, meta, schema, tests: [{description, valid, data}]}`).

--repo is a git directory (bare or a checkout) of that repository, or a plain copy
of its files (then no commit is recorded); without it
the repository is cloned (`git clone --depth 1`) into out/jsonschemabench. The
selection is `random.seed(seed); random.sample(sorted(names), n)` over every
file name of maskbench/data at the repository's HEAD, so the same commit,
n and seed give the same corpus. Each chosen file is written whole
(tests included) to OUT/NAME.json; OUT/MANIFEST.txt records the source
commit, n, seed and the names. Only the standard library is used.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URL = "https://github.com/guidance-ai/jsonschemabench"
DATA = "maskbench/data"


def git(repo, *args, **kw):
    return subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.PIPE, **kw).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", help="git directory or checkout of guidance-ai/jsonschemabench (default: clone it)")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "schemas-corpus"))
    a = ap.parse_args()

    repo = a.repo
    if not repo:
        repo = os.path.join(ROOT, "out", "jsonschemabench")
        if not os.path.isdir(repo):
            print(f"[corpus] cloning {URL} into {repo}", file=sys.stderr)
            subprocess.run(["git", "clone", "--quiet", "--depth", "1", URL, repo], check=True)
    plain = os.path.isdir(os.path.join(repo, DATA)) and subprocess.run(
        ["git", "-C", repo, "rev-parse", "HEAD"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0
    if plain:  # a copy of the files without git (e.g. an unpacked archive): no commit to record
        commit = "unknown (a plain directory, not a git repository: " + os.path.abspath(repo) + ")"
        names = sorted(f[:-5] for f in os.listdir(os.path.join(repo, DATA)) if f.endswith(".json"))
    else:
        commit = git(repo, "rev-parse", "HEAD").decode().strip()
        listing = git(repo, "ls-tree", "-z", "HEAD", DATA + "/").decode().split("\0")
        names = sorted(os.path.basename(l.split("\t", 1)[1])[:-5] for l in listing if l.endswith(".json"))
    random.seed(a.seed)
    chosen = sorted(random.sample(names, min(a.n, len(names))))

    def blobs():
        if plain:
            for name in chosen:
                with open(os.path.join(repo, DATA, name + ".json"), "rb") as f:
                    yield name, f.read()
            return
        # One `git cat-file --batch` for all (works for bare repositories too).
        raw = git(repo, "cat-file", "--batch", input="".join(f"HEAD:{DATA}/{n}.json\n" for n in chosen).encode())
        pos = 0
        for name in chosen:
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode().split()
            if header[1] != "blob":
                raise SystemExit(f"{name}: {' '.join(header)}")
            size = int(header[2])
            yield name, raw[nl + 1:nl + 1 + size]
            pos = nl + 1 + size + 1

    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    n_tests, n_valid, no_tests = 0, 0, 0
    for name, body in blobs():
        doc = json.loads(body)
        tests = doc.get("tests") or []
        n_tests += len(tests)
        n_valid += sum(1 for t in tests if t.get("valid"))
        no_tests += not tests
        with open(os.path.join(a.out, name + ".json"), "wb") as f:
            f.write(body)
    with open(os.path.join(a.out, "MANIFEST.txt"), "w") as f:
        f.write(f"source: {URL} {DATA} at commit {commit}\n")
        f.write(f"selection: random.seed({a.seed}); random.sample(sorted(names), {a.n}) of {len(names)} files\n")
        f.write(f"schemas: {len(chosen)} ({no_tests} without tests); tests: {n_tests} ({n_valid} valid, {n_tests - n_valid} invalid)\n")
        f.write("".join(n + "\n" for n in chosen))
    print(f"[corpus] {len(chosen)} of {len(names)} schemas ({no_tests} without tests), {n_tests} tests "
          f"({n_valid} valid) from {commit[:12] if not plain else repo} -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
