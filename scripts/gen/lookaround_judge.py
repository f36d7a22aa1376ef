"""Judge data for lookaround in patterns: tests/data/lookaround.json.

For each pattern, short strings (every string of up to 3 characters over the
pattern's own characters and a few others, then random strings built from
those characters and the pattern's literal words) with the verdict of a real
engine:
- `ecma`: JSON Schema `pattern`s, judged by Node's RegExp (`u` flag, search:
  `re.test(s)`);
- `python`: regex constraints, judged by Python's `re.fullmatch`.
tests/suite/lookaround.rs checks grammask's verdict on every string.
Run: python3 scripts/gen/lookaround_judge.py (Node on PATH).
"""
import json, os, random, re, subprocess, sys

ECMA = [
    r"^(?!org\.bukkit\.)[a-zA-Z0-9_.]+$",
    r"^(?!.*\.\.)[a-z.]+$",
    r"^(?!\s)(?!.*\s$).+$",
    r"^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)[a-zA-Z\d]{4,6}$",
    r"^(?=.*[a-z])(?=.*\d)[a-z\d]{3}$",
    r"^(?:(?!ab).)*$",
    r"(?:(?!ab).)*c",
    r"a(?=b)",
    r"a(?!b)",
    r"(?<=a)b",
    r"(?<!a)b",
    r"\bab\b",
    r"\Bb",
    r"b\B",
    r"^[a-z]+(?<!x)$",
    r"(?<=^|,)a(?=,|$)",
    r"x(?=[a-c]{2})[a-z]{1,3}$",
    r"(?<![0-9])[0-9]{2}(?![0-9])",
    r"^(?:(?=a)[a-c]|b)+$",
    r"^(?:a|(?<=a)b)*$",
    r"(a(?!b)|ab)+$",
    r"(?=a*$)a",
    r"^.*(?<!\.js)$",
    r"(?<!^)x",
    r"^(?=(?:a|b)c)",
    r"(?<=a.)c",
    r"^(?:(?<!a)b|a)+$",
    r"(?=.*x)(?!.*y)^.{2}",
    r"(?<=(?<!b)a)b",
    r"(?<=^a|b(?<!ab))c",
]

PYTHON = [
    r"(?!ab)\w+",
    r"a+(?!b)\w*",
    r"(?:(?!--).)*",
    r'".*?(?<!\\)"',
    r"\w+(?<!_)",
    r"x\b.*",
    r".*\bab\b.*",
    r"(?=\d{2})\d+",
    r"(?i)(?!abc)[a-z]{3}",
    r"(?:a|b(?=a))*",
    r"[ab]*(?<!ab)",
    r"(?<=a)b",
    r"a(?=b)",
    r"(?:(?<=a)b|a)+",
    r"\Bb.*",
]

EXTRA = ["a", "0", "b", ".", " ", "Z", "é", "_", "\n"]


def words(p):
    """The literal runs of a pattern (escapes resolved), as seeds."""
    w = re.sub(r"\\[dDsSwWbB]|\[[^\]]*\]|\(\?<?[=!:]|[()*+?{}|^$]", " ", p).replace("\\", "")
    return [x for x in w.split() if len(x) >= 2]


def strings(p, rng):
    alph = []
    for c in re.sub(r"\\[dDsSwWbB]", "", p):
        if (c.isalnum() or c in ".,_- \"'\\") and c not in alph:
            alph.append(c)
    for c in EXTRA:
        if len(alph) >= 7:
            break
        if c not in alph:
            alph.append(c)
    alph = alph[:7]
    out = [""]
    level = [""]
    for _ in range(3):
        level = [s + c for s in level for c in alph]
        out += level
    pieces = alph + words(p) + EXTRA
    seen = set(out)
    while len(out) < 600:
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(2, 8)))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def main():
    rng = random.Random(20261127)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ecma = [{"pattern": p, "strings": strings(p, rng)} for p in ECMA]
    js = "let d=JSON.parse(require('fs').readFileSync(0,'utf8'));console.log(JSON.stringify(d.map(c=>{let r=new RegExp(c.pattern,'u');return c.strings.map(s=>r.test(s)?'1':'0').join('')})))"
    res = json.loads(subprocess.run(["node", "-e", js], input=json.dumps(ecma), capture_output=True, text=True, check=True).stdout)
    for c, v in zip(ecma, res):
        c["verdicts"] = v
    py = []
    for p in PYTHON:
        ss = strings(p, rng)
        r = re.compile(p)
        py.append({"pattern": p, "strings": ss, "verdicts": "".join("1" if r.fullmatch(s) else "0" for s in ss)})
    data = {"generator": "scripts/gen/lookaround_judge.py", "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
            "python": sys.version.split()[0], "ecma": ecma, "python_fullmatch": py}
    with open(os.path.join(root, "tests/data/lookaround.json"), "w") as f:
        json.dump(data, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(sum(len(c["strings"]) for c in ecma + py), "strings")


main()
