#!/usr/bin/env bash
# Generator check: reruns every generator of a checked-in file into a temporary
# directory and fails (exit 1, with a diff) when its output differs from the
# checked-in file. Run by ./test.sh; quick (seconds), no network.
#
#   bash scripts/gen/check.sh
#
# To regenerate after an intended change, run the generator named in the
# failure (each writes the checked-in file by default) and commit the result.
# The generators run on the oracle's interpreter, .venv-lark/bin/python
# (scripts/setup/setup.sh; CPython 3.11.7, Unicode 14.0.0: the versions the
# outputs record), or on $PYTHON.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

# The checked-in outputs, one variable per generator (paths from the repository root).
PYCLASSES=src/regex/python/classes.rs          # scripts/gen/py_unicode_classes.py
PYTHON_LARK=grammars/python.lark                  # scripts/gen/python_strings.py + python_identifier.py (in place)
LARK_ORDER=grammars/cases/oracle/lark_order.json  # scripts/gen/lark_order_cases.py (needs Lark 1.2.2)
METASCHEMAS=src/frontend/schema/metaschemas.json  # scripts/gen/metaschemas.py (on .venv-schema: jsonschema-specifications)

PY="${PYTHON:-.venv-lark/bin/python}"
[ -x "$PY" ] || { echo "[gen-check] $PY missing: run scripts/setup/setup.sh" >&2; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail=0
compare() { # checked-in file, regenerated file, generator command (for the message)
  if diff -u --label "$1 (checked in)" --label "$1 (regenerated)" "$1" "$2" > "$TMP/diff"; then
    printf '[gen-check] ok     %s\n' "$1"
  else
    printf '[gen-check] DRIFT  %s: regenerate with `%s`\n' "$1" "$3"
    head -c 4000 "$TMP/diff"; echo
    fail=1
  fi
}

"$PY" scripts/gen/py_unicode_classes.py --out "$TMP/pyclasses.rs" > /dev/null
compare "$PYCLASSES" "$TMP/pyclasses.rs" "$PY scripts/gen/py_unicode_classes.py"

cp "$PYTHON_LARK" "$TMP/python.lark"
"$PY" scripts/gen/python_strings.py --grammar "$TMP/python.lark"
"$PY" scripts/gen/python_identifier.py --grammar "$TMP/python.lark"
compare "$PYTHON_LARK" "$TMP/python.lark" \
  "$PY scripts/gen/python_strings.py && $PY scripts/gen/python_identifier.py --grammar $PYTHON_LARK"

"$PY" scripts/gen/lark_order_cases.py --out "$TMP/lark_order.json" > /dev/null
compare "$LARK_ORDER" "$TMP/lark_order.json" "$PY scripts/gen/lark_order_cases.py"

PYS="${PYTHON_SCHEMA:-.venv-schema/bin/python}"
[ -x "$PYS" ] || { echo "[gen-check] $PYS missing: run scripts/setup/setup.sh" >&2; exit 1; }
"$PYS" scripts/gen/metaschemas.py --out "$TMP/metaschemas.json"
compare "$METASCHEMAS" "$TMP/metaschemas.json" "$PYS scripts/gen/metaschemas.py"

[ "$fail" = 0 ] || { echo "[gen-check] generated files differ from their generators" >&2; exit 1; }
